/* Colour ops (ops.h), each a table or a short loop. torchvision computes
 * them in float32 and truncates to uint8: the tables are built with the
 * same float32 operations in the same order, so a pixel gets the value
 * torchvision gives it (the means of contrast are summed exactly here and
 * may differ in the last bit from torch's, which moves a pixel by 1 at
 * most). */
#include <math.h>
#include <string.h>

#include "augment/ops.h"

static size_t pixels(const sl_image *im) {
  return (size_t)im->w * (size_t)im->h;
}

static uint8_t to_u8(float v) { /* clamp(0, 255) then .to(uint8) */
  return v <= 0.0f ? 0 : v >= 255.0f ? 255 : (uint8_t)v;
}

/* Applies lut[c][v] to the colour channels. */
static void apply_lut3(sl_image *im, const uint8_t lut[3][256]) {
  size_t n = pixels(im);
  uint8_t *p = im->px;
  if (im->ch == 1) {
    for (size_t i = 0; i < n; i++)
      p[i] = lut[0][p[i]];
    return;
  }
  for (size_t i = 0; i < n; i++, p += 4) {
    p[0] = lut[0][p[0]];
    p[1] = lut[1][p[1]];
    p[2] = lut[2][p[2]];
  }
}

static void apply_lut(sl_image *im, const uint8_t lut[256]) {
  uint8_t l3[3][256];
  for (int c = 0; c < 3; c++)
    memcpy(l3[c], lut, 256);
  apply_lut3(im, l3);
}

/* _blend(img, k, ratio) for a constant k: ratio * v + (1 - ratio) * k. */
static void blend_const(sl_image *im, double ratio, float k) {
  float r = (float)ratio, o = (float)(1.0 - ratio);
  uint8_t lut[256];
  for (int v = 0; v < 256; v++)
    lut[v] = to_u8(r * (float)v + o * k);
  apply_lut(im, lut);
}

void sl_op_brightness(sl_image *im, double factor) {
  blend_const(im, factor, 0.0f);
}

/* rgb_to_grayscale's luma, (0.2989 r + 0.587 g + 0.114 b).to(uint8). */
typedef struct luma_tables {
  float r[256], g[256], b[256];
} luma_tables;

static void luma_init(luma_tables *t) {
  for (int v = 0; v < 256; v++) {
    t->r[v] = 0.2989f * (float)v;
    t->g[v] = 0.587f * (float)v;
    t->b[v] = 0.114f * (float)v;
  }
}

static uint8_t luma(const luma_tables *t, const uint8_t *p) {
  return (uint8_t)(t->r[p[0]] + t->g[p[1]] + t->b[p[2]]);
}

void sl_op_contrast(sl_image *im, double factor) {
  size_t n = pixels(im);
  uint64_t sum = 0;
  if (im->ch == 1) {
    for (size_t i = 0; i < n; i++)
      sum += im->px[i];
  } else {
    luma_tables t;
    luma_init(&t);
    for (size_t i = 0; i < n; i++)
      sum += luma(&t, im->px + 4 * i);
  }
  float mean = n ? (float)((double)sum / (double)n) : 0.0f;
  blend_const(im, factor, mean);
}

void sl_op_saturation(sl_image *im, double factor) {
  if (im->ch == 1)
    return;
  luma_tables t;
  luma_init(&t);
  float r = (float)factor, o = (float)(1.0 - factor);
  float a[256], b[256];
  for (int v = 0; v < 256; v++) {
    a[v] = r * (float)v;
    b[v] = o * (float)v;
  }
  size_t n = pixels(im);
  uint8_t *p = im->px;
  for (size_t i = 0; i < n; i++, p += 4) {
    uint8_t g = luma(&t, p);
    p[0] = to_u8(a[p[0]] + b[g]);
    p[1] = to_u8(a[p[1]] + b[g]);
    p[2] = to_u8(a[p[2]] + b[g]);
  }
}

void sl_op_grayscale(sl_image *im) {
  if (im->ch == 1)
    return;
  luma_tables t;
  luma_init(&t);
  size_t n = pixels(im);
  uint8_t *p = im->px;
  for (size_t i = 0; i < n; i++, p += 4)
    p[0] = p[1] = p[2] = luma(&t, p);
}

/* torchvision's _rgb2hsv, the hue shift and _hsv2rgb on one pixel, in
 * float32, then (x * 255).to(uint8). */
static void hue_pixel(uint8_t *px, float shift) {
  float r = (float)px[0] / 255.0f, g = (float)px[1] / 255.0f,
        b = (float)px[2] / 255.0f;
  float maxc = fmaxf(r, fmaxf(g, b)), minc = fminf(r, fminf(g, b));
  int eqc = maxc == minc;
  float cr = maxc - minc;
  float s = cr / (eqc ? 1.0f : maxc);
  float div = eqc ? 1.0f : cr;
  float rc = (maxc - r) / div, gc = (maxc - g) / div, bc = (maxc - b) / div;
  float h;
  if (maxc == r)
    h = bc - gc;
  else if (maxc == g)
    h = 2.0f + rc - bc;
  else
    h = 4.0f + gc - rc;
  h = fmodf(h / 6.0f + 1.0f, 1.0f);
  h = fmodf(h + shift, 1.0f); /* Python's %: the result takes 1's sign */
  if (h < 0)
    h += 1.0f;
  float v = maxc;
  float i6 = floorf(h * 6.0f), f = h * 6.0f - i6;
  int i = ((int)i6 % 6 + 6) % 6;
  float p = fminf(fmaxf(v * (1.0f - s), 0.0f), 1.0f);
  float q = fminf(fmaxf(v * (1.0f - s * f), 0.0f), 1.0f);
  float t = fminf(fmaxf(v * (1.0f - s * (1.0f - f)), 0.0f), 1.0f);
  float o[3];
  switch (i) {
  case 0:
    o[0] = v, o[1] = t, o[2] = p;
    break;
  case 1:
    o[0] = q, o[1] = v, o[2] = p;
    break;
  case 2:
    o[0] = p, o[1] = v, o[2] = t;
    break;
  case 3:
    o[0] = p, o[1] = q, o[2] = v;
    break;
  case 4:
    o[0] = t, o[1] = p, o[2] = v;
    break;
  default:
    o[0] = v, o[1] = p, o[2] = q;
    break;
  }
  for (int c = 0; c < 3; c++)
    px[c] = to_u8(o[c] * 255.0f);
}

void sl_op_hue(sl_image *im, double hue_factor) {
  if (im->ch == 1)
    return;
  float shift = (float)hue_factor;
  size_t n = pixels(im);
  for (size_t i = 0; i < n; i++)
    hue_pixel(im->px + 4 * i, shift);
}

void sl_op_posterize(sl_image *im, int bits) {
  bits = bits < 0 ? 0 : bits > 8 ? 8 : bits;
  uint8_t mask = (uint8_t)(0xFF00u >> bits);
  uint8_t lut[256];
  for (int v = 0; v < 256; v++)
    lut[v] = (uint8_t)(v & mask);
  apply_lut(im, lut);
}

void sl_op_solarize(sl_image *im, double threshold) {
  float t = (float)threshold;
  uint8_t lut[256];
  for (int v = 0; v < 256; v++)
    lut[v] = (float)v >= t ? (uint8_t)(255 - v) : (uint8_t)v;
  apply_lut(im, lut);
}

void sl_op_invert(sl_image *im) {
  sl_op_solarize(im, -1.0);
}

/* Histograms of the colour channels (one for gray). */
static void histograms(const sl_image *im, uint64_t hist[3][256]) {
  memset(hist, 0, 3 * 256 * sizeof hist[0][0]);
  size_t n = pixels(im);
  const uint8_t *p = im->px;
  if (im->ch == 1) {
    for (size_t i = 0; i < n; i++)
      hist[0][p[i]]++;
    return;
  }
  for (size_t i = 0; i < n; i++, p += 4) {
    hist[0][p[0]]++;
    hist[1][p[1]]++;
    hist[2][p[2]]++;
  }
}

void sl_op_autocontrast(sl_image *im) {
  uint64_t hist[3][256];
  histograms(im, hist);
  uint8_t lut[3][256];
  int nc = im->ch == 1 ? 1 : 3;
  for (int c = 0; c < nc; c++) {
    int lo = 0, hi = 255;
    while (lo < 255 && !hist[c][lo])
      lo++;
    while (hi > 0 && !hist[c][hi])
      hi--;
    float mn = (float)lo, scale = 255.0f / ((float)hi - (float)lo);
    if (!isfinite(scale))
      mn = 0.0f, scale = 1.0f;
    for (int v = 0; v < 256; v++)
      lut[c][v] = to_u8(((float)v - mn) * scale);
  }
  apply_lut3(im, lut);
}

/* torchvision's _scale_channel: PIL's equalize in integers. */
static void equalize_lut(const uint64_t hist[256], uint8_t lut[256]) {
  uint64_t total = 0, last = 0;
  for (int v = 0; v < 256; v++) {
    total += hist[v];
    if (hist[v])
      last = hist[v];
  }
  uint64_t step = (total - last) / 255;
  if (step == 0) {
    for (int v = 0; v < 256; v++)
      lut[v] = (uint8_t)v;
    return;
  }
  uint64_t cum = 0;
  lut[0] = 0;
  for (int v = 0; v < 255; v++) {
    cum += hist[v];
    uint64_t x = (cum + step / 2) / step;
    lut[v + 1] = (uint8_t)(x > 255 ? 255 : x);
  }
}

void sl_op_equalize(sl_image *im) {
  uint64_t hist[3][256];
  histograms(im, hist);
  uint8_t lut[3][256];
  for (int c = 0; c < 3; c++)
    equalize_lut(hist[c], lut[c]);
  apply_lut3(im, lut);
}

void sl_op_erase(sl_image *im, int i, int j, int h, int w, const uint8_t v[3]) {
  int y0 = i < 0 ? 0 : i, x0 = j < 0 ? 0 : j;
  int y1 = i + h > im->h ? im->h : i + h, x1 = j + w > im->w ? im->w : j + w;
  for (int y = y0; y < y1; y++) {
    uint8_t *row = im->px + ((size_t)y * (size_t)im->w) * (size_t)im->ch;
    for (int x = x0; x < x1; x++) {
      if (im->ch == 1) {
        row[x] = v[0];
      } else {
        row[4 * x] = v[0];
        row[4 * x + 1] = v[1];
        row[4 * x + 2] = v[2];
      }
    }
  }
}
