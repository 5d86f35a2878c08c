/* The row helpers shared by the codecs: pixel-format conversion and the
 * sink that crops and box-reduces rows as they stream in. A leaf below the
 * codecs (they call it; it calls none of them). */
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "codecs/codec_impl.h"

static inline uint8_t div255(uint32_t v) {
  v += 128;
  return (uint8_t)((v + (v >> 8)) >> 8);
}

static inline uint8_t luma(uint32_t r, uint32_t g, uint32_t b) {
  return (uint8_t)((r * 77 + g * 150 + b * 29 + 128) >> 8);
}

void sl_convert_row(const uint8_t *in, sl_pixfmt fmt, int n, uint8_t *out,
                    int out_ch) {
  for (int i = 0; i < n; i++) {
    uint32_t r, g, b;
    switch (fmt) {
    case SL_PIX_GRAY:
      r = g = b = in[i];
      break;
    case SL_PIX_RGB:
      r = in[3 * i], g = in[3 * i + 1], b = in[3 * i + 2];
      break;
    case SL_PIX_RGBX:
      r = in[4 * i], g = in[4 * i + 1], b = in[4 * i + 2];
      break;
    case SL_PIX_CMYK_INV: {
      uint32_t k = in[4 * i + 3];
      r = div255(in[4 * i] * k), g = div255(in[4 * i + 1] * k);
      b = div255(in[4 * i + 2] * k);
      break;
    }
    default: { /* SL_PIX_CMYK */
      uint32_t k = 255u - in[4 * i + 3];
      r = div255((255u - in[4 * i]) * k);
      g = div255((255u - in[4 * i + 1]) * k);
      b = div255((255u - in[4 * i + 2]) * k);
      break;
    }
    }
    if (out_ch == 1) {
      out[i] = fmt == SL_PIX_GRAY ? (uint8_t)r : luma(r, g, b);
    } else {
      out[4 * i] = (uint8_t)r, out[4 * i + 1] = (uint8_t)g;
      out[4 * i + 2] = (uint8_t)b, out[4 * i + 3] = 255;
    }
  }
}

void sl_sink_begin(sl_sink *s, sl_decoder *d, int ch, int rw, int rh, int kx,
                   int ky) {
  s->ch = ch;
  s->rw = rw;
  s->rh = rh;
  s->kx = kx;
  s->ky = ky;
  s->nx = (rw + kx - 1) / kx;
  s->ny = (rh + ky - 1) / ky;
  s->out = d->region;
  s->stride = (size_t)s->nx * (size_t)ch;
  s->acc = d->acc;
  s->in_rows = s->oy = s->acc_rows = 0;
  if (kx > 1 || ky > 1)
    memset(s->acc, 0, sizeof(uint32_t) * (size_t)s->nx * (size_t)ch);
}

void sl_sink_end(const sl_sink *s, int m, sl_decoded *out) {
  out->pixels = s->out;
  out->stride = s->stride;
  out->w = s->nx;
  out->h = s->ny;
  out->scale = m;
  out->kx = s->kx;
  out->ky = s->ky;
}

/* Divides the sums of an output row by their pixel counts (a rounded
 * fixed-point reciprocal per count) and clears them. */
static void sink_emit(sl_sink *s) {
  uint8_t *o = s->out + (size_t)s->oy * s->stride;
  int ch = s->ch, full = s->rw / s->kx;
  uint64_t n = (uint64_t)s->kx * (uint64_t)s->acc_rows;
  uint64_t mul = ((1ull << 24) + n / 2) / n;
  size_t nfull = (size_t)full * (size_t)ch;
  for (size_t i = 0; i < nfull; i++) {
    o[i] = (uint8_t)((s->acc[i] * mul + (1u << 23)) >> 24);
    s->acc[i] = 0;
  }
  if (full < s->nx) { /* the last, narrower column */
    n = (uint64_t)(s->rw - full * s->kx) * (uint64_t)s->acc_rows;
    mul = ((1ull << 24) + n / 2) / n;
    for (int c = 0; c < ch; c++) {
      uint32_t *a = &s->acc[nfull + (size_t)c];
      o[nfull + (size_t)c] = (uint8_t)((*a * mul + (1u << 23)) >> 24);
      *a = 0;
    }
  }
  s->oy++;
  s->acc_rows = 0;
}

/* a[i] += p[i] for n values, in fixed blocks of 16 so that the compiler
 * vectorises the body even under -O2's very-cheap cost model. */
static void acc_add(uint32_t *restrict a, const uint8_t *restrict p, size_t n) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int j = 0; j < 16; j++)
      a[i + j] += p[i + j];
  for (; i < n; i++)
    a[i] += p[i];
}

/* Horizontal pairs of RGBX pixels: a[4o + c] += p[8o + c] + p[8o + 4 + c].
 * SSE2 (every x86-64) for blocks of four outputs, scalar otherwise. */
static void acc_add_pairs(uint32_t *restrict a, const uint8_t *restrict p,
                          int pairs) {
  int o = 0;
#if defined(__SSE2__)
  const __m128i z = _mm_setzero_si128();
  for (; o + 4 <= pairs; o += 4, a += 16, p += 32) {
    for (int h = 0; h < 2; h++) { /* 4 input pixels -> 2 outputs */
      __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * h));
      __m128i lo = _mm_unpacklo_epi8(v, z), hi = _mm_unpackhi_epi8(v, z);
      __m128i sum =
          _mm_add_epi16(_mm_unpacklo_epi64(lo, hi), _mm_unpackhi_epi64(lo, hi));
      __m128i *d = (__m128i *)(void *)(a + 8 * h);
      _mm_storeu_si128(
          d, _mm_add_epi32(_mm_loadu_si128(d), _mm_unpacklo_epi16(sum, z)));
      _mm_storeu_si128(d + 1, _mm_add_epi32(_mm_loadu_si128(d + 1),
                                            _mm_unpackhi_epi16(sum, z)));
    }
  }
#endif
  for (; o < pairs; o++, a += 4, p += 8)
    for (int c = 0; c < 4; c++)
      a[c] += (uint32_t)p[c] + p[4 + c];
}

void sl_sink_row(sl_sink *s, const uint8_t *px) {
  if (s->in_rows >= s->rh)
    return;
  s->in_rows++;
  if (s->kx == 1 && s->ky == 1) {
    memcpy(s->out + (size_t)s->oy++ * s->stride, px, s->stride);
    return;
  }
  int ch = s->ch, kx = s->kx, full = s->rw / kx;
  uint32_t *a = s->acc;
  if (kx == 1) {
    acc_add(a, px, (size_t)s->rw * (size_t)ch);
  } else if (ch == 4 && kx == 2) { /* the common case: pairs */
    acc_add_pairs(a, px, full);
    if (full * 2 < s->rw)
      acc_add(a + 4 * full, px + 8 * full, 4);
  } else if (ch == 4) {
    for (int ox = 0; ox < full; ox++, a += 4) {
      uint32_t r = 0, g = 0, b = 0, x = 0;
      for (int i = 0; i < kx; i++, px += 4)
        r += px[0], g += px[1], b += px[2], x += px[3];
      a[0] += r, a[1] += g, a[2] += b, a[3] += x;
    }
    for (int i = full * kx; i < s->rw; i++, px += 4)
      a[0] += px[0], a[1] += px[1], a[2] += px[2], a[3] += px[3];
  } else {
    for (int ox = 0; ox < full; ox++, a++) {
      uint32_t v = 0;
      for (int i = 0; i < kx; i++)
        v += *px++;
      a[0] += v;
    }
    for (int i = full * kx; i < s->rw; i++)
      a[0] += *px++;
  }
  if (++s->acc_rows == s->ky || s->in_rows == s->rh)
    sink_emit(s);
}
