/* The config read once, here, into sl_settings: the loader's own values and
 * the other stages' option structs. Eval mode's overrides (center crop, no
 * flip, no recipe, no mixing, sequential order, no drop) are applied here
 * and nowhere else. */
#include "loader/settings.h"

#include <string.h>

static void pair(const sl_config *cfg, sl_opt id, double out[2]) {
  int n;
  const double *v = sl_cfg_floats(cfg, id, &n);
  out[0] = v[0];
  out[1] = n > 1 ? v[1] : v[0];
}

static void read_schedule(sl_schedule *s, const sl_config *cfg) {
  s->kind = (sl_schedule_kind)sl_cfg_enum(cfg, SL_OPT_RESOLUTION_SCHEDULE);
  s->eval = sl_cfg_enum(cfg, SL_OPT_LOADER_MODE) == SL_MODE_EVAL;
  s->min = (int)sl_cfg_int(cfg, SL_OPT_RESOLUTION_MIN);
  s->max = (int)sl_cfg_int(cfg, SL_OPT_RESOLUTION_MAX);
  s->eval_res = (int)sl_cfg_int(cfg, SL_OPT_RESOLUTION_EVAL);
  s->multiple = (int)sl_cfg_int(cfg, SL_OPT_RESOLUTION_MULTIPLE);
  s->start_epoch = sl_cfg_int(cfg, SL_OPT_RESOLUTION_START_EPOCH);
  s->end_epoch = sl_cfg_int(cfg, SL_OPT_RESOLUTION_END_EPOCH);
  s->steps = *sl_cfg_steps(cfg, SL_OPT_RESOLUTION_STEPS);
}

static void read_sampler(sl_sampler_config *sc, const sl_config *cfg,
                         bool eval) {
  sc->count = 0;
  sc->batch_size = (uint64_t)sl_cfg_int(cfg, SL_OPT_LOADER_BATCH_SIZE);
  sc->rank = (uint64_t)sl_cfg_int(cfg, SL_OPT_LOADER_RANK);
  sc->world_size = (uint64_t)sl_cfg_int(cfg, SL_OPT_LOADER_WORLD_SIZE);
  sc->order = eval ? SL_ORDER_SEQUENTIAL
                   : (sl_order)sl_cfg_enum(cfg, SL_OPT_LOADER_ORDER);
  sc->seed = (uint64_t)sl_cfg_int(cfg, SL_OPT_LOADER_SEED);
  /* Evaluation sees every sample: it never drops, and the batches' valid
   * counts mark the padding. */
  sc->drop_last = !eval && sl_cfg_bool(cfg, SL_OPT_LOADER_DROP_LAST);
  sc->quasi_block = (uint64_t)sl_cfg_int(cfg, SL_OPT_LOADER_QUASI_BLOCK);
  sc->quasi_window = (uint64_t)sl_cfg_int(cfg, SL_OPT_LOADER_QUASI_WINDOW);
}

static void read_recipe(sl_aug_recipe *r, const sl_config *cfg) {
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

/* augment.* and decode.max_pixels: channels 3; eval takes a center crop
 * (a letterbox stays one: it is YOLO's eval transform too), no flip and
 * none of the recipe. */
static void read_aug(sl_aug_params *p, const sl_settings *s,
                     const sl_config *cfg) {
  memset(p, 0, sizeof *p);
  p->crop = (sl_crop)sl_cfg_enum(cfg, SL_OPT_AUGMENT_CROP);
  pair(cfg, SL_OPT_AUGMENT_SCALE, p->scale);
  pair(cfg, SL_OPT_AUGMENT_RATIO, p->ratio);
  p->flip = sl_cfg_float(cfg, SL_OPT_AUGMENT_FLIP);
  p->center_ratio = sl_cfg_float(cfg, SL_OPT_AUGMENT_CENTER_RATIO);
  p->box_min_area = sl_cfg_float(cfg, SL_OPT_AUGMENT_BOX_MIN_AREA);
  p->iou_all = sl_cfg_enum(cfg, SL_OPT_AUGMENT_IOU_CROP_RULE) == 1;
  p->letterbox_fill = (int)sl_cfg_int(cfg, SL_OPT_AUGMENT_LETTERBOX_FILL);
  p->channels = 3;
  memcpy(p->mean, s->mean, sizeof p->mean);
  memcpy(p->std, s->std, sizeof p->std);
  p->dtype = s->dtype;
  p->layout = s->layout;
  p->filter = (sl_filter)sl_cfg_enum(cfg, SL_OPT_AUGMENT_FILTER);
  p->jpeg_planes = sl_cfg_bool(cfg, SL_OPT_AUGMENT_JPEG_PLANES);
  p->max_pixels = (uint64_t)sl_cfg_int(cfg, SL_OPT_DECODE_MAX_PIXELS);
  read_recipe(&p->recipe, cfg);
  if (s->eval) {
    if (p->crop != SL_CROP_LETTERBOX) /* eval: deterministic, no recipe */
      p->crop = SL_CROP_CENTER;
    p->flip = 0;
    memset(&p->recipe, 0, sizeof p->recipe);
  }
}

static void read_mix(sl_mix_params *p, const sl_config *cfg, bool eval) {
  memset(p, 0, sizeof *p);
  if (eval)
    return;
  p->mixup = sl_cfg_float(cfg, SL_OPT_AUGMENT_MIXUP);
  p->cutmix = sl_cfg_float(cfg, SL_OPT_AUGMENT_CUTMIX);
  p->prob = sl_cfg_float(cfg, SL_OPT_AUGMENT_MIX_PROB);
  p->switch_prob = sl_cfg_float(cfg, SL_OPT_AUGMENT_MIX_SWITCH_PROB);
  p->smoothing = sl_cfg_float(cfg, SL_OPT_AUGMENT_LABEL_SMOOTHING);
  int64_t nc = sl_cfg_int(cfg, SL_OPT_AUGMENT_NUM_CLASSES);
  p->classes = nc > 0 ? (uint32_t)nc : 0;
}

static void read_source(sl_source_opts *o, const sl_config *cfg) {
  memset(o, 0, sizeof *o);
  o->fmt = (sl_format_kind)sl_cfg_enum(cfg, SL_OPT_DATASET_FORMAT);
  o->entries = (sl_entry_kind)sl_cfg_enum(cfg, SL_OPT_DATASET_ENTRIES);
  o->order = (sl_channel_order)sl_cfg_enum(cfg, SL_OPT_DATASET_CHANNEL_ORDER);
  o->label_file = sl_cfg_str(cfg, SL_OPT_DATASET_LABEL_FILE);
  o->lmdb_db = sl_cfg_str(cfg, SL_OPT_DATASET_LMDB_DB);
  o->axis_order = (sl_axis_order)sl_cfg_enum(cfg, SL_OPT_DATASET_AXIS_ORDER);
  o->images = sl_cfg_str(cfg, SL_OPT_DATASET_IMAGES);
  o->labels = sl_cfg_str(cfg, SL_OPT_DATASET_LABELS);
  o->targets = sl_cfg_str(cfg, SL_OPT_DATASET_TARGETS);
  o->labels_path = sl_cfg_str(cfg, SL_OPT_DATASET_LABELS_PATH);
  o->lengths = sl_cfg_str(cfg, SL_OPT_DATASET_LENGTHS);
  o->label_argmax = sl_cfg_enum(cfg, SL_OPT_DATASET_LABEL_FROM) == 1;
  o->max_fill_samples =
      (uint64_t)sl_cfg_int(cfg, SL_OPT_DATASET_MAX_FILL_SAMPLES);
  o->image_key = sl_cfg_str(cfg, SL_OPT_DATASET_IMAGE_KEY);
  o->label_key = sl_cfg_str(cfg, SL_OPT_DATASET_LABEL_KEY);
  o->targets_ext = sl_cfg_str(cfg, SL_OPT_DATASET_TARGETS_EXT);
  o->label_offset = (int32_t)sl_cfg_int(cfg, SL_OPT_DATASET_LABEL_OFFSET);
  o->length_crc_only = sl_cfg_enum(cfg, SL_OPT_DATASET_RECORD_CRC) == 1;
  o->remote.cache_dir = sl_cfg_str(cfg, SL_OPT_IO_CACHE_DIR);
  o->remote.cache_bytes = sl_cfg_size(cfg, SL_OPT_IO_CACHE_BYTES);
  o->remote.endpoint = sl_cfg_str(cfg, SL_OPT_IO_S3_ENDPOINT);
  o->remote.region = sl_cfg_str(cfg, SL_OPT_IO_S3_REGION);
  o->remote.unsigned_requests = sl_cfg_bool(cfg, SL_OPT_IO_S3_UNSIGNED);
  o->remote.ca_bundle = sl_cfg_str(cfg, SL_OPT_IO_CA_BUNDLE);
  o->remote.attempts = 1 + (unsigned)sl_cfg_int(cfg, SL_OPT_IO_FETCH_RETRIES);
  o->remote.deadline_s = sl_cfg_float(cfg, SL_OPT_IO_FETCH_DEADLINE);
}

static void read_io(sl_io_opts *o, const sl_config *cfg, unsigned batch_size) {
  memset(o, 0, sizeof *o);
  o->kind = (sl_io_kind)sl_cfg_enum(cfg, SL_OPT_LOADER_IO);
  o->batch_size = batch_size;
  o->readahead_batches = (unsigned)sl_cfg_int(cfg, SL_OPT_IO_READAHEAD_BATCHES);
  o->queue_depth = (unsigned)sl_cfg_int(cfg, SL_OPT_IO_QUEUE_DEPTH);
  o->pool_bytes = (size_t)sl_cfg_size(cfg, SL_OPT_IO_POOL_SIZE);
  o->direct = sl_cfg_bool(cfg, SL_OPT_IO_DIRECT);
  o->auto_share = sl_cfg_float(cfg, SL_OPT_IO_AUTO_SHARE);
  sl_cfg_log(cfg, &o->log, &o->log_user);
}

static void read_device(sl_device_settings *d, const sl_config *cfg) {
  d->backend = (sl_backend_kind)sl_cfg_enum(cfg, SL_OPT_DEVICE_BACKEND);
  d->gpu = (int)sl_cfg_int(cfg, SL_OPT_DEVICE_GPU);
  d->vram_budget = sl_cfg_size(cfg, SL_OPT_DEVICE_VRAM_BUDGET);
  d->staging = (int)sl_cfg_int(cfg, SL_OPT_DEVICE_STAGING);
  d->prefetch = (int)sl_cfg_int(cfg, SL_OPT_DEVICE_PREFETCH);
}

void sl_settings_read(sl_settings *s, const sl_config *cfg) {
  memset(s, 0, sizeof *s);
  s->batch_size = (int)sl_cfg_int(cfg, SL_OPT_LOADER_BATCH_SIZE);
  s->workers = (int)sl_cfg_int(cfg, SL_OPT_LOADER_WORKERS);
  s->eval = sl_cfg_enum(cfg, SL_OPT_LOADER_MODE) == SL_MODE_EVAL;
  s->skip_bad = sl_cfg_enum(cfg, SL_OPT_LOADER_ON_ERROR) == SL_ON_ERROR_SKIP;
  s->max_boxes = (int)sl_cfg_int(cfg, SL_OPT_LOADER_MAX_BOXES);
  read_sampler(&s->sampler, cfg, s->eval);
  read_schedule(&s->sched, cfg);
  s->dtype = (sl_dtype)sl_cfg_enum(cfg, SL_OPT_AUGMENT_DTYPE);
  s->layout = (sl_layout)sl_cfg_enum(cfg, SL_OPT_AUGMENT_LAYOUT);
  sl_cfg_mean_std(cfg, s->mean, s->std);
  read_aug(&s->aug, s, cfg);
  read_mix(&s->mix, cfg, s->eval);
  for (int k = 0; k < SL_SETTINGS_RECIPE_KEYS; k++)
    if (sl_cfg_text(cfg, (sl_opt)(SL_OPT_AUGMENT_AUTO + k), s->recipe_text[k],
                    sizeof s->recipe_text[k]) != SL_OK)
      s->recipe_text[k][0] = '\0';
  s->dataset_path = sl_cfg_str(cfg, SL_OPT_DATASET_PATH);
  sl_err ignored; /* a config not validated: no mix (validation says why) */
  if (sl_dmix_spec_parse(&s->dmix, sl_cfg_str(cfg, SL_OPT_DATASET_MIX),
                         sl_cfg_str(cfg, SL_OPT_DATASET_WEIGHTS),
                         &ignored) != SL_OK)
    s->dmix.n = 0;
  s->dmix_offset_labels =
      sl_cfg_enum(cfg, SL_OPT_DATASET_MIX_LABELS) == SL_DMIX_LABELS_OFFSET;
  s->sampler.each_once = s->eval;
  s->chunk_cache = sl_cfg_size(cfg, SL_OPT_DATASET_CHUNK_CACHE);
  read_source(&s->source, cfg);
  s->source.skip_bad_files = s->skip_bad; /* a bad file at open: left out */
  read_io(&s->io, cfg, (unsigned)s->batch_size);
  s->level_only = sl_cfg_bool(cfg, SL_OPT_IO_LEVEL_ONLY);
  s->fetch_ahead.shards = (unsigned)sl_cfg_int(cfg, SL_OPT_IO_PREFETCH_SHARDS);
  s->fetch_ahead.threads = (unsigned)sl_cfg_int(cfg, SL_OPT_IO_FETCH_THREADS);
  s->remote_ranges = sl_cfg_enum(cfg, SL_OPT_IO_REMOTE_READ) == 1;
  s->range_requests = (unsigned)sl_cfg_int(cfg, SL_OPT_IO_RANGE_REQUESTS);
  read_device(&s->device, cfg);
  sl_cfg_log(cfg, &s->log, &s->log_user);
}

sl_status sl_settings_from_config(sl_settings *s, const sl_config *cfg,
                                  sl_err *err) {
  memset(s, 0, sizeof *s);
  sl_status st = sl_cfg_check(cfg, err);
  if (st != SL_OK)
    return st;
  sl_settings_read(s, cfg);
  return SL_OK;
}

void sl_settings_use_backend(sl_settings *s, bool converts) {
  s->converts = converts;
  s->aug.dtype = converts ? SL_DTYPE_U8 : s->dtype;
  s->aug.layout = converts ? SL_LAYOUT_NHWC : s->layout;
}
