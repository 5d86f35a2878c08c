/* The fractional-window area resampler: see augment/resample.h. */
#include "augment/resample.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* AVX2 versions of both passes, chosen at create when the CPU has it
 * (the same integer arithmetic as SSE2: the same bytes either way). */
#include "augment/simd.h"

enum { k_one = 1 << 14 }; /* Q14 weight of a whole output pixel */

/* One axis: output o takes taps n[o] source pixels from first[o], with
 * weights w[o * SL_RESAMPLE_TAPS + t] summing to k_one. */
typedef struct axis {
  int *first, *n;
  int16_t *w;
  uint32_t *pair; /* w as (w[t], w[t + 1]) pairs, zero past n: T / 2 each */
  int T;          /* taps of every output rounded up to even: 2, 4 or 6 */
  /* The arguments of the plan held (valid: set): planes of one image
   * that share their geometry reuse it. */
  double c0, c1;
  int side, out, valid;
} axis;

struct sl_resampler {
  int max_out, max_src, ch;
  int avx2; /* the CPU runs the AVX2 passes */
  axis ax, ay;
  int16_t *row; /* (max_src + 16) * 4: the vertical pass, Q7 */
  /* ch 1 with AVX2: four output rows at a time as the channels of one
   * 4-channel row, so the 4-channel horizontal pass does them. */
  int16_t *rows4; /* 4 * (max_src + 16) */
  uint8_t *out4;  /* max_out * 4 + 16 */
};

static int axis_alloc(axis *a, int n) {
  a->first = malloc(sizeof(int) * (size_t)n);
  a->n = malloc(sizeof(int) * (size_t)n);
  a->w = malloc(sizeof(int16_t) * (size_t)n * SL_RESAMPLE_TAPS);
  a->pair = malloc(sizeof(uint32_t) * (size_t)n * (SL_RESAMPLE_TAPS / 2));
  return a->first && a->n && a->w && a->pair ? 0 : -1;
}

static void axis_free(axis *a) {
  free(a->first);
  free(a->n);
  free(a->w);
  free(a->pair);
}

sl_resampler *sl_resampler_create(int max_out, int max_src, int ch) {
  if (max_out < 1 || max_src < 1 || (ch != 1 && ch != 4))
    return NULL;
  sl_resampler *r = calloc(1, sizeof *r);
  if (!r)
    return NULL;
  r->max_out = max_out;
  r->max_src = max_src;
  r->ch = ch;
#if SL_AUGMENT_AVX2
  r->avx2 = sl_avx2() ? 1 : 0;
#endif
  r->row = calloc(((size_t)max_src + 16) * 4, sizeof(int16_t));
  if (ch == 1) {
    r->rows4 = calloc(((size_t)max_src + 16) * 4, sizeof(int16_t));
    r->out4 = calloc((size_t)max_out * 4 + 16, 1);
  }
  if (!r->row || (ch == 1 && (!r->rows4 || !r->out4)) ||
      axis_alloc(&r->ax, max_out) || axis_alloc(&r->ay, max_out)) {
    sl_resampler_destroy(r);
    return NULL;
  }
  return r;
}

void sl_resampler_baseline(sl_resampler *r) {
  r->avx2 = 0;
}

void sl_resampler_destroy(sl_resampler *r) {
  if (!r)
    return;
  axis_free(&r->ax);
  axis_free(&r->ay);
  free(r->row);
  free(r->rows4);
  free(r->out4);
  free(r);
}

/* Weights of out outputs over [c0, c1) of a side of `side` pixels; -1
 * when an output needs more than SL_RESAMPLE_TAPS taps. Computed per
 * image: the window's fractional edges differ with every crop, so no two
 * images share their taps (7% of the resampler's instructions at 128 px;
 * inlining floor/ceil/fmax/fmin/lrint saved only 4% of them: BENCHMARKS.md,
 * "Instruction counts"). */
static int axis_plan(axis *a, double c0, double c1, int side, int out) {
  c0 = c0 < 0 ? 0 : c0;
  c1 = c1 > side ? side : c1;
  if (!(c1 > c0))
    return -1;
  if (a->valid && a->c0 == c0 && a->c1 == c1 && a->side == side &&
      a->out == out)
    return 0;
  a->valid = 0;
  double s = (c1 - c0) / out;
  int nmax = 1;
  for (int o = 0; o < out; o++) {
    double lo = c0 + o * s, hi = lo + s;
    int i0 = (int)floor(lo), i1 = (int)ceil(hi);
    i0 = i0 < 0 ? 0 : i0 > side - 1 ? side - 1 : i0;
    i1 = i1 <= i0 ? i0 + 1 : i1 > side ? side : i1;
    int n = i1 - i0;
    if (n > SL_RESAMPLE_TAPS)
      return -1;
    int16_t *w = a->w + (size_t)o * SL_RESAMPLE_TAPS;
    int sum = 0, big = 0;
    for (int t = 0; t < n; t++) {
      double p0 = fmax(lo, (double)(i0 + t)), p1 = fmin(hi, i0 + t + 1.0);
      int v = p1 > p0 ? (int)lrint((p1 - p0) / s * k_one) : 0;
      w[t] = (int16_t)v;
      sum += v;
      if (v > w[big])
        big = t;
    }
    w[big] = (int16_t)(w[big] + (k_one - sum)); /* the sum is exactly one */
    a->first[o] = i0;
    a->n[o] = n;
    nmax = n > nmax ? n : nmax;
  }
  a->T = (nmax + 1) / 2 * 2;
  for (int o = 0; o < out; o++) {
    const int16_t *w = a->w + (size_t)o * SL_RESAMPLE_TAPS;
    for (int t = 0; t < a->T; t += 2) {
      uint32_t lo = t < a->n[o] ? (uint16_t)w[t] : 0;
      uint32_t hi = t + 1 < a->n[o] ? (uint16_t)w[t + 1] : 0;
      a->pair[(size_t)o * (a->T / 2) + (size_t)t / 2] = lo | hi << 16;
    }
  }
  a->c0 = c0, a->c1 = c1, a->side = side, a->out = out, a->valid = 1;
  return 0;
}

#if SL_AUGMENT_AVX2
/* The AVX2 passes are compiled once per tap count (n, half: constants in
 * each copy), so the tap loops unroll: 30% fewer instructions in the
 * resampler at 128 px with levels, the same bytes (BENCHMARKS.md,
 * "Instruction counts"). */
#define SL_AVX2_INLINE                                                         \
  __attribute__((target("avx2"), always_inline)) static inline

/* 16 values at a time of the vertical pass; returns how many it did. */
SL_AVX2_INLINE size_t vertical_avx2_n(const uint8_t *p, size_t stride,
                                      const uint16_t *w, const int n,
                                      int16_t *o, size_t cnt) {
  const __m256i one = _mm256_set1_epi16(1);
  __m256i wv[SL_RESAMPLE_TAPS];
  for (int t = 0; t < n; t++)
    wv[t] = _mm256_set1_epi16((short)w[t]);
  size_t i = 0;
  for (; i + 16 <= cnt; i += 16) {
    __m256i acc = _mm256_setzero_si256();
    for (int t = 0; t < n; t++) {
      __m128i v = _mm_loadu_si128(
          (const __m128i *)(const void *)(p + (size_t)t * stride + i));
      acc = _mm256_add_epi16(
          acc, _mm256_mullo_epi16(_mm256_cvtepu8_epi16(v), wv[t]));
    }
    acc = _mm256_srli_epi16(_mm256_add_epi16(acc, one), 1);
    _mm256_storeu_si256((__m256i *)(void *)(o + i), acc);
  }
  return i;
}

__attribute__((target("avx2"))) static size_t
vertical_avx2(const uint8_t *p, size_t stride, const uint16_t *w, int n,
              int16_t *o, size_t cnt) {
  switch (n) {
  case 1:
    return vertical_avx2_n(p, stride, w, 1, o, cnt);
  case 2:
    return vertical_avx2_n(p, stride, w, 2, o, cnt);
  case 3:
    return vertical_avx2_n(p, stride, w, 3, o, cnt);
  case 4:
    return vertical_avx2_n(p, stride, w, 4, o, cnt);
  case 5:
    return vertical_avx2_n(p, stride, w, 5, o, cnt);
  default:
    return vertical_avx2_n(p, stride, w, SL_RESAMPLE_TAPS, o, cnt);
  }
}

/* Two output pixels at a time of horizontal4; returns how many it did. */
SL_AVX2_INLINE int horizontal4_avx2_h(const int16_t *row, const int *first,
                                      const uint32_t *pair, const int half,
                                      int x0, uint8_t *o, int out_w) {
  int ox = 0;
  for (; ox + 2 <= out_w; ox += 2) {
    const int16_t *pa = row + (size_t)(first[ox] - x0) * 4;
    const int16_t *pb = row + (size_t)(first[ox + 1] - x0) * 4;
    const uint32_t *wa = pair + (size_t)ox * (size_t)half;
    const uint32_t *wb = wa + half;
    __m256i acc = _mm256_set1_epi32(1 << 20);
    for (int t = 0; t < half; t++, pa += 8, pb += 8) {
      __m256i v = _mm256_inserti128_si256(
          _mm256_castsi128_si256(
              _mm_loadu_si128((const __m128i *)(const void *)pa)),
          _mm_loadu_si128((const __m128i *)(const void *)pb), 1);
      __m256i pr = _mm256_unpacklo_epi16(v, _mm256_srli_si256(v, 8));
      __m256i wv = _mm256_inserti128_si256(
          _mm256_castsi128_si256(_mm_set1_epi32((int)wa[t])),
          _mm_set1_epi32((int)wb[t]), 1);
      acc = _mm256_add_epi32(acc, _mm256_madd_epi16(pr, wv));
    }
    __m256i px = _mm256_srai_epi32(acc, 21);
    px = _mm256_packs_epi32(px, px);
    px = _mm256_packus_epi16(px, px);
    int32_t a = _mm_cvtsi128_si32(_mm256_castsi256_si128(px));
    int32_t b = _mm_cvtsi128_si32(_mm256_extracti128_si256(px, 1));
    memcpy(o + 4 * ox, &a, 4);
    memcpy(o + 4 * ox + 4, &b, 4);
  }
  return ox;
}

__attribute__((target("avx2"))) static int
horizontal4_avx2(const int16_t *row, const int *first, const uint32_t *pair,
                 int half, int x0, uint8_t *o, int out_w) {
  switch (half) {
  case 1:
    return horizontal4_avx2_h(row, first, pair, 1, x0, o, out_w);
  case 2:
    return horizontal4_avx2_h(row, first, pair, 2, x0, o, out_w);
  default:
    return horizontal4_avx2_h(row, first, pair, SL_RESAMPLE_TAPS / 2, x0, o,
                              out_w);
  }
}
#endif

/* The vertical pass of output row oy: Q7 sums (int16) of columns
 * [x0, x1), then zeros for 8 pixels (the horizontal pass reads in pairs).
 * Q8 weights (their sum exactly 256): 16-bit products, 8 lanes at once. */
static void vertical(const sl_resampler *r, const uint8_t *src, size_t stride,
                     int oy, int x0, int x1, int16_t *o) {
  const axis *a = &r->ay;
  const int16_t *w14 = a->w + (size_t)oy * SL_RESAMPLE_TAPS;
  int n = a->n[oy];
  uint16_t w[SL_RESAMPLE_TAPS] = {0};
  int sum = 0, big = 0;
  for (int t = 0; t < n; t++) {
    w[t] = (uint16_t)((w14[t] + 32) >> 6);
    sum += w[t];
    big = w[t] > w[big] ? t : big;
  }
  w[big] = (uint16_t)(w[big] + 256 - sum);
  size_t cnt = (size_t)(x1 - x0) * (size_t)r->ch;
  const uint8_t *p = src + (size_t)a->first[oy] * stride + (size_t)x0 * r->ch;
  size_t i = 0;
#if SL_AUGMENT_AVX2
  if (r->avx2)
    i = vertical_avx2(p, stride, w, n, o, cnt);
#endif
#if defined(__SSE2__)
  const __m128i z = _mm_setzero_si128(), one = _mm_set1_epi16(1);
  __m128i wv[SL_RESAMPLE_TAPS];
  for (int t = 0; t < n; t++)
    wv[t] = _mm_set1_epi16((short)w[t]);
  for (; i + 16 <= cnt; i += 16) {
    __m128i lo = z, hi = z;
    for (int t = 0; t < n; t++) {
      __m128i v = _mm_loadu_si128(
          (const __m128i *)(const void *)(p + (size_t)t * stride + i));
      lo = _mm_add_epi16(lo, _mm_mullo_epi16(_mm_unpacklo_epi8(v, z), wv[t]));
      hi = _mm_add_epi16(hi, _mm_mullo_epi16(_mm_unpackhi_epi8(v, z), wv[t]));
    }
    /* Q8 (at most 65280) to Q7, rounded. */
    lo = _mm_srli_epi16(_mm_add_epi16(lo, one), 1);
    hi = _mm_srli_epi16(_mm_add_epi16(hi, one), 1);
    _mm_storeu_si128((__m128i *)(void *)(o + i), lo);
    _mm_storeu_si128((__m128i *)(void *)(o + i + 8), hi);
  }
  for (; i + 8 <= cnt; i += 8) { /* 1-byte planes: most of the tail */
    __m128i lo = z;
    for (int t = 0; t < n; t++) {
      __m128i v = _mm_loadl_epi64(
          (const __m128i *)(const void *)(p + (size_t)t * stride + i));
      lo = _mm_add_epi16(lo, _mm_mullo_epi16(_mm_unpacklo_epi8(v, z), wv[t]));
    }
    lo = _mm_srli_epi16(_mm_add_epi16(lo, one), 1);
    _mm_storeu_si128((__m128i *)(void *)(o + i), lo);
  }
#endif
  for (; i < cnt; i++) {
    uint32_t acc = 0;
    for (int t = 0; t < n; t++)
      acc += p[(size_t)t * stride + i] * (uint32_t)w[t];
    o[i] = (int16_t)((acc + 1) >> 1);
  }
  memset(o + cnt, 0, sizeof(int16_t) * 8 * (size_t)r->ch);
}

/* One output row of 4-byte pixels from the Q7 row: every output takes T
 * taps (zero weights past its own), T / 2 madds of pixel pairs. */
static void horizontal4(const sl_resampler *r, int x0, uint8_t *o, int out_w) {
  const axis *ax = &r->ax;
  int half = ax->T / 2, ox = 0;
#if SL_AUGMENT_AVX2
  if (r->avx2)
    ox = horizontal4_avx2(r->row, ax->first, ax->pair, half, x0, o, out_w);
#endif
  for (; ox < out_w; ox++) {
    const int16_t *p = r->row + (size_t)(ax->first[ox] - x0) * 4;
    const uint32_t *wp = ax->pair + (size_t)ox * (size_t)half;
#if defined(__SSE2__)
    __m128i acc = _mm_set1_epi32(1 << 20);
    for (int t = 0; t < half; t++, p += 8) {
      __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
      __m128i pr = _mm_unpacklo_epi16(v, _mm_srli_si128(v, 8));
      acc = _mm_add_epi32(acc, _mm_madd_epi16(pr, _mm_set1_epi32((int)wp[t])));
    }
    __m128i px = _mm_srai_epi32(acc, 21);
    px = _mm_packs_epi32(px, px);
    px = _mm_packus_epi16(px, px);
    int32_t v32 = _mm_cvtsi128_si32(px);
    memcpy(o + 4 * ox, &v32, 4);
#else
    int32_t c[4] = {1 << 20, 1 << 20, 1 << 20, 1 << 20};
    for (int t = 0; t < half; t++, p += 8)
      for (int k = 0; k < 4; k++)
        c[k] += p[k] * (int32_t)(int16_t)(wp[t] & 0xffff) +
                p[4 + k] * (int32_t)(int16_t)(wp[t] >> 16);
    for (int k = 0; k < 4; k++) {
      int32_t v = c[k] >> 21;
      o[4 * ox + k] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
    }
#endif
  }
}

static void horizontal1(const sl_resampler *r, int x0, uint8_t *o, int out_w) {
  const axis *ax = &r->ax;
  for (int ox = 0; ox < out_w; ox++) {
    const int16_t *w = ax->w + (size_t)ox * SL_RESAMPLE_TAPS;
    const int16_t *p = r->row + (ax->first[ox] - x0);
    int32_t c = 1 << 20;
    for (int t = 0; t < ax->n[ox]; t++)
      c += p[t] * (int32_t)w[t];
    c >>= 21;
    o[ox] = (uint8_t)(c < 0 ? 0 : c > 255 ? 255 : c);
  }
}

#if SL_AUGMENT_AVX2
/* Rows a, b, c, d (span apart) of n Q7 values as n 4-channel pixels. */
__attribute__((target("avx2"))) static void
interleave4(const int16_t *rows, size_t span, size_t n, int16_t *out) {
  const int16_t *a = rows, *b = rows + span, *c = rows + 2 * span,
                *d = rows + 3 * span;
  for (size_t i = 0; i < n; i += 8) { /* the rows hold n rounded up to 8 */
    __m128i va = _mm_loadu_si128((const __m128i *)(const void *)(a + i));
    __m128i vb = _mm_loadu_si128((const __m128i *)(const void *)(b + i));
    __m128i vc = _mm_loadu_si128((const __m128i *)(const void *)(c + i));
    __m128i vd = _mm_loadu_si128((const __m128i *)(const void *)(d + i));
    __m128i ab0 = _mm_unpacklo_epi16(va, vb), ab1 = _mm_unpackhi_epi16(va, vb);
    __m128i cd0 = _mm_unpacklo_epi16(vc, vd), cd1 = _mm_unpackhi_epi16(vc, vd);
    __m128i *o = (__m128i *)(void *)(out + 4 * i);
    _mm_storeu_si128(o, _mm_unpacklo_epi32(ab0, cd0));
    _mm_storeu_si128(o + 1, _mm_unpackhi_epi32(ab0, cd0));
    _mm_storeu_si128(o + 2, _mm_unpacklo_epi32(ab1, cd1));
    _mm_storeu_si128(o + 3, _mm_unpackhi_epi32(ab1, cd1));
  }
}

/* w 4-byte pixels back to `rows` rows (1..4) of w bytes, stride apart. */
__attribute__((target("avx2"))) static void
deinterleave4(const uint8_t *px, int w, uint8_t *dst, size_t stride, int rows) {
  const __m128i shuf =
      _mm_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  int x = 0;
  for (; x + 4 <= w; x += 4) {
    __m128i v = _mm_shuffle_epi8(
        _mm_loadu_si128((const __m128i *)(const void *)(px + 4 * x)), shuf);
    uint32_t q[4];
    _mm_storeu_si128((__m128i *)(void *)q, v);
    for (int k = 0; k < rows; k++)
      memcpy(dst + (size_t)k * stride + (size_t)x, &q[k], 4);
  }
  for (; x < w; x++)
    for (int k = 0; k < rows; k++)
      dst[(size_t)k * stride + (size_t)x] = px[4 * x + k];
}
#endif

int sl_resample_area(sl_resampler *r, const uint8_t *src, size_t stride, int sw,
                     int sh, double u0, double u1, double v0, double v1,
                     uint8_t *dst, int out_w, int out_h) {
  if (out_w < 1 || out_h < 1 || out_w > r->max_out || out_h > r->max_out ||
      sw < 1 || sh < 1 || sw > r->max_src ||
      axis_plan(&r->ax, u0, u1, sw, out_w) ||
      axis_plan(&r->ay, v0, v1, sh, out_h))
    return -1;
  const axis *ax = &r->ax;
  int x0 = ax->first[0];
  int x1 = ax->first[out_w - 1] + ax->n[out_w - 1];
  size_t ch = (size_t)r->ch;
#if SL_AUGMENT_AVX2
  if (ch == 1 && r->avx2) {
    size_t span = (size_t)r->max_src + 16, cnt = (size_t)(x1 - x0) + 8;
    for (int oy = 0; oy < out_h; oy += 4) {
      int rows = out_h - oy < 4 ? out_h - oy : 4;
      for (int k = 0; k < 4; k++) /* a short last group repeats a row */
        vertical(r, src, stride, oy + (k < rows ? k : rows - 1), x0, x1,
                 r->rows4 + (size_t)k * span);
      interleave4(r->rows4, span, cnt, r->row);
      horizontal4(r, x0, r->out4, out_w);
      deinterleave4(r->out4, out_w, dst + (size_t)oy * (size_t)out_w,
                    (size_t)out_w, rows);
    }
    return 0;
  }
#endif
  for (int oy = 0; oy < out_h; oy++) {
    vertical(r, src, stride, oy, x0, x1, r->row);
    uint8_t *o = dst + (size_t)oy * (size_t)out_w * ch;
    if (ch == 4)
      horizontal4(r, x0, o, out_w);
    else
      horizontal1(r, x0, o, out_w);
  }
  return 0;
}
