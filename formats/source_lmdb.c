/* Indexing an LMDB file (layout in formats/layout.h).
 *
 * At open: check the file's structure against our own map (lmdb_check.c),
 * then walk the main database once with a read-only cursor. A value's file
 * offset is its address in liblmdb's map minus the map's base (liblmdb does
 * not export the base: mdb_env_info's me_mapaddr is only the MDB_FIXEDMAP
 * address; the base is the first value's address minus its file offset
 * found by the check, and every record's header is compared between the
 * two maps); the
 * transaction and environment are closed before open returns, so reads never
 * touch liblmdb. */
#include "formats/source_impl.h"

#include <errno.h>
#include <inttypes.h>
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/layout.h"

typedef struct meta_text {
  uint32_t version;
  uint64_t count;
  uint32_t classes;
  bool has_count, has_classes;
} meta_text;

static sl_status walk(sl_source *src, MDB_env *env, uint64_t n,
                      uint64_t first_data, sl_err *err);
static sl_status parse_meta(sl_source *src, const char *text, size_t len,
                            sl_err *err);

sl_status sl_source_index_lmdb(sl_source *src, const char *env_path,
                               bool subdir, sl_err *err) {
  uint64_t entries = 0, first_data = 0;
  sl_status st = sl_lmdb_check(src->map, src->file_size, src->path, &entries,
                               &first_data, err);
  if (st != SL_OK)
    return st;
  if (entries == 0)
    return sl_err_set(err, SL_EFORMAT,
                      "%s: LMDB file holds no entries (no "
                      "'%s' metadata); " SL_REPACK_HINT,
                      src->path, SL_LMDB_META_KEY);
  MDB_env *env = NULL;
  int rc = mdb_env_create(&env);
  if (rc == 0)
    rc = mdb_env_open(env, env_path,
                      MDB_RDONLY | MDB_NOLOCK | MDB_NORDAHEAD |
                          (subdir ? 0 : MDB_NOSUBDIR),
                      0444);
  if (rc != 0) {
    mdb_env_close(env);
    return sl_err_set(err, rc == ENOMEM ? SL_ENOMEM : SL_EFORMAT,
                      "%s: cannot open as LMDB: %s", src->path,
                      mdb_strerror(rc));
  }
  st = sl_source_alloc_index(src, entries - 1, err);
  if (st == SL_OK)
    st = walk(src, env, entries - 1, first_data, err);
  mdb_env_close(env);
  return st;
}

/* Reads one sample value at file offset off (size bytes) into entry i. */
static sl_status take_value(sl_source *src, uint64_t i, uint64_t off,
                            size_t size, sl_err *err) {
  char where[64];
  snprintf(where, sizeof where, "key %016" PRIx64 ", offset %" PRIu64, i, off);
  sl_record_hdr h;
  if (size < SL_LMDB_HDR_BYTES)
    return sl_source_bad_entry(src, i, where,
                               "value shorter than the "
                               "24-byte record header",
                               err);
  if (sl_record_hdr_decode(src->map + off, &h) != 0)
    return sl_source_bad_entry(src, i, where, "bad record magic", err);
  if (h.version != SL_LMDB_LAYOUT_VERSION) {
    char why[96];
    snprintf(why, sizeof why, "record layout version %u (this sluice reads %u)",
             h.version, SL_LMDB_LAYOUT_VERSION);
    return sl_source_bad_entry(src, i, where, why, err);
  }
  if (h.length != size - SL_LMDB_HDR_BYTES)
    return sl_source_bad_entry(src, i, where,
                               "header length disagrees with "
                               "the value's size",
                               err);
  sl_sample_info *e = &src->index[i];
  e->offset = off + SL_LMDB_HDR_BYTES;
  e->length = h.length;
  e->label = h.label;
  e->height = h.height;
  e->width = h.width;
  e->codec = h.codec;
  e->channels = h.channels;
  return sl_source_check_entry(src, i, where, err);
}

static sl_status walk(sl_source *src, MDB_env *env, uint64_t n,
                      uint64_t first_data, sl_err *err) {
  MDB_txn *txn = NULL;
  MDB_cursor *cur = NULL;
  MDB_dbi dbi;
  MDB_val k, v;
  int rc = mdb_txn_begin(env, NULL, MDB_RDONLY, &txn);
  if (rc == 0)
    rc = mdb_dbi_open(txn, NULL, 0, &dbi);
  if (rc == 0)
    rc = mdb_cursor_open(txn, dbi, &cur);
  if (rc == 0)
    rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST);
  if (rc != 0) {
    mdb_txn_abort(txn);
    return sl_err_set(err, SL_EFORMAT, "%s: LMDB: %s", src->path,
                      mdb_strerror(rc));
  }
  const uint8_t *base = (const uint8_t *)v.mv_data - first_data;
  sl_status st = SL_OK;
  uint64_t i = 0;
  /* The metadata first: labels are checked against its class count. */
  char meta_key[] = SL_LMDB_META_KEY;
  k.mv_size = strlen(meta_key);
  k.mv_data = meta_key;
  rc = mdb_get(txn, dbi, &k, &v);
  if (rc == MDB_NOTFOUND)
    st = sl_err_set(err, SL_EFORMAT,
                    "%s: no '%s' metadata entry; not a "
                    "sluice LMDB file? " SL_REPACK_HINT,
                    src->path, SL_LMDB_META_KEY);
  else if (rc != 0)
    st = sl_err_set(err, SL_EFORMAT, "%s: LMDB: %s", src->path,
                    mdb_strerror(rc));
  else if ((const uint8_t *)v.mv_data < base ||
           (uint64_t)((const uint8_t *)v.mv_data - base) + v.mv_size >
               src->file_size)
    st = sl_err_set(err, SL_EFORMAT,
                    "%s: metadata lies outside the file; " SL_REPACK_HINT,
                    src->path);
  else
    st = parse_meta(
        src, (const char *)src->map + ((const uint8_t *)v.mv_data - base),
        v.mv_size, err);
  if (st != SL_OK) {
    mdb_cursor_close(cur);
    mdb_txn_abort(txn);
    return st;
  }
  for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0 && st == SL_OK;
       rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
    const uint8_t *d = v.mv_data;
    if (d < base || (uint64_t)(d - base) > src->file_size ||
        v.mv_size > src->file_size - (uint64_t)(d - base)) {
      st = sl_err_set(err, SL_EFORMAT,
                      "%s: entry %" PRIu64 " lies outside "
                      "the file; " SL_REPACK_HINT,
                      src->path, i);
      break;
    }
    uint64_t off = (uint64_t)(d - base);
    if (memcmp(d, src->map + off, v.mv_size < 24 ? v.mv_size : 24) != 0) {
      st = sl_err_set(err, SL_EFORMAT,
                      "%s: entry %" PRIu64 ": liblmdb and "
                      "the file disagree about its place; " SL_REPACK_HINT,
                      src->path, i);
      break;
    }
    if (k.mv_size == 8 && i < n) {
      uint64_t key = sl_get_be64(k.mv_data);
      if (key != i)
        st = sl_err_set(err, SL_EFORMAT,
                        "%s: key %016" PRIx64 " where key %016" PRIx64
                        " was expected (keys must be 0..N-1); " SL_REPACK_HINT,
                        src->path, key, i);
      else
        st = take_value(src, i++, off, v.mv_size, err);
    } else if (k.mv_size == strlen(SL_LMDB_META_KEY) &&
               memcmp(k.mv_data, SL_LMDB_META_KEY, k.mv_size) == 0) {
      continue; /* read above */
    } else {
      st = sl_err_set(err, SL_EFORMAT,
                      "%s: unexpected key of %zu bytes after "
                      "%" PRIu64
                      " samples; not a sluice LMDB file? " SL_REPACK_HINT,
                      src->path, k.mv_size, i);
    }
  }
  if (st == SL_OK && rc != 0 && rc != MDB_NOTFOUND)
    st = sl_err_set(err, SL_EFORMAT, "%s: LMDB walk: %s", src->path,
                    mdb_strerror(rc));
  mdb_cursor_close(cur);
  mdb_txn_abort(txn);
  if (st != SL_OK)
    return st;
  if (i != n)
    return sl_err_set(err, SL_EFORMAT,
                      "%s: %" PRIu64 " samples, metadata "
                      "says %" PRIu64 "; " SL_REPACK_HINT,
                      src->path, i, n);
  return SL_OK;
}

/* Next line of text[*pos..len) without its newline; false at the end. */
static bool next_line(const char *text, size_t len, size_t *pos,
                      const char **line, size_t *llen) {
  if (*pos >= len)
    return false;
  const char *s = text + *pos;
  const char *nl = memchr(s, '\n', len - *pos);
  *llen = nl ? (size_t)(nl - s) : len - *pos;
  *line = s;
  *pos += *llen + (nl ? 1 : 0);
  return true;
}

static bool word_is(const char *line, size_t llen, const char *w,
                    const char **rest, size_t *rlen) {
  size_t wl = strlen(w);
  if (llen < wl + 1 || memcmp(line, w, wl) != 0 || line[wl] != ' ')
    return false;
  *rest = line + wl + 1;
  *rlen = llen - wl - 1;
  return true;
}

static bool parse_u64(const char *s, size_t n, uint64_t *out) {
  if (n == 0 || n > 20)
    return false;
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9' || v > (UINT64_MAX - 9) / 10)
      return false;
    v = v * 10 + (uint64_t)(s[i] - '0');
  }
  *out = v;
  return true;
}

/* The "sluice.meta" value: see formats/layout.h. The class lines are copied
 * into a blob of NUL-terminated names. */
static sl_status parse_meta(sl_source *src, const char *text, size_t len,
                            sl_err *err) {
  size_t pos = 0, llen, rlen;
  const char *line, *rest;
  uint64_t v;
  if (!next_line(text, len, &pos, &line, &llen) ||
      !word_is(line, llen, SL_LMDB_META_HEAD, &rest, &rlen) ||
      !parse_u64(rest, rlen, &v))
    return sl_err_set(err, SL_EFORMAT,
                      "%s: metadata does not start with '%s "
                      "VERSION'; " SL_REPACK_HINT,
                      src->path, SL_LMDB_META_HEAD);
  if (v != SL_LMDB_LAYOUT_VERSION)
    return sl_err_set(err, SL_EFORMAT,
                      "%s: LMDB layout version %" PRIu64
                      " (this sluice reads %u); " SL_REPACK_HINT,
                      src->path, v, SL_LMDB_LAYOUT_VERSION);
  src->version = (uint32_t)v;
  meta_text m = {0};
  char *blob = malloc(len + 1);
  size_t blob_len = 0;
  uint32_t got = 0;
  if (!blob)
    return sl_err_set(err, SL_ENOMEM, "%s: no memory", src->path);
  sl_status st = SL_OK;
  while (st == SL_OK && next_line(text, len, &pos, &line, &llen)) {
    if (word_is(line, llen, "count", &rest, &rlen) &&
        parse_u64(rest, rlen, &m.count))
      m.has_count = true;
    else if (word_is(line, llen, "classes", &rest, &rlen) &&
             parse_u64(rest, rlen, &v) && v <= SL_CLASSES_MAX)
      m.classes = (uint32_t)v, m.has_classes = true;
    else if (word_is(line, llen, "class", &rest, &rlen) && m.has_classes &&
             got < m.classes && rlen > 0 && rlen <= SL_CLASS_NAME_MAX &&
             !memchr(rest, '\0', rlen)) {
      memcpy(blob + blob_len, rest, rlen);
      blob_len += rlen;
      blob[blob_len++] = '\0';
      got++;
    } else if (word_is(line, llen, "writer", &rest, &rlen) && !src->writer)
      st = sl_source_set_writer(src, rest, rlen, err);
    else if (llen > 0)
      st = sl_err_set(err, SL_EFORMAT,
                      "%s: metadata line '%.*s' not "
                      "understood; " SL_REPACK_HINT,
                      src->path, (int)(llen > 60 ? 60 : llen), line);
  }
  if (st == SL_OK && (!m.has_count || !m.has_classes || got != m.classes))
    st = sl_err_set(err, SL_EFORMAT,
                    "%s: metadata lacks its count, classes "
                    "or class names; " SL_REPACK_HINT,
                    src->path);
  if (st == SL_OK && m.count != src->count)
    st = sl_err_set(err, SL_EFORMAT,
                    "%s: metadata says %" PRIu64 " samples, "
                    "the file holds %" PRIu64 "; " SL_REPACK_HINT,
                    src->path, m.count, src->count);
  if (st == SL_OK)
    st = sl_source_set_classes(src, blob, blob_len, m.classes, err);
  free(blob);
  return st;
}
