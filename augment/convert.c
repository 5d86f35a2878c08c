/* u8 pixels to u8/fp16/bf16/fp32, NCHW/NHWC, flipped or not: see
 * convert.h. Every output element is one table lookup. */
#include "augment/convert.h"

#include <math.h>
#include <string.h>

#include <libyuv/convert_from_argb.h>
#include <libyuv/planar_functions.h>

void sl_convert_tables_init(sl_convert_tables *t, const sl_aug_params *p) {
  for (int c = 0; c < 3; c++) {
    for (int v = 0; v < 256; v++) {
      double x = ((double)v / 255.0 - (double)p->mean[c]) / (double)p->std[c];
      float f = (float)x;
      t->f32[c][v] = f;
      t->h16[c][v] =
          p->dtype == SL_DTYPE_BF16 ? sl_f32_to_bf16(f) : sl_f32_to_f16(f);
    }
  }
}

/* One output row of channel-plane or interleaved elements. T is the
 * element type, LUT(c, v) the value of channel c for byte v. */
#define CONVERT_ROWS(T, LUT)                                                   \
  do {                                                                         \
    T *o = (T *)dst;                                                           \
    size_t plane = (size_t)h * (size_t)w;                                      \
    for (int y = 0; y < h; y++) {                                              \
      const uint8_t *s = src + (size_t)y * (size_t)w * (size_t)src_ch;         \
      if (nch == 1) {                                                          \
        T *d0 = o + (size_t)y * (size_t)w;                                     \
        for (int x = 0; x < w; x++) {                                          \
          int sx = flip ? w - 1 - x : x;                                       \
          d0[x] = LUT(0, s[sx * src_ch]);                                      \
        }                                                                      \
      } else if (nchw) {                                                       \
        T *d0 = o + (size_t)y * (size_t)w, *d1 = d0 + plane, *d2 = d1 + plane; \
        for (int x = 0; x < w; x++) {                                          \
          const uint8_t *q = s + (size_t)(flip ? w - 1 - x : x) * 4;           \
          d0[x] = LUT(0, q[0]);                                                \
          d1[x] = LUT(1, q[1]);                                                \
          d2[x] = LUT(2, q[2]);                                                \
        }                                                                      \
      } else {                                                                 \
        T *d = o + (size_t)y * (size_t)w * 3;                                  \
        for (int x = 0; x < w; x++) {                                          \
          const uint8_t *q = s + (size_t)(flip ? w - 1 - x : x) * 4;           \
          d[3 * x] = LUT(0, q[0]);                                             \
          d[3 * x + 1] = LUT(1, q[1]);                                         \
          d[3 * x + 2] = LUT(2, q[2]);                                         \
        }                                                                      \
      }                                                                        \
    }                                                                          \
  } while (0)

#define LUT_F32(c, v) (t->f32[c][v])
#define LUT_H16(c, v) (t->h16[c][v])

/* u8 output: libyuv's SIMD row functions (mirror, split, pack). In
 * memory libyuv's "ARGB" is B,G,R,A; ours is R,G,B,X, so its "B" plane is
 * our R and ARGBToRGB24 keeps our byte order. A flipped row is mirrored in
 * chunks through a small stack buffer: chunk [x0, x1) of the output is the
 * reverse of input [w - x1, w - x0). */
enum { k_chunk = 512 };

static void u8_span(const sl_aug_params *p, const uint8_t *s, int n,
                    size_t plane, uint8_t *dst, size_t at) {
  if (p->layout == SL_LAYOUT_NCHW)
    SplitARGBPlane(s, n * 4, dst + 2 * plane + at, n, dst + plane + at, n,
                   dst + at, n, NULL, 0, n, 1);
  else
    ARGBToRGB24(s, n * 4, dst + 3 * at, n * 3, n, 1);
}

static void convert_u8(const sl_aug_params *p, const uint8_t *src, int src_ch,
                       int h, int w, int flip, uint8_t *dst) {
  size_t plane = (size_t)h * (size_t)w;
  if (p->channels == 1) { /* gray output comes from a gray decode */
    if (flip)
      MirrorPlane(src, w, dst, w, w, h);
    else
      memcpy(dst, src, plane);
    return;
  }
  if (!flip) {
    if (p->layout == SL_LAYOUT_NCHW)
      SplitARGBPlane(src, w * 4, dst + 2 * plane, w, dst + plane, w, dst, w,
                     NULL, 0, w, h);
    else
      ARGBToRGB24(src, w * 4, dst, w * 3, w, h);
    return;
  }
  uint8_t tmp[k_chunk * 4];
  for (int y = 0; y < h; y++) {
    const uint8_t *row = src + (size_t)y * (size_t)w * 4;
    for (int x0 = 0; x0 < w; x0 += k_chunk) {
      int n = w - x0 < k_chunk ? w - x0 : k_chunk;
      ARGBMirror(row + (size_t)(w - x0 - n) * 4, n * 4, tmp, n * 4, n, 1);
      u8_span(p, tmp, n, plane, dst, (size_t)y * (size_t)w + (size_t)x0);
    }
  }
  (void)src_ch;
}

void sl_convert_out(const sl_convert_tables *t, const sl_aug_params *p,
                    const uint8_t *src, int src_ch, int h, int w, int flip,
                    void *dst) {
  int nch = p->channels == 1 ? 1 : 3;
  int nchw = p->layout == SL_LAYOUT_NCHW;
  switch (p->dtype) {
  case SL_DTYPE_U8:
    convert_u8(p, src, src_ch, h, w, flip, dst);
    break;
  case SL_DTYPE_FP32:
    CONVERT_ROWS(float, LUT_F32);
    break;
  default: /* fp16, bf16 */
    CONVERT_ROWS(uint16_t, LUT_H16);
    break;
  }
}

/* One element of value v (normalized units) for channel c. */
static void put_elem(const sl_aug_params *p, void *dst, size_t at, int c,
                     double v) {
  switch (p->dtype) {
  case SL_DTYPE_U8: {
    double b = nearbyint((v * p->std[c] + p->mean[c]) * 255.0);
    ((uint8_t *)dst)[at] = (uint8_t)(b < 0 ? 0 : b > 255 ? 255 : b);
    break;
  }
  case SL_DTYPE_FP32:
    ((float *)dst)[at] = (float)v;
    break;
  case SL_DTYPE_BF16:
    ((uint16_t *)dst)[at] = sl_f32_to_bf16((float)v);
    break;
  default:
    ((uint16_t *)dst)[at] = sl_f32_to_f16((float)v);
    break;
  }
}

/* Bytes of one element of the sample's dtype. */
static size_t elem_bytes(const sl_aug_params *p) {
  return p->dtype == SL_DTYPE_U8 ? 1 : p->dtype == SL_DTYPE_FP32 ? 4 : 2;
}

/* n elements, `step` elements apart from element `at`, set to the element
 * `one` (elem_bytes(p) bytes). */
static void fill_elems(const sl_aug_params *p, void *dst, size_t at,
                       size_t step, int n, const void *one) {
  size_t eb = elem_bytes(p);
  uint8_t *d = (uint8_t *)dst + at * eb;
  if (eb == 1 && step == 1) {
    memset(d, *(const uint8_t *)one, (size_t)n);
    return;
  }
  for (int k = 0; k < n; k++, d += step * eb)
    memcpy(d, one, eb);
}

void sl_convert_erase(const sl_aug_params *p, void *dst, int h, int w,
                      const sl_erase_box *box, int random, sl_rng *rng) {
  if (!box->on)
    return;
  int nch = p->channels == 1 ? 1 : 3;
  int planar = p->layout == SL_LAYOUT_NCHW || nch == 1;
  size_t plane = (size_t)h * (size_t)w;
  int y0 = box->i < 0 ? 0 : box->i, x0 = box->j < 0 ? 0 : box->j;
  int y1 = box->i + box->h < h ? box->i + box->h : h;
  int x1 = box->j + box->w < w ? box->j + box->w : w;
  if (y1 <= y0 || x1 <= x0)
    return;
  for (int c = 0; c < nch; c++) {
    union {
      float f;
      uint16_t h;
      uint8_t u;
    } one; /* the constant value's element, made once */
    if (!random)
      put_elem(p, &one, 0, c, 0.0);
    for (int y = y0; y < y1; y++) {
      size_t px = (size_t)y * (size_t)w + (size_t)x0;
      size_t at =
          planar ? (size_t)c * plane + px : px * (size_t)nch + (size_t)c;
      size_t step = planar ? 1 : (size_t)nch;
      if (!random) {
        fill_elems(p, dst, at, step, x1 - x0, &one);
        continue;
      }
      for (int x = x0; x < x1; x++, at += step) /* torchvision's draw order */
        put_elem(p, dst, at, c, sl_rng_normal(rng));
    }
  }
}
