/* The state blob's fingerprints of the settings (loader_state.c): hashes of
 * what decides a batch's contents, so a resume with other settings is
 * refused. A leaf below loader.c (which takes them at open) and
 * loader_state.c (which stores and compares them). */
#include "loader/fingerprint.h"

#include <string.h>

#include "common/rng.h"

static uint64_t mix(uint64_t h, uint64_t v) {
  return sl_mix64(h ^ v);
}

static uint64_t mix_double(uint64_t h, double d) {
  uint64_t bits;
  memcpy(&bits, &d, sizeof bits);
  return mix(h, bits);
}

/* The recipe's keys (augment.auto .. augment.num_classes in options.def) as
 * their text, hashed only when one of its ops is on (augment.auto, a
 * color_jitter factor, grayscale, blur, erasing, mixup, cutmix or
 * label_smoothing), so that a state saved without them keeps its
 * fingerprint. Train mode only: the recipe and mixing values are then as
 * configured. */
static uint64_t mix_recipe(uint64_t h, const sl_settings *st) {
  const sl_aug_recipe *r = &st->aug.recipe;
  int active = r->policy.policy != SL_AUTO_NONE;
  for (int i = 0; i < 4; i++)
    active |= r->jitter[i] != 0;
  active |= r->grayscale != 0 || r->blur != 0 || r->erasing != 0;
  active |= st->mix.mixup != 0 || st->mix.cutmix != 0 || st->mix.smoothing != 0;
  if (!active)
    return h;
  for (int k = 0; k < SL_SETTINGS_RECIPE_KEYS; k++) {
    const char *text = st->recipe_text[k];
    if (!text[0]) /* a key whose text could not be written is skipped */
      continue;
    for (const char *q = text; *q; q++)
      h = mix(h, (uint8_t)*q);
    h = mix(h, 0x100); /* end of a value */
  }
  return h;
}

void sl_settings_fingerprints(const sl_settings *st, uint32_t box_capacity,
                              uint64_t *schedule_fp, uint64_t *augment_fp) {
  const sl_schedule *s = &st->sched;
  uint64_t h = mix(0x736c2d7363686564ULL, s->eval); /* "sl-sched" */
  if (s->eval) {
    h = mix(h, (uint64_t)s->eval_res);
  } else {
    h = mix(h, (uint64_t)s->kind);
    if (s->kind == SL_SCHEDULE_CONSTANT || s->kind == SL_SCHEDULE_LINEAR)
      h = mix(h, (uint64_t)s->max);
    if (s->kind == SL_SCHEDULE_LINEAR) {
      h = mix(h, (uint64_t)s->min);
      h = mix(h, (uint64_t)s->multiple);
      h = mix(h, (uint64_t)s->start_epoch);
      h = mix(h, (uint64_t)s->end_epoch);
    }
    for (int i = 0; s->kind == SL_SCHEDULE_STEPS && i < s->steps.n; i++) {
      h = mix(h, (uint64_t)s->steps.v[i].epoch);
      h = mix(h, (uint64_t)s->steps.v[i].res);
    }
  }
  *schedule_fp = h;
  /* What the workers' augment stage takes (st->aug: eval's center crop and
   * no flip already applied); a one-value scale or ratio is the pair
   * (v, v), hashed as two values. */
  const sl_aug_params *a = &st->aug;
  h = mix(0x736c2d6175676d65ULL, (uint64_t)a->crop); /* "sl-augme" */
  if (a->crop == SL_CROP_RANDOM_RESIZED) {
    for (int i = 0; i < 2; i++)
      h = mix_double(h, a->scale[i]);
    for (int i = 0; i < 2; i++)
      h = mix_double(h, a->ratio[i]);
  }
  if (a->crop == SL_CROP_CENTER)
    h = mix_double(h, a->center_ratio);
  if (a->crop == SL_CROP_IOU)
    h = mix(h, (uint64_t)a->iou_all);
  if (a->crop == SL_CROP_LETTERBOX)
    h = mix(h, (uint64_t)a->letterbox_fill);
  if (a->box_min_area > 0) /* 0 (the default) keeps old blobs valid */
    h = mix_double(h, a->box_min_area);
  if (box_capacity > 0) /* what a batch keeps of each sample */
    h = mix(h, box_capacity);
  h = mix_double(h, a->flip);
  for (int i = 0; i < 3; i++)
    h = mix_double(mix_double(h, st->mean[i]), st->std[i]);
  h = mix(h, (uint64_t)a->filter);
  if (a->jpeg_planes) /* off (the default) keeps old blobs valid */
    h = mix(h, 0x706c616e6573u);
  *augment_fp = st->eval ? h : mix_recipe(h, st);
}
