/* sl_map_channels (pointwise.h): 16 bytes at a time in SSE2, 32 with AVX2
 * when the CPU has it; the tail byte by byte with sl_map_one. A byte
 * table would be the obvious loop, but it costs a load, a table load and
 * a store per byte; these are 1.2 instructions a byte (AVX2). */
#include "augment/pointwise.h"
#include "augment/simd.h"

#if defined(__SSE2__)
/* Four bytes' float f, clamped and truncated to 32-bit lanes. */
static inline __m128i map4(__m128i v32, sl_map_form form, __m128 a, __m128 b) {
  __m128 v = _mm_cvtepi32_ps(v32), f;
  if (form == SL_MAP_MUL_ADD)
    f = _mm_add_ps(_mm_mul_ps(a, v), b);
  else
    f = _mm_mul_ps(_mm_sub_ps(v, b), a);
  f = _mm_min_ps(_mm_max_ps(f, _mm_setzero_ps()), _mm_set1_ps(255.0f));
  return _mm_cvttps_epi32(f);
}

__attribute__((always_inline)) static inline size_t
map_sse2(uint8_t *p, size_t n, sl_map_form form, __m128 a, __m128 b) {
  const __m128i z = _mm_setzero_si128();
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
    __m128i lo = _mm_unpacklo_epi8(x, z), hi = _mm_unpackhi_epi8(x, z);
    __m128i r0 = map4(_mm_unpacklo_epi16(lo, z), form, a, b);
    __m128i r1 = map4(_mm_unpackhi_epi16(lo, z), form, a, b);
    __m128i r2 = map4(_mm_unpacklo_epi16(hi, z), form, a, b);
    __m128i r3 = map4(_mm_unpackhi_epi16(hi, z), form, a, b);
    __m128i out =
        _mm_packus_epi16(_mm_packs_epi32(r0, r1), _mm_packs_epi32(r2, r3));
    _mm_storeu_si128((__m128i *)(void *)(p + i), out);
  }
  return i;
}
#endif

#if SL_AUGMENT_AVX2
__attribute__((target("avx2"), always_inline)) static inline __m256i
map8(const uint8_t *p, sl_map_form form, __m256 a, __m256 b) {
  __m128i x = _mm_loadl_epi64((const __m128i *)(const void *)p);
  __m256 v = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(x)), f;
  if (form == SL_MAP_MUL_ADD)
    f = _mm256_add_ps(_mm256_mul_ps(a, v), b);
  else
    f = _mm256_mul_ps(_mm256_sub_ps(v, b), a);
  f = _mm256_min_ps(_mm256_max_ps(f, _mm256_setzero_ps()),
                    _mm256_set1_ps(255.0f));
  return _mm256_cvttps_epi32(f);
}

__attribute__((target("avx2"), always_inline)) static inline size_t
map_avx2_form(uint8_t *p, size_t n, sl_map_form form, __m256 a, __m256 b) {
  /* the packs work within 128-bit lanes: dwords come out as
   * [r0 lo, r1 lo, r2 lo, r3 lo | r0 hi, ...] */
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    __m256i r0 = map8(p + i, form, a, b), r1 = map8(p + i + 8, form, a, b);
    __m256i r2 = map8(p + i + 16, form, a, b),
            r3 = map8(p + i + 24, form, a, b);
    __m256i out = _mm256_packus_epi16(_mm256_packs_epi32(r0, r1),
                                      _mm256_packs_epi32(r2, r3));
    out = _mm256_permutevar8x32_epi32(out, order);
    _mm256_storeu_si256((__m256i *)(void *)(p + i), out);
  }
  return i;
}

__attribute__((target("avx2"))) static size_t map_avx2(uint8_t *p, size_t n,
                                                       sl_map_form form,
                                                       const float a4[4],
                                                       const float b4[4]) {
  __m256 a =
      _mm256_setr_ps(a4[0], a4[1], a4[2], a4[3], a4[0], a4[1], a4[2], a4[3]);
  __m256 b =
      _mm256_setr_ps(b4[0], b4[1], b4[2], b4[3], b4[0], b4[1], b4[2], b4[3]);
  return form == SL_MAP_MUL_ADD ? map_avx2_form(p, n, SL_MAP_MUL_ADD, a, b)
                                : map_avx2_form(p, n, SL_MAP_SUB_MUL, a, b);
}
#endif

#if SL_AUGMENT_AVX2
/* Eight pixels' lumas per step, summed in 32-bit lanes: a lane takes at
 * most 255 a step, so a block of 2^23 steps cannot overflow it. */
__attribute__((target("avx2"))) static size_t
luma_sum_avx2(const uint8_t *p, size_t pixels, uint64_t *sum) {
  const __m256i m = _mm256_set1_epi32(0xFF);
  const __m256 kr = _mm256_set1_ps(0.2989f), kg = _mm256_set1_ps(0.587f),
               kb = _mm256_set1_ps(0.114f);
  size_t i = 0;
  while (i + 8 <= pixels) {
    size_t end =
        pixels - i > ((size_t)8 << 23) ? i + ((size_t)8 << 23) : pixels;
    __m256i acc = _mm256_setzero_si256();
    for (; i + 8 <= end; i += 8) {
      __m256i x =
          _mm256_loadu_si256((const __m256i *)(const void *)(p + 4 * i));
      __m256 r = _mm256_cvtepi32_ps(_mm256_and_si256(x, m));
      __m256 g =
          _mm256_cvtepi32_ps(_mm256_and_si256(_mm256_srli_epi32(x, 8), m));
      __m256 b =
          _mm256_cvtepi32_ps(_mm256_and_si256(_mm256_srli_epi32(x, 16), m));
      __m256 l = _mm256_add_ps(
          _mm256_add_ps(_mm256_mul_ps(kr, r), _mm256_mul_ps(kg, g)),
          _mm256_mul_ps(kb, b));
      acc = _mm256_add_epi32(acc, _mm256_cvttps_epi32(l));
    }
    uint32_t v[8];
    _mm256_storeu_si256((__m256i *)(void *)v, acc);
    for (int k = 0; k < 8; k++)
      *sum += v[k];
  }
  return i;
}
#endif

#if SL_AUGMENT_AVX2
__attribute__((target("avx2"), always_inline)) static inline __m256i
blend8(const uint8_t *p, const uint8_t *q, __m256 a, __m256 o) {
  __m256 vp = _mm256_cvtepi32_ps(
      _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)p)));
  __m256 vq = _mm256_cvtepi32_ps(
      _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)q)));
  __m256 f = _mm256_add_ps(_mm256_mul_ps(a, vp), _mm256_mul_ps(o, vq));
  f = _mm256_min_ps(_mm256_max_ps(f, _mm256_setzero_ps()),
                    _mm256_set1_ps(255.0f));
  return _mm256_cvttps_epi32(f);
}

__attribute__((target("avx2"))) static size_t
blend_avx2(uint8_t *p, const uint8_t *q, size_t n, float a, float o) {
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  const __m256 va = _mm256_set1_ps(a), vo = _mm256_set1_ps(o);
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    __m256i r0 = blend8(p + i, q + i, va, vo),
            r1 = blend8(p + i + 8, q + i + 8, va, vo);
    __m256i r2 = blend8(p + i + 16, q + i + 16, va, vo),
            r3 = blend8(p + i + 24, q + i + 24, va, vo);
    __m256i out = _mm256_packus_epi16(_mm256_packs_epi32(r0, r1),
                                      _mm256_packs_epi32(r2, r3));
    out = _mm256_permutevar8x32_epi32(out, order);
    _mm256_storeu_si256((__m256i *)(void *)(p + i), out);
  }
  return i;
}
#endif

void sl_blend_bytes(uint8_t *p, const uint8_t *q, size_t n, float a, float o) {
  size_t i = 0;
#if SL_AUGMENT_AVX2
  if (sl_avx2())
    i = blend_avx2(p, q, n, a, o);
#endif
#if defined(__SSE2__)
  const __m128 va = _mm_set1_ps(a), vo = _mm_set1_ps(o);
  const __m128i z = _mm_setzero_si128();
  for (; i + 8 <= n; i += 8) {
    __m128i p8 = _mm_unpacklo_epi8(
        _mm_loadl_epi64((const __m128i *)(const void *)(p + i)), z);
    __m128i q8 = _mm_unpacklo_epi8(
        _mm_loadl_epi64((const __m128i *)(const void *)(q + i)), z);
    __m128 pl = _mm_cvtepi32_ps(_mm_unpacklo_epi16(p8, z)),
           ph = _mm_cvtepi32_ps(_mm_unpackhi_epi16(p8, z)),
           ql = _mm_cvtepi32_ps(_mm_unpacklo_epi16(q8, z)),
           qh = _mm_cvtepi32_ps(_mm_unpackhi_epi16(q8, z));
    __m128 vl = _mm_add_ps(_mm_mul_ps(va, pl), _mm_mul_ps(vo, ql));
    __m128 vh = _mm_add_ps(_mm_mul_ps(va, ph), _mm_mul_ps(vo, qh));
    const __m128 top = _mm_set1_ps(255.0f);
    vl = _mm_min_ps(_mm_max_ps(vl, _mm_setzero_ps()), top);
    vh = _mm_min_ps(_mm_max_ps(vh, _mm_setzero_ps()), top);
    __m128i r = _mm_packs_epi32(_mm_cvttps_epi32(vl), _mm_cvttps_epi32(vh));
    _mm_storel_epi64((__m128i *)(void *)(p + i), _mm_packus_epi16(r, r));
  }
#endif
  for (; i < n; i++) {
    float v = a * (float)p[i] + o * (float)q[i];
    p[i] = v <= 0.0f ? 0 : v >= 255.0f ? 255 : (uint8_t)v;
  }
}

uint64_t sl_luma_sum(const uint8_t *p, size_t pixels) {
  uint64_t sum = 0;
  size_t i = 0;
#if SL_AUGMENT_AVX2
  if (sl_avx2())
    i = luma_sum_avx2(p, pixels, &sum);
#endif
  for (; i < pixels; i++)
    sum += sl_luma_one(p + 4 * i);
  return sum;
}

void sl_map_channels(uint8_t *p, size_t pixels, int ch, sl_map_form form,
                     const float a[4], const float b[4]) {
  float a4[4], b4[4]; /* lane k of a vector maps a byte of channel k % 4 */
  for (int k = 0; k < 4; k++) {
    a4[k] = ch == 1 ? a[0] : a[k];
    b4[k] = ch == 1 ? b[0] : b[k];
  }
  size_t n = pixels * (size_t)(ch == 1 ? 1 : 4), i = 0;
#if SL_AUGMENT_AVX2
  if (sl_avx2())
    i = map_avx2(p, n, form, a4, b4);
#endif
#if defined(__SSE2__)
  {
    __m128 va = _mm_loadu_ps(a4), vb = _mm_loadu_ps(b4);
    i += form == SL_MAP_MUL_ADD
             ? map_sse2(p + i, n - i, SL_MAP_MUL_ADD, va, vb)
             : map_sse2(p + i, n - i, SL_MAP_SUB_MUL, va, vb);
  }
#endif
  for (; i < n; i++) /* i is a multiple of 4 here: channel i % 4 */
    p[i] = sl_map_one(form, a4[i & 3], b4[i & 3], p[i]);
}
