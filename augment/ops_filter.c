/* Filters (ops.h): adjust_sharpness and gaussian_blur. Both convolve in
 * float32 and round half to even to uint8, as torchvision's conv2d path;
 * the blur runs as two 1-D passes (torchvision's 2-D kernel is the outer
 * product of the same 1-D kernels, so only the summation order differs). */
#include <math.h>
#include <string.h>

#include "augment/ops.h"
#include "augment/pointwise.h"
#include "augment/simd.h"

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

#if defined(__SSE2__)
/* Eight bytes of one lane group as floats: (lo, hi). */
static inline void u16_to_ps(__m128i v, __m128 *lo, __m128 *hi) {
  const __m128i z = _mm_setzero_si128();
  *lo = _mm_cvtepi32_ps(_mm_unpacklo_epi16(v, z));
  *hi = _mm_cvtepi32_ps(_mm_unpackhi_epi16(v, z));
}

/* round_even then sat_u8 of four floats, as int32 lanes. */
static inline __m128i round_sat_epi32(__m128 v) {
  const __m128 magic = _mm_set1_ps(12582912.0f);
  v = _mm_sub_ps(_mm_add_ps(v, magic), magic);
  v = _mm_min_ps(_mm_max_ps(v, _mm_setzero_ps()), _mm_set1_ps(255.0f));
  return _mm_cvttps_epi32(v);
}

/* Eight smoothed bytes at r1 + k: the scalar loop's float ops, in the same
 * order (a product each, then one add), four lanes at a time. */
static inline __m128i smooth8(const uint8_t *r0, const uint8_t *r1,
                              const uint8_t *r2, size_t k, size_t c) {
  const __m128i z = _mm_setzero_si128();
#define LD8(p) _mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)(p)), z)
  __m128i ring = _mm_add_epi16(
      _mm_add_epi16(_mm_add_epi16(LD8(r0 + k - c), LD8(r0 + k)),
                    _mm_add_epi16(LD8(r0 + k + c), LD8(r1 + k - c))),
      _mm_add_epi16(_mm_add_epi16(LD8(r1 + k + c), LD8(r2 + k - c)),
                    _mm_add_epi16(LD8(r2 + k), LD8(r2 + k + c))));
  __m128i mid8 = LD8(r1 + k);
#undef LD8
  __m128 rl, rh, ml, mh;
  u16_to_ps(ring, &rl, &rh);
  u16_to_ps(mid8, &ml, &mh);
  const __m128 side = _mm_set1_ps(1.0f / 13.0f),
               mid = _mm_set1_ps(5.0f / 13.0f);
  __m128i lo =
      round_sat_epi32(_mm_add_ps(_mm_mul_ps(side, rl), _mm_mul_ps(mid, ml)));
  __m128i hi =
      round_sat_epi32(_mm_add_ps(_mm_mul_ps(side, rh), _mm_mul_ps(mid, mh)));
  return _mm_packs_epi32(lo, hi); /* 8 x u16, each 0..255 */
}
#endif

#if SL_AUGMENT_AVX2
/* Sixteen smoothed bytes at r1 + k as 16-bit lanes in order: smooth8's
 * operations, eight lanes at a time. */
__attribute__((target("avx2"), always_inline)) static inline __m256i
smooth16_avx2(const uint8_t *r0, const uint8_t *r1, const uint8_t *r2, size_t k,
              size_t c) {
#define LD16(p)                                                                \
  _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(const void *)(p)))
  __m256i ring = _mm256_add_epi16(
      _mm256_add_epi16(_mm256_add_epi16(LD16(r0 + k - c), LD16(r0 + k)),
                       _mm256_add_epi16(LD16(r0 + k + c), LD16(r1 + k - c))),
      _mm256_add_epi16(_mm256_add_epi16(LD16(r1 + k + c), LD16(r2 + k - c)),
                       _mm256_add_epi16(LD16(r2 + k), LD16(r2 + k + c))));
  __m256i mid16 = LD16(r1 + k);
#undef LD16
  const __m256 side = _mm256_set1_ps(1.0f / 13.0f),
               mid = _mm256_set1_ps(5.0f / 13.0f),
               magic = _mm256_set1_ps(12582912.0f),
               top = _mm256_set1_ps(255.0f);
  __m256i half[2];
  for (int h = 0; h < 2; h++) {
    __m128i rg =
        h ? _mm256_extracti128_si256(ring, 1) : _mm256_castsi256_si128(ring);
    __m128i md =
        h ? _mm256_extracti128_si256(mid16, 1) : _mm256_castsi256_si128(mid16);
    __m256 v = _mm256_add_ps(
        _mm256_mul_ps(side, _mm256_cvtepi32_ps(_mm256_cvtepu16_epi32(rg))),
        _mm256_mul_ps(mid, _mm256_cvtepi32_ps(_mm256_cvtepu16_epi32(md))));
    v = _mm256_sub_ps(_mm256_add_ps(v, magic), magic);
    v = _mm256_min_ps(_mm256_max_ps(v, _mm256_setzero_ps()), top);
    half[h] = _mm256_cvttps_epi32(v);
  }
  /* packs works within 128-bit lanes: 64-bit blocks come out 0, 2, 1, 3 */
  return _mm256_permute4x64_epi64(_mm256_packs_epi32(half[0], half[1]), 0xD8);
}

/* One row of the smoothing, 32 bytes at a time from k; returns where it
 * stopped (reads up to k + 31 + c < stride). */
__attribute__((target("avx2"))) static size_t
smooth_row_avx2(const uint8_t *r0, const uint8_t *r1, const uint8_t *r2,
                uint8_t *d, size_t k, size_t end, size_t c) {
  for (; k + 32 <= end; k += 32) {
    __m256i a = smooth16_avx2(r0, r1, r2, k, c);
    __m256i b = smooth16_avx2(r0, r1, r2, k + 16, c);
    __m256i out = _mm256_permute4x64_epi64(_mm256_packus_epi16(a, b), 0xD8);
    _mm256_storeu_si256((__m256i *)(void *)(d + k), out);
  }
  return k;
}
#endif

void sl_op_sharpness(sl_image *im, double factor, sl_op_scratch *s) {
  int w = im->w, h = im->h, ch = im->ch;
  if (w <= 2 || h <= 2)
    return;
  size_t stride = (size_t)w * (size_t)ch;
  uint8_t *deg = s->img; /* the smoothed image; border = the image */
  memcpy(deg, im->px, stride * (size_t)h);
  const float side = 1.0f / 13.0f, mid = 5.0f / 13.0f;
  const size_t c = (size_t)ch, end = stride - c;
#if SL_AUGMENT_AVX2
  int avx2 = sl_avx2();
#endif
  for (int y = 1; y < h - 1; y++) {
    const uint8_t *restrict r0 = im->px + (size_t)(y - 1) * stride;
    const uint8_t *restrict r1 = r0 + stride, *restrict r2 = r1 + stride;
    uint8_t *restrict d = deg + (size_t)y * stride;
    size_t k = c;
#if SL_AUGMENT_AVX2
    if (avx2)
      k = smooth_row_avx2(r0, r1, r2, d, k, end, c);
#endif
#if defined(__SSE2__)
    for (; k + 16 <= end; k += 16) { /* reads up to k + 15 + c < stride */
      __m128i a = smooth8(r0, r1, r2, k, c);
      __m128i b = smooth8(r0, r1, r2, k + 8, c);
      _mm_storeu_si128((__m128i *)(d + k), _mm_packus_epi16(a, b));
    }
#endif
    for (; k < end; k++) { /* X bytes too: never read */
      int ring = r0[k - c] + r0[k] + r0[k + c] + r1[k - c] + r1[k + c] +
                 r2[k - c] + r2[k] + r2[k + c];
      d[k] = sat_u8(round_even(side * (float)ring + mid * (float)r1[k]));
    }
  }
  /* _blend(img, degenerate, factor) */
  sl_blend_bytes(im->px, deg, stride * (size_t)h, (float)factor,
                 (float)(1.0 - factor));
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

#if SL_AUGMENT_AVX2
/* The blur's horizontal pass on one padded row, 32 floats a step with the
 * sums in registers: per element the scalar loop's products added in tap
 * order. Returns where it stopped. */
__attribute__((target("avx2"))) static size_t
blur_row_avx2(const float *pad, float *t, const float *wx, int kx, size_t c,
              size_t stride) {
  size_t k = 0;
  for (; k + 32 <= stride; k += 32) {
    __m256 a[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(),
                   _mm256_setzero_ps(), _mm256_setzero_ps()};
    for (int i = 0; i < kx; i++) {
      __m256 wi = _mm256_set1_ps(wx[i]);
      const float *src = pad + (size_t)i * c + k;
      for (int j = 0; j < 4; j++)
        a[j] = _mm256_add_ps(a[j],
                             _mm256_mul_ps(wi, _mm256_loadu_ps(src + 8 * j)));
    }
    for (int j = 0; j < 4; j++)
      _mm256_storeu_ps(t + k + 8 * j, a[j]);
  }
  return k;
}

/* The vertical pass for one output row from the rows `src` (one per tap),
 * rounded half to even and saturated to bytes, 32 a step. Returns where it
 * stopped. */
__attribute__((target("avx2"))) static size_t
blur_col_avx2(const float *const *src, const float *wy, int ky, uint8_t *out,
              size_t stride) {
  const __m256 magic = _mm256_set1_ps(12582912.0f),
               top = _mm256_set1_ps(255.0f);
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  size_t k = 0;
  for (; k + 32 <= stride; k += 32) {
    __m256 a[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(),
                   _mm256_setzero_ps(), _mm256_setzero_ps()};
    for (int i = 0; i < ky; i++) {
      __m256 wi = _mm256_set1_ps(wy[i]);
      for (int j = 0; j < 4; j++)
        a[j] = _mm256_add_ps(
            a[j], _mm256_mul_ps(wi, _mm256_loadu_ps(src[i] + k + 8 * j)));
    }
    __m256i v[4];
    for (int j = 0; j < 4; j++) {
      __m256 r = _mm256_sub_ps(_mm256_add_ps(a[j], magic), magic);
      r = _mm256_min_ps(_mm256_max_ps(r, _mm256_setzero_ps()), top);
      v[j] = _mm256_cvttps_epi32(r);
    }
    __m256i b = _mm256_packus_epi16(_mm256_packs_epi32(v[0], v[1]),
                                    _mm256_packs_epi32(v[2], v[3]));
    _mm256_storeu_si256((__m256i *)(void *)(out + k),
                        _mm256_permutevar8x32_epi32(b, order));
  }
  return k;
}
#endif

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
#if SL_AUGMENT_AVX2
  int avx2 = sl_avx2();
#endif
  for (int y = 0; y < h; y++) {
    const uint8_t *row = im->px + (size_t)y * stride;
    for (int x = -hx; x < w + hx; x++) {
      const uint8_t *p = row + (size_t)reflect(x, w) * c;
      for (size_t k = 0; k < c; k++)
        pad[(size_t)(x + hx) * c + k] = (float)p[k];
    }
    float *t = tmp + (size_t)y * stride;
    size_t k0 = 0;
#if SL_AUGMENT_AVX2
    if (avx2)
      k0 = blur_row_avx2(pad, t, wx, kx, c, stride);
#endif
    for (size_t k = k0; k < stride; k++)
      t[k] = 0.0f;
    for (int i = 0; i < kx; i++) {
      const float wi = wx[i], *src = pad + (size_t)i * c;
      for (size_t k = k0; k < stride; k++)
        t[k] += wi * src[k];
    }
  }
  const float *rows[k_max_kernel];
  for (int y = 0; y < h; y++) {
    for (int i = 0; i < ky; i++)
      rows[i] = tmp + (size_t)reflect(y - hy + i, h) * stride;
    uint8_t *out = im->px + (size_t)y * stride;
    size_t k0 = 0;
#if SL_AUGMENT_AVX2
    if (avx2)
      k0 = blur_col_avx2(rows, wy, ky, out, stride);
#endif
    for (size_t k = k0; k < stride; k++)
      acc[k] = 0.0f;
    for (int i = 0; i < ky; i++) {
      const float wi = wy[i], *src = rows[i];
      for (size_t k = k0; k < stride; k++)
        acc[k] += wi * src[k];
    }
    for (size_t k = k0; k < stride; k++) /* X bytes too: never read */
      out[k] = sat_u8(round_even(acc[k]));
  }
}
