/* sl_source: format detection, the shared index, and reading payloads. */
#include "formats/source_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/mem.h"
#include "common/pread_full.h"
#include "formats/boxes.h"
#include "formats/crc32c.h"
#include "formats/image_sniff.h"
#include "formats/layout.h"
#include "formats/recordio.h"

_Static_assert(sizeof(sl_sample_info) == SL_SAMPLE_INFO_BYTES,
               "index entries are 24 bytes");

static const uint8_t k_hdf5_sig[8] = {0x89, 'H',  'D',  'F',
                                      '\r', '\n', 0x1a, '\n'};
#define LMDB_MAGIC 0xBEEFC0DEu

static sl_status open_common(sl_source **out, const char *path,
                             const sl_source_opts *opts, sl_source_mode mode,
                             sl_source_bad_fn on_bad, void *user, sl_err *err);
static sl_status detect(sl_source *src, const char *path, sl_format_kind *fmt,
                        char *lmdb_env, size_t env_cap, bool *subdir,
                        sl_err *err);
static sl_status open_many(sl_source **out, sl_source *src, const char *path,
                           sl_format_kind fmt, sl_err *err);

sl_status sl_source_open(sl_source **out, const char *path, sl_format_kind fmt,
                         sl_source_mode mode, sl_err *err) {
  sl_source_opts o = {.fmt = fmt};
  return open_common(out, path, &o, mode, NULL, NULL, err);
}

sl_status sl_source_open_opts(sl_source **out, const char *path,
                              const sl_source_opts *opts, sl_source_mode mode,
                              sl_err *err) {
  sl_source_opts o = {0};
  return open_common(out, path, opts ? opts : &o, mode, NULL, NULL, err);
}

sl_status sl_source_open_verify_opts(sl_source **out, const char *path,
                                     const sl_source_opts *opts,
                                     sl_source_mode mode,
                                     sl_source_bad_fn on_bad, void *user,
                                     sl_err *err) {
  sl_source_opts o = {0};
  return open_common(out, path, opts ? opts : &o, mode, on_bad, user, err);
}

void sl_source_close(sl_source *src) {
  if (!src)
    return;
  if (src->map)
    munmap(src->map, (size_t)src->file_size);
  if (src->fd >= 0)
    close(src->fd);
  for (size_t k = 0; k < src->nfiles; k++)
    if (src->spans[k].fd >= 0)
      close(src->spans[k].fd);
  if (src->dirfd >= 0)
    close(src->dirfd);
  free(src->spans);
  free(src->file_first);
  free(src->file_name);
  free(src->names);
  free(src->targets_ext);
  free(src->index);
  free(src->targets);
  free(src->boxes);
  free(src->box_off);
  free(src->class_blob);
  free(src->class_off);
  free(src->writer);
  free(src->label_file);
  free(src->lmdb_db);
  free(src->images);
  free(src->labels);
  free(src->targets_name);
  free(src->lengths_name);
  free(src->labels_path);
  free(src->desc);
  if (src->h5f) {
    free(src->h5f->mask);
    free(src->h5f->tile);
  }
  free(src->h5f);
  free(src->name_off);
  free(src->image_key);
  free(src->label_key);
  free(src->joins);
  free(src->path);
  free(src);
}

uint64_t sl_source_count(const sl_source *src) {
  return src->count;
}

const sl_sample_info *sl_source_info(const sl_source *src, uint64_t i) {
  return &src->index[i];
}

uint32_t sl_source_max_length(const sl_source *src) {
  return src->max_length;
}

uint32_t sl_source_class_count(const sl_source *src) {
  return src->nclasses;
}

const char *sl_source_class_name(const sl_source *src, uint32_t c) {
  if (c >= src->nclasses)
    return NULL;
  return src->class_blob + src->class_off[c];
}

uint32_t sl_source_target_width(const sl_source *src) {
  return src->target_width;
}

const float *sl_source_targets(const sl_source *src, uint64_t i) {
  return src->targets ? src->targets + i * src->target_width : NULL;
}

const sl_box *sl_source_boxes(const sl_source *src, uint64_t i, uint32_t *n) {
  *n = 0;
  if (!src->box_off || i >= src->count || src->index[i].codec == 0)
    return NULL;
  uint64_t a = src->box_off[i], b = src->box_off[i + 1];
  *n = (uint32_t)(b - a);
  return b > a ? src->boxes + a : NULL;
}

uint32_t sl_source_max_boxes(const sl_source *src) {
  return src->max_boxes;
}

uint64_t sl_source_box_total(const sl_source *src) {
  return src->box_total;
}

static sl_status out_of_range(const sl_source *src, uint64_t i, sl_err *err) {
  return sl_err_set(err, SL_EINVAL,
                    "%s: sample %" PRIu64 " out of range (%" PRIu64 " samples)",
                    src->path, i, src->count);
}

sl_status sl_source_name(const sl_source *src, uint64_t i, char *buf,
                         size_t cap, sl_err *err) {
  if (i >= src->count)
    return out_of_range(src, i, err);
  const sl_sample_info *e = &src->index[i];
  if (cap < (size_t)e->name_len + 1)
    return sl_err_set(err, SL_EINVAL,
                      "%s: sample %" PRIu64 ": name buffer of %zu bytes < %u",
                      src->path, i, cap, e->name_len + 1u);
  if (src->names_are_files) { /* a folder: the file's path */
    const char *p = sl_source_file_path(src, (size_t)i);
    size_t l = strlen(p);
    if (cap < l + 1)
      return sl_err_set(err, SL_EINVAL,
                        "%s: sample %" PRIu64 ": name buffer of %zu bytes < "
                        "%zu",
                        src->path, i, cap, l + 1);
    memcpy(buf, p, l + 1);
    return SL_OK;
  }
  size_t done = 0;
  uint64_t at = src->name_off ? src->name_off[i] : e->offset - e->name_len;
  int rc = e->name_len == 0 ? 0
           : src->nfiles ? sl_file_set_pread(&src->files, buf, e->name_len, at,
                                             &done, NULL)
                         : sl_pread_full(src->fd, buf, e->name_len, at, &done);
  if (rc < 0)
    return sl_err_errno(err, SL_EIO, errno,
                        "%s: sample %" PRIu64 ": name read at offset %" PRIu64,
                        src->path, i, at + done);
  if (rc > 0)
    return sl_err_set(err, SL_EIO,
                      "%s: sample %" PRIu64 ": file ends at %" PRIu64
                      " (truncated after open?)",
                      src->path, i, at + done);
  buf[e->name_len] = '\0';
  return SL_OK;
}

const char *sl_source_format_name(const sl_source *src) {
  switch (src->fmt) {
  case SL_FORMAT_LMDB:
    return "lmdb";
  case SL_FORMAT_WEBDATASET:
    return "webdataset";
  case SL_FORMAT_FOLDER:
    return "folder";
  case SL_FORMAT_TFRECORD:
    return "tfrecord";
  case SL_FORMAT_RECORDIO:
    return "recordio";
  default:
    return "hdf5";
  }
}

uint64_t sl_source_input_bytes(const sl_source *src, uint64_t i) {
  const sl_sample_info *e = &src->index[i];
  if (src->h5f)
    return (uint64_t)e->width * e->height * e->channels;
  const sl_recio_join *j = src->njoins ? sl_recio_find_join(src, i) : NULL;
  return j ? j->bytes : e->length;
}

const char *sl_source_layout_name(const sl_source *src) {
  if (src->fmt == SL_FORMAT_TFRECORD)
    return "example";
  if (src->fmt == SL_FORMAT_RECORDIO)
    return "irheader";
  switch (src->entry_layout) {
  case SL_ENTRIES_CAFFE:
    return "caffe";
  case SL_ENTRIES_IMAGES:
    return "images";
  case SL_ENTRIES_ARRAY:
    return "array";
  case SL_ENTRIES_PICKLE:
    return "pickle";
  case SL_ENTRIES_MSGPACK:
    return "msgpack";
  default:
    return "sluice";
  }
}

uint64_t sl_source_skipped(const sl_source *src) {
  return src->skipped;
}

uint64_t sl_source_annotated(const sl_source *src) {
  return src->annotated;
}

uint32_t sl_source_layout_version(const sl_source *src) {
  return src->version;
}

const char *sl_source_description(const sl_source *src) {
  return src->desc ? src->desc : "";
}

const char *sl_source_writer_settings(const sl_source *src) {
  return src->writer ? src->writer : "";
}

int sl_source_fd(const sl_source *src) {
  return src->nfiles ? -1 : src->fd;
}

uint64_t sl_source_file_size(const sl_source *src) {
  return src->file_size;
}

sl_status sl_source_read(const sl_source *src, uint64_t i, void *buf,
                         size_t cap, const uint8_t **data, size_t *len,
                         sl_err *err) {
  if (i >= src->count)
    return out_of_range(src, i, err);
  const sl_sample_info *e = &src->index[i];
  if (e->codec == 0)
    return sl_err_set(err, SL_EFORMAT,
                      "%s: sample %" PRIu64 " is damaged (see `sluice verify`)",
                      src->path, i);
  if (src->keep_map) {
    *data = src->map + e->offset;
    *len = e->length;
    return SL_OK;
  }
  if (cap < e->length)
    return sl_err_set(err, SL_EINVAL,
                      "%s: sample %" PRIu64
                      ": buffer of %zu bytes < payload of %" PRIu32,
                      src->path, i, cap, e->length);
  size_t done;
  long k = -1;
  int rc =
      src->nfiles
          ? sl_file_set_pread(&src->files, buf, e->length, e->offset, &done, &k)
          : sl_pread_full(src->fd, buf, e->length, e->offset, &done);
  if (k >= 0) { /* name the file of a many-file source, and the offset */
    char name[600];
    sl_file_set_name(&src->files, (size_t)k, name, sizeof name);
    if (rc < 0)
      return sl_err_errno(err, SL_EIO, errno,
                          "%s: sample %" PRIu64 ": read at offset %" PRIu64,
                          name, i, e->offset - src->spans[k].base + done);
    if (rc > 0)
      return sl_err_set(err, SL_EIO,
                        "%s: sample %" PRIu64 ": file ends at %" PRIu64
                        " (truncated after open?)",
                        name, i, e->offset - src->spans[k].base + done);
  }
  if (rc < 0)
    return sl_err_errno(err, SL_EIO, errno,
                        "%s: sample %" PRIu64 ": read at offset %" PRIu64,
                        src->path, i, e->offset + done);
  if (rc > 0)
    return sl_err_set(err, SL_EIO,
                      "%s: sample %" PRIu64 ": file ends at %" PRIu64
                      " (truncated after open?)",
                      src->path, i, e->offset + done);
  *data = buf;
  *len = e->length;
  return SL_OK;
}

/* ---- helpers for the format modules ------------------------------------ */

sl_status sl_source_alloc_index(sl_source *src, uint64_t n, sl_err *err) {
  size_t bytes;
  if (n > SIZE_MAX / SL_SAMPLE_INFO_BYTES ||
      !sl_mul_size((size_t)n, sizeof(sl_sample_info), &bytes))
    return sl_err_set(err, SL_EFORMAT, "%s: %" PRIu64 " samples is too many",
                      src->path, n);
  src->index = calloc(n ? (size_t)n : 1, sizeof(sl_sample_info));
  if (!src->index)
    return sl_err_set(err, SL_ENOMEM,
                      "%s: no memory for the index of %" PRIu64
                      " samples (%zu bytes)",
                      src->path, n, bytes);
  src->count = n;
  if (src->target_width > 0 && n > 0) {
    size_t tb;
    if (!sl_mul_size((size_t)n, (size_t)src->target_width * sizeof(float),
                     &tb) ||
        !(src->targets = calloc(1, tb)))
      return sl_err_set(err, SL_ENOMEM,
                        "%s: no memory for the targets of %" PRIu64
                        " samples (%" PRIu32 " floats each)",
                        src->path, n, src->target_width);
  }
  return SL_OK;
}

sl_status sl_source_alloc_boxes(sl_source *src, uint64_t total, sl_err *err) {
  size_t ob, bb;
  if (!sl_mul_size((size_t)src->count + 1, sizeof *src->box_off, &ob) ||
      total > SIZE_MAX / sizeof(sl_box) ||
      !sl_mul_size((size_t)total, sizeof(sl_box), &bb))
    return sl_err_set(err, SL_EFORMAT, "%s: %" PRIu64 " boxes is too many",
                      src->path, total);
  src->box_off = calloc(1, ob);
  src->boxes = malloc(bb ? bb : 1);
  if (!src->box_off || !src->boxes)
    return sl_err_set(err, SL_ENOMEM,
                      "%s: no memory for %" PRIu64 " boxes (%zu bytes)",
                      src->path, total, ob + bb);
  src->box_total = total;
  return SL_OK;
}

sl_status sl_source_set_classes(sl_source *src, const char *blob,
                                size_t blob_len, uint32_t k, sl_err *err) {
  src->class_blob = malloc(blob_len ? blob_len : 1);
  src->class_off = malloc((k ? k : 1) * sizeof *src->class_off);
  if (!src->class_blob || !src->class_off)
    return sl_err_set(err, SL_ENOMEM, "%s: no memory for %" PRIu32 " classes",
                      src->path, k);
  memcpy(src->class_blob, blob, blob_len);
  size_t pos = 0;
  for (uint32_t c = 0; c < k; c++) {
    const char *end = memchr(blob + pos, '\0', blob_len - pos);
    if (!end)
      return sl_err_set(err, SL_EFORMAT,
                        "%s: class table is malformed; " SL_REPACK_HINT,
                        src->path);
    src->class_off[c] = (uint32_t)pos;
    pos = (size_t)(end - blob) + 1;
  }
  src->nclasses = k;
  return SL_OK;
}

sl_status sl_source_set_writer(sl_source *src, const char *s, size_t len,
                               sl_err *err) {
  src->writer = malloc(len + 1);
  if (!src->writer)
    return sl_err_set(err, SL_ENOMEM, "%s: no memory", src->path);
  memcpy(src->writer, s, len);
  src->writer[len] = '\0';
  return SL_OK;
}

sl_status sl_source_bad_entry(sl_source *src, uint64_t i, const char *where,
                              const char *reason, sl_err *err) {
  if (src->on_bad) {
    char msg[384];
    snprintf(msg, sizeof msg, "%s: %s", where, reason);
    src->on_bad(src->on_bad_user, i, msg);
    memset(&src->index[i], 0, sizeof src->index[i]);
    src->index[i].label = -1; /* unusable: no class, no targets */
    if (src->targets)
      memset(src->targets + i * src->target_width, 0,
             src->target_width * sizeof *src->targets);
    return SL_OK;
  }
  return sl_err_set(err, SL_EFORMAT, "%s: sample %" PRIu64 " (%s): %s%s",
                    src->path, i, where, reason,
                    src->entry_layout == SL_ENTRIES_SLUICE ? "; " SL_REPACK_HINT
                                                           : "");
}

/* Targets feed a loss: a NaN or infinity is damage, not data. */
static bool targets_finite(const sl_source *src, uint64_t i, char *why,
                           size_t cap) {
  const float *t = sl_source_targets(src, i);
  for (uint32_t q = 0; t && q < src->target_width; q++)
    if (!isfinite(t[q])) {
      snprintf(why, cap, "target %" PRIu32 " is %f", q, (double)t[q]);
      return false;
    }
  return true;
}

/* Boxes feed a loss and the crop geometry: a NaN, an inverted box or a
 * class the file does not have is damage. */
static bool boxes_valid(sl_source *src, uint64_t i, char *why, size_t cap) {
  if (!src->box_off)
    return true;
  uint64_t a = src->box_off[i], b = src->box_off[i + 1];
  for (uint64_t k = a; k < b; k++) {
    const char *bad = sl_box_check(&src->boxes[k], src->nclasses);
    if (bad) {
      snprintf(why, cap, "box %" PRIu64 " (%g,%g,%g,%g label %" PRId32 "): %s",
               k - a, (double)src->boxes[k].x0, (double)src->boxes[k].y0,
               (double)src->boxes[k].x1, (double)src->boxes[k].y1,
               src->boxes[k].label, bad);
      return false;
    }
  }
  if (b - a > src->max_boxes)
    src->max_boxes = (uint32_t)(b - a);
  return true;
}

uint32_t sl_source_levels(const sl_source *src, uint64_t images[],
                          uint64_t bytes[]) {
  for (uint32_t k = 0; k < src->nlevels; k++) {
    images[k] = src->level_images[k];
    bytes[k] = src->level_bytes[k];
  }
  return src->nlevels;
}

sl_status sl_source_set_levels(sl_source *src, const char *s, size_t len,
                               sl_err *err) {
  uint32_t n = 0;
  size_t i = 0;
  while (i < len) {
    uint64_t v[2] = {0, 0};
    for (int f = 0; f < 2; f++) {
      size_t d = 0;
      while (i < len && s[i] >= '0' && s[i] <= '9' && d < 19)
        v[f] = v[f] * 10 + (uint64_t)(s[i++] - '0'), d++;
      if (!d || (f == 0 && (i >= len || s[i++] != ':')))
        goto bad;
    }
    if (n >= SL_LEVELS_MAX || (i < len && s[i++] != ' '))
      goto bad;
    src->level_images[n] = v[0];
    src->level_bytes[n++] = v[1];
  }
  src->nlevels = n == 1 && !src->level_images[0] ? 0 : n;
  return SL_OK;
bad:
  return sl_err_set(err, SL_EFORMAT,
                    "%s: level summary '%.*s' not understood; " SL_REPACK_HINT,
                    src->path, (int)(len > 60 ? 60 : len), s);
}

sl_status sl_source_set_version(sl_source *src, const char *format, uint64_t v,
                                uint32_t oldest, uint32_t newest, sl_err *err) {
  if (v < oldest || v > newest)
    return sl_err_set(err, SL_EFORMAT,
                      "%s: %s layout version %" PRIu64
                      " (this sluice reads %u to %u); " SL_REPACK_HINT,
                      src->path, format, v, oldest, newest);
  src->version = (uint32_t)v;
  return SL_OK;
}

sl_status sl_source_check_entry(sl_source *src, uint64_t i, const char *where,
                                sl_err *err) {
  sl_sample_info *e = &src->index[i];
  char why[160];
  if (e->offset > src->file_size || e->length > src->file_size - e->offset ||
      (!src->name_off && e->name_len > e->offset))
    snprintf(why, sizeof why,
             "payload [%" PRIu64 ", +%" PRIu32
             ") lies beyond the end of the file (%" PRIu64 " bytes)",
             e->offset, e->length, src->file_size);
  else if (src->nfiles &&
           (sl_file_set_find(&src->files, e->offset, e->length) < 0 ||
            (e->name_len && !src->name_off &&
             sl_file_set_find(&src->files, e->offset - e->name_len,
                              e->name_len + (uint64_t)e->length) < 0)))
    snprintf(why, sizeof why,
             "payload [%" PRIu64 ", +%" PRIu32 ") does not lie inside one file",
             e->offset, e->length);
  else if (e->codec < SL_LAYOUT_CODEC_FIRST || e->codec > SL_LAYOUT_CODEC_LAST)
    snprintf(why, sizeof why, "unknown codec %u", e->codec);
  else if (e->codec == SL_IMAGE_JPEG_LEVELS && !src->levels_layout)
    snprintf(why, sizeof why,
             "codec %u (JPEG levels) in a file of layout %u, which has none",
             e->codec, src->version);
  else if (e->channels != 1 && e->channels != 3)
    snprintf(why, sizeof why, "%u channels (1 or 3 expected)", e->channels);
  else if (e->height == 0 || e->width == 0)
    snprintf(why, sizeof why, "empty image size %ux%u", e->width, e->height);
  else if (src->entry_layout == SL_ENTRIES_SLUICE &&
           (e->label < -1 ||
            (e->label >= 0 && (uint32_t)e->label >= src->nclasses)))
    snprintf(why, sizeof why, "label %" PRId32 " outside [-1, %" PRIu32 ")",
             e->label, src->nclasses);
  else if (e->length == 0)
    snprintf(why, sizeof why, "empty payload");
  else if (!src->h5f &&
           (e->codec == SL_IMAGE_RAW || e->codec == SL_IMAGE_RAW_CHW ||
            e->codec == SL_IMAGE_RAW_CHW_BGR) &&
           (uint64_t)e->height * e->width * e->channels != e->length)
    snprintf(why, sizeof why, "raw payload of %" PRIu32 " bytes != %ux%ux%u",
             e->length, e->height, e->width, e->channels);
  else if (!targets_finite(src, i, why, sizeof why))
    ;
  else if (!boxes_valid(src, i, why, sizeof why))
    ;
  else {
    if (e->length > src->max_length)
      src->max_length = e->length;
    return SL_OK;
  }
  return sl_source_bad_entry(src, i, where, why, err);
}

static char *put_u64(char *p, uint64_t v) {
  char d[20];
  int n = 0;
  do
    d[n++] = (char)('0' + v % 10);
  while ((v /= 10) != 0);
  while (n > 0)
    *p++ = d[--n];
  return p;
}

void sl_rec_where(const sl_source *src, const sl_rec_file *f, uint64_t k,
                  uint64_t off, char *buf, size_t cap) {
  size_t head = 0;
  if (f->path != src->path && strcmp(f->path, src->path) != 0) {
    /* a shard: its path first (cut to leave room for the rest) */
    size_t l = strlen(f->path);
    head = cap > 66 ? cap - 66 : 0;
    head = l < head ? l : head;
    memcpy(buf, f->path, head);
    if (head + 2 <= cap) {
      memcpy(buf + head, ": ", 2);
      head += 2;
    }
  }
  char *p = buf + head;
  memcpy(p, "record ", 7);
  p = put_u64(p + 7, k);
  memcpy(p, " at offset ", 11);
  p = put_u64(p + 11, off);
  *p = '\0';
}

static bool is_dir(const char *path) {
  struct stat sb;
  return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/* Options a TFRecord or RecordIO source (one file or shards) refuses. */
static sl_status check_record_opts(const sl_source *src, const char *path,
                                   sl_format_kind fmt, sl_err *err) {
  const char *what = fmt == SL_FORMAT_TFRECORD ? "TFRecord" : "RecordIO";
  if (src->entry_layout != SL_ENTRIES_AUTO)
    return sl_err_set(err, SL_ECONFIG,
                      "%s: dataset.layout is for LMDB and HDF5 files; this "
                      "is %s",
                      path, what);
  if (src->images || src->labels || src->targets_name || src->labels_path ||
      src->lengths_name || src->label_argmax || src->lmdb_db || src->label_file)
    return sl_err_set(err, SL_ECONFIG,
                      "%s: dataset.images/labels/targets/labels_path/lengths/"
                      "label_from/lmdb_db/label_file are for LMDB and HDF5 "
                      "files; this is %s",
                      path, what);
  return SL_OK;
}

/* ---- open ---------------------------------------------------------------- */

static sl_status open_common(sl_source **out, const char *path,
                             const sl_source_opts *opts, sl_source_mode mode,
                             sl_source_bad_fn on_bad, void *user, sl_err *err) {
  *out = NULL;
  sl_format_kind fmt = opts->fmt;
  sl_source *src = calloc(1, sizeof *src);
  if (!src || !(src->path = strdup(path))) {
    free(src);
    return sl_err_set(err, SL_ENOMEM, "%s: no memory", path);
  }
  src->fd = -1;
  src->dirfd = -1;
  src->keep_map = mode == SL_SOURCE_MMAP;
  src->on_bad = on_bad;
  src->on_bad_user = user;
  src->entry_layout = opts->entry_layout;
  src->order = opts->order;
  src->array_layout = opts->array_layout;
  src->max_fill =
      opts->max_fill_samples ? opts->max_fill_samples : SL_SOURCE_MAX_FILL;
  src->label_argmax = opts->label_argmax;
  src->label_offset = opts->label_offset;
  src->length_crc_only = opts->length_crc_only && !on_bad;
  /* The default keys (set or not) keep TFDS's names as the fallback. */
  bool own_image = opts->image_key && opts->image_key[0] &&
                   strcmp(opts->image_key, "image/encoded") != 0;
  bool own_label = opts->label_key && opts->label_key[0] &&
                   strcmp(opts->label_key, "image/class/label") != 0;
  if ((own_image && !(src->image_key = strdup(opts->image_key))) ||
      (own_label && !(src->label_key = strdup(opts->label_key))) ||
      (opts->label_file && opts->label_file[0] &&
       !(src->label_file = strdup(opts->label_file))) ||
      (opts->lmdb_db && opts->lmdb_db[0] &&
       !(src->lmdb_db = strdup(opts->lmdb_db))) ||
      (opts->images && opts->images[0] &&
       !(src->images = strdup(opts->images))) ||
      (opts->labels && opts->labels[0] &&
       !(src->labels = strdup(opts->labels))) ||
      (opts->targets && opts->targets[0] &&
       !(src->targets_name = strdup(opts->targets))) ||
      (opts->labels_path && opts->labels_path[0] &&
       !(src->labels_path = strdup(opts->labels_path))) ||
      (opts->lengths && opts->lengths[0] &&
       !(src->lengths_name = strdup(opts->lengths))) ||
      (opts->targets_ext && opts->targets_ext[0] &&
       !(src->targets_ext = strdup(opts->targets_ext)))) {
    sl_source_close(src);
    return sl_err_set(err, SL_ENOMEM, "%s: no memory", path);
  }
  if (fmt == SL_FORMAT_AUTO) { /* many files: by the path's form */
    struct stat sb;
    if (sl_wds_path_like(path))
      fmt = SL_FORMAT_WEBDATASET;
    else if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode) &&
             !sl_lmdb_env_dir(path) && sl_folder_like(path))
      fmt = SL_FORMAT_FOLDER;
    else if (sl_folder_list_like(path)) /* PATH LABEL lines, im2rec's .lst */
      fmt = SL_FORMAT_FOLDER;
  }
  bool shards = false;
  sl_status st = SL_OK;
  if (fmt == SL_FORMAT_AUTO || fmt == SL_FORMAT_TFRECORD ||
      fmt == SL_FORMAT_RECORDIO) /* record files: one, or shards */
    st = sl_rec_shards_detect(path, &fmt, &shards, err);
  if (st == SL_OK &&
      (shards || fmt == SL_FORMAT_WEBDATASET || fmt == SL_FORMAT_FOLDER))
    return open_many(out, src, path, fmt, err);
  char env_path[PATH_MAX];
  bool subdir = false;
  if (st == SL_OK)
    st = detect(src, path, &fmt, env_path, sizeof env_path, &subdir, err);
  if (st == SL_OK && fmt == SL_FORMAT_HDF5 &&
      (src->entry_layout == SL_ENTRIES_CAFFE ||
       src->entry_layout == SL_ENTRIES_IMAGES ||
       src->entry_layout == SL_ENTRIES_PICKLE ||
       src->entry_layout == SL_ENTRIES_MSGPACK))
    st = sl_err_set(err, SL_ECONFIG,
                    "%s: dataset.layout = %s is for LMDB files; this is HDF5",
                    path, sl_source_layout_name(src));
  if (st == SL_OK && fmt == SL_FORMAT_LMDB &&
      src->entry_layout == SL_ENTRIES_ARRAY)
    st = sl_err_set(err, SL_ECONFIG,
                    "%s: dataset.layout = array is for HDF5 files; this is "
                    "LMDB",
                    path);
  if (st == SL_OK && fmt == SL_FORMAT_LMDB &&
      (src->images || src->labels || src->targets_name || src->labels_path ||
       src->lengths_name || src->label_argmax))
    st = sl_err_set(err, SL_ECONFIG,
                    "%s: dataset.images/labels/targets/labels_path/lengths/"
                    "label_from are for HDF5 arrays; this is LMDB",
                    path);
  if (st == SL_OK && (fmt == SL_FORMAT_TFRECORD || fmt == SL_FORMAT_RECORDIO))
    st = check_record_opts(src, path, fmt, err);
  if (st == SL_OK && src->targets_ext)
    st = sl_err_set(err, SL_ECONFIG,
                    "%s: dataset.targets_ext is for WebDataset shards", path);
  if (st == SL_OK && fmt != SL_FORMAT_TFRECORD && src->label_key)
    st = sl_err_set(err, SL_ECONFIG,
                    "%s: dataset.label_key is for WebDataset shards and "
                    "TFRecord files",
                    path);
  if (st == SL_OK && fmt == SL_FORMAT_HDF5 && src->lmdb_db)
    st = sl_err_set(err, SL_ECONFIG,
                    "%s: dataset.lmdb_db = %s names an LMDB sub-database; "
                    "this is HDF5",
                    path, src->lmdb_db);
  if (st == SL_OK) {
    src->fmt = fmt;
    void *m =
        mmap(NULL, (size_t)src->file_size, PROT_READ, MAP_SHARED, src->fd, 0);
    if (m == MAP_FAILED)
      st = sl_err_errno(err, SL_EIO, errno, "%s: mmap", path);
    else {
      src->map = m;
      /* Indexing and a mapped source read in random order: no read-around.
       * A map of the whole file starts on a page. */
      if (madvise(m, (size_t)src->file_size, MADV_RANDOM) != 0)
        st = sl_err_errno(err, SL_EIO, errno,
                          "%s: madvise(MADV_RANDOM) of %zu bytes", path,
                          (size_t)src->file_size);
    }
  }
  if (st == SL_OK)
    st = fmt == SL_FORMAT_LMDB
             ? sl_source_index_lmdb(src, env_path, subdir, err)
         : fmt == SL_FORMAT_TFRECORD ? sl_source_index_tfrecord(src, err)
         : fmt == SL_FORMAT_RECORDIO ? sl_source_index_recordio(src, err)
                                     : sl_source_index_hdf5(src, err);
  if (st == SL_OK && !src->keep_map) {
    munmap(src->map, (size_t)src->file_size);
    src->map = NULL;
  }
  if (st != SL_OK) {
    sl_source_close(src);
    return st;
  }
  *out = src;
  return SL_OK;
}

/* A source of many files: the indexer adds the files (src->files) and the
 * entries; a mapped source maps them all into one reservation. */
static sl_status open_many(sl_source **out, sl_source *src, const char *path,
                           sl_format_kind fmt, sl_err *err) {
  src->fmt = fmt;
  bool records = fmt == SL_FORMAT_TFRECORD || fmt == SL_FORMAT_RECORDIO;
  const char *what =
      fmt == SL_FORMAT_WEBDATASET ? "WebDataset shards" : "an image folder";
  sl_status st = SL_OK;
  if (records) {
    st = check_record_opts(src, path, fmt, err);
    if (st == SL_OK && src->targets_ext)
      st = sl_err_set(err, SL_ECONFIG,
                      "%s: dataset.targets_ext is for WebDataset shards", path);
    if (st == SL_OK && fmt == SL_FORMAT_RECORDIO && src->label_key)
      st = sl_err_set(err, SL_ECONFIG,
                      "%s: dataset.label_key is for WebDataset shards and "
                      "TFRecord files",
                      path);
  } else if (src->entry_layout != SL_ENTRIES_AUTO &&
             src->entry_layout != SL_ENTRIES_IMAGES)
    st = sl_err_set(err, SL_ECONFIG,
                    "%s: dataset.layout must be auto or images for %s", path,
                    what);
  else if (src->lmdb_db || src->images || src->labels || src->targets_name ||
           src->labels_path || src->lengths_name || src->label_argmax ||
           src->label_file)
    st = sl_err_set(err, SL_ECONFIG,
                    "%s: dataset.lmdb_db/images/labels/targets/labels_path/"
                    "lengths/label_from/label_file are for LMDB and HDF5 "
                    "files; this is %s",
                    path, what);
  else if (fmt == SL_FORMAT_FOLDER && (src->label_key || src->targets_ext))
    st = sl_err_set(err, SL_ECONFIG,
                    "%s: dataset.label_key/targets_ext are for WebDataset "
                    "shards; this is an image folder",
                    path);
  src->entry_layout = SL_ENTRIES_IMAGES;
  if (st == SL_OK)
    st = records ? sl_source_index_rec_shards(src, path, err)
         : fmt == SL_FORMAT_WEBDATASET ? sl_source_index_wds(src, path, err)
         : is_dir(path)                ? sl_source_index_folder(src, path, err)
                        : sl_source_index_folder_list(src, path, err);
  if (st == SL_OK && src->keep_map && src->files.lazy)
    src->keep_map = false; /* files opened per read: pread, buf needed */
  if (st == SL_OK && src->keep_map && !src->map) { /* not mapped already */
    size_t len;
    st = sl_file_set_map(&src->files, &src->map, &len, err);
    if (st != SL_OK)
      sl_err_prefix(err, "%s: ", path);
  }
  if (st != SL_OK) {
    sl_source_close(src);
    return st;
  }
  *out = src;
  return SL_OK;
}

bool sl_lmdb_env_dir(const char *dir) {
  char p[PATH_MAX];
  struct stat sb;
  return snprintf(p, sizeof p, "%s/data.mdb", dir) < (int)sizeof p &&
         stat(p, &sb) == 0;
}

/* Opens the data file, checks its size and recognises the format. */
static sl_status detect(sl_source *src, const char *path, sl_format_kind *fmt,
                        char *lmdb_env, size_t env_cap, bool *subdir,
                        sl_err *err) {
  struct stat sb;
  if (stat(path, &sb) != 0)
    return sl_err_errno(err, SL_EIO, errno, "%s", path);
  const char *file = path;
  char data_path[PATH_MAX];
  if (S_ISDIR(sb.st_mode)) { /* an LMDB environment directory */
    if (snprintf(data_path, sizeof data_path, "%s/data.mdb", path) >=
        (int)sizeof data_path)
      return sl_err_set(err, SL_EINVAL, "%s: path too long", path);
    file = data_path;
    *subdir = true;
  }
  if (snprintf(lmdb_env, env_cap, "%s", path) >= (int)env_cap)
    return sl_err_set(err, SL_EINVAL, "%s: path too long", path);
  src->fd = open(file, O_RDONLY | O_CLOEXEC);
  if (src->fd < 0 && errno == ENOENT && *subdir)
    return sl_err_set(
        err, SL_EIO,
        "%s: a folder, not a dataset (no data.mdb: not an LMDB environment "
        "either); `sluice pack %s OUT.lmdb` makes a dataset of the images "
        "in it",
        path, path);
  if (src->fd < 0)
    return sl_err_errno(err, SL_EIO, errno, "%s", file);
  if (fstat(src->fd, &sb) != 0)
    return sl_err_errno(err, SL_EIO, errno, "%s: stat", file);
  if (!S_ISREG(sb.st_mode))
    return sl_err_set(err, SL_EFORMAT, "%s: not a regular file", file);
  src->file_size = (uint64_t)sb.st_size;
  if ((uint64_t)(size_t)src->file_size != src->file_size)
    return sl_err_set(err, SL_ETOOBIG, "%s: too large to map", file);
  uint8_t head[24] = {0};
  ssize_t n = pread(src->fd, head, sizeof head, 0);
  if (n < 0)
    return sl_err_errno(err, SL_EIO, errno, "%s: read", file);
  bool is_hdf5 = n >= 8 && memcmp(head, k_hdf5_sig, 8) == 0;
  bool is_lmdb = n >= 20 && sl_get_le32(head + 16) == LMDB_MAGIC;
  /* RecordIO starts with its magic; a TFRecord with a record header whose
   * length CRC holds (1 in 2^32 by chance). */
  bool is_recordio = n >= 8 && sl_get_le32(head) == SL_RECIO_MAGIC;
  bool is_tfrecord =
      n >= 12 && sl_crc32c_mask(sl_crc32c(head, 8)) == sl_get_le32(head + 8);
  /* After a userblock (MATLAB v7.3 writes 512 bytes) the signature sits at
   * 512, 1024, 2048, ...: HDF5 itself looks there (not in a file that
   * starts as a record file: its images may hold anything). */
  for (uint64_t at = 512; !is_hdf5 && n >= 20 && at + 8 <= src->file_size &&
                          !is_lmdb && !is_recordio && !is_tfrecord;
       at *= 2) {
    uint8_t sig[8];
    if (pread(src->fd, sig, 8, (off_t)at) == 8 &&
        memcmp(sig, k_hdf5_sig, 8) == 0)
      is_hdf5 = true;
  }
  bool is_gzip = n >= 2 && head[0] == 0x1f && head[1] == 0x8b;
  if (is_gzip && (*fmt == SL_FORMAT_AUTO || *fmt == SL_FORMAT_TFRECORD))
    return sl_err_set(
        err, SL_EUNSUPPORTED,
        "%s: a gzip-compressed file (a TFRecord written with "
        "compression_type GZIP?): sluice reads TFRecords in place and not "
        "compressed ones; `gunzip -c FILE > FILE.tfrecord` (or write them "
        "uncompressed) and read that",
        file);
  if (*fmt == SL_FORMAT_AUTO) {
    if (is_hdf5)
      *fmt = SL_FORMAT_HDF5;
    else if (is_recordio)
      *fmt = SL_FORMAT_RECORDIO;
    else if (is_tfrecord)
      *fmt = SL_FORMAT_TFRECORD;
    else if (is_lmdb)
      *fmt = SL_FORMAT_LMDB;
    else if (sl_sniff_magic(head, (size_t)n) != SL_SNIFF_NONE)
      return sl_err_set(
          err, SL_EFORMAT,
          "%s: a %s image, not a dataset; `sluice pack FOLDER OUT.lmdb` "
          "makes a dataset of a folder of images",
          file, sl_sniff_name(sl_sniff_magic(head, (size_t)n)));
    else
      return sl_err_set(
          err, SL_EFORMAT,
          "%s: %s; sluice reads LMDB files (its own, Caffe Datums, "
          "image-file values), HDF5 files (its own, and h5py-style "
          "arrays of pixels or of encoded images), TFRecord files of "
          "tf.train.Example and MXNet RecordIO files",
          file,
          n == 0 ? "file is empty"
                 : "not an LMDB, HDF5, TFRecord or RecordIO file");
  } else if (*fmt == SL_FORMAT_HDF5 && !is_hdf5) {
    return sl_err_set(err, SL_EFORMAT,
                      "%s: not an HDF5 file (no HDF5 "
                      "signature at offset 0)",
                      file);
  } else if (*fmt == SL_FORMAT_RECORDIO && !is_recordio) {
    return sl_err_set(err, SL_EFORMAT,
                      "%s: not an MXNet RecordIO file (no magic ced7230a at "
                      "offset 0)",
                      file);
  } else if (*fmt == SL_FORMAT_TFRECORD && !is_tfrecord) {
    return sl_err_set(err, SL_EFORMAT, "%s: not a TFRecord file (%s)", file,
                      n < 12 ? "shorter than a record header"
                             : "the first record's length CRC does not hold");
  } else if (*fmt == SL_FORMAT_LMDB && !is_lmdb) {
    return sl_err_set(err, SL_EFORMAT,
                      "%s: not an LMDB file (no LMDB magic "
                      "in the first meta page)",
                      file);
  }
  if (*subdir && *fmt != SL_FORMAT_LMDB)
    return sl_err_set(err, SL_EFORMAT,
                      "%s: a directory must be an LMDB "
                      "environment",
                      path);
  return SL_OK;
}
