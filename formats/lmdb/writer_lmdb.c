/* Writing the LMDB layout: 8-byte big-endian keys appended in order, each
 * value a 24-byte record header plus the payload, then "sluice.meta".
 *
 * The index chunks (16 bytes a sample, kept in memory) are appended at
 * commit, then the metadata. One file (MDB_NOSUBDIR), no lock file (MDB_NOLOCK:
 * one writer, and the file is private until it is renamed), synced once at the
 * end. Values are committed in transactions of at most TXN_RECORDS records or
 * TXN_BYTES bytes; between transactions the map grows (doubling) to stay ahead
 * of the data. Same input → same bytes: every choice here depends only on the
 * sequence of records. */
#include "formats/core/writer_impl.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

#include "formats/core/boxes.h"
#include "formats/core/layout.h"

enum { TXN_RECORDS = 4096 };
#define TXN_BYTES (32ull << 20)
#define MAP_START (64ull << 20)

struct sl_lmdb_writer {
  MDB_env *env;
  MDB_txn *txn;
  MDB_dbi dbi;
  const char *path;
  uint64_t used; /* upper bound on the file's size so far */
  uint64_t mapsize;
  uint32_t txn_records;
  uint64_t txn_bytes;
  uint8_t *buf; /* header + payload of one value */
  size_t buf_cap;
  uint8_t *ix; /* sl_lmdb_ix_entry_bytes(k) a sample, written at commit */
  uint64_t ix_n, ix_cap;
  uint32_t version; /* SL_LMDB_LAYOUT_VERSION, or _LEVELS */
};

void sl_lmdb_writer_set_version(sl_lmdb_writer *w, uint32_t v) {
  w->version = v;
}

static sl_status lerr(sl_lmdb_writer *w, int rc, const char *what,
                      sl_err *err) {
  /* LMDB reports a short write (how a full disk usually shows) as EIO:
   * say when the filesystem is in fact full. */
  struct statvfs vs;
  char dir[PATH_MAX];
  snprintf(dir, sizeof dir, "%s", w->path);
  char *slash = strrchr(dir, '/');
  if (slash)
    *slash = '\0';
  if (rc == EIO && statvfs(slash ? (dir[0] ? dir : "/") : ".", &vs) == 0 &&
      (uint64_t)vs.f_bavail * vs.f_frsize < 65536)
    return sl_err_set(err, SL_EIO,
                      "%s: LMDB %s: %s: the filesystem is full (%s; %llu "
                      "bytes free)",
                      w->path, what, mdb_strerror(rc), strerror(ENOSPC),
                      (unsigned long long)vs.f_bavail * vs.f_frsize);
  return sl_err_set(err, rc == ENOMEM ? SL_ENOMEM : SL_EIO, "%s: LMDB %s: %s",
                    w->path, what, mdb_strerror(rc));
}

sl_status sl_lmdb_writer_open(sl_lmdb_writer **out, const char *open_path,
                              const char *tmp, sl_err *err) {
  sl_lmdb_writer *w = calloc(1, sizeof *w);
  if (!w)
    return sl_err_set(err, SL_ENOMEM, "%s: no memory", tmp);
  w->path = tmp;
  w->version = SL_LMDB_LAYOUT_VERSION;
  w->mapsize = MAP_START;
  int rc = mdb_env_create(&w->env);
  if (rc == 0)
    rc = mdb_env_set_mapsize(w->env, (size_t)w->mapsize);
  if (rc == 0)
    rc = mdb_env_open(w->env, open_path,
                      MDB_NOSUBDIR | MDB_NOLOCK | MDB_NOSYNC | MDB_NOMETASYNC,
                      0644);
  if (rc != 0) {
    sl_status st = lerr(w, rc, "open", err);
    sl_lmdb_writer_free(w);
    return st;
  }
  *out = w;
  return SL_OK;
}

/* Commits the open transaction, if any. */
static sl_status end_txn(sl_lmdb_writer *w, sl_err *err) {
  if (!w->txn)
    return SL_OK;
  int rc = mdb_txn_commit(w->txn);
  w->txn = NULL;
  w->txn_records = 0;
  w->txn_bytes = 0;
  return rc ? lerr(w, rc, "commit", err) : SL_OK;
}

/* Begins a transaction with room for TXN_BYTES more, or for one value of
 * vlen bytes when that is larger (the map grown if needed). */
static sl_status begin_txn(sl_lmdb_writer *w, size_t vlen, sl_err *err) {
  uint64_t room = vlen > TXN_BYTES ? (uint64_t)vlen : TXN_BYTES;
  uint64_t want = 2 * (w->used + room) + (16ull << 20);
  if (want > w->mapsize) {
    while (w->mapsize < want)
      w->mapsize *= 2;
    int rc = mdb_env_set_mapsize(w->env, (size_t)w->mapsize);
    if (rc)
      return lerr(w, rc, "grow map", err);
  }
  int rc = mdb_txn_begin(w->env, NULL, 0, &w->txn);
  if (rc == 0)
    rc = mdb_dbi_open(w->txn, NULL, 0, &w->dbi);
  if (rc)
    return lerr(w, rc, "begin", err);
  return SL_OK;
}

static sl_status put(sl_lmdb_writer *w, const void *key, size_t klen,
                     const void *val, size_t vlen, sl_err *err) {
  if (w->txn &&
      (w->txn_records >= TXN_RECORDS || w->txn_bytes + vlen > TXN_BYTES)) {
    sl_status st = end_txn(w, err);
    if (st != SL_OK)
      return st;
  }
  if (!w->txn) {
    sl_status st = begin_txn(w, vlen, err);
    if (st != SL_OK)
      return st;
  }
  MDB_val k = {klen, (void *)(uintptr_t)key},
          v = {vlen, (void *)(uintptr_t)val};
  int rc = mdb_put(w->txn, w->dbi, &k, &v, MDB_APPEND);
  if (rc)
    return lerr(w, rc, "put", err);
  w->txn_records++;
  w->txn_bytes += vlen;
  /* A value spills to overflow pages rounded up to 4 KiB; leaves and
   * branches cost well under 64 bytes a record. */
  w->used += (vlen + 4095) / 4096 * 4096 + 64 + klen;
  return SL_OK;
}

sl_status sl_lmdb_writer_add(sl_lmdb_writer *w, uint64_t index,
                             const void *payload, size_t len,
                             const sl_sample_info *meta, const char *name,
                             const float *targets, uint32_t k, sl_err *err) {
  size_t need = len + SL_LMDB_HDR_BYTES + meta->name_len;
  size_t entry = sl_lmdb_ix_entry_bytes(k);
  if (need > w->buf_cap) {
    size_t cap = need > 2 * w->buf_cap ? need : 2 * w->buf_cap;
    uint8_t *b = realloc(w->buf, cap);
    if (!b)
      return sl_err_set(err, SL_ENOMEM, "%s: no memory for a %zu-byte value",
                        w->path, need);
    w->buf = b;
    w->buf_cap = cap;
  }
  sl_record_hdr h = {(uint16_t)w->version, meta->codec,   meta->channels,
                     meta->height,         meta->width,   meta->label,
                     (uint32_t)len,        meta->name_len};
  sl_record_hdr_encode(w->buf, &h);
  if (w->ix_n == w->ix_cap) {
    uint64_t cap = w->ix_cap ? 2 * w->ix_cap : 4096;
    uint8_t *ix = realloc(w->ix, (size_t)cap * entry);
    if (!ix)
      return sl_err_set(err, SL_ENOMEM,
                        "%s: no memory for the index of %" PRIu64 " samples",
                        w->path, cap);
    w->ix = ix;
    w->ix_cap = cap;
  }
  /* The entry counts only once its value is in: a failed put adds nothing. */
  uint8_t *e = w->ix + w->ix_n * entry;
  sl_ix_entry_encode(e, &h);
  for (uint32_t q = 0; q < k; q++)
    sl_put_lef32(e + SL_LMDB_IX_ENTRY + 4 * (size_t)q, targets[q]);
  if (meta->name_len) /* name may be NULL then */
    memcpy(w->buf + SL_LMDB_HDR_BYTES, name, meta->name_len);
  memcpy(w->buf + SL_LMDB_HDR_BYTES + meta->name_len, payload, len);
  uint8_t key[8];
  sl_put_be64(key, index);
  sl_status st = put(w, key, sizeof key, w->buf, need, err);
  if (st == SL_OK)
    w->ix_n++;
  return st;
}

/* The "sluice.bx" chunks (formats/core/boxes.h), before "sluice.ix" in key
 * order: runs of samples of at most SL_BOX_CHUNK_SAMPLES samples and
 * SL_BOX_CHUNK_BYTES bytes (a chunk always takes one sample). Memory: one
 * chunk, freed before it returns. */
static sl_status put_box_chunks(sl_lmdb_writer *w, uint64_t count,
                                const sl_fw_boxes *bx, uint32_t *chunks,
                                sl_err *err) {
  uint64_t box = 0;
  sl_status st = SL_OK;
  *chunks = 0;
  for (uint64_t first = 0; st == SL_OK && first < count;) {
    uint64_t n = 0, nb = 0;
    size_t bytes = SL_BOX_CHUNK_HDR;
    while (first + n < count && n < SL_BOX_CHUNK_SAMPLES) {
      size_t one = 2 + (size_t)bx->count[first + n] * SL_BOX_BYTES;
      if (n > 0 && bytes + one > SL_BOX_CHUNK_BYTES)
        break;
      bytes += one;
      nb += bx->count[first + n];
      n++;
    }
    uint8_t *c = malloc(bytes);
    if (!c)
      return sl_err_set(err, SL_ENOMEM, "%s: no memory for a box chunk",
                        w->path);
    sl_box_chunk_head(c, (uint32_t)n, first);
    for (uint64_t j = 0; j < n; j++)
      sl_put_le16(c + SL_BOX_CHUNK_HDR + 2 * j, bx->count[first + j]);
    memcpy(c + SL_BOX_CHUNK_HDR + 2 * n, bx->bytes + box * SL_BOX_BYTES,
           (size_t)nb * SL_BOX_BYTES);
    uint8_t key[SL_LMDB_IX_KEY_LEN];
    memcpy(key, SL_LMDB_BX_PREFIX, SL_LMDB_IX_PREFIX_LEN);
    sl_put_be32(key + SL_LMDB_IX_PREFIX_LEN, *chunks);
    st = put(w, key, sizeof key, c, bytes, err);
    free(c);
    (*chunks)++;
    first += n;
    box += nb;
  }
  return st;
}

sl_status sl_lmdb_writer_finish(sl_lmdb_writer *w, uint64_t count,
                                uint32_t nclasses, const char *const *classes,
                                uint32_t k, const char *settings,
                                const char *levels, const sl_fw_boxes *bx,
                                sl_err *err) {
  size_t entry = sl_lmdb_ix_entry_bytes(k);
  uint64_t per_chunk = sl_lmdb_ix_chunk_samples(k);
  size_t cap = 160 + strlen(settings) + strlen(levels);
  for (uint32_t c = 0; c < nclasses; c++)
    cap += strlen(classes[c]) + 8;
  char *text = malloc(cap);
  sl_status st = SL_OK;
  uint32_t box_chunks = 0;
  if (!text)
    st = sl_err_set(err, SL_ENOMEM, "%s: no memory", w->path);
  if (st == SL_OK && bx)
    st = put_box_chunks(w, count, bx, &box_chunks, err);
  /* The index chunks ("sluice.ix" sorts after the sample keys and before
   * "sluice.meta", so appending keeps key order). */
  uint8_t *chunk = NULL;
  if (st == SL_OK && count &&
      !(chunk = malloc(SL_LMDB_IX_HDR + (size_t)per_chunk * entry)))
    st = sl_err_set(err, SL_ENOMEM, "%s: no memory", w->path);
  for (uint64_t first = 0; st == SL_OK && first < count; first += per_chunk) {
    uint64_t n = count - first < per_chunk ? count - first : per_chunk;
    uint8_t key[SL_LMDB_IX_KEY_LEN];
    memcpy(key, SL_LMDB_IX_PREFIX, SL_LMDB_IX_PREFIX_LEN);
    sl_put_be32(key + SL_LMDB_IX_PREFIX_LEN, (uint32_t)(first / per_chunk));
    memcpy(chunk, SL_LMDB_IX_MAGIC, 4);
    sl_put_le32(chunk + 4, (uint32_t)n);
    memcpy(chunk + SL_LMDB_IX_HDR, w->ix + first * entry, (size_t)n * entry);
    st =
        put(w, key, sizeof key, chunk, SL_LMDB_IX_HDR + (size_t)n * entry, err);
  }
  free(chunk);
  size_t n = 0;
  if (st == SL_OK) {
    n += (size_t)snprintf(
        text + n, cap - n, "%s %u\ncount %" PRIu64 "\nclasses %" PRIu32 "\n",
        SL_LMDB_META_HEAD, bx ? SL_LMDB_LAYOUT_BOXES : w->version, count,
        nclasses);
    for (uint32_t c = 0; c < nclasses; c++)
      n += (size_t)snprintf(text + n, cap - n, "class %s\n", classes[c]);
    n += (size_t)snprintf(text + n, cap - n, "targets %" PRIu32 "\n", k);
    if (levels[0])
      n += (size_t)snprintf(text + n, cap - n, "levels %s\n", levels);
    if (bx)
      n +=
          (size_t)snprintf(text + n, cap - n, "boxes %" PRIu64 " %" PRIu32 "\n",
                           bx->total, box_chunks);
    n += (size_t)snprintf(text + n, cap - n, "writer %s\n", settings);
    st = put(w, SL_LMDB_META_KEY, strlen(SL_LMDB_META_KEY), text, n, err);
  }
  free(text);
  if (st == SL_OK)
    st = end_txn(w, err);
  if (st == SL_OK) {
    int rc = mdb_env_sync(w->env, 1);
    if (rc)
      st = lerr(w, rc, "sync", err);
  }
  sl_lmdb_writer_free(w);
  return st;
}

void sl_lmdb_writer_free(sl_lmdb_writer *w) {
  if (!w)
    return;
  if (w->txn)
    mdb_txn_abort(w->txn);
  if (w->env)
    mdb_env_close(w->env);
  free(w->buf);
  free(w->ix);
  free(w);
}
