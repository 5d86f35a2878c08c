/* TFRecord and RecordIO shards at URLs (formats/records/rec_remote.h):
 * formats/files/shards_remote.h's walkers, one shard at a time, its
 * descriptor a cached copy: mapped, its records counted (TFRecord: the
 * framing; RecordIO: the .idx beside it, else the framing), the index
 * grown (doubling) and its records appended at its base, by the same
 * per-file indexers the local shards use (source_tfrecord.c,
 * source_recordio.c), so that the set indexes as its local copy does.
 *
 * RecordIO's .idx beside each shard (PREFIX.idx for PREFIX.rec, as the
 * local reader looks for it) is fetched whole while the shard is walked:
 * at most SL_RECIO_IDX_MAX bytes, freed after the shard; a shard whose
 * .idx the server does not have (HTTP 404) is framed instead. The .idx is
 * read when the sidecar is built: its order is the sidecar's from then
 * on, and the open checks the shards' sizes and ETags, not the .idx's
 * (`sluice index URL` reads it again).
 *
 * Memory while walking: the index and (RecordIO) targets at most twice
 * the samples seen, one shard's offsets (8 bytes a record) and .idx. */
#include "formats/records/rec_remote.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "formats/core/format.h"
#include "formats/files/shards_remote.h"
#include "formats/records/recordio.h"

/* The shards walked, and the entries their index (names or targets)
 * holds. */
typedef struct rec_walk {
  sl_source *src;
  uint64_t cap;
} rec_walk;

static sl_status walk_begin(sl_source *src, void **ctx, sl_err *err) {
  rec_walk *w = calloc(1, sizeof *w);
  if (!w)
    return sl_err_set(err, SL_ENOMEM, "%s: no memory", src->path);
  w->src = src;
  src->count = 0;
  *ctx = w;
  return SL_OK;
}

/* Grows a table of cap entries of size bytes to ncap, the new ones zeroed;
 * false without memory (the table kept). */
static bool grow_table(void **p, uint64_t cap, uint64_t ncap, size_t size) {
  if (ncap > SIZE_MAX / size)
    return false;
  uint8_t *q = realloc(*p, (size_t)ncap * size);
  if (!q)
    return false;
  memset(q + (size_t)cap * size, 0, (size_t)(ncap - cap) * size);
  *p = q;
  return true;
}

/* Room for need entries: the index, and the names (TFRecord) or the
 * targets (RecordIO, once the first sample fixed their width). */
static sl_status walk_grow(rec_walk *w, uint64_t need, sl_err *err) {
  sl_source *src = w->src;
  if (need <= w->cap)
    return SL_OK;
  uint64_t cap = w->cap * 2 > need ? w->cap * 2 : need;
  bool ok = grow_table((void **)&src->index, w->cap, cap, sizeof *src->index);
  if (ok && src->fmt == SL_FORMAT_TFRECORD)
    ok = grow_table((void **)&src->name_off, w->cap, cap, 8);
  if (ok && src->targets)
    ok = grow_table((void **)&src->targets, w->cap, cap,
                    (size_t)src->target_width * sizeof *src->targets);
  if (!ok)
    return sl_err_set(err, SL_ENOMEM,
                      "%s: no memory for the index of %" PRIu64 " records",
                      src->path, cap);
  w->cap = cap;
  return SL_OK;
}

/* A RecordIO shard's records: from the .idx beside it, else its framing. */
static sl_status rio_records(rec_walk *w, const sl_rec_file *f, sl_err *err) {
  sl_source *src = w->src;
  /* PREFIX.idx beside PREFIX.rec, the URL's query (a token that may
   * grant the folder) kept after it. */
  char idx[SL_URL_MAX], base[SL_URL_MAX];
  size_t plen = strcspn(f->path, "?#");
  int bw = snprintf(base, sizeof base, "%.*s", (int)plen, f->path);
  if (bw < 0 || (size_t)bw >= sizeof base ||
      sl_recio_idx_name(base, idx, sizeof idx) != 0 ||
      strlen(idx) + strlen(f->path + plen) >= sizeof idx)
    return sl_err_set(err, SL_EINVAL, "%s: URL too long", f->path);
  strcat(idx, f->path + plen);
  uint8_t *buf = NULL;
  size_t len = 0;
  sl_status st =
      sl_source_read_beside(src, idx, SL_RECIO_IDX_MAX, &buf, &len, err);
  uint64_t *off = NULL, n = 0;
  if (st == SL_OK)
    st = sl_recordio_offsets_in(src, f, idx, buf, len, &off, &n, err);
  free(buf);
  if (st == SL_OK)
    st = walk_grow(w, src->count + n, err);
  if (st == SL_OK)
    st = sl_recordio_append(src, f, off, n, w->cap, err);
  free(off);
  return st;
}

static sl_status walk_shard(void *ctx, size_t k, sl_err *err) {
  rec_walk *w = ctx;
  sl_source *src = w->src;
  const sl_file_span *s = &src->spans[k];
  const char *name = sl_source_file_path(src, k);
  bool tf = src->fmt == SL_FORMAT_TFRECORD;
  src->file_first[k] = src->count;
  if (s->size == 0 && tf)
    return SL_OK;
  if (s->size > SIZE_MAX)
    return sl_err_set(err, SL_ETOOBIG, "%s: too large to map", name);
  void *m = NULL;
  if (s->size) {
    m = mmap(NULL, (size_t)s->size, PROT_READ, MAP_SHARED, s->fd, 0);
    if (m == MAP_FAILED)
      return sl_err_errno(err, SL_EIO, errno, "%s: mmap", name);
    (void)madvise(m, (size_t)s->size, tf ? MADV_SEQUENTIAL : MADV_RANDOM);
  }
  sl_rec_file f = {name, m, s->size, s->base};
  sl_status st;
  if (tf) {
    uint64_t n = 0;
    st = sl_tfrecord_count(src, &f, &n, err);
    if (st == SL_OK)
      st = walk_grow(w, src->count + n, err);
    if (st == SL_OK)
      st = sl_tfrecord_append(src, &f, n, err);
  } else {
    st = rio_records(w, &f, err);
  }
  if (m)
    munmap(m, (size_t)s->size);
  return st;
}

static sl_status walk_end(void *ctx, sl_status st, const char *path,
                          sl_err *err) {
  rec_walk *w = ctx;
  sl_source *src = w->src;
  free(w);
  if (st == SL_OK && src->count == 0)
    st = sl_err_set(err, SL_EFORMAT,
                    "%s: no image records in its %zu %s "
                    "shard%s",
                    path, src->nfiles, src->format->title,
                    src->nfiles == 1 ? "" : "s");
  return st;
}

static const sl_shard_walker rec_walker = {
    .begin = walk_begin, .shard = walk_shard, .end = walk_end};

sl_status sl_source_index_rec_remote(sl_source *src, const char *path,
                                     sl_err *err) {
  /* The options the index depends on, in words: a sidecar built with
   * others is another set's. */
  char opts[700];
  if (src->fmt == SL_FORMAT_TFRECORD)
    snprintf(opts, sizeof opts,
             "image_key=%.256s;label_key=%.256s;label_offset=%" PRId32
             ";length_crc_only=%d",
             src->image_key ? src->image_key : "",
             src->label_key ? src->label_key : "", src->label_offset,
             (int)src->length_crc_only);
  else
    snprintf(opts, sizeof opts, "label_offset=%" PRId32, src->label_offset);
  return sl_source_index_remote_shards(src, path, &rec_walker, opts,
                                       src->reindex, err);
}
