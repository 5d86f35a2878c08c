/* The config read once, here, into the other stages' option structs. */
#include "loader/stage_options.h"

#include <string.h>

static void pair(const sl_config *cfg, sl_opt id, double out[2]) {
  int n;
  const double *v = sl_cfg_floats(cfg, id, &n);
  out[0] = v[0];
  out[1] = n > 1 ? v[1] : v[0];
}

static void recipe_from_config(sl_aug_recipe *r, const sl_config *cfg) {
  memset(r, 0, sizeof *r);
  r->policy.policy = (sl_auto_policy)sl_cfg_enum(cfg, SL_OPT_AUGMENT_AUTO);
  r->policy.num_ops = (int)sl_cfg_int(cfg, SL_OPT_AUGMENT_AUTO_OPS);
  r->policy.bins = (int)sl_cfg_int(cfg, SL_OPT_AUGMENT_AUTO_BINS);
  r->policy.magnitude = sl_cfg_float(cfg, SL_OPT_AUGMENT_AUTO_MAGNITUDE);
  r->policy.magnitude_std =
      sl_cfg_float(cfg, SL_OPT_AUGMENT_AUTO_MAGNITUDE_STD);
  r->policy.interp =
      (sl_interp)sl_cfg_enum(cfg, SL_OPT_AUGMENT_AUTO_INTERPOLATION);
  int n;
  const double *fill = sl_cfg_floats(cfg, SL_OPT_AUGMENT_AUTO_FILL, &n);
  r->policy.has_fill = fill[0] >= 0;
  for (int c = 0; c < 3; c++)
    r->policy.fill[c] = fill[n == 3 ? c : 0];
  const double *v = sl_cfg_floats(cfg, SL_OPT_AUGMENT_COLOR_JITTER, &n);
  for (int k = 0; k < 4 && k < n; k++)
    r->jitter[k] = v[k];
  r->jitter_p = sl_cfg_float(cfg, SL_OPT_AUGMENT_COLOR_JITTER_P);
  r->grayscale = sl_cfg_float(cfg, SL_OPT_AUGMENT_GRAYSCALE);
  r->blur = sl_cfg_float(cfg, SL_OPT_AUGMENT_BLUR);
  r->blur_kernel = (int)sl_cfg_int(cfg, SL_OPT_AUGMENT_BLUR_KERNEL);
  pair(cfg, SL_OPT_AUGMENT_BLUR_SIGMA, r->blur_sigma);
  r->erasing = sl_cfg_float(cfg, SL_OPT_AUGMENT_ERASING);
  pair(cfg, SL_OPT_AUGMENT_ERASING_SCALE, r->erasing_scale);
  pair(cfg, SL_OPT_AUGMENT_ERASING_RATIO, r->erasing_ratio);
  r->erasing_random = sl_cfg_enum(cfg, SL_OPT_AUGMENT_ERASING_VALUE) == 1;
}

void sl_aug_params_from_config(sl_aug_params *p, const sl_config *cfg) {
  int n;
  const double *v;
  p->crop = (sl_crop)sl_cfg_enum(cfg, SL_OPT_AUGMENT_CROP);
  v = sl_cfg_floats(cfg, SL_OPT_AUGMENT_SCALE, &n);
  p->scale[0] = v[0];
  p->scale[1] = n > 1 ? v[1] : v[0];
  v = sl_cfg_floats(cfg, SL_OPT_AUGMENT_RATIO, &n);
  p->ratio[0] = v[0];
  p->ratio[1] = n > 1 ? v[1] : v[0];
  p->flip = sl_cfg_float(cfg, SL_OPT_AUGMENT_FLIP);
  p->center_ratio = sl_cfg_float(cfg, SL_OPT_AUGMENT_CENTER_RATIO);
  p->channels = 3;
  sl_cfg_mean_std(cfg, p->mean, p->std);
  p->dtype = (sl_dtype)sl_cfg_enum(cfg, SL_OPT_AUGMENT_DTYPE);
  p->layout = (sl_layout)sl_cfg_enum(cfg, SL_OPT_AUGMENT_LAYOUT);
  p->filter = (sl_filter)sl_cfg_enum(cfg, SL_OPT_AUGMENT_FILTER);
  p->max_pixels = (uint64_t)sl_cfg_int(cfg, SL_OPT_DECODE_MAX_PIXELS);
  recipe_from_config(&p->recipe, cfg);
  if (sl_cfg_enum(cfg, SL_OPT_LOADER_MODE) == SL_MODE_EVAL) {
    p->crop = SL_CROP_CENTER; /* eval: deterministic, none of the recipe */
    p->flip = 0;
    memset(&p->recipe, 0, sizeof p->recipe);
  }
}

void sl_mix_params_from_config(sl_mix_params *p, const sl_config *cfg,
                               uint32_t dataset_classes) {
  memset(p, 0, sizeof *p);
  if (sl_cfg_enum(cfg, SL_OPT_LOADER_MODE) == SL_MODE_EVAL)
    return;
  p->mixup = sl_cfg_float(cfg, SL_OPT_AUGMENT_MIXUP);
  p->cutmix = sl_cfg_float(cfg, SL_OPT_AUGMENT_CUTMIX);
  p->prob = sl_cfg_float(cfg, SL_OPT_AUGMENT_MIX_PROB);
  p->switch_prob = sl_cfg_float(cfg, SL_OPT_AUGMENT_MIX_SWITCH_PROB);
  p->smoothing = sl_cfg_float(cfg, SL_OPT_AUGMENT_LABEL_SMOOTHING);
  int64_t nc = sl_cfg_int(cfg, SL_OPT_AUGMENT_NUM_CLASSES);
  p->classes = nc > 0 ? (uint32_t)nc : dataset_classes;
}

void sl_io_opts_from_config(sl_io_opts *o, const sl_config *cfg,
                            unsigned batch_size) {
  o->kind = (sl_io_kind)sl_cfg_enum(cfg, SL_OPT_LOADER_IO);
  o->batch_size = batch_size;
  o->readahead_batches = (unsigned)sl_cfg_int(cfg, SL_OPT_IO_READAHEAD_BATCHES);
  o->queue_depth = (unsigned)sl_cfg_int(cfg, SL_OPT_IO_QUEUE_DEPTH);
  o->pool_bytes = (size_t)sl_cfg_size(cfg, SL_OPT_IO_POOL_SIZE);
  o->direct = sl_cfg_bool(cfg, SL_OPT_IO_DIRECT);
  o->auto_share = sl_cfg_float(cfg, SL_OPT_IO_AUTO_SHARE);
  sl_cfg_log(cfg, &o->log, &o->log_user);
}

void sl_source_opts_from_config(sl_source_opts *o, const sl_config *cfg) {
  o->fmt = (sl_format_kind)sl_cfg_enum(cfg, SL_OPT_DATASET_FORMAT);
  o->entry_layout = (sl_entry_layout)sl_cfg_enum(cfg, SL_OPT_DATASET_LAYOUT);
  o->order = (sl_channel_order)sl_cfg_enum(cfg, SL_OPT_DATASET_CHANNEL_ORDER);
  o->label_file = sl_cfg_str(cfg, SL_OPT_DATASET_LABEL_FILE);
  o->lmdb_db = sl_cfg_str(cfg, SL_OPT_DATASET_LMDB_DB);
  o->array_layout =
      (sl_array_layout)sl_cfg_enum(cfg, SL_OPT_DATASET_ARRAY_LAYOUT);
  o->images = sl_cfg_str(cfg, SL_OPT_DATASET_IMAGES);
  o->labels = sl_cfg_str(cfg, SL_OPT_DATASET_LABELS);
  o->targets = sl_cfg_str(cfg, SL_OPT_DATASET_TARGETS);
  o->labels_path = sl_cfg_str(cfg, SL_OPT_DATASET_LABELS_PATH);
  o->lengths = sl_cfg_str(cfg, SL_OPT_DATASET_LENGTHS);
  o->label_argmax = sl_cfg_enum(cfg, SL_OPT_DATASET_LABEL_FROM) == 1;
  o->max_fill_samples =
      (uint64_t)sl_cfg_int(cfg, SL_OPT_DATASET_MAX_FILL_SAMPLES);
}
