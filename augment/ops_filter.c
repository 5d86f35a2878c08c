/* Filters (ops.h): adjust_sharpness and gaussian_blur. Both convolve in
 * float32 and round half to even to uint8, as torchvision's conv2d path;
 * the blur runs as two 1-D passes (torchvision's 2-D kernel is the outer
 * product of the same 1-D kernels, so only the summation order differs). */
#include <math.h>
#include <string.h>

#include "augment/ops.h"

size_t sl_op_scratch_bytes(size_t pixels) {
  return pixels * (4 + 4 * 4);
}

static uint8_t round_u8(float v) {
  v = nearbyintf(v);
  return v <= 0.0f ? 0 : v >= 255.0f ? 255 : (uint8_t)v;
}

static uint8_t to_u8(float v) {
  return v <= 0.0f ? 0 : v >= 255.0f ? 255 : (uint8_t)v;
}

void sl_op_sharpness(sl_image *im, double factor, sl_op_scratch *s) {
  int w = im->w, h = im->h, ch = im->ch;
  if (w <= 2 || h <= 2)
    return;
  int nc = ch == 1 ? 1 : 3;
  size_t stride = (size_t)w * (size_t)ch;
  uint8_t *deg = s->img; /* the smoothed image; border = the image */
  memcpy(deg, im->px, stride * (size_t)h);
  const float side = 1.0f / 13.0f, mid = 5.0f / 13.0f;
  for (int y = 1; y < h - 1; y++) {
    const uint8_t *r0 = im->px + (size_t)(y - 1) * stride, *r1 = r0 + stride,
                  *r2 = r1 + stride;
    uint8_t *d = deg + (size_t)y * stride;
    for (int x = 1; x < w - 1; x++) {
      for (int c = 0; c < nc; c++) {
        size_t l = (size_t)(x - 1) * (size_t)ch + (size_t)c, m = l + (size_t)ch,
               r = m + (size_t)ch;
        float sum = side * (float)(r0[l] + r0[m] + r0[r] + r1[l] + r1[r] +
                                   r2[l] + r2[m] + r2[r]) +
                    mid * (float)r1[m];
        d[m] = round_u8(sum);
      }
    }
  }
  float a = (float)factor, o = (float)(1.0 - factor);
  size_t n = (size_t)w * (size_t)h;
  for (size_t i = 0; i < n; i++)
    for (int c = 0; c < nc; c++) {
      size_t k = i * (size_t)ch + (size_t)c;
      im->px[k] = to_u8(a * (float)im->px[k] + o * (float)deg[k]);
    }
}

/* torchvision's _get_gaussian_kernel1d in float32. k <= 255. */
static void kernel1d(int k, double sigma, float *out) {
  float half = (float)(k - 1) * 0.5f, sum = 0.0f, sg = (float)sigma;
  for (int i = 0; i < k; i++) {
    /* linspace(-half, half, k) */
    float x =
        k == 1 ? -half : -half + (float)i * (2.0f * half / (float)(k - 1));
    float t = x / sg;
    out[i] = expf(-0.5f * t * t);
    sum += out[i];
  }
  for (int i = 0; i < k; i++)
    out[i] /= sum;
}

/* Reflect padding ("reflect": the edge pixel is not repeated), folded
 * again for offsets beyond the image. */
static int reflect(int i, int n) {
  if (n == 1)
    return 0;
  int period = 2 * (n - 1);
  i %= period;
  if (i < 0)
    i += period;
  return i < n ? i : period - i;
}

enum { k_max_kernel = 255 };

void sl_op_gaussian_blur(sl_image *im, int kx, int ky, double sigma_x,
                         double sigma_y, sl_op_scratch *s) {
  if (kx < 1 || ky < 1 || kx > k_max_kernel || ky > k_max_kernel)
    return;
  float wx[k_max_kernel], wy[k_max_kernel];
  kernel1d(kx, sigma_x, wx);
  kernel1d(ky, sigma_y, wy);
  int w = im->w, h = im->h, ch = im->ch, nc = ch == 1 ? 1 : 3;
  int hx = kx / 2, hy = ky / 2;
  float *tmp = s->rows; /* the horizontal pass, ch floats a pixel */
  for (int y = 0; y < h; y++) {
    const uint8_t *row = im->px + (size_t)y * (size_t)w * (size_t)ch;
    float *t = tmp + (size_t)y * (size_t)w * (size_t)ch;
    for (int x = 0; x < w; x++) {
      float acc[3] = {0, 0, 0};
      for (int i = 0; i < kx; i++) {
        const uint8_t *p = row + (size_t)reflect(x - hx + i, w) * (size_t)ch;
        for (int c = 0; c < nc; c++)
          acc[c] += wx[i] * (float)p[c];
      }
      for (int c = 0; c < nc; c++)
        t[(size_t)x * (size_t)ch + (size_t)c] = acc[c];
    }
  }
  size_t stride = (size_t)w * (size_t)ch;
  for (int y = 0; y < h; y++) {
    uint8_t *out = im->px + (size_t)y * stride;
    for (size_t k = 0; k < stride; k++) {
      if (ch == 4 && k % 4 == 3)
        continue;
      float acc = 0.0f;
      for (int i = 0; i < ky; i++)
        acc += wy[i] * tmp[(size_t)reflect(y - hy + i, h) * stride + k];
      out[k] = round_u8(acc);
    }
  }
}
