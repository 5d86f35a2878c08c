/* The loader's real sample source: a formats/ source (LMDB or HDF5) read
 * with mmap or pread, each sample run through an augment/ pipeline.
 *
 * Memory: per worker one pipeline (its scratch bound is stated in
 * augment/pipeline.c) and, when reading with pread, one buffer of the
 * largest payload; the source's index (24 bytes per sample). All at open. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "augment/pipeline.h"
#include "formats/source.h"
#include "loader/loader_internal.h"

typedef struct ds_ctx {
  sl_source *src;
  sl_aug_params p;
  uint64_t seed;
  bool mapped;
  char path[512];
} ds_ctx;

typedef struct ds_worker {
  sl_pipeline *pl;
  uint8_t *buf;
  size_t cap;
} ds_worker;

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static sl_status ds_worker_open(void *ctx, int max_res, void **ws,
                                sl_err *err) {
  ds_ctx *c = ctx;
  ds_worker *w = calloc(1, sizeof *w);
  *ws = NULL;
  if (!w)
    return sl_err_set(err, SL_ENOMEM, "worker: out of memory");
  sl_status st = sl_pipeline_create(&w->pl, &c->p, max_res, err);
  if (st != SL_OK) {
    free(w);
    return st;
  }
  if (!c->mapped) {
    w->cap = sl_source_max_length(c->src);
    if (w->cap == 0)
      w->cap = 1;
    if (!(w->buf = malloc(w->cap))) {
      size_t cap = w->cap;
      sl_pipeline_destroy(w->pl);
      free(w);
      return sl_err_set(err, SL_ENOMEM,
                        "worker: no memory for a %zu-byte read buffer", cap);
    }
  }
  *ws = w;
  return SL_OK;
}

static void ds_worker_close(void *ctx, void *ws) {
  ds_worker *w = ws;
  if (!w)
    return;
  sl_pipeline_destroy(w->pl);
  free(w->buf);
  free(w);
}

static sl_status ds_load(void *ctx, void *ws, uint64_t index, uint64_t epoch,
                         int res, void *dst, int32_t *label, sl_sample_times *t,
                         sl_err *err) {
  ds_ctx *c = ctx;
  ds_worker *w = ws;
  const sl_sample_info *info = sl_source_info(c->src, index);
  *label = info->label;
  uint64_t t0 = now_ns();
  const uint8_t *data;
  size_t len;
  sl_status st =
      sl_source_read(c->src, index, w->buf, w->cap, &data, &len, err);
  t->read_ns += now_ns() - t0;
  if (st != SL_OK)
    return st;
  t->bytes_read += len;
  sl_pipeline_times before, after;
  sl_pipeline_times_get(w->pl, &before);
  st = sl_pipeline_run(w->pl, data, len, info->codec, info->height, info->width,
                       info->channels, c->seed, epoch, index, res, res, dst,
                       err);
  sl_pipeline_times_get(w->pl, &after);
  t->decode_ns += after.decode_ns - before.decode_ns;
  t->augment_ns += after.augment_ns - before.augment_ns;
  if (st != SL_OK)
    sl_err_prefix(err, "%s: sample %llu: ", c->path, (unsigned long long)index);
  return st;
}

static void ds_close(void *ctx) {
  ds_ctx *c = ctx;
  if (!c)
    return;
  sl_source_close(c->src);
  free(c);
}

sl_status sl_dataset_src_open(sl_sample_src *out, const sl_config *cfg,
                              sl_out_dtype dtype, sl_out_layout layout,
                              sl_logger *log, sl_err *err) {
  const char *path = sl_cfg_str(cfg, SL_OPT_DATASET_PATH);
  if (!path[0])
    return sl_err_set(err, SL_ECONFIG, "dataset.path is not set");
  ds_ctx *c = calloc(1, sizeof *c);
  if (!c)
    return sl_err_set(err, SL_ENOMEM, "loader: out of memory");
  snprintf(c->path, sizeof c->path, "%s", path);
  sl_io_kind io = (sl_io_kind)sl_cfg_enum(cfg, SL_OPT_LOADER_IO);
  if (io == SL_IO_AUTO)
    io = SL_IO_MMAP;
  if (io == SL_IO_URING) {
    sl_logf(log, SL_LOG_INFO, "loader.io = uring: reading with pread");
    io = SL_IO_PREAD;
  }
  c->mapped = io == SL_IO_MMAP;
  sl_status st = sl_source_open(
      &c->src, path, (sl_format_kind)sl_cfg_enum(cfg, SL_OPT_DATASET_FORMAT),
      io, err);
  if (st != SL_OK) {
    free(c);
    return st;
  }
  sl_aug_params_from_config(&c->p, cfg);
  c->p.dtype = dtype;
  c->p.layout = layout;
  if (sl_cfg_enum(cfg, SL_OPT_LOADER_MODE) == SL_MODE_EVAL) {
    c->p.crop = SL_CROP_CENTER;
    c->p.flip = 0;
  }
  c->seed = (uint64_t)sl_cfg_int(cfg, SL_OPT_LOADER_SEED);
  out->ctx = c;
  out->count = sl_source_count(c->src);
  out->channels = c->p.channels;
  out->worker_open = ds_worker_open;
  out->worker_close = ds_worker_close;
  out->load = ds_load;
  out->close = ds_close;
  return SL_OK;
}
