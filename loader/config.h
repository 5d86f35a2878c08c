/* Internal view of sl_config: option ids and typed getters.
 *
 * The library reads options through these getters, by id, so a misspelt
 * option is a compile error rather than a silent default. */
#ifndef SLUICE_LOADER_CONFIG_H
#define SLUICE_LOADER_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include "augment/pipeline.h"
#include "common/error.h"
#include "formats/core/source.h"
#include "io/io_select.h"
#include "loader/options.def"
#include "sluice.h"

typedef enum sl_opt {
#define SL_OPT_ID_(id, key, type, def, lo, hi, choices, help) SL_OPT_##id,
  SL_OPTIONS(SL_OPT_ID_)
#undef SL_OPT_ID_
      SL_OPT_COUNT_
} sl_opt;

/* Enum options: sl_cfg_enum returns the index of the choice in options.def,
 * which is the value of the enum below or of the owning stage's enum:
 *   dataset.format  sl_format_kind  formats/core/source.h
 *   dataset.entries  sl_entry_kind  formats/core/source.h
 *   dataset.channel_order  sl_channel_order  formats/core/source.h
 *   dataset.axis_order  sl_axis_order  formats/core/source.h
 *   dataset.mix_labels  sl_dmix_labels  loader/dmix_spec.h
 *   loader.io       sl_io_kind      io/io_select.h
 *   augment.crop    sl_crop         augment/pipeline.h
 *   augment.filter  sl_filter       augment/pipeline.h
 *   augment.auto    sl_auto_policy  augment/policy.h
 *   augment.auto_interpolation  sl_interp  augment/ops.h
 *   augment.dtype   sl_dtype        include/sluice.h
 *   augment.layout  sl_layout       include/sluice.h
 * The mapping is by position: keep the choices in the enums' order (the
 * assertions below hold the stages' enums to it). */
_Static_assert(
    SL_FORMAT_AUTO == 0 && SL_FORMAT_LMDB == 1 && SL_FORMAT_HDF5 == 2 &&
        SL_FORMAT_WEBDATASET == 3 && SL_FORMAT_FOLDER == 4 &&
        SL_FORMAT_TFRECORD == 5 && SL_FORMAT_RECORDIO == 6 &&
        SL_FORMAT_SHARDS == 7,
    "dataset.format: auto|lmdb|hdf5|webdataset|folder|tfrecord|recordio|"
    "shards");
_Static_assert(
    SL_ENTRIES_AUTO == 0 && SL_ENTRIES_SLUICE == 1 && SL_ENTRIES_CAFFE == 2 &&
        SL_ENTRIES_IMAGES == 3 && SL_ENTRIES_ARRAY == 4 &&
        SL_ENTRIES_PICKLE == 5 && SL_ENTRIES_MSGPACK == 6,
    "dataset.entries: auto|sluice|caffe|images|array|pickle|msgpack");
_Static_assert(SL_CHANNELS_AUTO == 0 && SL_CHANNELS_BGR == 1 &&
                   SL_CHANNELS_RGB == 2,
               "dataset.channel_order: auto|bgr|rgb");
_Static_assert(SL_AXES_AUTO == 0 && SL_AXES_NHWC == 1 && SL_AXES_NCHW == 2 &&
                   SL_AXES_NWHC == 3 && SL_AXES_NCWH == 4,
               "dataset.axis_order: auto|nhwc|nchw|nwhc|ncwh");
_Static_assert(SL_IO_MMAP == 0 && SL_IO_PREAD == 1 && SL_IO_URING == 2 &&
                   SL_IO_AUTO == 3,
               "loader.io: mmap|pread|uring|auto");
_Static_assert(SL_CROP_RANDOM_RESIZED == 0 && SL_CROP_CENTER == 1 &&
                   SL_CROP_NONE == 2 && SL_CROP_IOU == 3 &&
                   SL_CROP_LETTERBOX == 4,
               "augment.crop: random_resized|center|none|iou_crop|letterbox");
_Static_assert(SL_FILTER_BOX == 0 && SL_FILTER_BILINEAR == 1,
               "augment.filter: box|bilinear");
_Static_assert(SL_AUTO_NONE == 0 && SL_AUTO_TRIVIAL == 1 &&
                   SL_AUTO_RANDAUGMENT == 2 && SL_AUTO_AUTOAUGMENT == 3,
               "augment.auto: none|trivial|randaugment|autoaugment");
_Static_assert(SL_INTERP_NEAREST == 0 && SL_INTERP_BILINEAR == 1,
               "augment.auto_interpolation: nearest|bilinear");
_Static_assert(SL_DTYPE_U8 == 0 && SL_DTYPE_FP16 == 1 && SL_DTYPE_BF16 == 2 &&
                   SL_DTYPE_FP32 == 3,
               "augment.dtype: u8|fp16|bf16|fp32");
_Static_assert(SL_LAYOUT_NCHW == 0 && SL_LAYOUT_NHWC == 1,
               "augment.layout: nchw|nhwc");
typedef enum { SL_ORDER_SEQUENTIAL, SL_ORDER_RANDOM, SL_ORDER_QUASI } sl_order;
typedef enum { SL_ON_ERROR_FAIL, SL_ON_ERROR_SKIP } sl_on_error;
typedef enum { SL_MODE_TRAIN, SL_MODE_EVAL } sl_mode;
typedef enum {
  SL_SCHEDULE_CONSTANT,
  SL_SCHEDULE_LINEAR,
  SL_SCHEDULE_STEPS
} sl_schedule_kind;
typedef enum {
  SL_BACKEND_AUTO,
  SL_BACKEND_CUDA,
  SL_BACKEND_HOST
} sl_backend_kind;

#define SL_FLOATS_MAX 4
#define SL_STEPS_MAX 64

typedef struct sl_step {
  int64_t epoch;
  int64_t res;
} sl_step;

typedef struct sl_steps {
  int n;
  sl_step v[SL_STEPS_MAX];
} sl_steps;

int64_t sl_cfg_int(const sl_config *cfg, sl_opt id);
uint64_t sl_cfg_size(const sl_config *cfg, sl_opt id);
double sl_cfg_float(const sl_config *cfg, sl_opt id);
/* The list's values; *n receives its length (1..SL_FLOATS_MAX). */
const double *sl_cfg_floats(const sl_config *cfg, sl_opt id, int *n);
/* augment.mean and augment.std as one value per output channel: a list of
 * one value is repeated for each of the three. */
void sl_cfg_mean_std(const sl_config *cfg, float mean[3], float std[3]);
int sl_cfg_enum(const sl_config *cfg, sl_opt id);
bool sl_cfg_bool(const sl_config *cfg, sl_opt id);
/* Never NULL; "" when unset. */
const char *sl_cfg_str(const sl_config *cfg, sl_opt id);
const sl_steps *sl_cfg_steps(const sl_config *cfg, sl_opt id);
/* The value of option id as text, as sl_config_get gives it. */
sl_status sl_cfg_text(const sl_config *cfg, sl_opt id, char *buf, size_t len);
/* The log callback set with sl_config_set_log (fn NULL when none). */
void sl_cfg_log(const sl_config *cfg, sl_log_fn *fn, void **user);
/* sl_config_validate's checks, with the message in err instead of the
 * config: objects opened from a config (several at once, from several
 * threads) never write into it. */
sl_status sl_cfg_check(const sl_config *cfg, sl_err *err);
/* The config's last-error record (what sl_config_errmsg shows): objects
 * opened from a config (sl_loader_open) report their failure there. */
sl_err *sl_cfg_err(sl_config *cfg);

/* Parses a size with an optional unit: "4096", "64KiB", "1.5 GiB", "2GB".
 * Binary units (KiB..TiB, and K/M/G/T) and decimal ones (kB/KB..TB). */
bool sl_parse_size(const char *text, uint64_t *out);

#endif
