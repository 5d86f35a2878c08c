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
                     uint64_t k, int h, int w, sl_mix_plan *out) {
  memset(out, 0, sizeof *out);
  out->lambda = 1.0;
  if (!((p->mixup > 0 || p->cutmix > 0) && p->prob > 0))
    return;
  /* a stream of its own: batch k is not sample k */
  sl_rng r = sl_rng_for(sl_mix64(seed ^ 0x6d69786d69786d69ULL), epoch, k);
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

static float load(const void *d, size_t i, int dtype) {
  switch (dtype) {
  case SL_DTYPE_U8:
    return (float)((const uint8_t *)d)[i];
  case SL_DTYPE_FP16:
    return sl_f16_to_f32(((const uint16_t *)d)[i]);
  case SL_DTYPE_BF16:
    return sl_bf16_to_f32(((const uint16_t *)d)[i]);
  default:
    return ((const float *)d)[i];
  }
}

static void store(void *d, size_t i, int dtype, float v) {
  switch (dtype) {
  case SL_DTYPE_U8: {
    float r = nearbyintf(v);
    ((uint8_t *)d)[i] = (uint8_t)(r < 0 ? 0 : r > 255 ? 255 : r);
    break;
  }
  case SL_DTYPE_FP16:
    ((uint16_t *)d)[i] = sl_f32_to_f16(v);
    break;
  case SL_DTYPE_BF16:
    ((uint16_t *)d)[i] = sl_f32_to_bf16(v);
    break;
  default:
    ((float *)d)[i] = v;
    break;
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
  for (int j = 0; j < n / 2; j++) { /* pairs (j, n - 1 - j); a middle one
                                       is its own partner and unchanged */
    uint8_t *a = base + (size_t)j * per * es;
    uint8_t *b = base + (size_t)(n - 1 - j) * per * es;
    if (m->kind == SL_MIX_MIXUP) {
      for (size_t i = 0; i < per; i++) {
        float va = load(a, i, dtype), vb = load(b, i, dtype);
        store(a, i, dtype, lam * va + rest * vb);
        store(b, i, dtype, lam * vb + rest * va);
      }
      continue;
    }
    /* CutMix: the box is swapped between the two */
    for (int ch = 0; ch < c; ch++)
      for (int y = m->y0; y < m->y1; y++) {
        size_t row, step;
        if (layout == SL_LAYOUT_NCHW || c == 1) {
          row = ((size_t)ch * (size_t)h + (size_t)y) * (size_t)w;
          step = 1;
        } else {
          row = (size_t)y * (size_t)w * (size_t)c + (size_t)ch;
          step = (size_t)c;
        }
        for (int x = m->x0; x < m->x1; x++) {
          size_t i = (row + (size_t)x * step) * es;
          uint8_t t[4];
          memcpy(t, a + i, es);
          memcpy(a + i, b + i, es);
          memcpy(b + i, t, es);
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
