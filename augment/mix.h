/* Batch mixing with timm's Mixup semantics (timm.data.Mixup, mode
 * "batch", correct_lam = True): per batch, with probability mix_prob, one
 * of Mixup (alpha mixup) and CutMix (alpha cutmix), CutMix chosen with
 * probability switch_prob when both are on; lambda ~ Beta(alpha, alpha).
 * Sample j is mixed with sample n - 1 - j (the batch flipped, as timm):
 *   Mixup   x_j = lambda x_j + (1 - lambda) x_{n-1-j}
 *   CutMix  the box of x_j replaced by that of x_{n-1-j}; the box is
 *           timm's rand_bbox (side sqrt(1 - lambda) of the image's, its
 *           center uniform, clipped), and lambda becomes 1 - box area /
 *           image area.
 * Soft targets: one-hot rows with label smoothing eps (off = eps / C, on
 * = 1 - eps + off), mixed with the partner's by lambda: each row sums to
 * 1. A label < 0 (unlabelled) is a row of off values.
 *
 * The plan of batch k of an epoch is a pure function of (seed, epoch, rank,
 * k): any worker count and a resume give the same mixing, and each rank of
 * a data-parallel run draws its own.
 *
 * Thread safety: no state; the batch belongs to the caller. Memory: none
 * is allocated; mixing works in place. */
#ifndef SLUICE_AUGMENT_MIX_H
#define SLUICE_AUGMENT_MIX_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

typedef struct sl_mix_params {
  double mixup;       /* Beta alpha of Mixup; 0: off */
  double cutmix;      /* Beta alpha of CutMix; 0: off */
  double prob;        /* of mixing a batch */
  double switch_prob; /* of CutMix when both are on */
  double smoothing;   /* label smoothing eps */
  uint32_t classes;   /* C: width of the soft targets */
} sl_mix_params;

typedef enum sl_mix_kind {
  SL_MIX_NONE,
  SL_MIX_MIXUP,
  SL_MIX_CUTMIX
} sl_mix_kind;

typedef struct sl_mix_plan {
  sl_mix_kind kind;
  double lambda; /* weight of the sample itself (1 with SL_MIX_NONE); a
                    float32 value, as sl_batch.mix_lambda shows it: the
                    pixels mix with lambda and 1.0f - lambda in float32 */
  int y0, y1;    /* CutMix: rows [y0, y1) */
  int x0, x1;    /*         columns [x0, x1) */
} sl_mix_plan;

/* Nonzero when batches get soft targets (mixing or smoothing on). */
int sl_mix_active(const sl_mix_params *p);
sl_status sl_mix_check(const sl_mix_params *p, sl_err *err);

/* The plan of batch k of epoch on rank (loader.rank) for h x w samples. */
void sl_mix_plan_for(const sl_mix_params *p, uint64_t seed, uint64_t epoch,
                     uint64_t rank, uint64_t k, int h, int w, sl_mix_plan *out);

/* Mixes n samples of h x w x c at data (dtype an sl_dtype; layout NCHW or
 * NHWC; c 1 or 3) in place. u8 rounds half to even; fp16/bf16 mix in
 * float and round to nearest even. */
void sl_mix_pixels(const sl_mix_plan *m, void *data, int n, int h, int w, int c,
                   int dtype, int layout);

/* n rows of p->classes soft targets from labels into out. */
void sl_mix_targets(const sl_mix_params *p, const sl_mix_plan *m,
                    const int32_t *labels, int n, float *out);

#endif
