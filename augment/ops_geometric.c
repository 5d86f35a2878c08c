/* Affine warps (ops.h): torchvision's inverse affine matrix and
 * F_t.affine's sampling (an affine grid over pixel centers, grid_sample
 * with align_corners = False and zero padding, the mask blend for a fill,
 * round half to even to uint8). */
#include <math.h>
#include <string.h>

#include "augment/ops.h"

static double radians(double deg) {
  return deg * (M_PI / 180.0);
}

void sl_affine_inverse(double cx, double cy, double angle, double tx, double ty,
                       double scale, double shear_x, double shear_y,
                       double m[6]) {
  double rot = radians(angle), sx = radians(shear_x), sy = radians(shear_y);
  /* RSS without scaling */
  double a = cos(rot - sy) / cos(sy);
  double b = -cos(rot - sy) * tan(sx) / cos(sy) - sin(rot);
  double c = sin(rot - sy) / cos(sy);
  double d = -sin(rot - sy) * tan(sx) / cos(sy) + cos(rot);
  /* the inverse rotation-scale-shear (its determinant is 1), then the
   * inverse translations: C * RSS^-1 * C^-1 * T^-1 */
  m[0] = d / scale, m[1] = -b / scale, m[2] = 0.0;
  m[3] = -c / scale, m[4] = a / scale, m[5] = 0.0;
  m[2] += m[0] * (-cx - tx) + m[1] * (-cy - ty);
  m[5] += m[3] * (-cx - tx) + m[4] * (-cy - ty);
  m[2] += cx;
  m[5] += cy;
}

void sl_affine_params(int w, int h, double angle, double tx, double ty,
                      double scale, double shear_x, double shear_y,
                      int has_center, double center_x, double center_y,
                      double m[6]) {
  double cx = 0.0, cy = 0.0;
  if (has_center) {
    cx = center_x - (double)w * 0.5;
    cy = center_y - (double)h * 0.5;
  }
  sl_affine_inverse(cx, cy, angle, tx, ty, scale, shear_x, shear_y, m);
}

static uint8_t round_u8(double v) {
  v = nearbyint(v);
  return v <= 0.0 ? 0 : v >= 255.0 ? 255 : (uint8_t)v;
}

void sl_op_warp(sl_image *im, const double m[6], sl_interp interp,
                const double *fill, sl_op_scratch *s) {
  int w = im->w, h = im->h, ch = im->ch, nc = ch == 1 ? 1 : 3;
  size_t stride = (size_t)w * (size_t)ch;
  uint8_t *src = s->img;
  memcpy(src, im->px, stride * (size_t)h);
  /* Input pixel coordinate of output pixel (x, y): the grid's centered
   * coordinate through m, unnormalised by align_corners = False. */
  double ox = (double)(w - 1) * 0.5, oy = (double)(h - 1) * 0.5;
  for (int y = 0; y < h; y++) {
    double yc = (double)y - oy;
    uint8_t *out = im->px + (size_t)y * stride;
    for (int x = 0; x < w; x++) {
      double xc = (double)x - ox;
      double ix = m[0] * xc + m[1] * yc + m[2] + ox;
      double iy = m[3] * xc + m[4] * yc + m[5] + oy;
      uint8_t *o = out + (size_t)x * (size_t)ch;
      if (interp == SL_INTERP_NEAREST) {
        double rx = nearbyint(ix), ry = nearbyint(iy);
        if (rx >= 0 && rx < w && ry >= 0 && ry < h) {
          memcpy(o, src + (size_t)ry * stride + (size_t)rx * (size_t)ch,
                 (size_t)nc);
        } else {
          for (int c = 0; c < nc; c++)
            o[c] = fill ? round_u8(fill[c]) : 0;
        }
        continue;
      }
      double fx = floor(ix), fy = floor(iy);
      double ax = ix - fx, ay = iy - fy;
      double wt[4] = {(1 - ax) * (1 - ay), ax * (1 - ay), (1 - ax) * ay,
                      ax * ay};
      double acc[3] = {0, 0, 0}, mask = 0;
      for (int k = 0; k < 4; k++) {
        double px = fx + (k & 1), py = fy + (k >> 1);
        if (px < 0 || px >= w || py < 0 || py >= h)
          continue;
        const uint8_t *p = src + (size_t)py * stride + (size_t)px * (size_t)ch;
        for (int c = 0; c < nc; c++)
          acc[c] += wt[k] * (double)p[c];
        mask += wt[k];
      }
      for (int c = 0; c < nc; c++) {
        double v = acc[c];
        if (fill) /* torchvision: img * mask + (1 - mask) * fill */
          v = v * mask + (1.0 - mask) * fill[c];
        o[c] = round_u8(v);
      }
    }
  }
}
