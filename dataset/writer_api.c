/* The public writer API (sluice.h, "Writing datasets"): checks what a
 * caller adds, reads each image's header for its size and channels, puts
 * JPEGs into the restart layout, and hands the samples to the formats/
 * file writer (which owns atomicity: see formats/core/writer.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codecs/codec.h"
#include "dataset/transcoder.h"
#include "formats/core/levels.h"
#include "formats/core/writer.h"
#include "sluice.h"

struct sl_writer {
  sl_fwriter *fw; /* NULL once committed, or in a handle of a failed create */
  char *path;
  bool keep_jpeg, replace;
  uint32_t levels; /* sl_writer_options.levels */
  int level_quality;
  const char *ended; /* why fw is NULL: "committed", "failed to start"... */
  uint64_t count;
  char *settings;
  sl_transcoder *tc;  /* made at the first JPEG that needs a rewrite */
  sl_decoder *probe;  /* header reads only: tiny caps */
  char **class_names; /* by label; NULL: unnamed */
  uint32_t names_cap;
  uint32_t nclasses; /* one more than the largest label added or named */
  sl_err err;
};

static bool reserved_zero(const sl_writer_options *o) {
  for (size_t i = 0; i < sizeof o->reserved / sizeof o->reserved[0]; i++)
    if (o->reserved[i])
      return false;
  return true;
}

static sl_status create(sl_writer *w, const char *path,
                        const sl_writer_options *o) {
  sl_err *err = &w->err;
  if (!path || !path[0])
    return sl_err_set(err, SL_EINVAL, "sl_writer_create: no path");
  if (!reserved_zero(o))
    return sl_err_set(err, SL_EINVAL,
                      "%s: sl_writer_options.reserved must be zero", path);
  sl_format_kind fmt = SL_FORMAT_AUTO;
  if (o->format && strcmp(o->format, "lmdb") == 0)
    fmt = SL_FORMAT_LMDB;
  else if (o->format && strcmp(o->format, "hdf5") == 0)
    fmt = SL_FORMAT_HDF5;
  else if (o->format && o->format[0])
    return sl_err_set(err, SL_EINVAL,
                      "%s: format '%s' (lmdb, hdf5, or empty: from the name)",
                      path, o->format);
  if (o->settings &&
      (strpbrk(o->settings, "\r\n") || strlen(o->settings) > SL_SETTINGS_MAX))
    return sl_err_set(err, SL_EINVAL,
                      "%s: the settings string has a line break or is longer "
                      "than %d bytes",
                      path, SL_SETTINGS_MAX);
  if (o->target_width > SL_TARGETS_MAX)
    return sl_err_set(err, SL_EINVAL, "%s: %u targets a sample (at most %d)",
                      path, o->target_width, SL_TARGETS_MAX);
  if (o->levels & ~0x7Fu || o->level_quality > 100 ||
      __builtin_popcount(o->levels) > SL_LEVELS_MAX - 1)
    return sl_err_set(err, SL_EINVAL,
                      "%s: levels 0x%x (at most 3 of bits 0..6, for "
                      "1/8..7/8) or level_quality %u (0..100)",
                      path, o->levels, o->level_quality);
  w->levels = o->levels;
  w->level_quality = o->level_quality ? (int)o->level_quality : 90;
  w->keep_jpeg = o->keep_jpeg != 0;
  w->replace = o->replace != 0;
  if (!(w->path = strdup(path)) ||
      !(w->settings = strdup(o->settings ? o->settings : "")))
    return sl_err_set(err, SL_ENOMEM, "%s: no memory", path);
  sl_status st =
      sl_decoder_create(&w->probe, SL_TRANSCODE_MAX_PIXELS, 16, 16, err);
  if (st == SL_OK)
    st = sl_fwriter_open(&w->fw, path, fmt, err);
  if (st == SL_OK)
    st = sl_fwriter_set_target_width(w->fw, o->target_width, err);
  if (st == SL_OK && w->levels)
    st = sl_fwriter_set_levels(w->fw, err);
  return st;
}

sl_status sl_writer_create(sl_writer **out, const char *path,
                           const sl_writer_options *opts) {
  if (!out)
    return SL_EINVAL;
  sl_writer *w = *out = calloc(1, sizeof *w);
  if (!w)
    return SL_ENOMEM;
  sl_writer_options zero;
  memset(&zero, 0, sizeof zero);
  sl_status st = create(w, path, opts ? opts : &zero);
  if (st != SL_OK) { /* the handle keeps only the message */
    sl_fwriter_abort(w->fw);
    w->fw = NULL;
    w->ended = "failed to start";
  }
  return st;
}

void sl_writer_destroy(sl_writer *w) {
  if (!w)
    return;
  sl_fwriter_abort(w->fw);
  sl_transcoder_destroy(w->tc);
  sl_decoder_destroy(w->probe);
  for (uint32_t c = 0; c < w->names_cap; c++)
    free(w->class_names[c]);
  free(w->class_names);
  free(w->settings);
  free(w->path);
  free(w);
}

const char *sl_writer_errmsg(const sl_writer *w) {
  return w ? w->err.msg : "no writer handle (out of memory, or NULL)";
}

uint64_t sl_writer_count(const sl_writer *w) {
  return w ? w->count : 0;
}

static sl_status usable(sl_writer *w) {
  if (!w)
    return SL_EINVAL;
  if (!w->fw)
    return sl_err_set(&w->err, SL_ESTATE, "%s: the writer %s",
                      w->path ? w->path : "", w->ended);
  return SL_OK;
}

static sl_status check_label(sl_writer *w, int32_t label) {
  if (label < -1 || (label >= 0 && (uint32_t)label >= SL_CLASSES_MAX))
    return sl_err_set(
        &w->err, SL_EINVAL,
        "%s: sample %" PRIu64 ": label %" PRId32 " (-1, or 0..%u)", w->path,
        sl_fwriter_count(w->fw), label, SL_CLASSES_MAX - 1);
  return SL_OK;
}

/* What every add checks first: the writer takes samples, the label fits. */
static sl_status begin_add(sl_writer *w, int32_t label) {
  sl_status st = usable(w);
  return st == SL_OK ? check_label(w, label) : st;
}

/* Adds one checked sample and counts its class. */
static sl_status add(sl_writer *w, const void *payload, size_t len,
                     const sl_sample_info *m, const float *targets,
                     const char *name, const sl_box *boxes, uint32_t nboxes) {
  sl_status st = sl_fwriter_add_annotated(w->fw, payload, len, m, name, targets,
                                          boxes, nboxes, &w->err);
  if (st != SL_OK)
    return st;
  w->count++;
  if (m->label >= 0 && (uint32_t)m->label >= w->nclasses)
    w->nclasses = (uint32_t)m->label + 1;
  /* The fwriter checked the labels (0..SL_CLASSES_MAX - 1). */
  for (uint32_t k = 0; k < nboxes; k++)
    if ((uint32_t)boxes[k].label >= w->nclasses)
      w->nclasses = (uint32_t)boxes[k].label + 1;
  return SL_OK;
}

static int codec_of(const uint8_t *b, size_t len) {
  static const uint8_t png[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  if (len >= 3 && b[0] == 0xFF && b[1] == 0xD8 && b[2] == 0xFF)
    return SL_IMAGE_JPEG;
  if (len >= 8 && memcmp(b, png, 8) == 0)
    return SL_IMAGE_PNG;
  if (len >= 4 && memcmp(b, SL_LEVELS_MAGIC, 4) == 0)
    return SL_IMAGE_JPEG_LEVELS;
  return 0;
}

sl_status sl_writer_add_encoded(sl_writer *w, const void *bytes, size_t len,
                                int32_t label, const float *targets,
                                const char *name) {
  return sl_writer_add_annotated(w, bytes, len, label, targets, name, NULL, 0);
}

sl_status sl_writer_add_annotated(sl_writer *w, const void *bytes, size_t len,
                                  int32_t label, const float *targets,
                                  const char *name, const sl_box *boxes,
                                  uint32_t nboxes) {
  sl_status st = begin_add(w, label);
  if (st != SL_OK)
    return st;
  uint64_t i = sl_fwriter_count(w->fw);
  if (!bytes)
    return sl_err_set(&w->err, SL_EINVAL, "%s: sample %" PRIu64 ": NULL bytes",
                      w->path, i);
  const uint8_t *b = bytes;
  int codec = codec_of(b, len);
  if (!codec)
    return sl_err_set(&w->err, SL_EDECODE,
                      "%s: sample %" PRIu64 "%s%s%s: neither a JPEG nor a PNG",
                      w->path, i, name ? " (" : "", name ? name : "",
                      name ? ")" : "");
  if (codec == SL_IMAGE_JPEG_LEVELS && !w->levels)
    return sl_err_set(&w->err, SL_EINVAL,
                      "%s: sample %" PRIu64 "%s%s%s: a level record, but the "
                      "writer has no levels option",
                      w->path, i, name ? " (" : "", name ? name : "",
                      name ? ")" : "");
  sl_encoded in = {b, len, codec, 0, 0, 0};
  sl_image_info info;
  st = sl_decoder_probe(w->probe, &in, &info, &w->err);
  uint8_t *rewritten = NULL;
  size_t rlen = 0;
  if (st == SL_OK && codec == SL_IMAGE_JPEG && w->levels && !w->keep_jpeg) {
    if (!w->tc && sl_transcoder_create(&w->tc) != SL_OK)
      st = sl_err_set(&w->err, SL_ENOMEM, "no memory for a JPEG rewriter");
    else
      st = sl_transcode_levels(w->tc, b, len, w->levels, w->level_quality,
                               &rewritten, &rlen, &w->err);
    if (st == SL_OK)
      codec = codec_of(rewritten, rlen);
  } else if (st == SL_OK && codec == SL_IMAGE_JPEG && !w->keep_jpeg &&
             !sl_jpeg_in_restart_layout(b, len)) {
    if (!w->tc && sl_transcoder_create(&w->tc) != SL_OK)
      st = sl_err_set(&w->err, SL_ENOMEM, "no memory for a JPEG rewriter");
    else
      st = sl_transcode_jpeg(w->tc, b, len, &rewritten, &rlen, &w->err);
  }
  if (st != SL_OK)
    return sl_err_prefix(&w->err, "%s: sample %" PRIu64 "%s%s%s: ", w->path, i,
                         name ? " (" : "", name ? name : "", name ? ")" : "");
  sl_sample_info m;
  memset(&m, 0, sizeof m);
  m.label = label;
  m.codec = (uint8_t)codec;
  m.width = (uint16_t)info.width;
  m.height = (uint16_t)info.height;
  m.channels = info.color == SL_COLOR_GRAY ? 1 : 3;
  st = rewritten ? add(w, rewritten, rlen, &m, targets, name, boxes, nboxes)
                 : add(w, bytes, len, &m, targets, name, boxes, nboxes);
  free(rewritten);
  return st;
}

sl_status sl_writer_add_pixels(sl_writer *w, const void *pixels, uint32_t width,
                               uint32_t height, uint32_t channels,
                               int32_t label, const float *targets,
                               const char *name) {
  sl_status st = begin_add(w, label);
  if (st != SL_OK)
    return st;
  if (!pixels || width == 0 || height == 0 || width > UINT16_MAX ||
      height > UINT16_MAX || (channels != 1 && channels != 3))
    return sl_err_set(&w->err, SL_EINVAL,
                      "%s: sample %" PRIu64 ": %ux%ux%u pixels at %p (sides "
                      "1..65535, 1 or 3 channels)",
                      w->path, sl_fwriter_count(w->fw), width, height, channels,
                      pixels);
  sl_sample_info m;
  memset(&m, 0, sizeof m);
  m.label = label;
  m.codec = SL_IMAGE_RAW;
  m.width = (uint16_t)width;
  m.height = (uint16_t)height;
  m.channels = (uint8_t)channels;
  return add(w, pixels, (size_t)width * height * channels, &m, targets, name,
             NULL, 0);
}

sl_status sl_writer_set_class_name(sl_writer *w, uint32_t label,
                                   const char *name) {
  sl_status st = usable(w);
  if (st != SL_OK)
    return st;
  if (label >= SL_CLASSES_MAX || !name || !name[0] ||
      strlen(name) > SL_CLASS_NAME_MAX || strpbrk(name, "\r\n"))
    return sl_err_set(&w->err, SL_EINVAL,
                      "%s: class %u: name '%.40s' (1..%d bytes, no line "
                      "break; labels below %u)",
                      w->path, label, name ? name : "(null)", SL_CLASS_NAME_MAX,
                      SL_CLASSES_MAX);
  if (label >= w->names_cap) {
    uint32_t cap = w->names_cap ? w->names_cap : 16;
    while (cap <= label)
      cap *= 2;
    char **n = realloc(w->class_names, cap * sizeof *n);
    if (!n)
      return sl_err_set(&w->err, SL_ENOMEM, "%s: no memory for %u classes",
                        w->path, cap);
    memset(n + w->names_cap, 0, (cap - w->names_cap) * sizeof *n);
    w->class_names = n;
    w->names_cap = cap;
  }
  char *copy = strdup(name);
  if (!copy)
    return sl_err_set(&w->err, SL_ENOMEM, "%s: no memory", w->path);
  free(w->class_names[label]);
  w->class_names[label] = copy;
  if (label >= w->nclasses)
    w->nclasses = label + 1;
  return SL_OK;
}

sl_status sl_writer_commit(sl_writer *w) {
  sl_status st = usable(w);
  if (st != SL_OK)
    return st;
  /* Unnamed classes are called by their number; the numbers share one
   * block of 12 bytes each. */
  uint32_t k = w->nclasses;
  const char **names = calloc(k ? k : 1, sizeof *names);
  char *numbers = calloc(k ? k : 1, 12);
  if (!names || !numbers) {
    free(names);
    free(numbers);
    return sl_err_set(&w->err, SL_ENOMEM, "%s: no memory for %u class names",
                      w->path, k);
  }
  for (uint32_t c = 0; c < k; c++) {
    if (c < w->names_cap && w->class_names[c]) {
      names[c] = w->class_names[c];
    } else {
      snprintf(numbers + 12 * (size_t)c, 12, "%u", c);
      names[c] = numbers + 12 * (size_t)c;
    }
  }
  st = sl_fwriter_commit(w->fw, k, names, w->settings, w->replace, &w->err);
  w->fw = NULL; /* commit frees it in every case */
  w->ended =
      st == SL_OK ? "is committed" : "failed to commit (nothing was written)";
  free(names);
  free(numbers);
  return st;
}
