/* Indexing an LMDB file (layout in formats/core/layout.h). Files other tools
 * wrote (no "sluice.meta" entry, or dataset.entries caffe/images) share the
 * check, the environment and the cursor set up here, and are walked by
 * source_foreign.c.
 *
 * At open: check the file's structure against our own map (lmdb_check.c),
 * read the metadata, then walk the main database once with a read-only
 * cursor. A sample value's file offset is its address in liblmdb's map
 * minus the map's base (liblmdb does not export the base: mdb_env_info's
 * me_mapaddr is only the MDB_FIXEDMAP address; the base is the first
 * value's address minus its file offset, found by the check). Labels,
 * sizes and codecs come from the "sluice.ix" chunks, so a normal open
 * reads tree pages and chunks but no sample value; verify mode (thorough)
 * also reads every record header and compares it with the index. The
 * transaction and environment are closed before open returns, so reads
 * never touch liblmdb. */
#include "formats/core/source_impl.h"

#include <errno.h>
#include <inttypes.h>
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/endian.h"
#include "common/map_guard.h"
#include "formats/core/boxes.h"
#include "formats/core/format.h"
#include "formats/core/layout.h"

typedef struct meta_text {
  uint32_t version;
  uint64_t count;
  uint32_t classes;
  uint64_t box_total; /* layout 5: the "boxes" line */
  uint64_t box_chunks;
  bool has_count, has_classes, has_targets, has_boxes, has_levels;
} meta_text;

typedef struct lmdb_walk {
  sl_source *src;
  MDB_txn *txn;
  MDB_dbi dbi;
  MDB_cursor *cur;
  const uint8_t *base; /* liblmdb's map address of file offset 0 */
  uint64_t first_data;
  bool thorough;
  uint64_t n;          /* samples, from the metadata */
  uint64_t chunk_size; /* samples per index chunk */
  uint64_t chunks;     /* index chunks expected */
  uint64_t samples_seen, chunks_seen;
  uint64_t box_total, box_chunks;  /* layout 5, from the metadata */
  uint64_t box_chunks_seen, boxed; /* chunks and samples taken so far */
  uint64_t boxes_seen;
} lmdb_walk;

static sl_status walk(lmdb_walk *w, uint64_t entries, sl_err *err);
static sl_status parse_meta(sl_source *src, const char *text, size_t len,
                            meta_text *m, sl_err *err);
static sl_status finish_entries(lmdb_walk *w, sl_err *err);
static sl_status choose_layout(lmdb_walk *w, sl_err *err);

/* The open-time reads, run under common/map_guard.h's guard: they read
 * sluice's map (the check) and liblmdb's own (the walk), and a file that
 * shrinks meanwhile (copied over, truncated) faults with SIGBUS past its
 * new end. liblmdb with MDB_NOLOCK holds no lock, and what it allocates
 * stays reachable from the call (env, txn, cursor), closed by the caller
 * whether the walk returned or faulted. */
typedef struct index_call {
  lmdb_walk w;
  const char *env_path;
  bool subdir;
  MDB_env *env;
  void *check_held; /* sl_lmdb_check's scratch while it runs */
  sl_err *err;
  sl_status st;
} index_call;

static void index_reads(void *ctx) {
  index_call *c = ctx;
  lmdb_walk *w = &c->w;
  sl_source *src = w->src;
  sl_err *err = c->err;
  uint64_t entries = 0;
  sl_status st =
      sl_lmdb_check(src->map, src->file_size, src->path, src->lmdb_db,
                    w->thorough, &entries, &w->first_data, &c->check_held, err);
  if (st == SL_OK && entries == 0)
    st = sl_err_set(err, SL_EFORMAT,
                    "%s: LMDB file holds no entries; " SL_REPACK_HINT,
                    src->path);
  if (st != SL_OK) {
    c->st = st;
    return;
  }
  int rc = mdb_env_create(&c->env);
  if (rc == 0 && src->lmdb_db)
    rc = mdb_env_set_maxdbs(c->env, 1);
  if (rc == 0)
    rc = mdb_env_open(c->env, c->env_path,
                      MDB_RDONLY | MDB_NOLOCK | MDB_NORDAHEAD |
                          (c->subdir ? 0 : MDB_NOSUBDIR),
                      0444);
  if (rc == 0)
    rc = mdb_txn_begin(c->env, NULL, MDB_RDONLY, &w->txn);
  if (rc == 0)
    rc = mdb_dbi_open(w->txn, src->lmdb_db, 0, &w->dbi);
  if (rc == 0)
    rc = mdb_cursor_open(w->txn, w->dbi, &w->cur);
  if (rc != 0)
    st = sl_err_set(err, rc == ENOMEM ? SL_ENOMEM : SL_EFORMAT,
                    "%s: cannot open as LMDB: %s", src->path, mdb_strerror(rc));
  else
    st = choose_layout(w, err);
  if (st == SL_OK && src->entries == SL_ENTRIES_SLUICE)
    st = walk(w, entries, err);
  else if (st == SL_OK)
    st = sl_source_index_foreign(src, w->cur, w->base, entries, err);
  c->st = st;
}

static sl_status index_lmdb(sl_source *src, const char *env_path, bool subdir,
                            sl_err *err) {
  index_call c = {.env_path = env_path, .subdir = subdir, .err = err};
  c.w.src = src;
  c.w.thorough = src->on_bad != NULL; /* verify reads every value too */
  sl_status st = sl_guard_install(err);
  if (st != SL_OK)
    return st;
  if (!sl_guard_call_any(index_reads, &c))
    c.st = sl_err_set(err, SL_EIO,
                      "%s: a page cannot be read (SIGBUS) while the file "
                      "was indexed: it shrank (truncated or copied over) "
                      "since it was opened, or a disk error; it was %" PRIu64
                      " bytes",
                      src->path, src->file_size);
  free(c.check_held); /* set only when the check faulted */
  if (c.w.cur)
    mdb_cursor_close(c.w.cur);
  if (c.w.txn)
    mdb_txn_abort(c.w.txn);
  if (c.env)
    mdb_env_close(c.env);
  if (c.st == SL_OK && src->entries == SL_ENTRIES_SLUICE)
    c.st = finish_entries(&c.w, err);
  return c.st;
}

/* Sluice's own layout when asked for or when its metadata entry is there;
 * otherwise the foreign walk decides (or checks the forced layout). Sets
 * the map base from the first entry for either walk. */
static sl_status choose_layout(lmdb_walk *w, sl_err *err) {
  sl_source *src = w->src;
  MDB_val k, v;
  int rc = mdb_cursor_get(w->cur, &k, &v, MDB_FIRST);
  if (rc != 0)
    return sl_err_set(err, SL_EFORMAT, "%s: LMDB: %s", src->path,
                      mdb_strerror(rc));
  w->base = (const uint8_t *)v.mv_data - w->first_data;
  if (src->entries != SL_ENTRIES_AUTO)
    return SL_OK;
  char meta_key[] = SL_LMDB_META_KEY;
  MDB_val mk = {strlen(meta_key), meta_key};
  rc = mdb_get(w->txn, w->dbi, &mk, &v);
  if (rc == 0)
    src->entries = SL_ENTRIES_SLUICE;
  else if (rc != MDB_NOTFOUND)
    return sl_err_set(err, SL_EFORMAT, "%s: LMDB: %s", src->path,
                      mdb_strerror(rc));
  return SL_OK;
}

/* File offset of a value liblmdb returned, checked against the file. */
static int value_offset(const lmdb_walk *w, const MDB_val *v, uint64_t *off) {
  const uint8_t *d = v->mv_data;
  if (d < w->base || (uint64_t)(d - w->base) > w->src->file_size ||
      v->mv_size > w->src->file_size - (uint64_t)(d - w->base))
    return -1;
  *off = (uint64_t)(d - w->base);
  /* Thorough: the bytes liblmdb sees are the bytes of our map there. */
  if (w->thorough &&
      memcmp(d, w->src->map + *off, v->mv_size < 24 ? v->mv_size : 24) != 0)
    return -1;
  return 0;
}

static sl_status read_meta(lmdb_walk *w, sl_err *err) {
  sl_source *src = w->src;
  char meta_key[] = SL_LMDB_META_KEY;
  MDB_val k = {strlen(meta_key), meta_key}, v;
  int rc = mdb_get(w->txn, w->dbi, &k, &v);
  uint64_t off;
  if (rc == MDB_NOTFOUND)
    return sl_err_set(
        err, SL_EFORMAT,
        "%s: no '%s' metadata entry; not a sluice LMDB file? " SL_REPACK_HINT,
        src->path, SL_LMDB_META_KEY);
  if (rc != 0)
    return sl_err_set(err, SL_EFORMAT, "%s: LMDB: %s", src->path,
                      mdb_strerror(rc));
  if (value_offset(w, &v, &off) != 0)
    return sl_err_set(err, SL_EFORMAT,
                      "%s: metadata lies outside the file; " SL_REPACK_HINT,
                      src->path);
  meta_text m = {0};
  sl_status st =
      parse_meta(src, (const char *)src->map + off, v.mv_size, &m, err);
  w->n = m.count;
  w->box_total = m.box_total;
  w->box_chunks = m.box_chunks;
  return st;
}

/* One "sluice.ix" chunk: fills the index fields of its samples. */
static sl_status take_chunk(lmdb_walk *w, const MDB_val *k, uint64_t off,
                            size_t size, sl_err *err) {
  sl_source *src = w->src;
  uint32_t c = sl_get_be32((const uint8_t *)k->mv_data + SL_LMDB_IX_PREFIX_LEN);
  uint64_t first = (uint64_t)c * w->chunk_size;
  uint64_t want = w->n - first < w->chunk_size ? w->n - first : w->chunk_size;
  size_t entry = sl_lmdb_ix_entry_bytes(src->target_width);
  const uint8_t *p = src->map + off;
  if (c != w->chunks_seen || first >= w->n ||
      size != SL_LMDB_IX_HDR + want * entry ||
      memcmp(p, SL_LMDB_IX_MAGIC, 4) != 0 || sl_get_le32(p + 4) != want)
    return sl_err_set(err, SL_EFORMAT,
                      "%s: index chunk %" PRIu32 " (offset %" PRIu64
                      ") is malformed or out of order; " SL_REPACK_HINT,
                      src->path, c, off);
  w->chunks_seen++;
  for (uint64_t j = 0; j < want; j++) {
    sl_record_hdr h;
    const uint8_t *ent = p + SL_LMDB_IX_HDR + j * entry;
    sl_ix_entry_decode(ent, (uint16_t)src->version, &h);
    sl_sample_info *e = &src->index[first + j];
    if (e->offset == 0)
      continue; /* already reported */
    if ((uint64_t)h.length + h.name_len != e->length ||
        h.name_len > SL_NAME_MAX) {
      char where[64];
      snprintf(where, sizeof where, "key %016" PRIx64, first + j);
      sl_status st = sl_source_bad_entry(
          src, first + j, where, "index length disagrees with the value's size",
          err);
      if (st != SL_OK)
        return st;
      continue;
    }
    e->offset += h.name_len; /* the name precedes the payload */
    e->length = h.length;
    e->name_len = h.name_len;
    e->label = h.label;
    e->height = h.height;
    e->width = h.width;
    e->codec = h.codec;
    e->channels = h.channels;
    /* No targets: src->targets is NULL (and NULL + 0 is undefined). */
    float *t = src->target_width
                   ? src->targets + (first + j) * src->target_width
                   : NULL;
    for (uint32_t q = 0; q < src->target_width; q++)
      t[q] = sl_get_lef32(ent + SL_LMDB_IX_ENTRY + 4 * (size_t)q);
  }
  return SL_OK;
}

/* One "sluice.bx" chunk (formats/core/boxes.h): the boxes of its samples, which
 * follow those of the previous chunk. Its values are checked with the
 * entries (sl_source_check_entry), its structure here. */
static sl_status take_box_chunk(lmdb_walk *w, const MDB_val *k, uint64_t off,
                                size_t size, sl_err *err) {
  sl_source *src = w->src;
  uint32_t c = sl_get_be32((const uint8_t *)k->mv_data + SL_LMDB_IX_PREFIX_LEN);
  sl_box_chunk bc;
  const char *why = sl_box_chunk_parse(src->map + off, size, &bc);
  if (!why && (c != w->box_chunks_seen || bc.first != w->boxed))
    why = "box chunk out of order";
  else if (!why &&
           (bc.n > w->n - w->boxed || bc.total > w->box_total - w->boxes_seen))
    why = "box chunk holds more samples or boxes than the metadata says";
  if (why)
    return sl_err_set(err, SL_EFORMAT,
                      "%s: box chunk %" PRIu32 " (offset %" PRIu64
                      ", samples from %" PRIu64 "): %s; " SL_REPACK_HINT,
                      src->path, c, off, w->boxed, why);
  const uint8_t *bp = bc.boxes;
  for (uint32_t j = 0; j < bc.n; j++) {
    src->box_off[w->boxed + j] = w->boxes_seen;
    uint32_t nb = sl_box_chunk_count(&bc, j);
    for (uint32_t q = 0; q < nb; q++, bp += SL_BOX_BYTES)
      sl_box_decode(bp, &src->boxes[w->boxes_seen++]);
  }
  w->boxed += bc.n;
  w->box_chunks_seen++;
  return SL_OK;
}

static sl_status take_sample(lmdb_walk *w, const MDB_val *k, uint64_t off,
                             size_t size, sl_err *err) {
  sl_source *src = w->src;
  uint64_t key = sl_get_be64(k->mv_data), i = w->samples_seen;
  if (key != i)
    return sl_err_set(err, SL_EFORMAT,
                      "%s: key %016" PRIx64 " where key %016" PRIx64
                      " was expected (keys must be 0..N-1); " SL_REPACK_HINT,
                      src->path, key, i);
  w->samples_seen++;
  if (size < SL_LMDB_HDR_BYTES) {
    char where[64];
    snprintf(where, sizeof where, "key %016" PRIx64 ", offset %" PRIu64, i,
             off);
    return sl_source_bad_entry(
        src, i, where, "value shorter than the 24-byte record header", err);
  }
  src->index[i].offset = off + SL_LMDB_HDR_BYTES;
  src->index[i].length = (uint32_t)(size - SL_LMDB_HDR_BYTES);
  if (size - SL_LMDB_HDR_BYTES > UINT32_MAX)
    src->index[i].length = 0; /* caught by the chunk's length check */
  return SL_OK;
}

/* Runs after choose_layout, which found the first entry and set w->base. */
static sl_status walk(lmdb_walk *w, uint64_t entries, sl_err *err) {
  sl_source *src = w->src;
  MDB_val k, v;
  int rc;
  /* The metadata first: it gives the count (and the classes that labels
   * are checked against). */
  sl_status st = read_meta(w, err);
  if (st != SL_OK)
    return st;
  w->chunk_size = sl_lmdb_ix_chunk_samples(src->target_width);
  w->chunks = (w->n + w->chunk_size - 1) / w->chunk_size;
  if (w->n > entries || w->box_chunks > entries ||
      entries - w->n != w->chunks + w->box_chunks + 1)
    return sl_err_set(err, SL_EFORMAT,
                      "%s: metadata says %" PRIu64 " samples and %" PRIu64
                      " box chunks but the file holds %" PRIu64
                      " entries; " SL_REPACK_HINT,
                      src->path, w->n, w->box_chunks, entries);
  /* Each box takes 24 bytes of the file: that bounds the allocation. */
  if (w->box_total > src->file_size / SL_BOX_BYTES ||
      (w->box_chunks == 0) != (w->box_total == 0) || w->box_chunks > w->n)
    return sl_err_set(err, SL_EFORMAT,
                      "%s: metadata says %" PRIu64 " boxes in %" PRIu64
                      " chunks, which a file of %" PRIu64 " bytes and %" PRIu64
                      " samples cannot hold; " SL_REPACK_HINT,
                      src->path, w->box_total, w->box_chunks, src->file_size,
                      w->n);
  st = sl_source_alloc_index(src, w->n, err);
  if (st == SL_OK && src->version >= SL_LMDB_LAYOUT_BOXES)
    st = sl_source_alloc_boxes(src, w->box_total, err);
  for (rc = mdb_cursor_get(w->cur, &k, &v, MDB_FIRST); rc == 0 && st == SL_OK;
       rc = mdb_cursor_get(w->cur, &k, &v, MDB_NEXT)) {
    uint64_t off;
    if (value_offset(w, &v, &off) != 0)
      return sl_err_set(err, SL_EFORMAT,
                        "%s: entry %" PRIu64 " lies outside the file or "
                        "moved; " SL_REPACK_HINT,
                        src->path, w->samples_seen);
    if (k.mv_size == 8 && w->samples_seen < w->n)
      st = take_sample(w, &k, off, v.mv_size, err);
    else if (k.mv_size == SL_LMDB_IX_KEY_LEN &&
             memcmp(k.mv_data, SL_LMDB_BX_PREFIX, SL_LMDB_IX_PREFIX_LEN) == 0 &&
             w->samples_seen == w->n && w->box_chunks_seen < w->box_chunks)
      st = take_box_chunk(w, &k, off, v.mv_size, err);
    else if (k.mv_size == SL_LMDB_IX_KEY_LEN &&
             memcmp(k.mv_data, SL_LMDB_IX_PREFIX, SL_LMDB_IX_PREFIX_LEN) == 0 &&
             w->samples_seen == w->n && w->box_chunks_seen == w->box_chunks)
      st = take_chunk(w, &k, off, v.mv_size, err);
    else if (k.mv_size == strlen(SL_LMDB_META_KEY) &&
             memcmp(k.mv_data, SL_LMDB_META_KEY, k.mv_size) == 0)
      continue; /* read above */
    else
      st = sl_err_set(err, SL_EFORMAT,
                      "%s: unexpected key of %zu bytes after %" PRIu64
                      " samples; not a sluice LMDB file? " SL_REPACK_HINT,
                      src->path, k.mv_size, w->samples_seen);
  }
  if (st == SL_OK && rc != 0 && rc != MDB_NOTFOUND)
    st = sl_err_set(err, SL_EFORMAT, "%s: LMDB walk: %s", src->path,
                    mdb_strerror(rc));
  if (st == SL_OK && (w->samples_seen != w->n || w->chunks_seen != w->chunks))
    st = sl_err_set(
        err, SL_EFORMAT,
        "%s: %" PRIu64 " samples and %" PRIu64 " index chunks, "
        "metadata implies %" PRIu64 " and %" PRIu64 "; " SL_REPACK_HINT,
        src->path, w->samples_seen, w->chunks_seen, w->n, w->chunks);
  if (st == SL_OK && src->box_off &&
      (w->box_chunks_seen != w->box_chunks || w->boxed != w->n ||
       w->boxes_seen != w->box_total))
    st = sl_err_set(err, SL_EFORMAT,
                    "%s: box chunks cover %" PRIu64 " samples and %" PRIu64
                    " boxes in %" PRIu64 " chunks, metadata implies %" PRIu64
                    ", %" PRIu64 " and %" PRIu64 "; " SL_REPACK_HINT,
                    src->path, w->boxed, w->boxes_seen, w->box_chunks_seen,
                    w->n, w->box_total, w->box_chunks);
  if (st == SL_OK && src->box_off)
    src->box_off[w->n] = w->boxes_seen;
  return st;
}

/* Checks every entry; thorough (verify) also compares each record's own
 * header with the index. */
static sl_status finish_entries(lmdb_walk *w, sl_err *err) {
  sl_source *src = w->src;
  /* Layout 5's records carry the record layout (formats/core/layout.h). */
  uint32_t record_version = src->version < SL_LMDB_LAYOUT_BOXES ? src->version
                            : src->levels_layout ? SL_LMDB_LAYOUT_LEVELS
                                                 : SL_LMDB_LAYOUT_VERSION;
  for (uint64_t i = 0; i < src->count; i++) {
    sl_sample_info *e = &src->index[i];
    if (e->offset == 0)
      continue; /* reported already */
    uint64_t off = e->offset - e->name_len - SL_LMDB_HDR_BYTES;
    char where[64];
    snprintf(where, sizeof where, "key %016" PRIx64 ", offset %" PRIu64, i,
             off);
    if (w->thorough) {
      sl_record_hdr h;
      const char *why = NULL;
      if (sl_record_hdr_decode(src->map + off, &h) != 0)
        why = "bad record magic";
      else if (h.version != record_version)
        why = "record layout version differs from the file's";
      else if (h.length != e->length || h.name_len != e->name_len ||
               h.label != e->label || h.height != e->height ||
               h.width != e->width || h.codec != e->codec ||
               h.channels != e->channels)
        why = "record header disagrees with the index";
      if (why) {
        sl_status st = sl_source_bad_entry(src, i, where, why, err);
        if (st != SL_OK)
          return st;
        continue;
      }
    }
    sl_status st = sl_source_check_entry(src, i, where, err);
    if (st != SL_OK)
      return st;
  }
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

/* "TOTAL CHUNKS" of the "boxes" line. */
static bool parse_box_line(const char *s, size_t n, uint64_t *total,
                           uint64_t *chunks) {
  const char *sp = memchr(s, ' ', n);
  return sp && parse_u64(s, (size_t)(sp - s), total) &&
         parse_u64(sp + 1, n - (size_t)(sp - s) - 1, chunks);
}

/* The "sluice.meta" value: see formats/core/layout.h. The class lines are
 * copied into a blob of NUL-terminated names. */
static sl_status parse_meta(sl_source *src, const char *text, size_t len,
                            meta_text *mt, sl_err *err) {
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
  sl_status vs = sl_source_set_version(src, "LMDB", v, SL_LMDB_LAYOUT_OLDEST,
                                       SL_LMDB_LAYOUT_BOXES, err);
  if (vs != SL_OK)
    return vs;
  /* Layout 5 has levels when its metadata has a "levels" line. */
  src->levels_layout = v == SL_LMDB_LAYOUT_LEVELS;
  bool boxes_layout = v >= SL_LMDB_LAYOUT_BOXES;
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
    else if (src->version >= 3 && !m.has_targets &&
             word_is(line, llen, "targets", &rest, &rlen) &&
             parse_u64(rest, rlen, &v) && v <= SL_TARGETS_MAX)
      src->target_width = (uint32_t)v, m.has_targets = true;
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
    } else if ((src->levels_layout || boxes_layout) && !m.has_levels &&
               word_is(line, llen, "levels", &rest, &rlen)) {
      m.has_levels = src->levels_layout = true;
      st = sl_source_set_levels(src, rest, rlen, err);
    } else if (boxes_layout && !m.has_boxes &&
               word_is(line, llen, "boxes", &rest, &rlen) &&
               parse_box_line(rest, rlen, &m.box_total, &m.box_chunks))
      m.has_boxes = true;
    else if (word_is(line, llen, "writer", &rest, &rlen) && !src->writer)
      st = sl_source_set_writer(src, rest, rlen, err);
    else if (llen > 0)
      st = sl_err_set(err, SL_EFORMAT,
                      "%s: metadata line '%.*s' not "
                      "understood; " SL_REPACK_HINT,
                      src->path, (int)(llen > 60 ? 60 : llen), line);
  }
  if (st == SL_OK && (!m.has_count || !m.has_classes || got != m.classes ||
                      boxes_layout != m.has_boxes))
    st = sl_err_set(err, SL_EFORMAT,
                    "%s: metadata lacks its count, classes, class names "
                    "or (layout 5) boxes line; " SL_REPACK_HINT,
                    src->path);
  if (st == SL_OK)
    *mt = m;
  if (st == SL_OK)
    st = sl_source_set_classes(src, blob, blob_len, m.classes, err);
  free(blob);
  return st;
}

/* ---- the row ------------------------------------------------------------- */

#define LMDB_MAGIC 0xBEEFC0DEu /* in the first meta page, at offset 16 */

static int lmdb_sniff(const uint8_t *head, size_t n) {
  return n >= 20 && sl_get_le32(head + 16) == LMDB_MAGIC ? 2 : 0;
}

static const char *lmdb_not_this(size_t n) {
  (void)n;
  return "not an LMDB file (no LMDB magic in the first meta page)";
}

static sl_status lmdb_index_file(sl_source *src, const char *path,
                                 sl_err *err) {
  return index_lmdb(src, path, src->dir_path, err);
}

const sl_format sl_format_lmdb = {
    .kind = SL_FORMAT_LMDB,
    .name = "lmdb",
    .title = "LMDB",
    .what = "LMDB",
    .options = SL_FOPT_LABEL_FILE | SL_FOPT_LMDB_DB,
    .entries =
        SL_ENTRIES_BIT(SL_ENTRIES_AUTO) | SL_ENTRIES_BIT(SL_ENTRIES_SLUICE) |
        SL_ENTRIES_BIT(SL_ENTRIES_CAFFE) | SL_ENTRIES_BIT(SL_ENTRIES_IMAGES) |
        SL_ENTRIES_BIT(SL_ENTRIES_PICKLE) | SL_ENTRIES_BIT(SL_ENTRIES_MSGPACK),
    .sniff = lmdb_sniff,
    .not_this = lmdb_not_this,
    .dir_file = "data.mdb",
    .dir_what = "an LMDB environment",
    .reads = "LMDB files (its own, Caffe Datums, image-file values)",
    .index_file = lmdb_index_file,
};
