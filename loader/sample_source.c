/* The loader's real sample source: a formats/ source (any format) whose
 * bytes come through io/io_reader.h (loader.io: mmap with read-ahead
 * hints, pread, or io_uring reading ahead in the epoch's order), each sample
 * run through an augment/ pipeline.
 *
 * Memory: per worker one pipeline (its scratch bound is stated in
 * augment/pipeline.c) and one buffer of the largest payload (every io:
 * mmap copies out of the map); for HDF5 arrays of filtered chunks, a
 * scratch of twice the largest chunk (sl_source_unfilter_bytes: the
 * filters are undone here; for samples that span chunks, one chunk's and
 * one sample's), and the chunk cache all workers share
 * (dataset.chunk_cache bytes at most, loader/chunk_cache.h);
 * the source's index (24 bytes per sample) and its boxes (8 bytes a sample,
 * 24 a box); per worker 4 bytes a box of the batches' capacity (which
 * kept box came from which stored one); with uring the read-ahead pool
 * (io.pool_size); with io.remote_read = ranges, that pool in
 * remote/ranges.h's engine instead of the reader. All at open. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "augment/pipeline.h"

#include "codecs/codec.h"
#include "common/clock.h"
#include "common/rng.h"
#include "formats/core/source.h"
#include "io/io_reader.h"
#include "loader/chunk_cache.h"
#include "loader/fetch_ahead.h"
#include "loader/loader_internal.h"
#include "loader/range_source.h"
#include "loader/sampler.h"
#include "loader/stage_options.h"

typedef struct ss_ctx {
  sl_source *src;
  sl_io *io;         /* NULL with ranges */
  sl_ranges *ranges; /* io.remote_read = ranges: the bytes come from it */
  sl_aug_params p;
  sl_mix_params mix;
  uint64_t seed;
  uint64_t rank;         /* loader.rank: the batch mix is drawn per rank */
  sl_chunk_cache *cache; /* NULL: none (not filtered, or no room) */
  sl_err start_err;      /* epoch_start's failure, reported by every load */
  bool level_only;       /* io.level_only and the file has level records */
  uint32_t box_capacity; /* 0: no boxes in the batches */
  uint64_t *file_first;  /* shards: each one's first sample (8 B a shard) */
  sl_fetch_ahead *ahead; /* a remote set's fetch-ahead; NULL: none */
  /* The epoch and resolution being read (set by epoch_start while no
   * worker or read runs): a level record's reader picks its level by them. */
  uint64_t epoch;
  int res;
  char path[512];
} ss_ctx;

/* Level records (codec 7) under io.level_only: the reader takes a
 * record's header and directory, then only the level the sample's crop
 * decodes from. The level comes from sl_aug_levels_pick, the function the
 * pipeline runs, of the same facts (the augment parameters, the sample's
 * boxes, seed, epoch, index and resolution; the crop is drawn from the
 * sample's own stream, not a worker's), so the batches are those of a
 * whole-record read, for any number of workers. */
static uint32_t ss_part_head(const void *ctx, uint64_t i) {
  const ss_ctx *c = ctx;
  const sl_sample_info *e = sl_source_info(c->src, i);
  if (e->codec != SL_IMAGE_JPEG_LEVELS)
    return 0;
  return e->length < SL_LEVELS_HEAD_MAX ? e->length : SL_LEVELS_HEAD_MAX;
}

/* The level sample i decodes from, from the first n bytes of its level
 * record, and *lv its directory; -1 when the directory is damaged (then
 * the record is read whole, and the pipeline's parse says what is
 * wrong). */
static int ss_level_of(const ss_ctx *c, uint64_t i, const uint8_t *bytes,
                       size_t n, sl_levels *lv) {
  const sl_sample_info *e = sl_source_info(c->src, i);
  if (e->codec != SL_IMAGE_JPEG_LEVELS ||
      sl_levels_parse_dir(bytes, n, e->length, lv))
    return -1;
  uint32_t nb = 0;
  const sl_box *boxes = sl_source_boxes(c->src, i, &nb);
  return sl_aug_levels_pick(&c->p, lv, (const float *)boxes, sizeof(sl_box), nb,
                            c->seed, c->epoch, i, c->res, c->res);
}

static bool ss_part_rest(const void *ctx, uint64_t i, const uint8_t *bytes,
                         size_t n, uint32_t *off, uint32_t *len) {
  sl_levels lv;
  int k = ss_level_of(ctx, i, bytes, n, &lv);
  if (k < 0)
    return false;
  uint32_t o = lv.level[k].off, l = lv.level[k].len;
  if (o < n) { /* level 0 starts inside the head: its rest */
    l -= (uint32_t)n - o < l ? (uint32_t)n - o : l;
    o = (uint32_t)n;
  }
  *off = o;
  *len = l;
  return true;
}

typedef struct ss_worker {
  sl_pipeline *pl;
  uint8_t *buf;
  size_t cap;
  uint8_t *scratch; /* sl_source_unfilter's; NULL when the source needs none */
  uint64_t pos;     /* the epoch position of the next load, when has_pos */
  bool has_pos;
  uint32_t *box_src; /* box_capacity: each kept box's stored index */
} ss_worker;

static sl_status ss_worker_open(void *ctx, int max_res, void **ws,
                                sl_err *err) {
  ss_ctx *c = ctx;
  ss_worker *w = calloc(1, sizeof *w);
  *ws = NULL;
  if (!w || (c->box_capacity > 0 &&
             !(w->box_src = malloc(c->box_capacity * sizeof *w->box_src)))) {
    free(w);
    return sl_err_set(err, SL_ENOMEM, "worker: out of memory");
  }
  sl_status st = sl_pipeline_create(&w->pl, &c->p, max_res, err);
  if (st != SL_OK) {
    free(w->box_src);
    free(w);
    return st;
  }
  w->cap = c->ranges ? sl_source_max_length(c->src) : sl_io_buffer_bytes(c->io);
  if (w->cap > 0) {
    if (!(w->buf = malloc(w->cap))) {
      size_t cap = w->cap;
      sl_pipeline_destroy(w->pl);
      free(w->box_src);
      free(w);
      return sl_err_set(err, SL_ENOMEM,
                        "worker: no memory for a %zu-byte read buffer", cap);
    }
  }
  uint64_t sc = sl_source_unfilter_bytes(c->src);
  if (sc > 0 && !(w->scratch = malloc((size_t)sc))) {
    sl_pipeline_destroy(w->pl);
    free(w->buf);
    free(w->box_src);
    free(w);
    return sl_err_set(err, SL_ENOMEM,
                      "worker: no memory for a %llu-byte chunk scratch",
                      (unsigned long long)sc);
  }
  *ws = w;
  return SL_OK;
}

static void ss_worker_close(void *ctx, void *ws) {
  ss_worker *w = ws;
  if (!w)
    return;
  sl_pipeline_destroy(w->pl);
  free(w->buf);
  free(w->scratch);
  free(w->box_src);
  free(w);
}

/* The labels of the kept boxes, the unused part of the capacity zeroed
 * (labels -1), so a batch is the same bytes whatever filled it before. */
static void write_box_labels(sl_box_dst *bx, const sl_aug_boxes *ab,
                             const sl_box *boxes) {
  for (uint32_t k = 0; k < ab->n_out; k++)
    bx->labels[k] = boxes[ab->src[k]].label;
  memset(bx->xyxy + (size_t)ab->n_out * 4, 0,
         (size_t)(bx->cap - ab->n_out) * 4 * sizeof *bx->xyxy);
  memset(bx->labels + ab->n_out, 0xff,
         (size_t)(bx->cap - ab->n_out) * sizeof *bx->labels);
  *bx->count = ab->n_out;
  bx->over = ab->kept - ab->n_out;
}

/* "path: sample i (its name): " before a decode or augment error: the name
 * is the file of a folder read in place, the key of a foreign LMDB or the
 * source file `sluice pack` recorded; left out when the dataset has none. */
static void prefix_sample(const ss_ctx *c, uint64_t index, sl_err *err) {
  char name[512];
  sl_err ignored = {0};
  if (sl_source_name(c->src, index, name, sizeof name, &ignored) != SL_OK)
    name[0] = '\0';
  if (name[0])
    sl_err_prefix(err, "%s: sample %llu (%s): ", c->path,
                  (unsigned long long)index, name);
  else
    sl_err_prefix(err, "%s: sample %llu: ", c->path, (unsigned long long)index);
}

/* The reader's calls, to whichever reader the bytes come from. */
static sl_status reader_get(ss_ctx *c, ss_worker *w, const uint8_t **data,
                            size_t *len, sl_err *err) {
  return c->ranges ? sl_ranges_get(c->ranges, w->pos, data, len, err)
                   : sl_io_get(c->io, w->pos, w->buf, w->cap, data, len, err);
}

static sl_status reader_read(ss_ctx *c, ss_worker *w, uint64_t index,
                             const uint8_t **data, size_t *len, sl_err *err) {
  return c->ranges
             ? sl_ranges_read(c->ranges, index, w->buf, w->cap, data, len, err)
             : sl_io_read(c->io, index, w->buf, w->cap, data, len, err);
}

static void reader_put(ss_ctx *c, uint64_t pos) {
  if (c->ranges)
    sl_ranges_put(c->ranges, pos);
  else
    sl_io_put(c->io, pos);
}

static sl_status ss_load_one(void *ctx, void *ws, uint64_t index,
                             uint64_t epoch, int res, void *dst, int32_t *label,
                             sl_box_dst *bx, sl_sample_times *t, sl_err *err) {
  ss_ctx *c = ctx;
  ss_worker *w = ws;
  const sl_sample_info *info = sl_source_info(c->src, index);
  *label = info->label;
  const uint8_t *data = NULL;
  size_t len = 0;
  bool in_order = w->has_pos; /* else a replacement: outside the order */
  w->has_pos = false;
  sl_status st = SL_OK;
  /* Filtered HDF5 chunks: with mmap and pread the sample's chunk is looked
   * up in the cache before its bytes are read, and a chunk already there
   * needs no read (a copy of the whole compressed chunk, or row of chunks,
   * for each of its samples otherwise). With uring the read is in flight
   * already and costs no copy, and it comes first: a worker filling a chunk
   * must not wait for a pool buffer that workers waiting for that chunk
   * hold. */
  int slot = -1; /* of the chunk cache, held while the pipeline reads it */
  uint8_t *cached = NULL;
  bool fill = false;
  uint64_t ch = 0, off = 0, cb = 0;
  bool cached_chunk = c->start_err.code == SL_OK && c->cache && w->scratch &&
                      sl_source_chunk_of(c->src, index, &ch, &off, &cb);
  /* Readers ahead of the workers (uring, ranges) have the bytes in flight
   * already. */
  bool early = !c->ranges && sl_io_backend(c->io) != SL_IO_URING;
  if (cached_chunk && early)
    slot = sl_chunk_cache_acquire(c->cache, ch, &cached, &fill);
  bool skip_read = slot >= 0 && !fill;
  uint64_t t0 = sl_now_ns(); /* after the lookup: a wait on another
                                worker's fill is not read time */
  if (c->start_err.code != SL_OK)
    st = sl_err_set(err, c->start_err.code, "%s", c->start_err.msg);
  else if (skip_read)
    st = in_order ? sl_io_skip(c->io, w->pos, err) : SL_OK;
  else if (in_order)
    st = reader_get(c, w, &data, &len, err);
  else
    st = reader_read(c, w, index, &data, &len, err);
  t->read_ns += sl_now_ns() - t0;
  if (st != SL_OK) {
    if (slot >= 0) {
      if (fill)
        sl_chunk_cache_filled(c->cache, slot, false);
      sl_chunk_cache_release(c->cache, slot);
    }
    if (in_order)
      reader_put(c, w->pos);
    return st;
  }
  /* A level record read in part (ss_part_head): its level, and the bytes
   * the reader took (the head and that level's). */
  int view = -1;
  size_t got = len;
  if (c->level_only && info->codec == SL_IMAGE_JPEG_LEVELS &&
      epoch == c->epoch && res == c->res) {
    sl_levels lv;
    uint32_t h = ss_part_head(c, index), po, pl;
    if (h < len && (view = ss_level_of(c, index, data, h, &lv)) >= 0 &&
        ss_part_rest(c, index, data, h, &po, &pl))
      got = (size_t)h + pl;
  }
  t->bytes_read += got;
  if (cached_chunk && !early)
    slot = sl_chunk_cache_acquire(c->cache, ch, &cached, &fill);
  sl_pipeline_times before, after;
  sl_pipeline_times_get(w->pl, &before);
  if (w->scratch) { /* filtered HDF5 chunks: undone here (decode time) */
    uint64_t t1 = sl_now_ns();
    if (slot >= 0 && fill) {
      st = sl_source_unfilter_chunk(c->src, index, data, len, w->scratch,
                                    cached, err);
      if (st == SL_OK)
        t->chunk_unfilters++;
      sl_chunk_cache_filled(c->cache, slot, st == SL_OK);
      if (st != SL_OK) {
        sl_chunk_cache_release(c->cache, slot);
        slot = -1;
      }
    }
    if (slot >= 0) {
      data = cached + off;
      len = (size_t)info->width * info->height * info->channels;
    } else if (st == SL_OK) {
      st = sl_source_unfilter(c->src, index, data, len, w->scratch, &data, &len,
                              &t->chunk_unfilters, err);
    }
    t->decode_ns += sl_now_ns() - t1;
    if (st != SL_OK) {
      if (in_order)
        reader_put(c, w->pos);
      return st; /* the message names the file, dataset and sample */
    }
  }
  uint32_t nb = 0;
  const sl_box *boxes = sl_source_boxes(c->src, index, &nb);
  /* iou_crop chooses its crop from the boxes even when the batch holds
   * none of them. */
  sl_aug_boxes ab = {
      (const float *)boxes, sizeof(sl_box),   nb, bx ? bx->xyxy : NULL,
      w->box_src,           bx ? bx->cap : 0, 0,  0};
  st = sl_pipeline_run_view(w->pl, data, len, info->codec, view, info->height,
                            info->width, info->channels, c->seed, epoch, index,
                            res, res, dst, bx || nb ? &ab : NULL, err);
  if (st == SL_OK && bx)
    write_box_labels(bx, &ab, boxes);
  sl_pipeline_times_get(w->pl, &after);
  if (slot >= 0)
    sl_chunk_cache_release(c->cache, slot);
  if (in_order)
    reader_put(c, w->pos); /* the payload's buffer back to the reader */
  t->decode_ns += after.decode_ns - before.decode_ns;
  t->augment_ns += after.augment_ns - before.augment_ns;
  t->jpeg_samples += after.jpeg_decodes - before.jpeg_decodes;
  t->jpeg_windowed += after.jpeg_windowed - before.jpeg_windowed;
  for (int k = 0; k < 4; k++)
    t->level_decodes[k] += after.level_decodes[k] - before.level_decodes[k];
  if (st != SL_OK)
    prefix_sample(c, index, err);
  return st;
}

/* A load, the fetch-ahead told which position it reads meanwhile. */
static sl_status ss_load(void *ctx, void *ws, uint64_t index, uint64_t epoch,
                         int res, void *dst, int32_t *label, sl_box_dst *bx,
                         sl_sample_times *t, sl_err *err) {
  ss_ctx *c = ctx;
  ss_worker *w = ws;
  int token =
      c->ahead && w->has_pos ? sl_fetch_ahead_begin(c->ahead, w->pos) : -1;
  sl_status st =
      ss_load_one(ctx, ws, index, epoch, res, dst, label, bx, t, err);
  sl_fetch_ahead_end(c->ahead, token);
  return st;
}

static void ss_net_stats(void *ctx, sl_sample_net *out) {
  ss_ctx *c = ctx;
  if (c->ranges) { /* a request a sample; each one a worker waited for */
    sl_ranges_stats rs;
    sl_ranges_stats_get(c->ranges, &rs);
    *out = (sl_sample_net){rs.requests, rs.bytes, 0, rs.waits, rs.wait_ns};
    return;
  }
  sl_cache *cache = sl_source_cache(c->src);
  sl_cache_stats cs = {0};
  if (cache)
    sl_cache_stats_get(cache, &cs);
  *out = (sl_sample_net){cs.fetches, cs.bytes_fetched, cs.hits, cs.misses,
                         cs.wait_ns};
}

static void ss_targets(void *ctx, uint64_t index, float *out) {
  ss_ctx *c = ctx;
  memcpy(out, sl_source_targets(c->src, index),
         sl_source_target_width(c->src) * sizeof *out);
}

static void ss_epoch_start(void *ctx, sl_order_at_fn at, const void *order,
                           uint64_t epoch, int res, uint64_t first,
                           uint64_t end) {
  ss_ctx *c = ctx;
  c->epoch = epoch;
  c->res = res;
  sl_err_clear(&c->start_err);
  if ((c->ranges
           ? sl_ranges_start(c->ranges, at, order, first, end, &c->start_err)
           : sl_io_start_epoch(c->io, at, order, first, end, &c->start_err)) ==
      SL_OK)
    sl_err_clear(&c->start_err);
  if (sl_source_cache(c->src))
    sl_cache_cancel(sl_source_cache(c->src), false);
  sl_fetch_ahead_start(c->ahead, at, order, first, end);
}

static void ss_epoch_stop(void *ctx) {
  ss_ctx *c = ctx;
  /* Downloads in flight (ahead, or a worker's) end now: a worker waiting
   * for one gets an error the stopped epoch drops. */
  if (sl_source_cache(c->src))
    sl_cache_cancel(sl_source_cache(c->src), true);
  sl_fetch_ahead_stop(c->ahead);
  if (c->ranges)
    sl_ranges_stop(c->ranges);
  else
    sl_io_stop(c->io);
}

static void ss_position(void *ctx, void *ws, uint64_t pos) {
  ss_worker *w = ws;
  w->pos = pos;
  w->has_pos = true;
}

/* Mixup/CutMix and the soft targets of one batch (augment/mix.h). */
static void ss_batch_mix(void *ctx, const sl_mix_batch *b, sl_mix_note *note) {
  const ss_ctx *c = ctx;
  sl_mix_plan m;
  sl_mix_plan_for(&c->mix, c->seed, b->epoch, c->rank, b->index, b->h, b->w,
                  &m);
  if (b->data)
    sl_mix_pixels(&m, b->data, b->n, b->h, b->w, b->channels, b->dtype,
                  b->layout);
  sl_mix_targets(&c->mix, &m, b->labels, b->n, b->targets);
  note->kind = (uint32_t)m.kind;
  note->lambda = (float)m.lambda;
  note->box[0] = (uint32_t)m.y0, note->box[1] = (uint32_t)m.y1;
  note->box[2] = (uint32_t)m.x0, note->box[3] = (uint32_t)m.x1;
}

static void ss_close(void *ctx) {
  ss_ctx *c = ctx;
  if (!c)
    return;
  sl_fetch_ahead_close(c->ahead);
  sl_ranges_close(c->ranges);
  sl_io_close(c->io);
  sl_chunk_cache_destroy(c->cache);
  sl_source_close(c->src);
  free(c->file_first);
  free(c);
}

/* The source's fingerprint (sample.h): one pass over the index in memory
 * at open. File offsets are left out: the same samples in another file or
 * format give the same batches, so they resume. */
static uint64_t fingerprint(const sl_source *src) {
  uint64_t n = sl_source_count(src);
  uint32_t tw = sl_source_target_width(src), nc = sl_source_class_count(src);
  uint64_t h = sl_mix64(n ^ 0x736c2d6461746173ULL); /* "sl-datas" */
  h = sl_mix64(h ^ ((uint64_t)tw << 32 | nc));
  for (uint64_t i = 0; i < n; i++) {
    const sl_sample_info *s = sl_source_info(src, i);
    h = sl_mix64(h ^ ((uint64_t)s->length << 32 | (uint32_t)s->label));
    h = sl_mix64(h ^ ((uint64_t)s->height << 48 | (uint64_t)s->width << 32 |
                      (uint64_t)s->codec << 8 | s->channels));
    const float *t = tw ? sl_source_targets(src, i) : NULL;
    for (uint32_t k = 0; t && k < tw; k++) {
      uint32_t bits;
      memcpy(&bits, &t[k], sizeof bits);
      h = sl_mix64(h ^ bits);
    }
  }
  for (uint64_t i = 0; sl_source_max_boxes(src) > 0 && i < n; i++) {
    uint32_t nb; /* a file with boxes: they are part of what it holds */
    const sl_box *b = sl_source_boxes(src, i, &nb);
    h = sl_mix64(h ^ nb);
    for (uint32_t k = 0; k < nb; k++) {
      uint32_t v[6];
      memcpy(v, &b[k], sizeof v);
      for (int q = 0; q < 6; q++)
        h = sl_mix64(h ^ v[q]);
    }
  }
  for (uint32_t c = 0; c < nc; c++) {
    const char *name = sl_source_class_name(src, c);
    for (const char *q = name ? name : ""; *q; q++)
      h = sl_mix64(h ^ (uint8_t)*q);
    h = sl_mix64(h ^ 0x100); /* end of a name */
  }
  return h;
}

sl_status sl_sample_source_open(sl_sample_src *out, const sl_settings *s,
                                sl_logger *log, sl_err *err) {
  const char *path = s->dataset_path;
  if (!path[0])
    return sl_err_set(err, SL_ECONFIG, "dataset.path is not set");
  ss_ctx *c = calloc(1, sizeof *c);
  if (!c)
    return sl_err_set(err, SL_ENOMEM, "loader: out of memory");
  snprintf(c->path, sizeof c->path, "%s", path);
  /* The source only indexes (pread: no map of its own); bytes come through
   * the reader loader.io chose (it maps the file itself for mmap). */
  sl_status st =
      sl_source_open_opts(&c->src, path, &s->source, SL_SOURCE_PREAD, err);
  if (st != SL_OK) {
    free(c);
    return st;
  }
  const char *left_names;
  uint64_t left = sl_source_left_out(c->src, &left_names);
  if (left > 0)
    sl_logf(log, SL_LOG_WARN,
            "%s: %llu unreadable file%s left out (loader.on_error = skip; "
            "`sluice verify` lists them all): %s%s",
            path, (unsigned long long)left, left == 1 ? "" : "s", left_names,
            left > 4 ? "; ..." : "");
  /* Every layout read in place but HDF5 pixel arrays (no JPEGs to gain).
   * Measuring the gain costs a pack and timed runs, so the log names the
   * command that does it rather than doing it at open. */
  const char *fmt = sl_source_format_name(c->src),
             *layout = sl_source_entries_name(c->src);
  if (strcmp(layout, "sluice") != 0 && strcmp(layout, "array") != 0)
    sl_logf(log, SL_LOG_INFO,
            "%s: %s%s%s read in place (%llu samples in %llu files); files "
            "made by `sluice pack` decode JPEG crops faster: JPEGs in the "
            "restart layout decode only a crop's rows, DCT-scaled; `sluice "
            "info %s --speed` measures by how much on this data",
            c->path, fmt, strcmp(fmt, "lmdb") ? "" : " layout ",
            strcmp(fmt, "lmdb") ? "" : layout,
            (unsigned long long)sl_source_count(c->src),
            (unsigned long long)sl_source_file_count(c->src), c->path);
  sl_io_opts io = s->io;
  sl_io_opts_from_source(&io, c->src, c->path);
  uint64_t lvi[SL_LEVELS_MAX], lvb[SL_LEVELS_MAX];
  /* A set of files at URLs (a single file at a URL is read from the
   * cache). */
  bool ranges = s->remote_ranges && sl_source_fetch_conf(c->src) &&
                sl_source_files(c->src);
  /* Range requests read whole records (a head, then a level, would be two
   * round trips a sample). */
  c->level_only =
      !ranges && s->level_only && sl_source_levels(c->src, lvi, lvb) > 0;
  if (c->level_only)
    io.parts = (sl_io_parts){ss_part_head, ss_part_rest, c};
  st = ranges ? sl_range_source_open(&c->ranges, c->src, c->path,
                                     s->range_requests, io.pool_bytes, err)
              : sl_io_open(&c->io, &io, err);
  if (st != SL_OK) {
    sl_source_close(c->src);
    free(c);
    return st;
  }
  if (ranges)
    sl_logf(log, SL_LOG_INFO,
            "%s: io.remote_read = ranges: each sample by a range request, "
            "%u in flight, nothing cached",
            c->path, s->range_requests);
  if (!ranges && sl_io_backend(c->io) == SL_IO_URING && io.direct)
    c->level_only = false; /* O_DIRECT reads whole blocks: whole records */
  uint64_t cb = 0, nchunks = 0;
  for (uint64_t i = 0, ch, off, b; i < sl_source_count(c->src); i++)
    if (sl_source_chunk_of(c->src, i, &ch, &off, &b)) {
      cb = b;
      nchunks = ch + 1; /* chunks are in sample order: the last is largest */
    }
  if (cb > 0 && (st = sl_chunk_cache_create(&c->cache, s->chunk_cache, cb,
                                            nchunks, err)) != SL_OK) {
    sl_ranges_close(c->ranges);
    sl_io_close(c->io);
    sl_source_close(c->src);
    free(c);
    return st;
  }
  c->p = s->aug;
  c->seed = s->sampler.seed;
  c->rank = s->sampler.rank;
  c->mix = s->mix;
  if (c->mix.classes == 0) /* augment.num_classes 0: the dataset's */
    c->mix.classes = sl_source_class_count(c->src);
  if (sl_mix_active(&c->mix)) {
    uint32_t tw = sl_source_target_width(c->src);
    st = tw > 0 ? sl_err_set(err, SL_EUNSUPPORTED,
                             "%s: augment.mixup, .cutmix and .label_smoothing "
                             "make soft targets from class labels, but this "
                             "dataset carries %u float targets a sample",
                             c->path, tw)
                : sl_mix_check(&c->mix, err);
    if (st == SL_OK && c->mix.classes > SL_TARGETS_MAX)
      st = sl_err_set(err, SL_ECONFIG,
                      "augment.num_classes: %u soft targets a sample (at "
                      "most %d)",
                      c->mix.classes, SL_TARGETS_MAX);
    if (st != SL_OK) {
      ss_close(c);
      return st;
    }
    out->soft_width = c->mix.classes;
    out->batch_mix = ss_batch_mix;
  }
  out->ctx = c;
  out->count = sl_source_count(c->src);
  out->channels = c->p.channels;
  out->target_width = sl_source_target_width(c->src);
  if (sl_source_max_boxes(c->src) > 0) /* loader.max_boxes 0: the largest */
    c->box_capacity =
        s->max_boxes > 0 ? (uint32_t)s->max_boxes : sl_source_max_boxes(c->src);
  out->box_capacity = c->box_capacity;
  out->fingerprint = fingerprint(c->src);
  out->classes = sl_source_class_count(c->src);
  /* A dataset of a mix: labels (and box labels) past the class names
   * count too, for dataset.mix_labels = offset. */
  for (uint64_t i = 0; s->dmix_member && i < out->count; i++) {
    int32_t l = sl_source_info(c->src, i)->label;
    if (l >= 0 && (uint32_t)l >= out->classes)
      out->classes = (uint32_t)l + 1;
    uint32_t nb = 0;
    const sl_box *b = sl_source_boxes(c->src, i, &nb);
    for (uint32_t j = 0; j < nb; j++)
      if (b[j].label >= 0 && (uint32_t)b[j].label >= out->classes)
        out->classes = (uint32_t)b[j].label + 1;
  }
  out->left_out = sl_source_left_out(c->src, &out->left_out_names);
  out->block_samples = sl_source_chunk_samples(c->src);
  const sl_file_set *fs = sl_source_files(c->src);
  /* Shards (local ones kept open, remote ones fetched when first read: lazy
   * too), not a folder's files (lazy, one sample each). */
  if (fs && fs->n > 1 && (!fs->lazy || fs->n < sl_source_count(c->src))) {
    if (!(c->file_first = malloc(fs->n * sizeof *c->file_first))) {
      ss_close(c);
      return sl_err_set(err, SL_ENOMEM, "%s: %zu shards", c->path, fs->n);
    }
    for (size_t k = 0; k < fs->n; k++)
      c->file_first[k] = sl_source_file_first(c->src, k);
    out->file_first = c->file_first;
    out->nfiles = fs->n;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned workers = s->workers > 0 ? (unsigned)s->workers
                       : cpus > 0     ? (unsigned)cpus
                                      : 1;
    /* Range reads fetch no shard: no fetch-ahead, no cache to size. */
    st = c->ranges ? SL_OK
                   : sl_fetch_ahead_open(&c->ahead, &s->fetch_ahead, c->src,
                                         c->file_first, fs->n, workers, err);
    if (st != SL_OK) {
      ss_close(c);
      return st;
    }
  }
  out->targets = ss_targets;
  out->worker_open = ss_worker_open;
  out->worker_close = ss_worker_close;
  out->load = ss_load;
  out->close = ss_close;
  out->epoch_start = ss_epoch_start;
  out->epoch_stop = ss_epoch_stop;
  out->position = ss_position;
  out->net_stats = sl_source_cache(c->src) ? ss_net_stats : NULL;
  return SL_OK;
}
