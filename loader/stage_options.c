/* The config read once, here, into the other stages' option structs. */
#include "loader/stage_options.h"

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
  if (sl_cfg_enum(cfg, SL_OPT_LOADER_MODE) == SL_MODE_EVAL) {
    p->crop = SL_CROP_CENTER;
    p->flip = 0;
  }
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
  o->layout = (sl_lmdb_layout)sl_cfg_enum(cfg, SL_OPT_DATASET_LAYOUT);
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
