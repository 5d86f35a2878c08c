/* Affine warps (ops.h): torchvision's inverse affine matrix and
 * F_t.affine's sampling (an affine grid over pixel centers, grid_sample
 * with align_corners = False and zero padding, the mask blend for a fill,
 * round half to even to uint8). */
#include <math.h>
#include <string.h>

#include "augment/ops.h"
#include "augment/simd.h"

static double radians(double deg) {
  return deg * (M_PI / 180.0);
}

#if defined(__SSE2__)
/* One RGBX pixel as four floats. */
static inline __m128 px4(const uint8_t *p) {
  int32_t v;
  memcpy(&v, p, 4);
  __m128i x = _mm_cvtsi32_si128(v), z = _mm_setzero_si128();
  return _mm_cvtepi32_ps(_mm_unpacklo_epi16(_mm_unpacklo_epi8(x, z), z));
}
#endif

/* torchvision's _get_inverse_affine_matrix: the output-to-input map of an
 * affine transform, in coordinates whose origin is the image's center;
 * center is given in those coordinates (torchvision's center_f). angle
 * and shear in degrees, as F.affine takes them (F.rotate passes -angle). */
static void sl_affine_inverse(double cx, double cy, double angle, double tx,
                              double ty, double scale, double shear_x,
                              double shear_y, double m[6]) {
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

/* Round half to even for |v| < 2^51 without a libm call: adding 1.5 *
 * 2^52 leaves no fraction bits, and the addition rounds to nearest even. */
static inline double round_even(double v) {
  const double magic = 6755399441055744.0;
  return (v + magic) - magic;
}

static inline double floor_d(double v) { /* |v| < 2^62 */
  double t = (double)(int64_t)v;
  return t > v ? t - 1.0 : t;
}

static uint8_t round_u8(double v) {
  v = round_even(v);
  return v <= 0.0 ? 0 : v >= 255.0 ? 255 : (uint8_t)v;
}

/* Pixels [a, b) of a row set to `outside` (X too, for RGBX: never read). */
static void fill_pixels(uint8_t *row, int64_t a, int64_t b, int ch,
                        const uint8_t outside[4]) {
  if (ch == 1) {
    memset(row + a, outside[0], (size_t)(b - a));
    return;
  }
  for (int64_t x = a; x < b; x++)
    memcpy(row + 4 * (size_t)x, outside, 4);
}

/* An output row of a nearest warp whose rows are shifted copies: the input
 * row `in` (NULL: none) from column x + dx on, `outside` where that falls
 * off it. in may be out itself (memmove). */
static void shifted_row(const uint8_t *in, uint8_t *out, int w, int ch,
                        int64_t dx, const uint8_t outside[4]) {
  int64_t x0 = -dx < 0 ? 0 : -dx > w ? w : -dx;          /* first inside */
  int64_t x1 = w - dx < 0 ? 0 : w - dx > w ? w : w - dx; /* past last */
  if (!in || x1 <= x0)
    x0 = x1 = 0;
  if (x1 > x0)
    memmove(out + (size_t)x0 * (size_t)ch, in + (size_t)(x0 + dx) * (size_t)ch,
            (size_t)(x1 - x0) * (size_t)ch);
  fill_pixels(out, 0, x0, ch, outside);
  fill_pixels(out, x1, w, ch, outside);
}

/* Where output row y of a shifted warp comes from: the input row (-1: none)
 * and the column shift (round(x + c) = x + round(c) for an integer x). */
static int shift_source(int y, int w, int h, const double m[6], int64_t *dx) {
  double yc = (double)y - (double)(h - 1) * 0.5;
  double cx = m[1] * yc + m[2], sy = round_even((double)y + m[5]);
  *dx = (int64_t)round_even(cx < -4.0 * w  ? -4.0 * w
                            : cx > 4.0 * w ? 4.0 * w
                                           : cx);
  return sy < 0 || sy >= h ? -1 : (int)sy;
}

/* Translations and x-shears with nearest sampling (m = [1 a b; 0 1 c]
 * with no tie to round): each output row is an input row shifted by whole
 * pixels, done in place. Source rows are round(y + c), nondecreasing in y
 * and within one of y + c, so they all lie on one side of their output
 * row (or on it): top to bottom when they lie below, bottom to top when
 * above, each source row is read before it is overwritten. Returns 0
 * (nothing done) for other warps. */
static int warp_shifted(sl_image *im, const double m[6],
                        const uint8_t outside[4]) {
  int w = im->w, h = im->h, ch = im->ch;
  if (!(m[0] == 1.0 && m[3] == 0.0 && m[4] == 1.0))
    return 0;
  double oy = (double)(h - 1) * 0.5;
  int up = 0; /* some row reads a row above itself */
  for (int y = 0; y < h; y++) {
    double cx = m[1] * ((double)y - oy) + m[2], cy = m[5];
    if (cx - floor_d(cx) == 0.5 || cy - floor_d(cy) == 0.5)
      return 0; /* a tie: the general path rounds each pixel */
    int64_t dx;
    int sy = shift_source(y, w, h, m, &dx);
    up |= sy >= 0 && sy < y;
  }
  size_t stride = (size_t)w * (size_t)ch;
  for (int k = 0; k < h; k++) {
    int y = up ? h - 1 - k : k;
    int64_t dx;
    int sy = shift_source(y, w, h, m, &dx);
    shifted_row(sy < 0 ? NULL : im->px + (size_t)sy * stride,
                im->px + (size_t)y * stride, w, ch, dx, outside);
  }
  return 1;
}

#if SL_AUGMENT_AVX2
/* warp_nearest's row loop for RGBX, four columns at a time: the same
 * double operations, then the four pixels (or the fill) gathered at once.
 * Returns the columns it did. */
__attribute__((target("avx2"))) static int
row_nearest_avx2(const uint8_t *src, uint8_t *out, int w, int h,
                 const double m[6], double bx, double by, double ox,
                 const uint8_t outside[4]) {
  const __m256d vm0 = _mm256_set1_pd(m[0]), vm3 = _mm256_set1_pd(m[3]);
  const __m256d vbx = _mm256_set1_pd(bx), vby = _mm256_set1_pd(by);
  const __m256d magic = _mm256_set1_pd(6755399441055744.0);
  const __m256d lo = _mm256_set1_pd(-1.0), hx = _mm256_set1_pd((double)w),
                hy = _mm256_set1_pd((double)h);
  const __m128i vw = _mm_set1_epi32(w), vh = _mm_set1_epi32(h),
                neg = _mm_set1_epi32(-1);
  int32_t fill;
  memcpy(&fill, outside, 4);
  const __m128i vfill = _mm_set1_epi32(fill);
  __m256d xc =
      _mm256_sub_pd(_mm256_setr_pd(0.0, 1.0, 2.0, 3.0), _mm256_set1_pd(ox));
  const __m256d four = _mm256_set1_pd(4.0);
  int x = 0;
  for (; x + 4 <= w; x += 4, xc = _mm256_add_pd(xc, four)) {
    __m256d ix = _mm256_add_pd(_mm256_mul_pd(vm0, xc), vbx);
    __m256d iy = _mm256_add_pd(_mm256_mul_pd(vm3, xc), vby);
    ix = _mm256_sub_pd(_mm256_add_pd(ix, magic), magic);
    iy = _mm256_sub_pd(_mm256_add_pd(iy, magic), magic);
    ix = _mm256_min_pd(_mm256_max_pd(ix, lo), hx);
    iy = _mm256_min_pd(_mm256_max_pd(iy, lo), hy);
    __m128i rx = _mm256_cvttpd_epi32(ix), ry = _mm256_cvttpd_epi32(iy);
    __m128i in = _mm_and_si128(
        _mm_and_si128(_mm_cmpgt_epi32(rx, neg), _mm_cmpgt_epi32(vw, rx)),
        _mm_and_si128(_mm_cmpgt_epi32(ry, neg), _mm_cmpgt_epi32(vh, ry)));
    __m128i idx = _mm_add_epi32(_mm_mullo_epi32(ry, vw), rx);
    __m128i px = _mm_mask_i32gather_epi32(vfill, (const int *)(const void *)src,
                                          idx, in, 4);
    _mm_storeu_si128((__m128i *)(void *)(out + 4 * (size_t)x), px);
  }
  return x;
}
#endif

/* Output pixel o of a bilinear warp, sampling the input at (ix, iy): the
 * four neighbours' float32 blend where all four are inside (grid_sample's
 * arithmetic), else the zero-padded blend in doubles, with torchvision's
 * mask blend for a fill. */
static inline void bilinear_pixel(const uint8_t *src, uint8_t *o, int w, int h,
                                  int ch, double ix, double iy,
                                  const double *fill) {
  size_t stride = (size_t)w * (size_t)ch;
  int nc = ch == 1 ? 1 : 3;
  if (!(ix > -2.0 && ix < w + 1.0 && iy > -2.0 && iy < h + 1.0)) {
    for (int c = 0; c < nc; c++) /* no corner inside */
      o[c] = fill ? round_u8(fill[c]) : 0;
    return;
  }
  double fx = floor_d(ix), fy = floor_d(iy);
  double ax = ix - fx, ay = iy - fy;
  if (fx >= 0 && fx + 1 < w && fy >= 0 && fy + 1 < h) { /* inside */
    /* float32 weights and sums, as grid_sample computes them */
    float fa = (float)ax, fb = (float)ay;
    float w0 = (1 - fa) * (1 - fb), w1 = fa * (1 - fb), w2 = (1 - fa) * fb,
          w3 = fa * fb;
    const uint8_t *p = src + (size_t)fy * stride + (size_t)fx * (size_t)ch;
    const uint8_t *q = p + stride;
#if defined(__SSE2__)
    if (ch == 4) { /* the four channels at once, the same float ops */
      __m128 v = _mm_add_ps(
          _mm_add_ps(_mm_add_ps(_mm_mul_ps(_mm_set1_ps(w0), px4(p)),
                                _mm_mul_ps(_mm_set1_ps(w1), px4(p + 4))),
                     _mm_mul_ps(_mm_set1_ps(w2), px4(q))),
          _mm_mul_ps(_mm_set1_ps(w3), px4(q + 4)));
      const __m128 magic = _mm_set1_ps(12582912.0f);
      v = _mm_sub_ps(_mm_add_ps(v, magic), magic);
      v = _mm_min_ps(_mm_max_ps(v, _mm_setzero_ps()), _mm_set1_ps(255.0f));
      __m128i b = _mm_cvttps_epi32(v);
      b = _mm_packs_epi32(b, b);
      b = _mm_packus_epi16(b, b);
      int32_t out4 = _mm_cvtsi128_si32(b);
      memcpy(o, &out4, 4); /* X too: never read */
      return;
    }
#endif
    for (int c = 0; c < nc; c++) {
      float v = w0 * (float)p[c] + w1 * (float)p[ch + c] + w2 * (float)q[c] +
                w3 * (float)q[ch + c];
      v = (v + 12582912.0f) - 12582912.0f; /* round half to even */
      o[c] = (uint8_t)(v < 0.0f ? 0.0f : v > 255.0f ? 255.0f : v);
    }
    return;
  }
  double wt[4] = {(1 - ax) * (1 - ay), ax * (1 - ay), (1 - ax) * ay, ax * ay};
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

#if SL_AUGMENT_AVX2
/* The bilinear blend of one pair of output pixels: lanes 0-3 pixel k,
 * 4-7 pixel k + 1; corners c[j] (8 bytes: the two pixels' corner j) and
 * weights w[j] (lanes k, k + 1). The scalar path's float operations, in
 * its order: ((w0 p00 + w1 p01) + w2 p10) + w3 p11, rounded half to even. */
__attribute__((target("avx2"), always_inline)) static inline __m256i
blend_pair(const __m128i c[4], const __m128 w[4], __m256i spread) {
  __m256 acc = _mm256_setzero_ps();
  for (int j = 0; j < 4; j++) {
    __m256 px = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(c[j]));
    __m256 wj = _mm256_permutevar8x32_ps(_mm256_castps128_ps256(w[j]), spread);
    __m256 t = _mm256_mul_ps(wj, px);
    acc = j == 0 ? t : _mm256_add_ps(acc, t);
  }
  const __m256 magic = _mm256_set1_ps(12582912.0f);
  acc = _mm256_sub_ps(_mm256_add_ps(acc, magic), magic);
  acc = _mm256_min_ps(_mm256_max_ps(acc, _mm256_setzero_ps()),
                      _mm256_set1_ps(255.0f));
  return _mm256_cvttps_epi32(acc);
}

/* sl_op_warp's bilinear row loop for RGBX, four columns a step: where the
 * four sampling squares lie inside the image, the scalar path's double and
 * float operations four at a time with the corners gathered, else
 * bilinear_pixel for each. Returns the columns it did. */
__attribute__((target("avx2"))) static int
row_bilinear_avx2(const uint8_t *src, uint8_t *out, int w, int h,
                  const double m[6], double bx, double by, double ox,
                  const double *fill) {
  const __m256d vm0 = _mm256_set1_pd(m[0]), vm3 = _mm256_set1_pd(m[3]);
  const __m256d vbx = _mm256_set1_pd(bx), vby = _mm256_set1_pd(by);
  const __m256d zero = _mm256_setzero_pd(), wl = _mm256_set1_pd((double)w),
                hl = _mm256_set1_pd((double)h), one = _mm256_set1_pd(1.0);
  const __m128 onef = _mm_set1_ps(1.0f);
  const __m128i vw = _mm_set1_epi32(w), i1 = _mm_set1_epi32(1);
  const __m256i lo2 = _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1),
                hi2 = _mm256_setr_epi32(2, 2, 2, 2, 3, 3, 3, 3);
  const int *base = (const int *)(const void *)src;
  __m256d xc =
      _mm256_sub_pd(_mm256_setr_pd(0.0, 1.0, 2.0, 3.0), _mm256_set1_pd(ox));
  const __m256d four = _mm256_set1_pd(4.0);
  int x = 0;
  for (; x + 4 <= w; x += 4, xc = _mm256_add_pd(xc, four)) {
    __m256d ix = _mm256_add_pd(_mm256_mul_pd(vm0, xc), vbx);
    __m256d iy = _mm256_add_pd(_mm256_mul_pd(vm3, xc), vby);
    __m256d fx = _mm256_floor_pd(ix), fy = _mm256_floor_pd(iy);
    /* fx >= 0 && fx + 1 < w && fy >= 0 && fy + 1 < h (NaN: no) */
    __m256d in = _mm256_and_pd(
        _mm256_and_pd(_mm256_cmp_pd(fx, zero, _CMP_GE_OQ),
                      _mm256_cmp_pd(_mm256_add_pd(fx, one), wl, _CMP_LT_OQ)),
        _mm256_and_pd(_mm256_cmp_pd(fy, zero, _CMP_GE_OQ),
                      _mm256_cmp_pd(_mm256_add_pd(fy, one), hl, _CMP_LT_OQ)));
    if (_mm256_movemask_pd(in) != 0xF) {
      double vx[4], vy[4];
      _mm256_storeu_pd(vx, ix), _mm256_storeu_pd(vy, iy);
      for (int k = 0; k < 4; k++)
        bilinear_pixel(src, out + 4 * (size_t)(x + k), w, h, 4, vx[k], vy[k],
                       fill);
      continue;
    }
    __m128 fa = _mm256_cvtpd_ps(_mm256_sub_pd(ix, fx));
    __m128 fb = _mm256_cvtpd_ps(_mm256_sub_pd(iy, fy));
    __m128 ga = _mm_sub_ps(onef, fa), gb = _mm_sub_ps(onef, fb);
    __m128 wt[4] = {_mm_mul_ps(ga, gb), _mm_mul_ps(fa, gb), _mm_mul_ps(ga, fb),
                    _mm_mul_ps(fa, fb)};
    __m128i idx = _mm_add_epi32(_mm_mullo_epi32(_mm256_cvttpd_epi32(fy), vw),
                                _mm256_cvttpd_epi32(fx));
    __m128i below = _mm_add_epi32(idx, vw);
    __m128i c01[4] = {_mm_i32gather_epi32(base, idx, 4),
                      _mm_i32gather_epi32(base, _mm_add_epi32(idx, i1), 4),
                      _mm_i32gather_epi32(base, below, 4),
                      _mm_i32gather_epi32(base, _mm_add_epi32(below, i1), 4)};
    __m128i c23[4];
    for (int j = 0; j < 4; j++)
      c23[j] = _mm_srli_si128(c01[j], 8);
    __m256i a = blend_pair(c01, wt, lo2), b = blend_pair(c23, wt, hi2);
    /* 16-bit packs per 128-bit lane: 64-bit blocks px0, px2, px1, px3 */
    __m256i q = _mm256_permute4x64_epi64(_mm256_packs_epi32(a, b), 0xD8);
    __m256i bytes = _mm256_packus_epi16(q, q); /* px01 px01 | px23 px23 */
    _mm_storeu_si128(
        (__m128i *)(void *)(out + 4 * (size_t)x),
        _mm256_castsi256_si128(_mm256_permute4x64_epi64(bytes, 0x08)));
  }
  return x;
}
#endif

/* A nearest warp, the general case: output pixel (x, y) takes input pixel
 * (round(ix), round(iy)) or the fill. The coordinates are the scalar
 * formula's double operations in the same order (a product, then a sum;
 * round half to even), two columns at a time with SSE2. */
static void warp_nearest(const uint8_t *src, uint8_t *dst, int w, int h, int ch,
                         const double m[6], const uint8_t outside[4]) {
  size_t stride = (size_t)w * (size_t)ch;
  double ox = (double)(w - 1) * 0.5, oy = (double)(h - 1) * 0.5;
#if SL_AUGMENT_AVX2
  /* the gather indexes with 32-bit offsets */
  int avx2 = sl_avx2() && (size_t)w * (size_t)h <= INT32_MAX / 4;
#endif
  for (int y = 0; y < h; y++) {
    double yc = (double)y - oy;
    uint8_t *out = dst + (size_t)y * stride;
    double bx = m[1] * yc + m[2] + ox, by = m[4] * yc + m[5] + oy;
    int x = 0;
#if SL_AUGMENT_AVX2
    if (ch == 4 && avx2)
      x = row_nearest_avx2(src, out, w, h, m, bx, by, ox, outside);
#endif
#if defined(__SSE2__)
    const __m128d vm0 = _mm_set1_pd(m[0]), vm3 = _mm_set1_pd(m[3]);
    const __m128d vbx = _mm_set1_pd(bx), vby = _mm_set1_pd(by);
    const __m128d vox = _mm_set1_pd(ox),
                  magic = _mm_set1_pd(6755399441055744.0);
    /* Clamped to [-1, side] before the int conversion: the inside test
     * gives the same answer, and no value overflows int32. */
    const __m128d lo = _mm_set1_pd(-1.0), hx = _mm_set1_pd((double)w),
                  hy = _mm_set1_pd((double)h);
    for (; x + 2 <= w; x += 2) {
      __m128d xc = _mm_sub_pd(_mm_set_pd((double)(x + 1), (double)x), vox);
      __m128d ix = _mm_add_pd(_mm_mul_pd(vm0, xc), vbx);
      __m128d iy = _mm_add_pd(_mm_mul_pd(vm3, xc), vby);
      ix = _mm_sub_pd(_mm_add_pd(ix, magic), magic);
      iy = _mm_sub_pd(_mm_add_pd(iy, magic), magic);
      ix = _mm_min_pd(_mm_max_pd(ix, lo), hx);
      iy = _mm_min_pd(_mm_max_pd(iy, lo), hy);
      int32_t rx[4], ry[4];
      _mm_storeu_si128((__m128i *)rx, _mm_cvttpd_epi32(ix));
      _mm_storeu_si128((__m128i *)ry, _mm_cvttpd_epi32(iy));
      for (int k = 0; k < 2; k++) {
        const uint8_t *p = outside;
        if (rx[k] >= 0 && rx[k] < w && ry[k] >= 0 && ry[k] < h)
          p = src + (size_t)ry[k] * stride + (size_t)rx[k] * (size_t)ch;
        uint8_t *o = out + (size_t)(x + k) * (size_t)ch;
        if (ch == 4)
          memcpy(o, p, 4); /* X too: never read */
        else
          o[0] = p[0];
      }
    }
#endif
    for (; x < w; x++) {
      double xc = (double)x - ox;
      double rx = round_even(m[0] * xc + bx), ry = round_even(m[3] * xc + by);
      const uint8_t *p = outside;
      if (rx >= 0 && rx < w && ry >= 0 && ry < h)
        p = src + (size_t)ry * stride + (size_t)rx * (size_t)ch;
      uint8_t *o = out + (size_t)x * (size_t)ch;
      for (int c = 0; c < (ch == 1 ? 1 : 3); c++)
        o[c] = p[c];
    }
  }
}

void sl_op_warp(sl_image *im, const double m[6], sl_interp interp,
                const double *fill, sl_op_scratch *s) {
  int w = im->w, h = im->h, ch = im->ch;
  size_t stride = (size_t)w * (size_t)ch;
  uint8_t outside[4] = {0, 0, 0, 0};
  for (int c = 0; c < 3; c++)
    outside[c] = fill ? round_u8(fill[c]) : 0;
  if (interp == SL_INTERP_NEAREST && warp_shifted(im, m, outside))
    return;
  const uint8_t *src = s->img;
  memcpy(s->img, im->px, stride * (size_t)h);
  if (interp == SL_INTERP_NEAREST) {
    warp_nearest(src, im->px, w, h, ch, m, outside);
    return;
  }
  /* Input pixel coordinate of output pixel (x, y): the grid's centered
   * coordinate through m, unnormalised by align_corners = False. */
  double ox = (double)(w - 1) * 0.5, oy = (double)(h - 1) * 0.5;
#if SL_AUGMENT_AVX2
  int avx2 = ch == 4 && sl_avx2() &&
             (size_t)w * (size_t)h <= INT32_MAX / 4 - (size_t)w;
#endif
  for (int y = 0; y < h; y++) {
    double yc = (double)y - oy;
    uint8_t *out = im->px + (size_t)y * stride;
    double bx = m[1] * yc + m[2] + ox, by = m[4] * yc + m[5] + oy;
    int x = 0;
#if SL_AUGMENT_AVX2
    if (avx2)
      x = row_bilinear_avx2(src, out, w, h, m, bx, by, ox, fill);
#endif
    for (; x < w; x++) {
      double xc = (double)x - ox;
      bilinear_pixel(src, out + (size_t)x * (size_t)ch, w, h, ch,
                     m[0] * xc + bx, m[3] * xc + by, fill);
    }
  }
}
