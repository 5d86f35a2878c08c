/* Detection boxes through a sample's geometry (boxes.h). */
#include "augment/boxes.h"

#include <math.h>

/* Step 1 on b (no clipping). */
static void sl_box_place(const sl_aug_geom *g, double b[4]) {
  double sx = (double)g->place_w / g->crop.w,
         sy = (double)g->place_h / g->crop.h;
  b[0] = g->place_x + (b[0] - g->crop.x) * sx;
  b[2] = g->place_x + (b[2] - g->crop.x) * sx;
  b[1] = g->place_y + (b[1] - g->crop.y) * sy;
  b[3] = g->place_y + (b[3] - g->crop.y) * sy;
}

void sl_box_flip(double b[4], int out_w) {
  double x0 = b[0];
  b[0] = out_w - b[2];
  b[2] = out_w - x0;
}

void sl_box_warp(double b[4], const double m[6], int w, int h) {
  /* The warp samples input (about the center c) at A (p - c) + t + c for
   * output p; a point q of the input lands at c + A^-1 (q - c - t). */
  double det = m[0] * m[4] - m[1] * m[3];
  if (det == 0) /* never for the recipe's ops: keep the box */
    return;
  double i0 = m[4] / det, i1 = -m[1] / det, i3 = -m[3] / det, i4 = m[0] / det;
  double cx = 0.5 * w, cy = 0.5 * h;
  double lo_x = INFINITY, hi_x = -INFINITY, lo_y = INFINITY, hi_y = -INFINITY;
  for (int k = 0; k < 4; k++) {
    double qx = (k & 1 ? b[2] : b[0]) - cx - m[2];
    double qy = (k & 2 ? b[3] : b[1]) - cy - m[5];
    double px = cx + i0 * qx + i1 * qy, py = cy + i3 * qx + i4 * qy;
    lo_x = fmin(lo_x, px), hi_x = fmax(hi_x, px);
    lo_y = fmin(lo_y, py), hi_y = fmax(hi_y, py);
  }
  b[0] = lo_x, b[1] = lo_y, b[2] = hi_x, b[3] = hi_y;
}

static double clampd(double v, double lo, double hi) {
  return v < lo ? lo : v > hi ? hi : v;
}

void sl_box_clip(double b[4], double x0, double y0, double x1, double y1) {
  b[0] = clampd(b[0], x0, x1), b[2] = clampd(b[2], x0, x1);
  b[1] = clampd(b[1], y0, y1), b[3] = clampd(b[3], y0, y1);
}

static double area(const double b[4]) {
  double w = b[2] - b[0], h = b[3] - b[1];
  return (w > 0 ? w : 0) * (h > 0 ? h : 0);
}

/* Steps 1-3 on b, clipped as the pipeline clips when clip is set. */
static void transform(const sl_aug_geom *g, int out_w, int out_h, int clip,
                      double b[4]) {
  sl_box_place(g, b);
  if (clip)
    sl_box_clip(b, g->place_x, g->place_y, g->place_x + g->place_w,
                g->place_y + g->place_h);
  if (g->flip)
    sl_box_flip(b, out_w);
  for (int i = 0; i < g->n_warps; i++) {
    sl_box_warp(b, g->warp[i], out_w, out_h);
    if (clip)
      sl_box_clip(b, 0, 0, out_w, out_h);
  }
}

uint32_t sl_boxes_map(const sl_aug_geom *g, int out_w, int out_h,
                      double min_area, const float *in, size_t stride,
                      uint32_t n, float *out, uint32_t *src, uint32_t cap) {
  uint32_t kept = 0;
  const sl_crop_box *c = &g->crop;
  for (uint32_t i = 0; i < n; i++) {
    const float *f = (const float *)((const char *)in + (size_t)i * stride);
    double b[4] = {f[0], f[1], f[2], f[3]}, u[4] = {f[0], f[1], f[2], f[3]};
    if (!(b[0] <= b[2] && b[1] <= b[3])) /* NaN or inverted: not a box */
      continue;
    if (g->centers) {
      double cx = 0.5 * (b[0] + b[2]), cy = 0.5 * (b[1] + b[3]);
      if (!(c->x < cx && cx < c->x + c->w && c->y < cy && cy < c->y + c->h))
        continue;
    }
    transform(g, out_w, out_h, 1, b);
    if (b[2] - b[0] < 1.0 || b[3] - b[1] < 1.0)
      continue;
    if (min_area > 0) {
      transform(g, out_w, out_h, 0, u);
      if (area(b) < min_area * area(u))
        continue;
    }
    if (kept < cap) {
      for (int k = 0; k < 4; k++)
        out[4 * (size_t)kept + (size_t)k] = (float)b[k];
      if (src)
        src[kept] = i;
    }
    kept++;
  }
  return kept;
}
