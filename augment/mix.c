/* Mixup / CutMix and soft targets (mix.h). */
#include "augment/mix.h"

#include <math.h>
#include <string.h>

#include "common/dtype.h"
#include "common/half.h"
#include "common/rng.h"

int sl_mix_active(const sl_mix_params *p) {
  return ((p->mixup > 0 || p->cutmix > 0) && p->prob > 0) || p->smoothing > 0;
}

sl_status sl_mix_check(const sl_mix_params *p, sl_err *err) {
  if (!(p->mixup >= 0) || !(p->cutmix >= 0) ||
      !(p->prob >= 0 && p->prob <= 1) ||
      !(p->switch_prob >= 0 && p->switch_prob <= 1) ||
      !(p->smoothing >= 0 && p->smoothing < 1))
    return sl_err_set(err, SL_EINVAL,
                      "augment: mixup %g, cutmix %g, mix_prob %g, "
                      "mix_switch_prob %g or label_smoothing %g out of range",
                      p->mixup, p->cutmix, p->prob, p->switch_prob,
                      p->smoothing);
  if (sl_mix_active(p) && p->classes < 1)
    return sl_err_set(err, SL_EINVAL,
                      "augment: soft targets (mixup, cutmix, label_smoothing) "
                      "need the class count: set augment.num_classes (the "
                      "dataset declares no classes)");
  return SL_OK;
}

/* Marsaglia and Tsang's gamma(a, 1); a < 1 through gamma(a + 1) U^(1/a). */
static double gamma_draw(sl_rng *r, double a) {
  double boost = 1.0;
  if (a < 1.0) {
    boost = pow(1.0 - sl_rng_uniform(r), 1.0 / a);
    a += 1.0;
  }
  double d = a - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * d);
  for (;;) {
    double x, v;
    do {
      x = sl_rng_normal(r);
      v = 1.0 + c * x;
    } while (v <= 0);
    v = v * v * v;
    double u = 1.0 - sl_rng_uniform(r);
    if (log(u) < 0.5 * x * x + d - d * v + d * log(v))
      return boost * d * v;
  }
}

static double beta_draw(sl_rng *r, double a) {
  double x = gamma_draw(r, a), y = gamma_draw(r, a);
  return x + y > 0 ? x / (x + y) : 0.5;
}

static int clampi(int v, int lo, int hi) {
  return v < lo ? lo : v > hi ? hi : v;
}

void sl_mix_plan_for(const sl_mix_params *p, uint64_t seed, uint64_t epoch,
                     uint64_t rank, uint64_t k, int h, int w,
                     sl_mix_plan *out) {
  memset(out, 0, sizeof *out);
  out->lambda = 1.0;
  if (!((p->mixup > 0 || p->cutmix > 0) && p->prob > 0))
    return;
  /* A stream of its own (batch k is not sample k), and one per rank: each
   * process of a data-parallel run draws its own kind, lambda and box, as
   * each process of timm's or torchvision's recipe does. Rank 0 keeps the
   * stream a single process had before ranks were drawn apart. */
  uint64_t stream = sl_mix64(seed ^ 0x6d69786d69786d69ULL);
  if (rank > 0)
    stream = sl_mix64(stream ^ sl_mix64(rank ^ 0x72616e6b72616e6bULL));
  sl_rng r = sl_rng_for(stream, epoch, k);
  if (!(sl_rng_uniform(&r) < p->prob))
    return;
  int cut;
  if (p->mixup > 0 && p->cutmix > 0)
    cut = sl_rng_uniform(&r) < p->switch_prob;
  else
    cut = p->cutmix > 0;
  double lam = beta_draw(&r, cut ? p->cutmix : p->mixup);
  if (!cut) {
    if (lam == 1.0)
      return;
    out->kind = SL_MIX_MIXUP;
    out->lambda = (float)lam; /* what sl_batch.mix_lambda shows */
    return;
  }
  /* timm's rand_bbox, then the lambda of the clipped box */
  double ratio = sqrt(1.0 - lam);
  int cut_h = (int)(h * ratio), cut_w = (int)(w * ratio);
  int cy = (int)sl_rng_below(&r, (uint64_t)h);
  int cx = (int)sl_rng_below(&r, (uint64_t)w);
  out->y0 = clampi(cy - cut_h / 2, 0, h);
  out->y1 = clampi(cy + cut_h / 2, 0, h);
  out->x0 = clampi(cx - cut_w / 2, 0, w);
  out->x1 = clampi(cx + cut_w / 2, 0, w);
  double area = (double)(out->y1 - out->y0) * (double)(out->x1 - out->x0);
  out->kind = SL_MIX_CUTMIX;
  out->lambda = (float)(1.0 - area / ((double)h * (double)w));
}

/* Mixup of the pair (a, b), n elements each, in place: a' = lam a +
 * rest b, b' = lam b + rest a, in float32 with each product and the sum
 * rounded once, then rounded to the element type (the device convert's
 * twin computes the same, loader/device_convert.h). One loop per type,
 * written for the vectorizer. */
static void mixup_f32(float *restrict a, float *restrict b, size_t n, float lam,
                      float rest) {
  for (size_t i = 0; i < n; i++) {
    float va = a[i], vb = b[i];
    a[i] = lam * va + rest * vb;
    b[i] = lam * vb + rest * va;
  }
}

static inline uint8_t u8_of(float v) { /* round half to even, clamp */
  v = (v + 12582912.0f) - 12582912.0f;
  v = v < 0.0f ? 0.0f : v > 255.0f ? 255.0f : v;
  return (uint8_t)v;
}

static void mixup_u8(uint8_t *restrict a, uint8_t *restrict b, size_t n,
                     float lam, float rest) {
  for (size_t i = 0; i < n; i++) {
    float va = (float)a[i], vb = (float)b[i];
    a[i] = u8_of(lam * va + rest * vb);
    b[i] = u8_of(lam * vb + rest * va);
  }
}

static inline float bf16_f32(uint16_t x) {
  uint32_t u = (uint32_t)x << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static inline uint16_t f32_bf16(float f) { /* sl_f32_to_bf16 for non-NaN */
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  x += 0x7fffu + ((x >> 16) & 1u);
  return (uint16_t)(x >> 16);
}

static void mixup_bf16(uint16_t *restrict a, uint16_t *restrict b, size_t n,
                       float lam, float rest) {
  for (size_t i = 0; i < n; i++) {
    float va = bf16_f32(a[i]), vb = bf16_f32(b[i]);
    a[i] = f32_bf16(lam * va + rest * vb); /* finite in, finite out */
    b[i] = f32_bf16(lam * vb + rest * va);
  }
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>

/* AVX and F16C present, and the OS saves the YMM registers (cpuid and
 * xgetbv: __builtin_cpu_supports does not know "f16c" in every compiler). */
static int have_f16c(void) {
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d))
    return 0;
  if (!(c & bit_OSXSAVE) || !(c & bit_AVX) || !(c & bit_F16C))
    return 0;
  unsigned lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  (void)hi;
  return (lo & 6u) == 6u;
}
/* F16C converts binary16 both ways in hardware, IEEE round to nearest
 * even like sl_f32_to_f16: the same bits, ~20x faster. */
__attribute__((target("avx,f16c"))) static size_t
mixup_f16_f16c(uint16_t *a, uint16_t *b, size_t n, float lam, float rest) {
  const __m256 vl = _mm256_set1_ps(lam), vr = _mm256_set1_ps(rest);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 va = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(a + i)));
    __m256 vb = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(b + i)));
    __m256 na = _mm256_add_ps(_mm256_mul_ps(vl, va), _mm256_mul_ps(vr, vb));
    __m256 nb = _mm256_add_ps(_mm256_mul_ps(vl, vb), _mm256_mul_ps(vr, va));
    _mm_storeu_si128((__m128i *)(a + i),
                     _mm256_cvtps_ph(na, _MM_FROUND_TO_NEAREST_INT));
    _mm_storeu_si128((__m128i *)(b + i),
                     _mm256_cvtps_ph(nb, _MM_FROUND_TO_NEAREST_INT));
  }
  return i;
}
#endif

/* f16c: have_f16c(), asked once a batch by the caller. */
static void mixup_f16(uint16_t *a, uint16_t *b, size_t n, float lam, float rest,
                      int f16c) {
  size_t i = 0;
#if defined(__x86_64__) && defined(__GNUC__)
  if (f16c)
    i = mixup_f16_f16c(a, b, n, lam, rest);
#else
  (void)f16c;
#endif
  for (; i < n; i++) {
    float va = sl_f16_to_f32(a[i]), vb = sl_f16_to_f32(b[i]);
    a[i] = sl_f32_to_f16(lam * va + rest * vb);
    b[i] = sl_f32_to_f16(lam * vb + rest * va);
  }
}

void sl_mix_pixels(const sl_mix_plan *m, void *data, int n, int h, int w, int c,
                   int dtype, int layout) {
  if (m->kind == SL_MIX_NONE || n < 2)
    return;
  size_t es = sl_dtype_bytes((sl_dtype)dtype);
  size_t per = (size_t)h * (size_t)w * (size_t)c; /* elements a sample */
  uint8_t *base = data;
  float lam = (float)m->lambda, rest = 1.0f - lam;
#if defined(__x86_64__) && defined(__GNUC__)
  int f16c = dtype == SL_DTYPE_FP16 && m->kind == SL_MIX_MIXUP && have_f16c();
#else
  int f16c = 0;
#endif
  for (int j = 0; j < n / 2; j++) { /* pairs (j, n - 1 - j); a middle one
                                       is its own partner and unchanged */
    uint8_t *a = base + (size_t)j * per * es;
    uint8_t *b = base + (size_t)(n - 1 - j) * per * es;
    if (m->kind == SL_MIX_MIXUP) {
      switch (dtype) {
      case SL_DTYPE_U8:
        mixup_u8(a, b, per, lam, rest);
        break;
      case SL_DTYPE_FP16:
        mixup_f16((uint16_t *)(void *)a, (uint16_t *)(void *)b, per, lam, rest,
                  f16c);
        break;
      case SL_DTYPE_BF16:
        mixup_bf16((uint16_t *)(void *)a, (uint16_t *)(void *)b, per, lam,
                   rest);
        break;
      default:
        mixup_f32((float *)(void *)a, (float *)(void *)b, per, lam, rest);
        break;
      }
      continue;
    }
    /* CutMix: the box is swapped between the two, a row span at a time */
    size_t span = (size_t)(m->x1 - m->x0);
    if (span == 0)
      continue;
    for (int ch = 0; ch < c; ch++) {
      if (ch > 0 && !(layout == SL_LAYOUT_NCHW || c == 1))
        break; /* NHWC: a row span holds every channel */
      for (int y = m->y0; y < m->y1; y++) {
        size_t at, len;
        if (layout == SL_LAYOUT_NCHW || c == 1) {
          at = (((size_t)ch * (size_t)h + (size_t)y) * (size_t)w +
                (size_t)m->x0) *
               es;
          len = span * es;
        } else {
          at = ((size_t)y * (size_t)w + (size_t)m->x0) * (size_t)c * es;
          len = span * (size_t)c * es;
        }
        uint8_t t[512];
        for (size_t off = 0; off < len; off += sizeof t) {
          size_t k = len - off < sizeof t ? len - off : sizeof t;
          memcpy(t, a + at + off, k);
          memcpy(a + at + off, b + at + off, k);
          memcpy(b + at + off, t, k);
        }
      }
    }
  }
}

void sl_mix_targets(const sl_mix_params *p, const sl_mix_plan *m,
                    const int32_t *labels, int n, float *out) {
  uint32_t nc = p->classes;
  double off = p->smoothing / nc, on = 1.0 - p->smoothing + off;
  double lam = m->lambda;
  for (int j = 0; j < n; j++) {
    float *row = out + (size_t)j * nc;
    int32_t ya = labels[j], yb = labels[n - 1 - j];
    for (uint32_t k = 0; k < nc; k++) {
      double ta = (int64_t)k == ya ? on : off, tb = (int64_t)k == yb ? on : off;
      row[k] = (float)(ta * lam + tb * (1.0 - lam));
    }
  }
}
