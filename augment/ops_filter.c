/* Filters (ops.h): adjust_sharpness and gaussian_blur. Both convolve in
 * float32 and round half to even to uint8, as torchvision's conv2d path;
 * the blur runs as two 1-D passes (torchvision's 2-D kernel is the outer
 * product of the same 1-D kernels, so only the summation order differs). */
#include <math.h>
#include <string.h>

#include "augment/ops.h"

size_t sl_op_scratch_bytes(size_t pixels, size_t max_w) {
  return pixels * (4 + 4 * sizeof(float)) +
         sl_op_line_floats(max_w) * sizeof(float);
}

size_t sl_op_line_floats(size_t max_w) {
  return (2 * max_w + 2 * 256) * 4;
}

/* Round half to even for 0 <= v < 2^22 without a libm call, so the loops
 * vectorize: adding 1.5 * 2^23 leaves no fraction bits, and the addition
 * rounds to nearest even. */
static inline float round_even(float v) {
  const float magic = 12582912.0f;
  return (v + magic) - magic;
}

static inline uint8_t sat_u8(float v) { /* v already integral */
  v = v < 0.0f ? 0.0f : v > 255.0f ? 255.0f : v;
  return (uint8_t)v;
}

void sl_op_sharpness(sl_image *im, double factor, sl_op_scratch *s) {
  int w = im->w, h = im->h, ch = im->ch;
  if (w <= 2 || h <= 2)
    return;
  size_t stride = (size_t)w * (size_t)ch;
  uint8_t *deg = s->img; /* the smoothed image; border = the image */
  memcpy(deg, im->px, stride * (size_t)h);
  const float side = 1.0f / 13.0f, mid = 5.0f / 13.0f;
  const size_t c = (size_t)ch, end = stride - c;
  for (int y = 1; y < h - 1; y++) {
    const uint8_t *restrict r0 = im->px + (size_t)(y - 1) * stride;
    const uint8_t *restrict r1 = r0 + stride, *restrict r2 = r1 + stride;
    uint8_t *restrict d = deg + (size_t)y * stride;
    for (size_t k = c; k < end; k++) { /* X bytes too: never read */
      int ring = r0[k - c] + r0[k] + r0[k + c] + r1[k - c] + r1[k + c] +
                 r2[k - c] + r2[k] + r2[k + c];
      d[k] = sat_u8(round_even(side * (float)ring + mid * (float)r1[k]));
    }
  }
  float a = (float)factor, o = (float)(1.0 - factor);
  size_t n = stride * (size_t)h;
  uint8_t *restrict px = im->px;
  const uint8_t *restrict dg = deg;
  for (size_t i = 0; i < n; i++) {
    float v = a * (float)px[i] + o * (float)dg[i];
    v = v < 0.0f ? 0.0f : v > 255.0f ? 255.0f : v;
    px[i] = (uint8_t)v;
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
  if (kx < 1 || ky < 1 || kx > k_max_kernel || ky > k_max_kernel ||
      (size_t)im->w > s->line_w)
    return;
  float wx[k_max_kernel], wy[k_max_kernel];
  kernel1d(kx, sigma_x, wx);
  kernel1d(ky, sigma_y, wy);
  int w = im->w, h = im->h, ch = im->ch;
  int hx = kx / 2, hy = ky / 2;
  size_t stride = (size_t)w * (size_t)ch, c = (size_t)ch;
  float *tmp = s->rows; /* the horizontal pass, h x stride */
  float *pad = s->line; /* one row, reflect-padded */
  float *acc = s->line + (stride + 2 * (size_t)hx * c); /* one output row */
  for (int y = 0; y < h; y++) {
    const uint8_t *row = im->px + (size_t)y * stride;
    for (int x = -hx; x < w + hx; x++) {
      const uint8_t *p = row + (size_t)reflect(x, w) * c;
      for (size_t k = 0; k < c; k++)
        pad[(size_t)(x + hx) * c + k] = (float)p[k];
    }
    float *t = tmp + (size_t)y * stride;
    for (size_t k = 0; k < stride; k++)
      t[k] = 0.0f;
    for (int i = 0; i < kx; i++) {
      const float wi = wx[i], *src = pad + (size_t)i * c;
      for (size_t k = 0; k < stride; k++)
        t[k] += wi * src[k];
    }
  }
  for (int y = 0; y < h; y++) {
    for (size_t k = 0; k < stride; k++)
      acc[k] = 0.0f;
    for (int i = 0; i < ky; i++) {
      const float wi = wy[i],
                  *src = tmp + (size_t)reflect(y - hy + i, h) * stride;
      for (size_t k = 0; k < stride; k++)
        acc[k] += wi * src[k];
    }
    uint8_t *out = im->px + (size_t)y * stride;
    for (size_t k = 0; k < stride; k++) /* X bytes too: never read */
      out[k] = sat_u8(round_even(acc[k]));
  }
}
