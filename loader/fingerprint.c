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

enum {
  G_CROP = SL_AUGMENT_GROUP_CROP,
  G_FLIP = SL_AUGMENT_GROUP_FLIP,
  G_NORM = SL_AUGMENT_GROUP_NORM,
  G_FILTER = SL_AUGMENT_GROUP_FILTER,
  G_AUTO = SL_AUGMENT_GROUP_AUTO,
  G_COLOR = SL_AUGMENT_GROUP_COLOR,
  G_ERASING = SL_AUGMENT_GROUP_ERASING,
  G_MIX = SL_AUGMENT_GROUP_MIX,
};

/* The group of recipe key k (0: augment.auto, in options.def's order). */
static int recipe_group(int k) {
  sl_opt o = (sl_opt)(SL_OPT_AUGMENT_AUTO + k);
  if (o < SL_OPT_AUGMENT_COLOR_JITTER)
    return G_AUTO;
  if (o < SL_OPT_AUGMENT_ERASING)
    return G_COLOR;
  if (o < SL_OPT_AUGMENT_MIXUP)
    return G_ERASING;
  return G_MIX;
}

static uint64_t mix_text(uint64_t h, const char *text) {
  for (const char *q = text; *q; q++)
    h = mix(h, (uint8_t)*q);
  return mix(h, 0x100); /* end of a value */
}

static uint16_t fold16(uint64_t h) {
  return (uint16_t)(h ^ h >> 16 ^ h >> 32 ^ h >> 48);
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
  for (int k = 0; k < SL_SETTINGS_RECIPE_KEYS; k++)
    if (st->recipe_text[k][0]) /* a key whose text could not be written is
                                  skipped */
      h = mix_text(h, st->recipe_text[k]);
  return h;
}

void sl_settings_fingerprints(const sl_settings *st, uint32_t box_capacity,
                              uint64_t *schedule_fp, uint64_t *augment_fp,
                              uint16_t tags[SL_AUGMENT_GROUPS]) {
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
  /* h: the fingerprint (its bytes are pinned: the order below must not
   * change); g: each group's own hash of what it adds to h. */
  uint64_t g[SL_AUGMENT_GROUPS];
  for (int i = 0; i < SL_AUGMENT_GROUPS; i++)
    g[i] = mix(0x736c2d67726f7570ULL, (uint64_t)i);  /* "sl-group" */
  h = mix(0x736c2d6175676d65ULL, (uint64_t)a->crop); /* "sl-augme" */
  g[G_CROP] = mix(g[G_CROP], (uint64_t)a->crop);
  if (a->crop == SL_CROP_RANDOM_RESIZED) {
    for (int i = 0; i < 2; i++) {
      h = mix_double(h, a->scale[i]);
      g[G_CROP] = mix_double(g[G_CROP], a->scale[i]);
    }
    for (int i = 0; i < 2; i++) {
      h = mix_double(h, a->ratio[i]);
      g[G_CROP] = mix_double(g[G_CROP], a->ratio[i]);
    }
  }
  if (a->crop == SL_CROP_CENTER) {
    h = mix_double(h, a->center_ratio);
    g[G_CROP] = mix_double(g[G_CROP], a->center_ratio);
  }
  if (a->crop == SL_CROP_IOU) {
    h = mix(h, (uint64_t)a->iou_all);
    g[G_CROP] = mix(g[G_CROP], (uint64_t)a->iou_all);
  }
  if (a->crop == SL_CROP_LETTERBOX) {
    h = mix(h, (uint64_t)a->letterbox_fill);
    g[G_CROP] = mix(g[G_CROP], (uint64_t)a->letterbox_fill);
  }
  if (a->box_min_area > 0) { /* 0 (the default) keeps old blobs valid */
    h = mix_double(h, a->box_min_area);
    g[G_CROP] = mix_double(g[G_CROP], a->box_min_area);
  }
  if (box_capacity > 0) { /* what a batch keeps of each sample */
    h = mix(h, box_capacity);
    g[G_CROP] = mix(g[G_CROP], box_capacity);
  }
  h = mix_double(h, a->flip);
  g[G_FLIP] = mix_double(g[G_FLIP], a->flip);
  for (int i = 0; i < 3; i++) {
    h = mix_double(mix_double(h, st->mean[i]), st->std[i]);
    g[G_NORM] = mix_double(mix_double(g[G_NORM], st->mean[i]), st->std[i]);
  }
  h = mix(h, (uint64_t)a->filter);
  g[G_FILTER] = mix(g[G_FILTER], (uint64_t)a->filter);
  if (a->jpeg_planes) { /* off (the default) keeps old blobs valid */
    h = mix(h, 0x706c616e6573u);
    g[G_FILTER] = mix(g[G_FILTER], 1);
  }
  *augment_fp = st->eval ? h : mix_recipe(h, st);
  /* The recipe's groups from their keys' text whether or not an op is on,
   * so that turning one on names its group alone. Eval uses none. */
  for (int k = 0; !st->eval && k < SL_SETTINGS_RECIPE_KEYS; k++)
    if (st->recipe_text[k][0])
      g[recipe_group(k)] = mix_text(g[recipe_group(k)], st->recipe_text[k]);
  for (int i = 0; i < SL_AUGMENT_GROUPS; i++)
    tags[i] = fold16(g[i]);
}
