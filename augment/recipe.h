/* The per-sample ops of a training recipe, run on the resized u8 crop in
 * torchvision's order: horizontal flip, the automatic policy
 * (augment.auto), ColorJitter (its four factors in a random order),
 * RandomGrayscale, GaussianBlur; then, on the converted sample,
 * RandomErasing (torchvision's recipes erase after Normalize, so the
 * erase value is in normalized units: 0 is the mean colour).
 *
 * Every draw comes from the sample's own stream, sl_recipe_rng(seed,
 * epoch, index): a segment of the crop's stream that the crop never
 * reaches, so turning these ops on leaves the crops and flips as they
 * were. Each op draws only when it is configured, in the order above.
 *
 * Thread safety: sl_aug_recipe is read-only and shared; the image and the
 * scratch belong to one worker. Nothing is allocated. */
#ifndef SLUICE_AUGMENT_RECIPE_H
#define SLUICE_AUGMENT_RECIPE_H

#include "augment/ops.h"
#include "augment/policy.h"
#include "common/error.h"
#include "common/rng.h"

typedef struct sl_aug_recipe {
  sl_policy_params policy;
  double jitter[4]; /* ColorJitter(brightness, contrast, saturation, hue);
                       0: that factor off */
  double jitter_p;  /* RandomApply's probability of the jitter */
  double grayscale; /* RandomGrayscale's p */
  double blur;      /* probability of GaussianBlur */
  int blur_kernel;  /* odd, 1..255 */
  double blur_sigma[2];
  double erasing; /* RandomErasing's p */
  double erasing_scale[2], erasing_ratio[2];
  int erasing_random; /* value: per-pixel N(0, 1) instead of 0 */
} sl_aug_recipe;

/* The segment of (seed, epoch, index)'s stream the recipe draws from. */
static inline sl_rng sl_recipe_rng(uint64_t seed, uint64_t epoch,
                                   uint64_t index) {
  sl_rng r = sl_rng_for(seed, epoch, index);
  r.counter = (uint64_t)1 << 40;
  return r;
}

/* Nonzero when any op runs on the u8 image (erasing excluded). */
int sl_recipe_has_pixel_ops(const sl_aug_recipe *r);
/* The recipe's ranges; the message names the key. */
sl_status sl_recipe_check(const sl_aug_recipe *r, sl_err *err);

/* RandomErasing.get_params for an h x w sample: on = 0 when the draw
 * says no (or ten tries found no box). */
typedef struct sl_erase_box {
  int on;
  int i, j, h, w;
} sl_erase_box;

/* What a recipe drew for one w x h sample, in the stream's order: the
 * policy's steps, ColorJitter (the permutation of the four, brightness 0,
 * contrast 1, saturation 2, hue 3, as ColorJitter.get_params's fn_idx,
 * and a factor for each; an unconfigured one is skipped, its factor left
 * at 1, hue's at 0), RandomGrayscale, GaussianBlur's sigma, and the
 * erasing box. sl_augment_recipe_draw shows it; the workers apply it. */
typedef struct sl_recipe_draw {
  int n_steps;
  sl_policy_step steps[SL_POLICY_MAX_OPS];
  int jitter; /* ColorJitter applied (RandomApply's draw) */
  int jitter_order[4];
  double jitter_factor[4];
  int grayscale;
  int blur;
  double blur_sigma;
  sl_erase_box erase;
} sl_recipe_draw;

/* Draws every op of the recipe for a w x h sample from rng; erasing's
 * per-pixel values (value = random) come after, from the same rng. */
void sl_recipe_draw_all(const sl_aug_recipe *r, sl_rng *rng, int w, int h,
                        sl_recipe_draw *d);

/* 1 when mirroring the image after d's u8 ops gives the bytes mirroring
 * it before would: every op is pointwise or uses statistics a mirror keeps
 * (means, histograms, the symmetric 3x3 of sharpness, summed exactly).
 * 0 with a geometric step or a blur (its float sums would run in the
 * other order). The pipeline then leaves the flip to the conversion, one
 * pass fewer over the crop. */
int sl_recipe_flip_commutes(const sl_recipe_draw *d);

/* Flips (when flip) then runs d's u8 ops on im. s must hold im. */
void sl_recipe_apply(const sl_aug_recipe *r, const sl_recipe_draw *d,
                     sl_image *im, int flip, sl_op_scratch *s);

#endif
