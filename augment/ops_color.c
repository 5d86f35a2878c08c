/* Colour ops (ops.h), each a table or a short loop. torchvision computes
 * them in float32 and truncates to uint8: the loops do the same float32
 * operations in the same order, so a pixel gets the value torchvision
 * gives it (the means of contrast are summed exactly here and may differ
 * in the last bit from torch's, which moves a pixel by 1 at most). The
 * pointwise loops run over every byte, X included (never read), so that
 * they vectorize. */
#include <math.h>
#include <string.h>

#include "augment/ops.h"
#include "augment/pointwise.h"
#include "augment/simd.h"

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

static size_t bytes_of(const sl_image *im) {
  return pixels(im) * (size_t)im->ch;
}

static inline uint8_t clamp_trunc(float v) { /* vectorizable to_u8 */
  v = v < 0.0f ? 0.0f : v > 255.0f ? 255.0f : v;
  return (uint8_t)v;
}

/* _blend(img, k, ratio) for a constant k: ratio * v + (1 - ratio) * k. */
static void blend_const(sl_image *im, double ratio, float k) {
  float r = (float)ratio, o = (float)(1.0 - ratio);
  const float a[4] = {r, r, r, 1.0f}, b[4] = {o * k, o * k, o * k, 0.0f};
  sl_map_channels(im->px, pixels(im), im->ch, SL_MAP_MUL_ADD, a, b);
}

void sl_op_brightness(sl_image *im, double factor) {
  blend_const(im, factor, 0.0f);
}

#if defined(__SSE2__)
/* Four RGBX pixels at once, the scalar loop's float32 operations lane by
 * lane (the same bits): channel c of each pixel is byte c of a 32-bit lane. */
static inline __m128 channel(__m128i px, int c) {
  return _mm_cvtepi32_ps(
      _mm_and_si128(_mm_srli_epi32(px, 8 * c), _mm_set1_epi32(0xFF)));
}

/* trunc(clamp(v, 0, 255)) as 32-bit lanes */
static inline __m128i clamp_trunc4(__m128 v) {
  v = _mm_min_ps(_mm_max_ps(v, _mm_setzero_ps()), _mm_set1_ps(255.0f));
  return _mm_cvttps_epi32(v);
}

static inline __m128 luma4(__m128i px) {
  __m128 l =
      _mm_add_ps(_mm_add_ps(_mm_mul_ps(_mm_set1_ps(0.2989f), channel(px, 0)),
                            _mm_mul_ps(_mm_set1_ps(0.587f), channel(px, 1))),
                 _mm_mul_ps(_mm_set1_ps(0.114f), channel(px, 2)));
  return _mm_cvtepi32_ps(_mm_cvttps_epi32(l)); /* .to(uint8): < 255 */
}

/* R, G, B lanes (0..255) back into RGBX pixels, X from px */
static inline __m128i pack4(__m128i px, __m128i r, __m128i g, __m128i b) {
  __m128i x = _mm_and_si128(px, _mm_set1_epi32((int)0xFF000000u));
  return _mm_or_si128(_mm_or_si128(r, _mm_slli_epi32(g, 8)),
                      _mm_or_si128(_mm_slli_epi32(b, 16), x));
}
#endif

void sl_op_contrast(sl_image *im, double factor) {
  size_t n = pixels(im);
  uint64_t sum = 0;
  if (im->ch == 1) {
    for (size_t i = 0; i < n; i++)
      sum += im->px[i];
  } else {
    sum = sl_luma_sum(im->px, n);
  }
  float mean = n ? (float)((double)sum / (double)n) : 0.0f;
  blend_const(im, factor, mean);
}

#if SL_AUGMENT_AVX2
/* sl_op_saturation's loop eight RGBX pixels at a time, the same float32
 * operations lane by lane; returns the pixels it did. */
__attribute__((target("avx2"))) static size_t
saturation_avx2(uint8_t *p, size_t n, float r, float o) {
  const __m256i m = _mm256_set1_epi32(0xFF),
                xmask = _mm256_set1_epi32((int)0xFF000000u);
  const __m256 kr = _mm256_set1_ps(0.2989f), kg = _mm256_set1_ps(0.587f),
               kb = _mm256_set1_ps(0.114f), vr = _mm256_set1_ps(r),
               vo = _mm256_set1_ps(o), top = _mm256_set1_ps(255.0f);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256i px = _mm256_loadu_si256((const __m256i *)(void *)(p + 4 * i));
    __m256 c[3];
    for (int k = 0; k < 3; k++)
      c[k] =
          _mm256_cvtepi32_ps(_mm256_and_si256(_mm256_srli_epi32(px, 8 * k), m));
    __m256 l = _mm256_add_ps(
        _mm256_add_ps(_mm256_mul_ps(kr, c[0]), _mm256_mul_ps(kg, c[1])),
        _mm256_mul_ps(kb, c[2]));
    __m256 g = _mm256_mul_ps(
        vo, _mm256_cvtepi32_ps(_mm256_cvttps_epi32(l))); /* .to(uint8) */
    __m256i out = _mm256_and_si256(px, xmask);
    for (int k = 0; k < 3; k++) {
      __m256 v = _mm256_add_ps(_mm256_mul_ps(vr, c[k]), g);
      v = _mm256_min_ps(_mm256_max_ps(v, _mm256_setzero_ps()), top);
      out = _mm256_or_si256(out,
                            _mm256_slli_epi32(_mm256_cvttps_epi32(v), 8 * k));
    }
    _mm256_storeu_si256((__m256i *)(void *)(p + 4 * i), out);
  }
  return i;
}
#endif

void sl_op_saturation(sl_image *im, double factor) {
  if (im->ch == 1)
    return;
  float r = (float)factor, o = (float)(1.0 - factor);
  size_t n = pixels(im), i0 = 0;
  uint8_t *restrict p = im->px;
#if SL_AUGMENT_AVX2
  if (sl_avx2())
    i0 = saturation_avx2(p, n, r, o);
#endif
#if defined(__SSE2__)
  const __m128 vr = _mm_set1_ps(r), vo = _mm_set1_ps(o);
  for (; i0 + 4 <= n; i0 += 4) {
    __m128i px = _mm_loadu_si128((const __m128i *)(p + 4 * i0));
    __m128 g = _mm_mul_ps(vo, luma4(px));
    __m128i c[3];
    for (int k = 0; k < 3; k++)
      c[k] = clamp_trunc4(_mm_add_ps(_mm_mul_ps(vr, channel(px, k)), g));
    _mm_storeu_si128((__m128i *)(p + 4 * i0), pack4(px, c[0], c[1], c[2]));
  }
#endif
  for (size_t i = i0; i < n; i++) {
    uint8_t *q = p + 4 * i;
    float g = o * (float)sl_luma_one(q);
    q[0] = clamp_trunc(r * (float)q[0] + g);
    q[1] = clamp_trunc(r * (float)q[1] + g);
    q[2] = clamp_trunc(r * (float)q[2] + g);
  }
}

#if SL_AUGMENT_AVX2
/* sl_op_grayscale's loop eight RGBX pixels at a time (luma4's float32
 * operations); returns the pixels it did. */
__attribute__((target("avx2"))) static size_t grayscale_avx2(uint8_t *p,
                                                             size_t n) {
  const __m256i m = _mm256_set1_epi32(0xFF),
                xmask = _mm256_set1_epi32((int)0xFF000000u),
                spread = _mm256_set1_epi32(0x010101);
  const __m256 kr = _mm256_set1_ps(0.2989f), kg = _mm256_set1_ps(0.587f),
               kb = _mm256_set1_ps(0.114f);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256i px = _mm256_loadu_si256((const __m256i *)(void *)(p + 4 * i));
    __m256 r = _mm256_cvtepi32_ps(_mm256_and_si256(px, m));
    __m256 g =
        _mm256_cvtepi32_ps(_mm256_and_si256(_mm256_srli_epi32(px, 8), m));
    __m256 b =
        _mm256_cvtepi32_ps(_mm256_and_si256(_mm256_srli_epi32(px, 16), m));
    __m256 l =
        _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(kr, r), _mm256_mul_ps(kg, g)),
                      _mm256_mul_ps(kb, b));
    __m256i y = _mm256_mullo_epi32(_mm256_cvttps_epi32(l), spread); /* y y y */
    _mm256_storeu_si256((__m256i *)(void *)(p + 4 * i),
                        _mm256_or_si256(y, _mm256_and_si256(px, xmask)));
  }
  return i;
}
#endif

void sl_op_grayscale(sl_image *im) {
  if (im->ch == 1)
    return;
  size_t n = pixels(im), i0 = 0;
  uint8_t *restrict p = im->px;
#if SL_AUGMENT_AVX2
  if (sl_avx2())
    i0 = grayscale_avx2(p, n);
#endif
#if defined(__SSE2__)
  for (; i0 + 4 <= n; i0 += 4) {
    __m128i px = _mm_loadu_si128((const __m128i *)(p + 4 * i0));
    __m128i g = _mm_cvttps_epi32(luma4(px));
    _mm_storeu_si128((__m128i *)(p + 4 * i0), pack4(px, g, g, g));
  }
#endif
  for (size_t i = i0; i < n; i++) {
    uint8_t *q = p + 4 * i;
    uint8_t g = sl_luma_one(q);
    q[0] = g, q[1] = g, q[2] = g;
  }
}

/* torchvision's _rgb2hsv, the hue shift and _hsv2rgb on one pixel, in
 * float32, then (x * 255).to(uint8). */
static float clamp01(float v) {
  return v < 0.0f ? 0.0f : v > 1.0f ? 1.0f : v;
}

static float floor_f(float v) { /* floorf without a libm call, |v| < 2^31 */
  float t = (float)(int)v;
  return t > v ? t - 1.0f : t;
}

static void hue_pixel(uint8_t *px, float shift, const float *unit) {
  float r = unit[px[0]], g = unit[px[1]], b = unit[px[2]];
  float maxc = r > g ? r : g, minc = r < g ? r : g;
  maxc = maxc > b ? maxc : b;
  minc = minc < b ? minc : b;
  int eqc = maxc == minc;
  float cr = maxc - minc;
  float s = cr / (eqc ? 1.0f : maxc);
  float inv = 1.0f / (eqc ? 1.0f : cr); /* one division for three */
  float rc = (maxc - r) * inv, gc = (maxc - g) * inv, bc = (maxc - b) * inv;
  float h;
  if (maxc == r)
    h = bc - gc;
  else if (maxc == g)
    h = 2.0f + rc - bc;
  else
    h = 4.0f + gc - rc;
  h = h / 6.0f + 1.0f; /* >= 0: torch.fmod is h - floor(h) here */
  h -= floor_f(h);
  h += shift; /* Python's %: the result takes 1's sign */
  h -= floor_f(h);
  float v = maxc;
  float i6 = floor_f(h * 6.0f), f = h * 6.0f - i6;
  int i = ((int)i6 % 6 + 6) % 6;
  float p = clamp01(v * (1.0f - s));
  float q = clamp01(v * (1.0f - s * f));
  float t = clamp01(v * (1.0f - s * (1.0f - f)));
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

#if defined(__SSE2__)
static inline __m128 sel(__m128 m, __m128 a, __m128 b) { /* m ? a : b */
  return _mm_or_ps(_mm_and_ps(m, a), _mm_andnot_ps(m, b));
}

static inline __m128 floor4(__m128 v) { /* floor_f lane by lane */
  __m128 t = _mm_cvtepi32_ps(_mm_cvttps_epi32(v));
  return _mm_sub_ps(t, _mm_and_ps(_mm_cmpgt_ps(t, v), _mm_set1_ps(1.0f)));
}

static inline __m128 clamp01_4(__m128 v) {
  return _mm_min_ps(_mm_max_ps(v, _mm_setzero_ps()), _mm_set1_ps(1.0f));
}

/* hue_pixel on four RGBX pixels: the same float32 operations, the branches
 * as masks. */
static void hue4(uint8_t *px, __m128 shift) {
  __m128i in = _mm_loadu_si128((const __m128i *)px);
  const __m128 k255 = _mm_set1_ps(255.0f), one = _mm_set1_ps(1.0f);
  __m128 r = _mm_div_ps(channel(in, 0), k255),
         g = _mm_div_ps(channel(in, 1), k255),
         b = _mm_div_ps(channel(in, 2), k255);
  __m128 maxc = _mm_max_ps(_mm_max_ps(r, g), b),
         minc = _mm_min_ps(_mm_min_ps(r, g), b);
  __m128 eqc = _mm_cmpeq_ps(maxc, minc), cr = _mm_sub_ps(maxc, minc);
  __m128 s = _mm_div_ps(cr, sel(eqc, one, maxc));
  __m128 inv = _mm_div_ps(one, sel(eqc, one, cr));
  __m128 rc = _mm_mul_ps(_mm_sub_ps(maxc, r), inv),
         gc = _mm_mul_ps(_mm_sub_ps(maxc, g), inv),
         bc = _mm_mul_ps(_mm_sub_ps(maxc, b), inv);
  __m128 hr = _mm_sub_ps(bc, gc);
  __m128 hg = _mm_sub_ps(_mm_add_ps(_mm_set1_ps(2.0f), rc), bc);
  __m128 hb = _mm_sub_ps(_mm_add_ps(_mm_set1_ps(4.0f), gc), rc);
  __m128 h = sel(_mm_cmpeq_ps(maxc, r), hr, sel(_mm_cmpeq_ps(maxc, g), hg, hb));
  h = _mm_add_ps(_mm_div_ps(h, _mm_set1_ps(6.0f)), one);
  h = _mm_sub_ps(h, floor4(h));
  h = _mm_add_ps(h, shift);
  h = _mm_sub_ps(h, floor4(h));
  __m128 v = maxc, h6 = _mm_mul_ps(h, _mm_set1_ps(6.0f));
  __m128 i6 = floor4(h6), f = _mm_sub_ps(h6, i6);
  __m128 p = clamp01_4(_mm_mul_ps(v, _mm_sub_ps(one, s)));
  __m128 q = clamp01_4(_mm_mul_ps(v, _mm_sub_ps(one, _mm_mul_ps(s, f))));
  __m128 t = clamp01_4(
      _mm_mul_ps(v, _mm_sub_ps(one, _mm_mul_ps(s, _mm_sub_ps(one, f)))));
  /* i6 in 0..6; 6 is sector 0 */
  __m128 i0 = _mm_or_ps(_mm_cmpeq_ps(i6, _mm_setzero_ps()),
                        _mm_cmpeq_ps(i6, _mm_set1_ps(6.0f)));
  __m128 i1 = _mm_cmpeq_ps(i6, one), i2 = _mm_cmpeq_ps(i6, _mm_set1_ps(2.0f)),
         i3 = _mm_cmpeq_ps(i6, _mm_set1_ps(3.0f)),
         i4 = _mm_cmpeq_ps(i6, _mm_set1_ps(4.0f));
  /* sectors 0..5: (v,t,p) (q,v,p) (p,v,t) (p,q,v) (t,p,v) (v,p,q) */
  __m128 o0 = sel(i0, v, sel(i1, q, sel(_mm_or_ps(i2, i3), p, sel(i4, t, v))));
  __m128 o1 = sel(i0, t, sel(_mm_or_ps(i1, i2), v, sel(i3, q, p)));
  __m128 o2 =
      sel(_mm_or_ps(i0, i1), p, sel(i2, t, sel(_mm_or_ps(i3, i4), v, q)));
  __m128i c0 = clamp_trunc4(_mm_mul_ps(o0, k255)),
          c1 = clamp_trunc4(_mm_mul_ps(o1, k255)),
          c2 = clamp_trunc4(_mm_mul_ps(o2, k255));
  _mm_storeu_si128((__m128i *)px, pack4(in, c0, c1, c2));
}
#endif

#if SL_AUGMENT_AVX2
__attribute__((target("avx2"), always_inline)) static inline __m256
sel8(__m256 m, __m256 a, __m256 b) { /* m ? a : b */
  return _mm256_blendv_ps(b, a, m);
}

__attribute__((target("avx2"), always_inline)) static inline __m256
floor8(__m256 v) { /* floor_f lane by lane */
  __m256 t = _mm256_cvtepi32_ps(_mm256_cvttps_epi32(v));
  return _mm256_sub_ps(
      t, _mm256_and_ps(_mm256_cmp_ps(t, v, _CMP_GT_OQ), _mm256_set1_ps(1.0f)));
}

__attribute__((target("avx2"), always_inline)) static inline __m256
clamp01_8(__m256 v) {
  return _mm256_min_ps(_mm256_max_ps(v, _mm256_setzero_ps()),
                       _mm256_set1_ps(1.0f));
}

/* hue4 on eight RGBX pixels a step; returns the pixels it did. */
__attribute__((target("avx2"))) static size_t hue_avx2(uint8_t *px, size_t n,
                                                       float shift_f) {
  const __m256i m = _mm256_set1_epi32(0xFF);
  const __m256 k255 = _mm256_set1_ps(255.0f), one = _mm256_set1_ps(1.0f),
               shift = _mm256_set1_ps(shift_f);
#define EQ(a, b) _mm256_cmp_ps(a, b, _CMP_EQ_OQ)
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint8_t *p = px + 4 * i;
    __m256i in = _mm256_loadu_si256((const __m256i *)(void *)p);
    __m256 r = _mm256_div_ps(_mm256_cvtepi32_ps(_mm256_and_si256(in, m)), k255);
    __m256 g = _mm256_div_ps(
        _mm256_cvtepi32_ps(_mm256_and_si256(_mm256_srli_epi32(in, 8), m)),
        k255);
    __m256 b = _mm256_div_ps(
        _mm256_cvtepi32_ps(_mm256_and_si256(_mm256_srli_epi32(in, 16), m)),
        k255);
    __m256 maxc = _mm256_max_ps(_mm256_max_ps(r, g), b),
           minc = _mm256_min_ps(_mm256_min_ps(r, g), b);
    __m256 eqc = EQ(maxc, minc), cr = _mm256_sub_ps(maxc, minc);
    __m256 s = _mm256_div_ps(cr, sel8(eqc, one, maxc));
    __m256 inv = _mm256_div_ps(one, sel8(eqc, one, cr));
    __m256 rc = _mm256_mul_ps(_mm256_sub_ps(maxc, r), inv),
           gc = _mm256_mul_ps(_mm256_sub_ps(maxc, g), inv),
           bc = _mm256_mul_ps(_mm256_sub_ps(maxc, b), inv);
    __m256 hr = _mm256_sub_ps(bc, gc);
    __m256 hg = _mm256_sub_ps(_mm256_add_ps(_mm256_set1_ps(2.0f), rc), bc);
    __m256 hb = _mm256_sub_ps(_mm256_add_ps(_mm256_set1_ps(4.0f), gc), rc);
    __m256 h = sel8(EQ(maxc, r), hr, sel8(EQ(maxc, g), hg, hb));
    h = _mm256_add_ps(_mm256_div_ps(h, _mm256_set1_ps(6.0f)), one);
    h = _mm256_sub_ps(h, floor8(h));
    h = _mm256_add_ps(h, shift);
    h = _mm256_sub_ps(h, floor8(h));
    __m256 v = maxc, h6 = _mm256_mul_ps(h, _mm256_set1_ps(6.0f));
    __m256 i6 = floor8(h6), f = _mm256_sub_ps(h6, i6);
    __m256 pp = clamp01_8(_mm256_mul_ps(v, _mm256_sub_ps(one, s)));
    __m256 q =
        clamp01_8(_mm256_mul_ps(v, _mm256_sub_ps(one, _mm256_mul_ps(s, f))));
    __m256 t = clamp01_8(_mm256_mul_ps(
        v, _mm256_sub_ps(one, _mm256_mul_ps(s, _mm256_sub_ps(one, f)))));
    /* i6 in 0..6; 6 is sector 0 */
    __m256 i0 =
        _mm256_or_ps(EQ(i6, _mm256_setzero_ps()), EQ(i6, _mm256_set1_ps(6.0f)));
    __m256 i1 = EQ(i6, one), i2 = EQ(i6, _mm256_set1_ps(2.0f)),
           i3 = EQ(i6, _mm256_set1_ps(3.0f)), i4 = EQ(i6, _mm256_set1_ps(4.0f));
    __m256 o[3];
    o[0] = sel8(i0, v,
                sel8(i1, q, sel8(_mm256_or_ps(i2, i3), pp, sel8(i4, t, v))));
    o[1] = sel8(i0, t, sel8(_mm256_or_ps(i1, i2), v, sel8(i3, q, pp)));
    o[2] = sel8(_mm256_or_ps(i0, i1), pp,
                sel8(i2, t, sel8(_mm256_or_ps(i3, i4), v, q)));
    __m256i out = _mm256_and_si256(in, _mm256_set1_epi32((int)0xFF000000u));
    for (int c = 0; c < 3; c++) {
      __m256 x = _mm256_min_ps(
          _mm256_max_ps(_mm256_mul_ps(o[c], k255), _mm256_setzero_ps()), k255);
      out = _mm256_or_si256(out,
                            _mm256_slli_epi32(_mm256_cvttps_epi32(x), 8 * c));
    }
    _mm256_storeu_si256((__m256i *)(void *)p, out);
  }
#undef EQ
  return i;
}
#endif

void sl_op_hue(sl_image *im, double hue_factor) {
  if (im->ch == 1)
    return;
  float shift = (float)hue_factor, unit[256];
  for (int v = 0; v < 256; v++)
    unit[v] = (float)v / 255.0f; /* img.to(float32) / 255.0 */
  size_t n = pixels(im), i = 0;
#if SL_AUGMENT_AVX2
  if (sl_avx2())
    i = hue_avx2(im->px, n, shift);
#endif
#if defined(__SSE2__)
  for (__m128 vs = _mm_set1_ps(shift); i + 4 <= n; i += 4)
    hue4(im->px + 4 * i, vs);
#endif
  for (; i < n; i++)
    hue_pixel(im->px + 4 * i, shift, unit);
}

void sl_op_posterize(sl_image *im, int bits) {
  bits = bits < 0 ? 0 : bits > 8 ? 8 : bits;
  uint8_t mask = (uint8_t)(0xFF00u >> bits);
  uint8_t *restrict p = im->px;
  size_t n = bytes_of(im);
  for (size_t i = 0; i < n; i++)
    p[i] &= mask;
}

void sl_op_solarize(sl_image *im, double threshold) {
  /* (float)v >= t for a byte v is v >= the smallest such byte */
  float t = (float)threshold;
  int lo = 0;
  while (lo < 256 && !((float)lo >= t))
    lo++;
  uint8_t *restrict p = im->px;
  size_t n = bytes_of(im);
  if (lo > 255)
    return;
  uint8_t first = (uint8_t)lo;
  for (size_t i = 0; i < n; i++)
    p[i] = p[i] >= first ? (uint8_t)(255 - p[i]) : p[i];
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

/* The smallest and largest byte of each colour channel (of channel 0 for
 * gray); 255 and 0 for an empty image. */
static void channel_range(const sl_image *im, uint8_t lo[3], uint8_t hi[3]) {
  size_t n = pixels(im) * (size_t)(im->ch == 1 ? 1 : 4), i = 0;
  const uint8_t *p = im->px;
  uint8_t mn[16], mx[16]; /* byte k: channel k % 4 (every byte, for gray) */
  memset(mn, 255, sizeof mn), memset(mx, 0, sizeof mx);
#if defined(__SSE2__)
  __m128i vmn = _mm_set1_epi8((char)0xFF), vmx = _mm_setzero_si128();
  for (; i + 16 <= n; i += 16) {
    __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
    vmn = _mm_min_epu8(vmn, x), vmx = _mm_max_epu8(vmx, x);
  }
  _mm_storeu_si128((__m128i *)(void *)mn, vmn);
  _mm_storeu_si128((__m128i *)(void *)mx, vmx);
#endif
  for (size_t k = 0; i < n; i++, k = (k + 1) & 15) /* i % 16 == k */
    mn[k] = p[i] < mn[k] ? p[i] : mn[k], mx[k] = p[i] > mx[k] ? p[i] : mx[k];
  for (int c = 0; c < 3; c++) {
    lo[c] = 255, hi[c] = 0;
    for (int k = 0; k < 16; k++) {
      if (im->ch == 4 && (k & 3) != c)
        continue;
      lo[c] = mn[k] < lo[c] ? mn[k] : lo[c];
      hi[c] = mx[k] > hi[c] ? mx[k] : hi[c];
    }
  }
}

void sl_op_autocontrast(sl_image *im) {
  uint8_t lo[3], hi[3];
  channel_range(im, lo, hi);
  float mn[4] = {0, 0, 0, 0}, scale[4] = {1, 1, 1, 1};
  int nc = im->ch == 1 ? 1 : 3;
  for (int c = 0; c < nc; c++) { /* torchvision: 255 / (amax - amin) */
    mn[c] = (float)lo[c], scale[c] = 255.0f / ((float)hi[c] - (float)lo[c]);
    if (!isfinite(scale[c]))
      mn[c] = 0.0f, scale[c] = 1.0f;
  }
  sl_map_channels(im->px, pixels(im), im->ch, SL_MAP_SUB_MUL, scale, mn);
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
