/* Building a source's index at open: the services every reader calls
 * (allocating the index and boxes, setting classes, levels, writer and
 * version, checking each entry) and nothing else. A leaf below the readers
 * and the dispatch (source.c), so that calls run one way: the dispatch
 * calls the readers, the readers call this file. */
#include "formats/core/source_impl.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/mem.h"
#include "common/safe_text.h"
#include "common/url_shown.h"
#include "formats/core/boxes.h"
#include "formats/core/layout.h"

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

int sl_source_alloc_targets(sl_source *src, uint64_t rows, uint32_t k,
                            uint64_t held, char *why, size_t cap) {
  src->target_width = 0;
  if (k == 0)
    return 0;
  src->targets_refused = k;
  if (rows > held / 4 / k) {
    snprintf(why, cap,
             "%" PRIu32 " float targets a sample for %" PRIu64
             " samples need %" PRIu64 " bytes of targets, more than the "
             "%" PRIu64 " bytes of the file%s holding them",
             k, rows, rows > UINT64_MAX / 4 / k ? UINT64_MAX : rows * 4 * k,
             held, src->nfiles > 1 ? "s" : "");
    return -1;
  }
  if (!(src->targets = calloc((size_t)rows, (size_t)k * 4))) {
    snprintf(why, cap,
             "no memory for the targets of %" PRIu64 " samples (%" PRIu32
             " floats each)",
             rows, k);
    return -2;
  }
  src->targets_refused = 0;
  src->target_width = k;
  return 0;
}

uint64_t sl_source_bytes_held(const sl_source *src) {
  if (src->nfiles == 0)
    return src->file_size;
  const sl_file_span *last = &src->spans[src->nfiles - 1];
  return last->base + last->size;
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
  if (src->dropping) { /* left out by sl_source_drop_left_out */
    size_t n = strlen(src->left_out_names);
    if (src->left_out < 4 && n + 8 < sizeof src->left_out_names)
      snprintf(src->left_out_names + n, sizeof src->left_out_names - n,
               "%s%s: %s", n ? "; " : "", where, reason);
    src->left_out++;
    memset(&src->index[i], 0, sizeof src->index[i]);
    return SL_OK;
  }
  if (src->on_bad) {
    char raw[384], msg[384];
    int n = snprintf(raw, sizeof raw, "%s: %s", where, reason);
    /* where and reason hold names from the file: no control characters */
    sl_safe_text(msg, sizeof msg, raw,
                 n < 0                    ? 0
                 : (size_t)n < sizeof raw ? (size_t)n
                                          : sizeof raw - 1);
    sl_text_hide_credentials(msg); /* a shard's URL, shown */
    src->on_bad(src->on_bad_user, i, msg);
    memset(&src->index[i], 0, sizeof src->index[i]);
    src->index[i].label = -1; /* unusable: no class, no targets */
    if (src->targets)
      memset(src->targets + i * src->target_width, 0,
             src->target_width * sizeof *src->targets);
    return SL_OK;
  }
  return sl_err_set(
      err, SL_EFORMAT, "%s: sample %" PRIu64 " (%s): %s%s", src->path, i, where,
      reason, src->entries == SL_ENTRIES_SLUICE ? "; " SL_REPACK_HINT : "");
}

/* Targets feed a loss: a NaN or infinity is damage, not data. */
static bool targets_finite(const sl_source *src, uint64_t i, char *why,
                           size_t cap) {
  const float *t = src->targets ? src->targets + i * src->target_width : NULL;
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
           (sl_file_set_find_near(&src->files, e->offset, e->length,
                                  &src->check_hint) < 0 ||
            (e->name_len && !src->name_off &&
             sl_file_set_find_near(&src->files, e->offset - e->name_len,
                                   e->name_len + (uint64_t)e->length,
                                   &src->check_hint) < 0)))
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
  else if (src->entries == SL_ENTRIES_SLUICE &&
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

const char *sl_source_take_image(const uint8_t *p, size_t len, uint64_t off,
                                 sl_sample_info *e, char *why, size_t cap) {
  sl_sniff s;
  int rc = sl_sniff_image(p, len, &s);
  if (s.kind == SL_SNIFF_NONE) {
    snprintf(why, cap,
             "value is not an image file (%zu bytes starting %02x %02x %02x "
             "%02x)",
             len, len > 0 ? p[0] : 0, len > 1 ? p[1] : 0, len > 2 ? p[2] : 0,
             len > 3 ? p[3] : 0);
    return why;
  }
  if (s.kind == SL_SNIFF_BMP) {
    snprintf(why, cap, "a BMP image: this sluice decodes JPEG, PNG and WebP");
    return why;
  }
  if (rc != 0) {
    snprintf(why, cap, "%s image whose header is truncated or malformed",
             sl_sniff_name(s.kind));
    return why;
  }
  if (s.width > UINT16_MAX || s.height > UINT16_MAX) {
    snprintf(why, cap, "%" PRIu32 "x%" PRIu32 " image (sides up to 65535)",
             s.width, s.height);
    return why;
  }
  sl_source_entry_from_sniff(e, off, (uint32_t)len, &s);
  return NULL;
}
