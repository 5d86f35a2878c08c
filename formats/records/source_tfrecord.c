/* Indexing TFRecord files: tf.train.Example records as TensorFlow's
 * TFRecordWriter (its ImageNet converter, build_imagenet_data.py), TFDS
 * and the `tfrecord` package write them, uncompressed.
 *
 * A record (tensorflow/core/lib/io/record_writer.cc) is
 *   u64 length, u32 masked CRC-32C of those 8 bytes,
 *   length bytes of data, u32 masked CRC-32C of the data,
 * little-endian, back to back. Two passes over the map at open, one file
 * at a time (sl_rec_file: a source of many shards calls them per shard):
 * sl_tfrecord_count walks the framing, checking every length CRC (16
 * bytes read a record); sl_tfrecord_append checks every record's data CRC
 * (so opening reads the whole file once; dataset.record_crc = length skips
 * it outside verify mode) and parses its Example
 * (formats/records/tf_example.c). The index entry points at the image feature's
 * first value inside the record, so reads after open fetch the image file and
 * nothing else. The label is the label feature's first Int64List value,
 * plus dataset.label_offset, as stored (TensorFlow's ImageNet converter
 * stores 1..1000); a record without one is unlabelled (-1). The image
 * file name (image/filename; TFDS: file_name) is the sample's name, read
 * from the record on demand (8 bytes a sample of offsets). */
#include "formats/core/source_impl.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "common/map_guard.h"
#include "common/safe_text.h"
#include "formats/core/crc32c.h"
#include "formats/core/layout.h"
#include "formats/records/tf_example.h"

#define TFR_DEFAULT_IMAGE "image/encoded"
#define TFR_DEFAULT_LABEL "image/class/label"

/* The features looked up in every record. */
enum { K_IMAGE, K_LABEL, K_TFDS_IMAGE, K_TFDS_LABEL, K_NAME, K_TFDS_NAME, NK };

static uint32_t le32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
         (uint32_t)p[3] << 24;
}

/* The frame at pos: its data length, or a reason. */
static const char *frame(const sl_rec_file *f, uint64_t pos, uint64_t *len,
                         char *why, size_t cap) {
  const uint8_t *p = f->map + pos;
  if (f->size - pos < 12) {
    snprintf(why, cap,
             "%" PRIu64 " bytes left, less than a record's 12-byte header "
             "(truncated file?)",
             f->size - pos);
    return why;
  }
  uint32_t stored = le32(p + 8), crc = sl_crc32c_mask(sl_crc32c(p, 8));
  uint64_t n = (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
  if (stored != crc) {
    snprintf(why, cap,
             "length CRC mismatch (stored %08" PRIx32 ", computed %08" PRIx32
             "): not a TFRecord record header%s",
             stored, crc,
             pos == 0 && p[0] == 0x1f && p[1] == 0x8b ? " (a gzip file)" : "");
    return why;
  }
  if (n > f->size - pos - 12 || f->size - pos - 12 - n < 4) {
    snprintf(why, cap,
             "length %" PRIu64 " runs past the end of the file (%" PRIu64
             " bytes left after the header; truncated file?)",
             n, f->size - pos - 12);
    return why;
  }
  *len = n;
  return NULL;
}

static sl_status count_walk(sl_source *src, const sl_rec_file *f,
                            uint64_t *records, sl_err *err) {
  uint64_t pos = 0, n = 0, len = 0;
  char why[200];
  *records = 0;
  while (pos < f->size) {
    if (frame(f, pos, &len, why, sizeof why)) {
      if (src->on_bad) { /* the rest cannot be framed: one bad record */
        *records = n + 1;
        return SL_OK;
      }
      return sl_err_set(err, SL_EFORMAT,
                        "%s: TFRecord record %" PRIu64 " at offset %" PRIu64
                        ": %s",
                        f->path, n, pos, why);
    }
    pos += 16 + len;
    n++;
  }
  *records = n;
  return SL_OK;
}

/* A printable file name feature becomes sample i's name. */
static void take_name(sl_source *src, uint64_t i, const sl_feature *nf,
                      const uint8_t *rec, uint64_t rec_off) {
  if (!src->name_off || nf->kind != SL_FEATURE_BYTES || nf->count == 0 ||
      nf->first_len == 0 || nf->first_len > SL_NAME_MAX)
    return;
  if (!sl_text_printable(rec + nf->first_off, nf->first_len))
    return;
  src->name_off[i] = rec_off + nf->first_off;
  src->index[i].name_len = (uint16_t)nf->first_len;
}

/* Fills entry e (sample i) from the Example in rec[0, n) at file offset
 * rec_off (base included); NULL or a reason. */
static const char *take_example(sl_source *src, uint64_t i, const uint8_t *rec,
                                uint64_t n, uint64_t rec_off, char *why,
                                size_t cap) {
  const char *ik = src->image_key ? src->image_key : TFR_DEFAULT_IMAGE;
  const char *lk = src->label_key ? src->label_key : TFR_DEFAULT_LABEL;
  const char *keys[NK] = {ik,         lk, "image", "label", "image/filename",
                          "file_name"};
  sl_feature fs[NK];
  if (sl_example_parse(rec, (size_t)n, keys, NK, fs, why, cap) != 0)
    return why;
  /* TFDS names its features image and label: used when the defaults are
   * absent (not when a key was set). */
  const sl_feature *im = &fs[K_IMAGE], *lab = &fs[K_LABEL];
  if (im->kind == SL_FEATURE_NONE && !src->image_key &&
      fs[K_TFDS_IMAGE].kind != SL_FEATURE_NONE)
    im = &fs[K_TFDS_IMAGE], ik = "image";
  if (lab->kind == SL_FEATURE_NONE && !src->label_key &&
      fs[K_TFDS_LABEL].kind != SL_FEATURE_NONE)
    lab = &fs[K_TFDS_LABEL], lk = "label";
  if (im->kind == SL_FEATURE_NONE) {
    snprintf(why, cap, "no image feature '%s'%s (dataset.image_key)", ik,
             src->image_key ? "" : " nor TFDS's 'image'");
    return why;
  }
  if (im->kind != SL_FEATURE_BYTES || im->count == 0) {
    snprintf(why, cap,
             "image feature '%s' is %s %s, not a BytesList of the "
             "image file",
             ik, im->count == 0 ? "an empty" : "a",
             sl_feature_kind_name(im->kind));
    return why;
  }
  if (im->first_len > UINT32_MAX) {
    snprintf(why, cap, "image feature '%s' of %zu bytes (at most 4 GiB)", ik,
             im->first_len);
    return why;
  }
  sl_sample_info *e = &src->index[i];
  const char *bad = sl_source_take_image(rec + im->first_off, im->first_len,
                                         rec_off + im->first_off, e, why, cap);
  if (bad)
    return bad;
  int64_t label = -1;
  if (lab->kind == SL_FEATURE_INT64 && lab->count > 0) {
    label = lab->first_int;
    if (label < INT32_MIN || label > INT32_MAX ||
        label + src->label_offset < -1 ||
        label + src->label_offset > INT32_MAX) {
      snprintf(why, cap,
               "label %" PRId64 " (feature '%s') plus dataset.label_offset "
               "%" PRId32 " is outside [-1, 2^31)",
               label, lk, src->label_offset);
      return why;
    }
    label += src->label_offset;
  } else if (lab->kind != SL_FEATURE_NONE && lab->count > 0) {
    snprintf(why, cap,
             "label feature '%s' is a %s; sluice reads an Int64List label "
             "(dataset.label_key)",
             lk, sl_feature_kind_name(lab->kind));
    return why;
  }
  e->label = (int32_t)label;
  take_name(src, i,
            fs[K_NAME].kind != SL_FEATURE_NONE ? &fs[K_NAME] : &fs[K_TFDS_NAME],
            rec, rec_off);
  return NULL;
}

static sl_status append_walk(sl_source *src, const sl_rec_file *f,
                             uint64_t records, sl_err *err) {
  uint64_t pos = 0, len = 0;
  char why[300], where[600];
  for (uint64_t k = 0; k < records; k++) {
    uint64_t i = src->count++;
    sl_sample_info *e = &src->index[i];
    sl_rec_where(src, f, k, pos, where, sizeof where);
    const char *bad = frame(f, pos, &len, why, sizeof why);
    if (bad) { /* verify mode only (counted as the last record) */
      memset(e, 0, sizeof *e);
      return sl_source_bad_entry(src, i, where, bad, err);
    }
    const uint8_t *d = f->map + pos + 12;
    uint32_t stored = le32(d + len),
             crc = src->length_crc_only
                       ? stored
                       : sl_crc32c_mask(sl_crc32c(d, (size_t)len));
    if (stored != crc) {
      snprintf(why, sizeof why,
               "data CRC mismatch (stored %08" PRIx32 ", computed %08" PRIx32
               ")",
               stored, crc);
      bad = why;
    } else {
      bad = take_example(src, i, d, len, f->base + pos + 12, why, sizeof why);
    }
    pos += 16 + len;
    sl_status st;
    if (bad) {
      memset(e, 0, sizeof *e);
      if (src->name_off)
        src->name_off[i] = 0;
      st = sl_source_bad_entry(src, i, where, bad, err);
    } else {
      st = sl_source_check_entry(src, i, where, err);
    }
    if (st != SL_OK)
      return st;
  }
  return SL_OK;
}

/* ---- the walks, guarded ---------------------------------------------- */

/* A walk over f's mapping at open, run under common/map_guard.h's guard: a file
 * that shrinks while it is walked (copied over, truncated) faults with
 * SIGBUS past its new end, and that fault becomes an error naming the
 * shard and the offset instead of the death of the process. The walks keep
 * what they allocate in src (no allocation of theirs is lost on a jump). */
typedef struct walk_call {
  sl_source *src;
  const sl_rec_file *f;
  uint64_t records, *out;
  sl_err *err;
  sl_status st;
} walk_call;

static void count_call(void *ctx) {
  walk_call *c = ctx;
  c->st = count_walk(c->src, c->f, c->out, c->err);
}

static void append_call(void *ctx) {
  walk_call *c = ctx;
  c->st = append_walk(c->src, c->f, c->records, c->err);
}

static sl_status guarded(void (*fn)(void *), walk_call *c, const char *pass) {
  const sl_rec_file *f = c->f;
  if (f->size == 0) {
    fn(c);
    return c->st;
  }
  sl_status st = sl_guard_install(c->err);
  if (st != SL_OK)
    return st;
  size_t at = 0;
  if (!sl_guard_call(fn, c, f->map, (size_t)f->size, &at))
    return sl_err_set(c->err, SL_EIO,
                      "%s: offset %zu cannot be read (SIGBUS) "
                      "while %s: the file shrank (truncated or copied over) "
                      "since it was opened, or a disk error; it was %" PRIu64
                      " bytes",
                      f->path, at, pass, f->size);
  return c->st;
}

sl_status sl_tfrecord_count(sl_source *src, const sl_rec_file *f,
                            uint64_t *records, sl_err *err) {
  *records = 0;
  walk_call c = {src, f, 0, records, err, SL_OK};
  return guarded(count_call, &c, "its TFRecord records were counted");
}

sl_status sl_tfrecord_append(sl_source *src, const sl_rec_file *f,
                             uint64_t records, sl_err *err) {
  walk_call c = {src, f, records, NULL, err, SL_OK};
  return guarded(append_call, &c, "its TFRecord records were indexed");
}

sl_status sl_source_index_tfrecord(sl_source *src, sl_err *err) {
  sl_rec_file f = {src->path, src->map, src->file_size, 0};
  uint64_t n = 0;
  src->entries = SL_ENTRIES_IMAGES; /* not sluice's: no repack hint */
  sl_status st = sl_tfrecord_count(src, &f, &n, err);
  if (st == SL_OK && n == 0)
    st = sl_err_set(err, SL_EFORMAT, "%s: a TFRecord file of no records",
                    src->path);
  if (st == SL_OK)
    st = sl_source_alloc_index(src, n, err);
  if (st == SL_OK && !(src->name_off = calloc((size_t)n, 8)))
    st = sl_err_set(err, SL_ENOMEM, "%s: no memory for %" PRIu64 " names",
                    src->path, n);
  if (st != SL_OK)
    return st;
  src->count = 0; /* records appended so far */
  /* The data CRCs read the whole file in order: read-ahead while they do
   * (the map is MADV_RANDOM otherwise: 4 KiB faults, ~20x slower cold). */
  if (!src->length_crc_only)
    (void)madvise(src->map, (size_t)src->file_size, MADV_SEQUENTIAL);
  st = sl_tfrecord_append(src, &f, n, err);
  if (madvise(src->map, (size_t)src->file_size, MADV_RANDOM) != 0 &&
      st == SL_OK)
    st =
        sl_err_errno(err, SL_EIO, errno, "%s: madvise(MADV_RANDOM)", src->path);
  return st;
}
