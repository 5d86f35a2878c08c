/* Indexing LMDB files that sluice did not write: Caffe Datums (and the SSD
 * fork's AnnotatedDatums), values that are image files (LSUN, BasicSR and
 * home-made sets), and records of (image bytes, label) pickled as
 * folder2lmdb.py does (formats/lmdb/pickle_value.c) or in msgpack as tensorpack
 * does (formats/lmdb/msgpack_value.c).
 *
 * One pass of the read-only cursor over the whole tree, in key order; a
 * `__keys__` list, when there is one, then gives the index order
 * (source_key_order.c). Each value's bytes are read from our own map of the
 * file at the offset liblmdb's address gives (source_lmdb.c): a Datum is parsed
 * there (formats/lmdb/datum.c; a pickle or msgpack record likewise) and the
 * index entry points at its data field (the image bytes),
 * so reads after open fetch the image file or raw planes and nothing else.
 * An image file's size comes from its header (formats/core/image_sniff.c).
 * Damage is an SL_EFORMAT naming the key, or in verify mode a bad sample.
 * Entries that are not samples (`__keys__`, `__len__`, `num-samples`,
 * `*.meta`) are skipped and counted. A printable key is the sample's name,
 * read from its leaf page on demand (8 bytes a sample of offsets). */
#include "formats/core/source_impl.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/safe_text.h"
#include "formats/core/image_sniff.h"
#include "formats/core/layout.h"
#include "formats/lmdb/datum.h"
#include "formats/lmdb/msgpack_value.h"
#include "formats/lmdb/pickle_value.h"
#include "formats/lmdb/value_sniff.h"

/* One line of dataset.label_file. */
typedef struct label_line {
  const char *key; /* into the file's text */
  size_t klen;
  int32_t label;
  uint32_t line;
  float *targets; /* K floats, into one array */
} label_line;

typedef struct label_table {
  char *text;
  size_t text_len;
  label_line *lines;
  size_t n;
  uint32_t width; /* K: floats per line */
  float *floats;
} label_table;

typedef struct fwalk {
  sl_source *src;
  const uint8_t *base;
  uint64_t entries;
  label_table lt;
  bool k_known; /* target_width fixed by the first sample */
  char where[160];
} fwalk;

static sl_status load_labels(sl_source *src, label_table *lt, sl_err *err);
static bool not_a_sample(const MDB_val *k);
static bool key_is(const MDB_val *k, const char *s);
static void name_key(sl_source *src, uint64_t i, const uint8_t *base,
                     const MDB_val *k);
static void free_labels(label_table *lt);
static sl_status take_value(fwalk *w, const MDB_val *k, uint64_t off,
                            size_t size, sl_err *err);

sl_status sl_source_index_foreign(sl_source *src, MDB_cursor *cur,
                                  const uint8_t *base, uint64_t entries,
                                  sl_err *err) {
  fwalk w = {0};
  w.src = src;
  w.base = base;
  w.entries = entries;
  sl_status st = load_labels(src, &w.lt, err);
  if (st == SL_OK)
    st = sl_source_alloc_index(src, entries, err);
  if (st == SL_OK && !(src->name_off = calloc(entries ? entries : 1, 8)))
    st = sl_err_set(err, SL_ENOMEM, "%s: no memory for %" PRIu64 " names",
                    src->path, entries);
  /* Each sample's key, for a __keys__ list (source_key_order.c). */
  uint64_t *key_off = NULL;
  uint16_t *key_len = NULL;
  if (st == SL_OK && (!(key_off = malloc((entries ? entries : 1) * 8)) ||
                      !(key_len = malloc((entries ? entries : 1) * 2))))
    st = sl_err_set(err, SL_ENOMEM, "%s: no memory for %" PRIu64 " keys",
                    src->path, entries);
  bool keys_in_file = true; /* every key lies in the map */
  uint64_t list_off = 0;
  size_t list_len = 0; /* 0: no __keys__ entry */
  uint64_t n = src->count;
  src->count = 0; /* samples taken so far */
  MDB_val k, v;
  int rc = MDB_NOTFOUND;
  if (st == SL_OK)
    for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0 && st == SL_OK;
         rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
      const uint8_t *d = v.mv_data;
      if (d < base || (uint64_t)(d - base) > src->file_size ||
          v.mv_size > src->file_size - (uint64_t)(d - base) ||
          src->count >= n) {
        st = sl_err_set(err, SL_EFORMAT,
                        "%s: LMDB entry %" PRIu64 " lies outside the file",
                        src->path, src->count + src->skipped);
        break;
      }
      if (key_is(&k, "__keys__")) {
        list_off = (uint64_t)(d - base);
        list_len = v.mv_size;
      }
      uint64_t before = src->count;
      st = take_value(&w, &k, (uint64_t)(d - base), v.mv_size, err);
      if (st == SL_OK && src->count > before) {
        const uint8_t *kp = k.mv_data;
        if (kp < base || (uint64_t)(kp - base) > src->file_size ||
            k.mv_size > src->file_size - (uint64_t)(kp - base) ||
            k.mv_size > UINT16_MAX)
          keys_in_file = false;
        else {
          key_off[before] = (uint64_t)(kp - base);
          key_len[before] = (uint16_t)k.mv_size;
        }
        name_key(src, before, base, &k);
      }
    }
  if (st == SL_OK && rc != MDB_NOTFOUND)
    st = sl_err_set(err, SL_EFORMAT, "%s: LMDB walk: %s", src->path,
                    mdb_strerror(rc));
  if (st == SL_OK && src->count == 0)
    st = sl_err_set(err, SL_EFORMAT,
                    "%s: no samples among its %" PRIu64 " LMDB entries "
                    "(%" PRIu64 " skipped as not samples)",
                    src->path, entries, src->skipped);
  if (st == SL_OK && src->entries == SL_ENTRIES_AUTO)
    src->entries =
        SL_ENTRIES_IMAGES; /* unreachable: the first sample decides */
  if (st == SL_OK && list_len > 0 && keys_in_file)
    st = sl_source_follow_key_list(src, base, key_off, key_len, list_off,
                                   list_len, err);
  else if (st == SL_OK)
    snprintf(src->key_order, sizeof src->key_order, "%s",
             list_len ? "in LMDB key order (a key lies outside the file's "
                        "map: its __keys__ list is not followed)"
                      : "in LMDB key order");
  free(key_off);
  free(key_len);
  free_labels(&w.lt);
  return st;
}

/* ---- keys ---------------------------------------------------------------- */

/* The key for messages: as text when printable, else in hex. */
static void key_text(const MDB_val *k, char *buf, size_t cap) {
  const uint8_t *p = k->mv_data;
  size_t n = k->mv_size, show = n > 64 ? 64 : n;
  bool text = n > 0;
  text = text && sl_text_printable(p, show);
  size_t o = 0;
  if (text) {
    o = (size_t)snprintf(buf, cap, "key '%.*s'", (int)show, (const char *)p);
  } else {
    o = (size_t)snprintf(buf, cap, "key 0x");
    for (size_t i = 0; i < show && o + 3 < cap; i++)
      o += (size_t)snprintf(buf + o, cap - o, "%02x", p[i]);
  }
  if (show < n && o < cap)
    snprintf(buf + o, cap - o, "... (%zu bytes)", n);
}

static bool key_is(const MDB_val *k, const char *s) {
  size_t n = strlen(s);
  return k->mv_size == n && memcmp(k->mv_data, s, n) == 0;
}

/* Entries folder2lmdb-like writers add beside the samples. */
static bool not_a_sample(const MDB_val *k) {
  return key_is(k, "__keys__") || key_is(k, "__len__") ||
         key_is(k, "num-samples") ||
         (k->mv_size >= 5 &&
          memcmp((const char *)k->mv_data + k->mv_size - 5, ".meta", 5) == 0);
}

/* A sample's key is its name (sl_source_name reads it from the leaf page
 * in the file) when it is printable text inside the file; else it has
 * none. A damaged (zeroed) entry keeps none. */
static void name_key(sl_source *src, uint64_t i, const uint8_t *base,
                     const MDB_val *k) {
  const uint8_t *p = k->mv_data;
  sl_sample_info *e = &src->index[i];
  if (e->codec == 0 || p < base || (uint64_t)(p - base) > src->file_size ||
      k->mv_size > src->file_size - (uint64_t)(p - base) || k->mv_size == 0 ||
      k->mv_size > SL_NAME_MAX)
    return;
  if (!sl_text_printable(p, k->mv_size))
    return;
  src->name_off[i] = (uint64_t)(p - base);
  e->name_len = (uint16_t)k->mv_size;
}

/* ---- one value ----------------------------------------------------------- */

/* A raw Datum's planes: C·H·W bytes, CHW. */
static const char *take_raw(const sl_datum *d, sl_channel_order order,
                            uint64_t off, sl_sample_info *e, char *why,
                            size_t cap) {
  if (!d->has_channels || !d->has_height || !d->has_width || d->channels <= 0 ||
      d->height <= 0 || d->width <= 0 || d->height > UINT16_MAX ||
      d->width > UINT16_MAX) {
    snprintf(why, cap,
             "raw Datum with channels %" PRId64 ", height %" PRId64
             ", width %" PRId64 " (each must be set, > 0, sides <= 65535)",
             d->channels, d->height, d->width);
    return why;
  }
  if (d->channels != 1 && d->channels != 3) {
    snprintf(why, cap, "raw Datum of %" PRId64 " channels (1 or 3 read)",
             d->channels);
    return why;
  }
  uint64_t need =
      (uint64_t)d->channels * (uint64_t)d->height * (uint64_t)d->width;
  if (!d->has_data || d->data_len != need) {
    snprintf(why, cap,
             "raw Datum holds %zu data bytes, channels x height x width = "
             "%" PRId64 "x%" PRId64 "x%" PRId64 " = %" PRIu64,
             d->has_data ? d->data_len : 0, d->channels, d->height, d->width,
             need);
    return why;
  }
  e->offset = off + d->data_off;
  e->length = (uint32_t)need;
  e->height = (uint16_t)d->height;
  e->width = (uint16_t)d->width;
  e->channels = (uint8_t)d->channels;
  e->codec = d->channels == 3 && order != SL_CHANNELS_RGB ? SL_IMAGE_RAW_CHW_BGR
                                                          : SL_IMAGE_RAW_CHW;
  return NULL;
}

/* A pickled or msgpack (image bytes, label) record: the entry points at
 * the image bytes inside the value; the label is the stored int, else -1. */
static const char *take_record(sl_entry_kind layout, const uint8_t *p,
                               size_t size, uint64_t off, sl_sample_info *e,
                               char *why, size_t cap) {
  sl_value_record r;
  int rc = layout == SL_ENTRIES_PICKLE
               ? sl_pickle_parse(p, size, &r, why, cap)
               : sl_msgpack_parse(p, size, &r, why, cap);
  if (rc != 0)
    return why;
  if (r.has_label && (r.label < INT32_MIN || r.label > INT32_MAX)) {
    snprintf(why, cap, "label %" PRId64 " outside int32", r.label);
    return why;
  }
  const char *bad = sl_source_take_image(p + r.image_off, r.image_len,
                                         off + r.image_off, e, why, cap);
  e->label = r.has_label ? (int32_t)r.label : -1;
  return bad;
}

/* The layout the first sample's value says: an image file; a pickle of
 * protocol 2 or more (PROTO opcode); a msgpack array (a Datum starts with
 * a field tag, 0x08 or 0x0a, never an array header); else a Datum. */
static sl_entry_kind sniff_layout(const uint8_t *p, size_t size) {
  if (sl_sniff_magic(p, size) != SL_SNIFF_NONE)
    return SL_ENTRIES_IMAGES;
  if (size >= 2 && p[0] == 0x80 && p[1] >= 2 && p[1] <= 5)
    return SL_ENTRIES_PICKLE;
  /* An array header is msgpack even when the value is damaged (its parse
   * then says how): no Caffe writer starts a Datum with field 18. */
  if (size >= 1 &&
      ((p[0] >= 0x90 && p[0] <= 0x9f) || p[0] == 0xdc || p[0] == 0xdd))
    return SL_ENTRIES_MSGPACK;
  return SL_ENTRIES_CAFFE;
}

static const label_line *find_label(const label_table *lt, const MDB_val *k);

/* The first sample fixes K; every other must agree. Allocates targets. */
static const char *set_width(fwalk *w, uint64_t k, char *why, size_t cap) {
  sl_source *src = w->src;
  if (!w->k_known) {
    if (k > SL_TARGETS_MAX) {
      snprintf(why, cap, "%" PRIu64 " targets (at most %u)", k,
               (unsigned)SL_TARGETS_MAX);
      return why;
    }
    w->k_known = true;
    /* Rows are the LMDB's entries: bounded by the bytes holding the
     * targets (the LMDB's float_data; with a label file also its text, 2
     * bytes a float at least), as each row's are in a sound file. */
    uint64_t held = src->file_size + 2 * (uint64_t)w->lt.text_len;
    return sl_source_alloc_targets(src, w->entries, (uint32_t)k, held, why,
                                   cap) != 0
               ? why
               : NULL;
  }
  if (k != src->target_width && k == src->targets_refused) {
    snprintf(why, cap,
             "%" PRIu64 " float targets, not read: the first sample's were "
             "refused",
             k);
    return why;
  }
  if (k != src->target_width) {
    snprintf(why, cap,
             "%" PRIu64 " float targets where the first sample has %" PRIu32
             " (every sample must have the same count)",
             k, src->target_width);
    return why;
  }
  return NULL;
}

static sl_status take_value(fwalk *w, const MDB_val *k, uint64_t off,
                            size_t size, sl_err *err) {
  sl_source *src = w->src;
  if (not_a_sample(k)) {
    src->skipped++;
    return SL_OK;
  }
  const uint8_t *p = src->map + off;
  uint64_t i = src->count++;
  sl_sample_info *e = &src->index[i];
  key_text(k, w->where, sizeof w->where);
  char why[256];
  const char *bad = NULL;
  if (src->entries == SL_ENTRIES_AUTO)
    src->entries = sniff_layout(p, size);
  sl_datum d = {0};
  uint64_t nfloats = 0;
  if (size > UINT32_MAX) {
    snprintf(why, sizeof why, "value of %zu bytes (at most 4 GiB)", size);
    bad = why;
  } else if (src->entries == SL_ENTRIES_IMAGES) {
    bad = sl_source_take_image(p, size, off, e, why, sizeof why);
  } else if (src->entries == SL_ENTRIES_PICKLE ||
             src->entries == SL_ENTRIES_MSGPACK) {
    bad = take_record(src->entries, p, size, off, e, why, sizeof why);
  } else if (sl_datum_parse(p, size, &d, why, sizeof why) != 0) {
    bad = why;
  } else {
    if (d.annotated)
      src->annotated++;
    if (d.encoded && (!d.has_data || d.data_len == 0)) {
      snprintf(why, sizeof why, "encoded Datum without data bytes");
      bad = why;
    } else if (d.encoded) {
      bad = sl_source_take_image(p + d.data_off, d.data_len, off + d.data_off,
                                 e, why, sizeof why);
    } else {
      bad = take_raw(&d, src->order, off, e, why, sizeof why);
    }
    if (!bad && d.has_label && (d.label < INT32_MIN || d.label > INT32_MAX)) {
      snprintf(why, sizeof why, "label %" PRId64 " outside int32", d.label);
      bad = why;
    }
    e->label = (int32_t)d.label; /* Caffe's default: 0 when absent */
    nfloats = d.floats;
  }
  const label_line *ll = NULL;
  if (!bad && w->lt.lines) {
    ll = find_label(&w->lt, k);
    if (ll)
      e->label = ll->label;
    else if (w->lt.width > 0) {
      snprintf(why, sizeof why, "no line in dataset.label_file %s",
               src->label_file);
      bad = why;
    } else if (src->entries == SL_ENTRIES_IMAGES)
      e->label = -1;
    if (!bad && nfloats > 0 && w->lt.width > 0) {
      snprintf(why, sizeof why,
               "targets both in float_data and in dataset.label_file");
      bad = why;
    }
  } else if (!bad && src->entries == SL_ENTRIES_IMAGES) {
    e->label = -1;
  }
  if (!bad)
    bad = set_width(w, nfloats > 0 ? nfloats : w->lt.width, why, sizeof why);
  /* The first value tells a file of another serialisation from one of
   * damaged Datums. */
  char kind[64];
  if (bad && i == 0 && src->entries == SL_ENTRIES_CAFFE && size > 0 &&
      sl_value_sniff(p, size, kind, sizeof kind))
    return sl_err_set(err, SL_EUNSUPPORTED,
                      "%s: sample 0 (%s): the values are %s, not Caffe "
                      "Datums or image files: sluice does not read them; "
                      "write the images with sluice.Writer (Python) or "
                      "`sluice pack` a folder of them",
                      src->path, w->where, kind);
  if (bad) {
    memset(e, 0, sizeof *e);
    return sl_source_bad_entry(src, i, w->where, bad, err);
  }
  float *t = src->targets ? src->targets + i * src->target_width : NULL;
  if (t && nfloats > 0)
    sl_datum_floats(p, size, t, nfloats);
  else if (t && ll)
    memcpy(t, ll->targets, src->target_width * sizeof *t);
  return sl_source_check_entry(src, i, w->where, err);
}

/* ---- dataset.label_file ---------------------------------------------------
 */

static int cmp_key(const char *a, size_t an, const char *b, size_t bn) {
  int c = memcmp(a, b, an < bn ? an : bn);
  return c ? c : (an > bn) - (an < bn);
}

static int cmp_line(const void *a, const void *b) {
  const label_line *x = a, *y = b;
  return cmp_key(x->key, x->klen, y->key, y->klen);
}

static const label_line *find_label(const label_table *lt, const MDB_val *k) {
  size_t lo = 0, hi = lt->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int c = cmp_key(lt->lines[mid].key, lt->lines[mid].klen, k->mv_data,
                    k->mv_size);
    if (c == 0)
      return &lt->lines[mid];
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return NULL;
}

static void free_labels(label_table *lt) {
  free(lt->text);
  free(lt->lines);
  free(lt->floats);
}

/* Splits the next whitespace-separated word of [*p, end). */
static bool word(char **p, char *end, char **w, size_t *n) {
  while (*p < end && (**p == ' ' || **p == '\t' || **p == '\r'))
    (*p)++;
  if (*p >= end)
    return false;
  *w = *p;
  while (*p < end && **p != ' ' && **p != '\t' && **p != '\r')
    (*p)++;
  *n = (size_t)(*p - *w);
  return true;
}

static sl_status load_labels(sl_source *src, label_table *lt, sl_err *err) {
  if (!src->label_file)
    return SL_OK;
  FILE *f = fopen(src->label_file, "rb");
  if (!f)
    return sl_err_errno(err, SL_EIO, errno, "dataset.label_file %s",
                        src->label_file);
  size_t cap = 1 << 16, len = 0;
  char *text = malloc(cap);
  size_t got;
  while (text && (got = fread(text + len, 1, cap - len, f)) > 0) {
    len += got;
    if (len == cap) {
      char *t = cap > SIZE_MAX / 2 ? NULL : realloc(text, cap * 2);
      if (!t) {
        free(text);
        text = NULL;
        break;
      }
      text = t;
      cap *= 2;
    }
  }
  bool ioerr = ferror(f);
  fclose(f);
  if (!text || ioerr) {
    free(text);
    return sl_err_set(err, text ? SL_EIO : SL_ENOMEM,
                      "dataset.label_file %s: %s", src->label_file,
                      text ? "read error" : "no memory");
  }
  lt->text = text;
  lt->text_len = len;
  size_t lines = 0, words = 0;
  for (size_t q = 0; q < len; q++) {
    lines += text[q] == '\n';
    words += text[q] == ' ' || text[q] == '\t' || text[q] == '\r';
  }
  lt->lines = calloc(lines + 1, sizeof *lt->lines);
  lt->floats = calloc(words + 1, sizeof *lt->floats);
  if (!lt->lines || !lt->floats)
    return sl_err_set(err, SL_ENOMEM, "dataset.label_file %s: no memory",
                      src->label_file);
  char *p = text, *end = text + len;
  /* A UTF-8 byte-order mark (Windows editors write one) is not part of the
   * first key. */
  if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
    p += 3;
  size_t nf = 0;
  uint32_t lineno = 0;
  bool first = true;
  while (p < end) {
    char *nl = memchr(p, '\n', (size_t)(end - p));
    char *le = nl ? nl : end;
    lineno++;
    char *wd;
    size_t wn;
    label_line *l = &lt->lines[lt->n];
    if (word(&p, le, &wd, &wn) && wd[0] != '#') {
      l->key = wd;
      l->klen = wn;
      l->line = lineno;
      l->targets = lt->floats + nf;
      char *lab;
      size_t ln;
      uint32_t k = 0;
      bool ok = word(&p, le, &lab, &ln);
      if (ok) {
        char tmp[32], *e;
        snprintf(tmp, sizeof tmp, "%.*s", (int)(ln < 31 ? ln : 31), lab);
        errno = 0;
        long long v = strtoll(tmp, &e, 10);
        ok = ln < 31 && *e == '\0' && errno == 0 && v >= INT32_MIN &&
             v <= INT32_MAX;
        l->label = (int32_t)v;
      }
      while (ok && word(&p, le, &lab, &ln)) {
        char tmp[64], *e;
        snprintf(tmp, sizeof tmp, "%.*s", (int)(ln < 63 ? ln : 63), lab);
        float fv = strtof(tmp, &e);
        ok = ln < 63 && *e == '\0' && nf < words;
        if (ok)
          lt->floats[nf++] = fv, k++;
      }
      if (ok && first)
        lt->width = k, first = false;
      else if (ok && k != lt->width)
        ok = false;
      if (!ok)
        return sl_err_set(err, SL_EFORMAT,
                          "dataset.label_file %s: line %" PRIu32
                          " is not `key label` followed by %" PRIu32
                          " targets like the first line",
                          src->label_file, lineno, lt->width);
      lt->n++;
    }
    p = nl ? nl + 1 : end;
  }
  qsort(lt->lines, lt->n, sizeof *lt->lines, cmp_line);
  for (size_t q = 1; q < lt->n; q++)
    if (cmp_line(&lt->lines[q - 1], &lt->lines[q]) == 0)
      return sl_err_set(
          err, SL_EFORMAT,
          "dataset.label_file %s: key '%.*s' on lines %" PRIu32 " and %" PRIu32,
          src->label_file, (int)lt->lines[q].klen, lt->lines[q].key,
          lt->lines[q - 1].line, lt->lines[q].line);
  if (!lt->lines || lt->n == 0) {
    free(lt->lines);
    lt->lines = NULL;
  }
  return SL_OK;
}
