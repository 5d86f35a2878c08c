/* YCbCr to RGBX: see augment/ycc.h. */
#include "augment/ycc.h"

#include <string.h>

#include "augment/simd.h"

/* jdcolor.c's FIX(x) at SCALEBITS 16 and its ONE_HALF. */
enum {
  k_cr_r = 91881,  /* FIX(1.40200) */
  k_cb_b = 116130, /* FIX(1.77200) */
  k_cb_g = 22554,  /* FIX(0.34414) */
  k_cr_g = 46802,  /* FIX(0.71414) */
  k_half = 1 << 15
};

static inline uint8_t clamp255(int v) {
  return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
}

/* libjpeg's tables: Cr_r_tab[i] = (FIX(1.402) * x + ONE_HALF) >> 16 with
 * x = i - 128, Cb_b_tab likewise, and G = y + ((-FIX(0.34414) * x_cb -
 * FIX(0.71414) * x_cr + ONE_HALF) >> 16); arithmetic shifts, as its
 * RIGHT_SHIFT. */
static inline uint32_t ycc_pixel(int y, int cb, int cr) {
  int xb = cb - 128, xr = cr - 128;
  int r = y + ((k_cr_r * xr + k_half) >> 16);
  int g = y + ((-k_cb_g * xb - k_cr_g * xr + k_half) >> 16);
  int b = y + ((k_cb_b * xb + k_half) >> 16);
  return (uint32_t)clamp255(r) | (uint32_t)clamp255(g) << 8 |
         (uint32_t)clamp255(b) << 16 | 0xff000000u;
}

void sl_ycc_to_rgbx_c(const uint8_t *y, const uint8_t *cb, const uint8_t *cr,
                      size_t n, uint8_t *out) {
  for (size_t i = 0; i < n; i++) {
    uint32_t v = ycc_pixel(y[i], cb[i], cr[i]);
    memcpy(out + 4 * i, &v, 4);
  }
}

#if SL_AUGMENT_AVX2
/* 8 pixels a step in 32-bit lanes: the C arithmetic exactly. */
__attribute__((target("avx2"))) static size_t ycc_avx2(const uint8_t *y,
                                                       const uint8_t *cb,
                                                       const uint8_t *cr,
                                                       size_t n, uint8_t *out) {
  const __m256i c128 = _mm256_set1_epi32(128), half = _mm256_set1_epi32(k_half);
  const __m256i cr_r = _mm256_set1_epi32(k_cr_r),
                cb_b = _mm256_set1_epi32(k_cb_b);
  const __m256i cb_g = _mm256_set1_epi32(-k_cb_g),
                cr_g = _mm256_set1_epi32(-k_cr_g);
  const __m256i zero = _mm256_setzero_si256(), max = _mm256_set1_epi32(255);
  const __m256i alpha = _mm256_set1_epi32((int)0xff000000u);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256i vy =
        _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(y + i)));
    __m256i xb = _mm256_sub_epi32(
        _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(cb + i))), c128);
    __m256i xr = _mm256_sub_epi32(
        _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(cr + i))), c128);
    __m256i r = _mm256_add_epi32(
        vy, _mm256_srai_epi32(
                _mm256_add_epi32(_mm256_mullo_epi32(xr, cr_r), half), 16));
    __m256i g = _mm256_add_epi32(
        vy, _mm256_srai_epi32(
                _mm256_add_epi32(_mm256_add_epi32(_mm256_mullo_epi32(xb, cb_g),
                                                  _mm256_mullo_epi32(xr, cr_g)),
                                 half),
                16));
    __m256i b = _mm256_add_epi32(
        vy, _mm256_srai_epi32(
                _mm256_add_epi32(_mm256_mullo_epi32(xb, cb_b), half), 16));
    r = _mm256_min_epi32(_mm256_max_epi32(r, zero), max);
    g = _mm256_min_epi32(_mm256_max_epi32(g, zero), max);
    b = _mm256_min_epi32(_mm256_max_epi32(b, zero), max);
    __m256i px =
        _mm256_or_si256(_mm256_or_si256(r, _mm256_slli_epi32(g, 8)),
                        _mm256_or_si256(_mm256_slli_epi32(b, 16), alpha));
    _mm256_storeu_si256((__m256i *)(out + 4 * i), px);
  }
  return i;
}
#endif

void sl_ycc_to_rgbx(const uint8_t *y, const uint8_t *cb, const uint8_t *cr,
                    size_t n, uint8_t *out) {
  size_t i = 0;
#if SL_AUGMENT_AVX2
  if (sl_avx2())
    i = ycc_avx2(y, cb, cr, n, out);
#endif
  sl_ycc_to_rgbx_c(y + i, cb + i, cr + i, n - i, out + 4 * i);
}

void sl_gray_to_rgbx(const uint8_t *y, size_t n, uint8_t *out) {
  for (size_t i = 0; i < n; i++) {
    uint32_t v = y[i] * 0x010101u | 0xff000000u;
    memcpy(out + 4 * i, &v, 4);
  }
}
