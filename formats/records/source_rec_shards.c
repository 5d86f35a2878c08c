/* TFRecord and MXNet RecordIO shards: a set of record files read as one
 * source (formats/files/shard_paths.h names them: a brace pattern, a list file,
 * TFDS's NAME-train.tfrecord-00000-of-01024).
 *
 * Every shard stays open (the file set, common/file_span.h) and is indexed
 * by the one-file indexers (source_tfrecord.c, source_recordio.c) at its
 * base: a first pass counts each shard's records (TFRecord: its framing
 * walked; RecordIO: its .idx read, or its framing walked), the index is
 * allocated once for all of them, and a second pass appends each shard's
 * records. Both read the shards through one map of the set (every shard
 * at its base, common/file_span.h), which a mapped source keeps. Sample order
 * is shard order, then record order; file_first[k] is shard k's first sample,
 * so loader.order = quasi_random reads whole shards (loader/sampler.c).
 *
 * Memory at open, freed before it returns: 8 bytes a shard (its record
 * count) and, for RecordIO, 8 bytes a record (the offsets). Kept: the
 * index, the shard table (source_impl.h) and, for TFRecord, 8 bytes a
 * sample of name offsets. */
#include "formats/core/source_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/endian.h"
#include "formats/core/crc32c.h"
#include "formats/core/format.h"
#include "formats/files/shard_paths.h"
#include "formats/records/rec_remote.h"
#include "formats/records/recordio.h"

/* Shard k inside the set's map (every shard at its base: one map for
 * both passes, so the second does not fault the pages in again), advised
 * for the pass; an empty shard has no bytes. */
static sl_rec_file shard_at(const sl_source *src, const uint8_t *map, size_t k,
                            int advice) {
  const sl_file_span *s = &src->spans[k];
  sl_rec_file f = {sl_source_file_path(src, k), s->size ? map + s->base : NULL,
                   s->size, s->base};
  if (s->size) /* advisory; the base is page-aligned */
    (void)madvise((void *)(uintptr_t)f.map, (size_t)s->size, advice);
  return f;
}

/* Per shard: its record count and (RecordIO) its records' offsets. */
typedef struct shard_recs {
  uint64_t *records;
  uint64_t **offsets;
} shard_recs;

/* The first pass: every shard's records counted; *total their sum. */
static sl_status count_all(sl_source *src, const uint8_t *map, shard_recs *r,
                           uint64_t *total, sl_err *err) {
  bool tf = src->fmt == SL_FORMAT_TFRECORD;
  *total = 0;
  sl_status st = SL_OK;
  for (size_t k = 0; st == SL_OK && k < src->nfiles; k++) {
    char idx[PATH_MAX];
    bool has_idx = false;
    if (!tf &&
        (st = sl_recordio_idx_beside(sl_source_file_path(src, k), idx,
                                     sizeof idx, &has_idx, err)) != SL_OK)
      break;
    sl_rec_file f = shard_at(src, map, k, MADV_RANDOM);
    st = tf ? sl_tfrecord_count(src, &f, &r->records[k], err)
            : sl_recordio_offsets(src, &f, has_idx ? idx : NULL, &r->offsets[k],
                                  &r->records[k], err);
    if (st == SL_OK && *total > UINT64_MAX - r->records[k])
      st = sl_err_set(err, SL_ETOOBIG, "%s: more than 2^64 records", src->path);
    if (st == SL_OK)
      *total += r->records[k];
  }
  return st;
}

/* The second pass: each shard's records appended at its base. */
static sl_status append_all(sl_source *src, const uint8_t *map,
                            const shard_recs *r, uint64_t total, sl_err *err) {
  bool tf = src->fmt == SL_FORMAT_TFRECORD;
  /* TFRecord's data CRCs read a shard whole, in order: read-ahead. */
  int advice = tf && !src->length_crc_only ? MADV_SEQUENTIAL : MADV_RANDOM;
  sl_status st = SL_OK;
  src->count = 0; /* samples appended so far */
  for (size_t k = 0; st == SL_OK && k < src->nfiles; k++) {
    src->file_first[k] = src->count;
    sl_rec_file f = shard_at(src, map, k, advice);
    st = tf ? sl_tfrecord_append(src, &f, r->records[k], err)
            : sl_recordio_append(src, &f, r->offsets[k], r->records[k], total,
                                 err);
    if (f.map) /* back to random access: what a mapped source reads */
      (void)madvise((void *)(uintptr_t)f.map, (size_t)f.size, MADV_RANDOM);
  }
  return st;
}

/* TFRecord or RecordIO shards (source_rec_shards.c): path a brace
 * pattern, a list file or TFDS's naming (formats/files/shard_paths.h); src->fmt
 * says which. Every shard is counted, the index allocated once, then each
 * shard's records appended at its base. */
static sl_status sl_source_index_rec_shards(sl_source *src, const char *path,
                                            sl_err *err) {
  bool tf = src->fmt == SL_FORMAT_TFRECORD;
  const char *what = tf ? "TFRecord" : "RecordIO";
  src->entries = SL_ENTRIES_IMAGES; /* not sluice's: no repack hint */
  if (sl_url_kind_of(path) != SL_URL_NONE)
    return sl_source_index_rec_remote(src, path, err);
  sl_shard_list l;
  sl_status st = sl_shard_list_of(path, tf, &l, err);
  if (st == SL_OK)
    st = sl_source_add_shards(src, &l, path, err);
  sl_shard_list_free(&l);
  if (st != SL_OK)
    return st;
  shard_recs r = {calloc(src->nfiles, sizeof *r.records),
                  tf ? NULL : calloc(src->nfiles, sizeof *r.offsets)};
  if (!r.records || (!tf && !r.offsets))
    st = sl_err_set(err, SL_ENOMEM, "%s: %zu shards", path, src->nfiles);
  uint8_t *map = NULL;
  size_t map_len = 0;
  if (st == SL_OK &&
      (st = sl_file_set_map(&src->files, &map, &map_len, err)) != SL_OK)
    sl_err_prefix(err, "%s: ", path);
  uint64_t total = 0;
  if (st == SL_OK)
    st = count_all(src, map, &r, &total, err);
  if (st == SL_OK && total == 0)
    st = sl_err_set(err, SL_EFORMAT, "%s: no records in its %zu %s shard%s",
                    path, src->nfiles, what, src->nfiles == 1 ? "" : "s");
  if (st == SL_OK)
    st = sl_source_alloc_index(src, total, err);
  if (st == SL_OK && tf && !(src->name_off = calloc((size_t)total, 8)))
    st = sl_err_set(err, SL_ENOMEM, "%s: no memory for %" PRIu64 " names", path,
                    total);
  if (st == SL_OK)
    st = append_all(src, map, &r, total, err);
  if (st == SL_OK && src->count == 0)
    st = sl_err_set(err, SL_EFORMAT,
                    "%s: no image records among the %" PRIu64
                    " records of its %zu shards",
                    path, total, src->nfiles);
  if (st == SL_OK && src->keep_map)
    src->map = map; /* the mapped source's, kept (open_many sees it) */
  else if (map)
    munmap(map, map_len);
  for (size_t k = 0; r.offsets && k < src->nfiles; k++)
    free(r.offsets[k]);
  free(r.offsets);
  free(r.records);
  return st;
}

/* ---- detection --------------------------------------------------------- */

static bool gzip_head(const uint8_t *head, size_t n) {
  return n >= 2 && head[0] == 0x1f && head[1] == 0x8b;
}

/* The kind of record file p is by its first bytes (AUTO: neither); *why
 * gets errno when it cannot be read; *gzip whether it is gzip data. */
static sl_format_kind sniff(const char *p, int *why, bool *gzip) {
  int fd = open(p, O_RDONLY | O_CLOEXEC);
  *why = 0;
  if (fd < 0) {
    *why = errno;
    return SL_FORMAT_AUTO;
  }
  uint8_t head[12];
  ssize_t n = pread(fd, head, sizeof head, 0);
  if (n < 0)
    *why = errno;
  close(fd);
  size_t got = n > 0 ? (size_t)n : 0;
  *gzip = gzip_head(head, got);
  if (sl_format_recordio.sniff(head, got))
    return SL_FORMAT_RECORDIO;
  if (sl_format_tfrecord.sniff(head, got))
    return SL_FORMAT_TFRECORD;
  return SL_FORMAT_AUTO;
}

/* The records rows' claim: whether path names TFRecord or RecordIO shards
 * rather than one file: a brace pattern, a list file (.txt, .shards), or
 * TFDS's naming of more than one shard (or of a prefix). *fmt: in,
 * dataset.format (AUTO, TFRECORD or RECORDIO); out, the shards' format,
 * from the first shard's first bytes when AUTO. *shards false: a one-file
 * source (or another kind), left to the one-file open. Errors (SL_EIO,
 * SL_ECONFIG, SL_EFORMAT) only where path can be nothing but shards. */
static sl_status shards_claim(const char *path, sl_format_kind *fmt,
                              bool *shards, sl_err *err) {
  *shards = false;
  bool forced = *fmt != SL_FORMAT_AUTO;
  if (sl_url_kind_of(path) != SL_URL_NONE) {
    /* At a URL no shard is looked at before the open: a name with
     * .tfrecord in it, one ending .rec (a pattern's too), or
     * dataset.format, says which. */
    if (forced)
      *shards = true;
    else if (strstr(path, ".tfrecord"))
      *shards = true, *fmt = SL_FORMAT_TFRECORD;
    else if (sl_shard_name_ends(path, ".rec"))
      *shards = true, *fmt = SL_FORMAT_RECORDIO;
    return SL_OK;
  }
  bool pattern = sl_shard_is_pattern(path), list = sl_shard_is_list_name(path);
  struct stat sb;
  bool exists = stat(path, &sb) == 0;
  unsigned tfds = 0;
  if (!pattern && !list && *fmt != SL_FORMAT_RECORDIO) {
    /* TFDS: more than one shard, or a prefix naming its shards */
    sl_status st = sl_shard_tfds_count(path, &tfds, err);
    if (st != SL_OK)
      return st;
    if (tfds == 0 || (tfds == 1 && exists))
      return SL_OK; /* one file */
  } else if (!pattern && !list) {
    return SL_OK;
  }
  if (list && !exists)
    return SL_OK; /* the one-file open names it */
  sl_shard_list l;
  sl_status st = sl_shard_list_of(path, tfds > 0, &l, err);
  if (st != SL_OK) /* a .txt that is no list: another kind of file */
    return list && !forced ? SL_OK : st;
  int why = 0;
  bool gzip = false;
  sl_format_kind k = sniff(l.blob, &why, &gzip);
  if (forced) {
    *shards = true; /* the indexer names a shard that is not one */
  } else if (k != SL_FORMAT_AUTO) {
    *shards = true;
    *fmt = k;
  } else if (pattern || tfds) {
    st =
        why ? sl_err_errno(err, SL_EIO, why, "%s: first shard %s", path, l.blob)
        : gzip ? sl_err_set(err, SL_EUNSUPPORTED,
                            "%s: its first shard %s is gzip-compressed (a "
                            "TFRecord written with compression_type GZIP?): "
                            "sluice reads TFRecords in place and not "
                            "compressed ones; gunzip the shards (or write "
                            "them uncompressed) and read those",
                            path, l.blob)
               : sl_err_set(err, SL_EFORMAT,
                            "%s: its first shard %s is not a TFRecord or "
                            "RecordIO file (nor a .tar: WebDataset shards are "
                            "named .tar)",
                            path, l.blob);
  }
  sl_shard_list_free(&l);
  return st;
}

/* ---- the rows: TFRecord and RecordIO, one file or shards ----------------- */

static int tfrecord_sniff(const uint8_t *head, size_t n) {
  /* a record header whose length CRC holds: 1 in 2^32 by chance */
  return n >= 12 && sl_crc32c_mask(sl_crc32c(head, 8)) == sl_get_le32(head + 8)
             ? 1
             : 0;
}

static const char *tfrecord_not_this(size_t n) {
  return n < 12 ? "not a TFRecord file (shorter than a record header)"
                : "not a TFRecord file (the first record's length CRC does "
                  "not hold)";
}

static sl_status tfrecord_refuse(const uint8_t *head, size_t n,
                                 const char *file, sl_err *err) {
  if (!gzip_head(head, n))
    return SL_OK;
  return sl_err_set(err, SL_EUNSUPPORTED,
                    "%s: a gzip-compressed file (a TFRecord written with "
                    "compression_type GZIP?): sluice reads TFRecords in place "
                    "and not compressed ones; `gunzip -c FILE > "
                    "FILE.tfrecord` (or write them uncompressed) and read "
                    "that",
                    file);
}

static sl_status tfrecord_index_file(sl_source *src, const char *path,
                                     sl_err *err) {
  (void)path;
  return sl_source_index_tfrecord(src, err);
}

const sl_format sl_format_tfrecord = {
    .kind = SL_FORMAT_TFRECORD,
    .name = "tfrecord",
    .title = "TFRecord",
    .what = "TFRecord",
    .options = SL_FOPT_LABEL_KEY,
    .entries = SL_ENTRIES_BIT(SL_ENTRIES_AUTO),
    .entries_name = "example",
    .claim = shards_claim,
    .index_many = sl_source_index_rec_shards,
    .sniff = tfrecord_sniff,
    .not_this = tfrecord_not_this,
    .refuse = tfrecord_refuse,
    .reads = "TFRecord files of tf.train.Example",
    .index_file = tfrecord_index_file,
};

static int recordio_sniff(const uint8_t *head, size_t n) {
  return n >= 8 && sl_get_le32(head) == SL_RECIO_MAGIC ? 2 : 0;
}

static const char *recordio_not_this(size_t n) {
  (void)n;
  return "not an MXNet RecordIO file (no magic ced7230a at offset 0)";
}

static sl_status recordio_index_file(sl_source *src, const char *path,
                                     sl_err *err) {
  (void)path;
  return sl_source_index_recordio(src, err);
}

const sl_format sl_format_recordio = {
    .kind = SL_FORMAT_RECORDIO,
    .name = "recordio",
    .title = "RecordIO",
    .what = "RecordIO",
    .options = 0,
    .entries = SL_ENTRIES_BIT(SL_ENTRIES_AUTO),
    .entries_name = "irheader",
    .claim = shards_claim,
    .index_many = sl_source_index_rec_shards,
    .sniff = recordio_sniff,
    .not_this = recordio_not_this,
    .reads = "MXNet RecordIO files",
    .index_file = recordio_index_file,
};
