/* The public dataset API (sluice.h, "Datasets"): a formats/ source opened
 * read-only, its samples' bytes by pread and their pixels through the
 * codecs/ decoder the loader's workers run. sl_dataset_open, which reads
 * the dataset.* keys of a config, lives above, in loader/dataset_config.c:
 * only the loader reads the config.
 *
 * A failed open still hands out a handle (holding only the message), so a
 * caller never needs a shared place such as the config to learn why; the
 * latest message of an open dataset sits under a mutex because any number
 * of threads may call it at once. */
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codecs/codec.h"
#include "dataset/dataset_open.h"
#include "formats/core/levels.h"
#include "formats/core/source.h"
#include "sluice.h"

/* Pixels a decode may hold: the largest image the index can describe. */
#define DECODE_MAX_PIXELS (65535ull * 65535ull)

struct sl_dataset {
  sl_source *src; /* NULL in a handle that only reports a failed open */
  char *path;
  char open_msg[SL_ERRMSG_MAX]; /* why the open failed; set once */
  pthread_mutex_t mu;           /* guards err */
  sl_err err;
};

static sl_dataset *handle_new(void) {
  sl_dataset *ds = calloc(1, sizeof *ds);
  if (ds && pthread_mutex_init(&ds->mu, NULL) != 0) {
    free(ds);
    ds = NULL;
  }
  return ds;
}

/* Records a failure from a call that may run beside others. */
static sl_status fail(const sl_dataset *cds, const sl_err *e) {
  sl_dataset *ds = (sl_dataset *)(uintptr_t)cds; /* only mu and err change */
  pthread_mutex_lock(&ds->mu);
  ds->err = *e;
  pthread_mutex_unlock(&ds->mu);
  return e->code;
}

static sl_status failf(const sl_dataset *ds, sl_status code, const char *fmt,
                       ...) SL_PRINTF(3, 4);
static sl_status failf(const sl_dataset *ds, sl_status code, const char *fmt,
                       ...) {
  sl_err e;
  e.code = code;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(e.msg, sizeof e.msg, fmt, ap);
  va_end(ap);
  return fail(ds, &e);
}

static sl_status not_open(const sl_dataset *ds) {
  if (!ds)
    return SL_EINVAL;
  return failf(ds, SL_ESTATE, "the dataset did not open: %s", ds->open_msg);
}

static sl_status open_path(sl_dataset **out, const char *path,
                           const sl_source_opts *so, sl_dataset_bad_fn on_bad,
                           void *user) {
  if (!out)
    return SL_EINVAL;
  sl_dataset *ds = *out = handle_new();
  if (!ds)
    return SL_ENOMEM;
  sl_err err = {0};
  sl_status st;
  if (!path || !path[0])
    st = sl_err_set(&err, SL_ECONFIG,
                    "dataset.path is not set (a Dataset is one dataset: for "
                    "dataset.mix, open each of its paths)");
  else if (!(ds->path = strdup(path)))
    st = sl_err_set(&err, SL_ENOMEM, "%s: no memory", path);
  else if (on_bad)
    st = sl_source_open_verify_opts(&ds->src, path, so, SL_SOURCE_PREAD, on_bad,
                                    user, &err);
  else
    st = sl_source_open_opts(&ds->src, path, so, SL_SOURCE_PREAD, &err);
  if (st != SL_OK) {
    ds->err = err;
    snprintf(ds->open_msg, sizeof ds->open_msg, "%s", err.msg);
  }
  return st;
}

sl_status sl_dataset_open_opts(sl_dataset **out, const char *path,
                               const sl_source_opts *so) {
  return open_path(out, path, so, NULL, NULL);
}

sl_status sl_dataset_open_file(sl_dataset **out, const char *path) {
  if (!path) {
    if (out)
      *out = NULL;
    return SL_EINVAL;
  }
  return open_path(out, path, NULL, NULL, NULL);
}

sl_status sl_dataset_open_verify(sl_dataset **out, const char *path,
                                 sl_dataset_bad_fn on_bad, void *user) {
  if (!on_bad) {
    if (out)
      *out = NULL;
    return SL_EINVAL;
  }
  return open_path(out, path, NULL, on_bad, user);
}

void sl_dataset_close(sl_dataset *ds) {
  if (!ds)
    return;
  sl_source_close(ds->src);
  pthread_mutex_destroy(&ds->mu);
  free(ds->path);
  free(ds);
}

const char *sl_dataset_errmsg(const sl_dataset *ds) {
  return ds ? ds->err.msg : "no dataset handle (out of memory, or NULL)";
}

size_t sl_dataset_errmsg_copy(const sl_dataset *ds, char *buf, size_t cap) {
  if (!ds)
    return (size_t)snprintf(buf, cap, "%s", sl_dataset_errmsg(NULL));
  sl_dataset *m = (sl_dataset *)(uintptr_t)ds;
  pthread_mutex_lock(&m->mu);
  size_t n = (size_t)snprintf(buf, cap, "%s", ds->err.msg);
  pthread_mutex_unlock(&m->mu);
  return n;
}

uint64_t sl_dataset_count(const sl_dataset *ds) {
  return ds && ds->src ? sl_source_count(ds->src) : 0;
}

uint32_t sl_dataset_class_count(const sl_dataset *ds) {
  return ds && ds->src ? sl_source_class_count(ds->src) : 0;
}

const char *sl_dataset_class_name(const sl_dataset *ds, uint32_t label) {
  return ds && ds->src ? sl_source_class_name(ds->src, label) : NULL;
}

uint32_t sl_dataset_target_width(const sl_dataset *ds) {
  return ds && ds->src ? sl_source_target_width(ds->src) : 0;
}

const char *sl_dataset_format(const sl_dataset *ds) {
  return ds && ds->src ? sl_source_format_name(ds->src) : "";
}

const char *sl_dataset_entries(const sl_dataset *ds) {
  return ds && ds->src ? sl_source_entries_name(ds->src) : "";
}

const char *sl_dataset_layout_name(const sl_dataset *ds) {
  return sl_dataset_entries(ds);
}

uint64_t sl_dataset_skipped_entries(const sl_dataset *ds) {
  return ds && ds->src ? sl_source_skipped(ds->src) : 0;
}

const char *sl_dataset_sample_order(const sl_dataset *ds) {
  return ds && ds->src ? sl_source_key_order(ds->src) : "";
}

uint64_t sl_dataset_annotated_count(const sl_dataset *ds) {
  return ds && ds->src ? sl_source_annotated(ds->src) : 0;
}

uint32_t sl_dataset_layout_version(const sl_dataset *ds) {
  return ds && ds->src ? sl_source_layout_version(ds->src) : 0;
}

uint64_t sl_dataset_file_size(const sl_dataset *ds) {
  return ds && ds->src ? sl_source_bytes(ds->src) : 0;
}

uint64_t sl_dataset_file_count(const sl_dataset *ds) {
  return ds && ds->src ? sl_source_file_count(ds->src) : 0;
}

const char *sl_dataset_description(const sl_dataset *ds) {
  return ds && ds->src ? sl_source_description(ds->src) : "";
}

uint32_t sl_dataset_levels(const sl_dataset *ds, uint64_t *images,
                           uint64_t *bytes) {
  if (!ds || !ds->src)
    return 0;
  uint64_t im[SL_LEVELS_MAX], by[SL_LEVELS_MAX];
  uint32_t n = sl_source_levels(ds->src, im, by);
  for (uint32_t k = 0; k < n; k++) {
    if (images)
      images[k] = im[k];
    if (bytes)
      bytes[k] = by[k];
  }
  return n;
}

const char *sl_dataset_writer_settings(const sl_dataset *ds) {
  return ds && ds->src ? sl_source_writer_settings(ds->src) : "";
}

uint64_t sl_dataset_max_stored_bytes(const sl_dataset *ds) {
  return ds && ds->src ? sl_source_max_length(ds->src) : 0;
}

static sl_status check_index(const sl_dataset *ds, uint64_t i) {
  if (!ds || !ds->src)
    return not_open(ds);
  uint64_t n = sl_source_count(ds->src);
  if (i >= n)
    return failf(ds, SL_EINVAL,
                 "%s: sample %" PRIu64 " out of range (%" PRIu64 " samples)",
                 ds->path, i, n);
  return SL_OK;
}

sl_status sl_dataset_cache_info(const sl_dataset *ds, sl_cache_info *out) {
  if (!ds || !ds->src)
    return not_open(ds);
  if (!out)
    return failf(ds, SL_EINVAL, "sl_dataset_cache_info: NULL out");
  memset(out, 0, sizeof *out);
  sl_cache *c = sl_source_cache(ds->src);
  if (!c)
    return failf(ds, SL_EUNSUPPORTED, "%s: local files, read without a cache",
                 ds->path);
  sl_err e = {0};
  if (sl_cache_usage(c, &out->bytes, &out->objects, &e) != SL_OK)
    return failf(ds, e.code, "%s", e.msg);
  out->dir = sl_cache_dir(c);
  out->bound = sl_cache_bound(c);
  out->files = sl_source_file_count(ds->src);
  const char *url;
  uint64_t size;
  uint32_t crc;
  for (uint64_t k = 0; k < out->files; k++)
    if (sl_source_remote_file(ds->src, k, &url, &size, &crc) &&
        sl_cache_has(c, url, size, crc))
      out->cached_files++;
  return SL_OK;
}

sl_status sl_dataset_info(const sl_dataset *ds, uint64_t i,
                          sl_sample_meta *out) {
  sl_status st = check_index(ds, i);
  if (st != SL_OK)
    return st;
  if (!out)
    return failf(ds, SL_EINVAL, "sl_dataset_info: NULL out");
  const sl_sample_info *e = sl_source_info(ds->src, i);
  memset(out, 0, sizeof *out);
  out->label = e->label;
  out->codec = (sl_image_codec)e->codec;
  out->width = e->width;
  out->height = e->height;
  out->channels = e->channels;
  out->target_width = sl_source_target_width(ds->src);
  out->targets = e->codec ? sl_source_targets(ds->src, i) : NULL;
  /* Filtered HDF5 chunks: sl_dataset_read gives the raw pixels; a
   * multi-part RecordIO record, the image joined. */
  out->stored_bytes = sl_source_input_bytes(ds->src, i);
  out->name_bytes = e->name_len;
  sl_source_boxes(ds->src, i, &out->box_count);
  return SL_OK;
}

sl_status sl_dataset_boxes(const sl_dataset *ds, uint64_t i,
                           const sl_box **boxes, uint32_t *n) {
  sl_status st = check_index(ds, i);
  if (st != SL_OK)
    return st;
  if (!boxes || !n)
    return failf(ds, SL_EINVAL, "sl_dataset_boxes: NULL boxes or n");
  *boxes = sl_source_boxes(ds->src, i, n);
  return SL_OK;
}

uint32_t sl_dataset_max_boxes(const sl_dataset *ds) {
  return ds && ds->src ? sl_source_max_boxes(ds->src) : 0;
}

uint64_t sl_dataset_box_total(const sl_dataset *ds) {
  return ds && ds->src ? sl_source_box_total(ds->src) : 0;
}

sl_status sl_dataset_name(sl_dataset *ds, uint64_t i, char *buf, size_t cap) {
  sl_status st = check_index(ds, i);
  if (st != SL_OK)
    return st;
  const sl_sample_info *e = sl_source_info(ds->src, i);
  if (!buf || cap < (size_t)e->name_len + 1)
    return failf(ds, SL_ETOOBIG,
                 "%s: sample %" PRIu64 ": its name needs %u bytes, the buffer "
                 "holds %zu",
                 ds->path, i, e->name_len + 1u, buf ? cap : 0);
  sl_err err;
  st = sl_source_name(ds->src, i, buf, cap, &err);
  return st == SL_OK ? SL_OK : fail(ds, &err);
}

/* HDF5 arrays of filtered chunks: sample i's raw pixels, its chunk read
 * and its filters undone; RecordIO: a multi-part record's image, its parts
 * joined (memory: the stored bytes and the scratch, freed here). */
static sl_status read_unfiltered(sl_dataset *ds, uint64_t i,
                                 const sl_sample_info *e, void *buf, size_t cap,
                                 size_t *len) {
  size_t raw = (size_t)sl_source_input_bytes(ds->src, i);
  *len = raw;
  if (!buf || cap < raw)
    return failf(ds, SL_ETOOBIG,
                 "%s: sample %" PRIu64 ": %zu bytes of pixels, the buffer "
                 "holds %zu",
                 ds->path, i, raw, buf ? cap : 0);
  uint64_t sc = sl_source_unfilter_bytes(ds->src), unf = 0;
  uint8_t *chunk = malloc(e->length ? e->length : 1), *scratch = malloc(sc);
  if (!chunk || !scratch) {
    free(chunk);
    free(scratch);
    return failf(ds, SL_ENOMEM,
                 "%s: sample %" PRIu64 ": no memory for its %" PRIu32
                 "-byte chunk and %" PRIu64 " bytes of scratch",
                 ds->path, i, e->length, sc);
  }
  sl_err err;
  const uint8_t *data, *out;
  size_t n, on;
  sl_status st = sl_source_read(ds->src, i, chunk, e->length, &data, &n, &err);
  if (st == SL_OK)
    st =
        sl_source_unfilter(ds->src, i, data, n, scratch, &out, &on, &unf, &err);
  if (st == SL_OK)
    memcpy(buf, out, on);
  free(chunk);
  free(scratch);
  return st == SL_OK ? SL_OK : fail(ds, &err);
}

/* Sample i's stored bytes into buf (cap bytes): *len is set in every case
 * but a range or damage error. */
static sl_status read_into(sl_dataset *ds, uint64_t i, void *buf, size_t cap,
                           size_t *len) {
  sl_status st = check_index(ds, i);
  if (st != SL_OK)
    return st;
  const sl_sample_info *e = sl_source_info(ds->src, i);
  sl_err err;
  if (e->codec == 0) { /* damaged: the source's read says so */
    const uint8_t *d;
    size_t n;
    (void)sl_source_read(ds->src, i, NULL, 0, &d, &n, &err);
    return fail(ds, &err);
  }
  if (sl_source_unfilter_bytes(ds->src) > 0)
    return read_unfiltered(ds, i, e, buf, cap, len);
  *len = e->length;
  if (!buf || cap < e->length)
    return failf(ds, SL_ETOOBIG,
                 "%s: sample %" PRIu64 ": %" PRIu32
                 " stored bytes, the buffer holds %zu",
                 ds->path, i, e->length, buf ? cap : 0);
  const uint8_t *data;
  size_t n;
  st = sl_source_read(ds->src, i, buf, cap, &data, &n, &err);
  return st == SL_OK ? SL_OK : fail(ds, &err);
}

sl_status sl_dataset_read(sl_dataset *ds, uint64_t i, void *buf, size_t cap,
                          size_t *len) {
  if (!len)
    return ds ? failf(ds, SL_EINVAL, "sl_dataset_read: NULL len") : SL_EINVAL;
  return read_into(ds, i, buf, cap, len);
}

/* The decoder's RGBX or gray rows into tight HWC rows of ch bytes. */
static void copy_rows(const sl_decoded *d, int ch, uint8_t *dst) {
  for (int y = 0; y < d->h; y++) {
    const uint8_t *s = d->pixels + (size_t)y * d->stride;
    uint8_t *o = dst + (size_t)y * (size_t)d->w * (size_t)ch;
    if (ch == 1) {
      memcpy(o, s, (size_t)d->w);
      continue;
    }
    for (int x = 0; x < d->w; x++, s += 4, o += 3) {
      o[0] = s[0];
      o[1] = s[1];
      o[2] = s[2];
    }
  }
}

sl_status sl_dataset_decode(sl_dataset *ds, uint64_t i, void *buf, size_t cap,
                            size_t *len) {
  sl_status st = check_index(ds, i);
  if (st != SL_OK)
    return st;
  if (!len)
    return failf(ds, SL_EINVAL, "sl_dataset_decode: NULL len");
  const sl_sample_info *e = sl_source_info(ds->src, i);
  size_t need = (size_t)e->width * e->height * e->channels;
  if (e->codec != 0) {
    *len = need;
    if (!buf || cap < need)
      return failf(ds, SL_ETOOBIG,
                   "%s: sample %" PRIu64 ": %ux%ux%u pixels need %zu bytes, "
                   "the buffer holds %zu",
                   ds->path, i, e->width, e->height, e->channels, need,
                   buf ? cap : 0);
  }
  size_t stored;
  /* Filtered HDF5 chunks read as the sample's raw pixels (need bytes). */
  size_t bcap = e->length > need ? e->length : need;
  uint8_t *bytes = malloc(bcap ? bcap : 1);
  if (!bytes)
    return failf(ds, SL_ENOMEM,
                 "%s: sample %" PRIu64 ": no memory for %zu bytes", ds->path, i,
                 bcap);
  st = read_into(ds, i, bytes, bcap, &stored);
  if (st != SL_OK) { /* read_into recorded the message */
    free(bytes);
    return st;
  }
  sl_decoder *dec = NULL;
  sl_err err = {0};
  sl_encoded in = {bytes, stored, e->codec, e->height, e->width, e->channels};
  sl_image_info ii;
  /* The header first, with a decoder of tiny caps: the full-size one is
   * sized by the index, which a damaged file could make absurd. */
  st = sl_decoder_create(&dec, DECODE_MAX_PIXELS, 16, 16, &err);
  if (st == SL_OK)
    st = sl_decoder_probe(dec, &in, &ii, &err);
  if (st == SL_OK && (ii.width != e->width || ii.height != e->height))
    st = sl_err_set(&err, SL_EDECODE,
                    "the image is %dx%d but the index says %ux%u", ii.width,
                    ii.height, e->width, e->height);
  if (st == SL_OK) {
    sl_decoder_destroy(dec);
    dec = NULL;
    st = sl_decoder_create(&dec, DECODE_MAX_PIXELS, e->width, e->height, &err);
  }
  sl_decode_req q = {
      0, 0, e->width, e->height, 8, 0, 0, e->channels == 1 ? 1 : 4, 0};
  sl_decoded d;
  if (st == SL_OK)
    st = sl_decoder_decode(dec, &in, &q, &d, &err);
  if (st == SL_OK)
    copy_rows(&d, e->channels, buf);
  /* A level record: every smaller level is decoded too (after level 0's
   * pixels are out), so that what this passes the loader can read. */
  sl_levels lv;
  if (st == SL_OK && e->codec == SL_IMAGE_JPEG_LEVELS &&
      (st = sl_decoder_levels(&in, &lv, &err)) == SL_OK)
    for (int k = 1; st == SL_OK && k < lv.n; k++) {
      sl_encoded jp;
      sl_image_info li;
      st = sl_decoder_level(dec, &in, k, &jp, &li, &err);
      sl_decode_req lq = {0, 0, li.width, li.height, 8, 0, 0, 4, 0};
      sl_decoded ld;
      if (st == SL_OK)
        st = sl_decoder_decode(dec, &jp, &lq, &ld, &err);
    }
  if (st != SL_OK) {
    sl_err_prefix(&err, "%s: sample %" PRIu64 ": ", ds->path, i);
    fail(ds, &err);
  }
  sl_decoder_destroy(dec);
  free(bytes);
  return st;
}
