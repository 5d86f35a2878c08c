/* libFuzzer target: the box record parser (formats/core/boxes.h) and the LMDB
 * reader's use of it (formats/lmdb/source_lmdb.c take_box_chunk, the box checks
 * of sl_source_check_entry).
 *
 * First byte even: the input is one box chunk; sl_box_chunk_parse must
 * accept it or say why, and an accepted chunk's counts must add up to its
 * boxes, which lie inside the input.
 * First byte odd: the harness writes a sluice LMDB file (layout 5) with
 * liblmdb whose records and index are sound, 1..4 samples (byte 1), whose
 * metadata claims the box total of bytes 2..3 in 1 or 2 chunks (byte 4),
 * and whose box chunk values are the rest of the input (split at byte 5
 * when 2); it opens it as the loader does (mmap) and in verify mode. A
 * refused file must say why; an accepted one must hand out only boxes that
 * pass sl_box_check, as many as the metadata said.
 * Seeds in fuzz/corpus_boxes. Build and run: fuzz/run.sh. */
#include <lmdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/core/boxes.h"
#include "formats/core/layout.h"
#include "formats/core/source.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void one_chunk(const uint8_t *data, size_t size) {
  sl_box_chunk c;
  const char *why = sl_box_chunk_parse(data, size, &c);
  if (why) {
    if (!why[0])
      abort(); /* a rejection always says why */
    return;
  }
  uint64_t total = 0;
  for (uint32_t j = 0; j < c.n; j++)
    total += sl_box_chunk_count(&c, j);
  if (total != c.total || c.boxes < data ||
      c.boxes + c.total * SL_BOX_BYTES != data + size)
    abort();
  for (uint64_t k = 0; k < c.total; k++) {
    sl_box b;
    sl_box_decode(c.boxes + k * SL_BOX_BYTES, &b);
    (void)sl_box_check(&b, 4);
  }
}

static int put(MDB_txn *t, MDB_dbi d, const void *k, size_t kl, const void *v,
               size_t vl) {
  MDB_val key = {kl, (void *)(uintptr_t)k}, val = {vl, (void *)(uintptr_t)v};
  return mdb_put(t, d, &key, &val, MDB_APPEND);
}

static void on_bad(void *user, uint64_t i, const char *why) {
  (void)i;
  if (!why[0])
    abort();
  ++*(int *)user;
}

static void check_open(const char *path, uint64_t want_total) {
  for (int verify = 0; verify < 2; verify++) {
    sl_err err = {0};
    sl_source *src = NULL;
    int bad = 0;
    sl_status st =
        verify
            ? sl_source_open_verify_opts(&src, path, NULL, SL_SOURCE_MMAP,
                                         on_bad, &bad, &err)
            : sl_source_open(&src, path, SL_FORMAT_LMDB, SL_SOURCE_MMAP, &err);
    if (st != SL_OK) {
      if (!err.msg[0])
        abort();
      continue;
    }
    if (sl_source_box_total(src) != want_total)
      abort();
    uint64_t seen = 0;
    for (uint64_t i = 0; i < sl_source_count(src); i++) {
      uint32_t n;
      const sl_box *b = sl_source_boxes(src, i, &n);
      if (n > sl_source_max_boxes(src) || (n && !b))
        abort();
      for (uint32_t k = 0; k < n; k++)
        if (sl_box_check(&b[k], sl_source_class_count(src)))
          abort();
      seen += n;
    }
    if (seen > want_total || (!verify && seen != want_total))
      abort();
    sl_source_close(src);
  }
}

static void lmdb_file(const uint8_t *data, size_t size) {
  if (size < 6)
    return;
  uint32_t n = 1 + data[1] % 4;
  uint64_t total = data[2] | (uint64_t)data[3] << 8;
  uint32_t chunks = 1 + data[4] % 2;
  size_t split = chunks == 2 ? data[5] : 0;
  data += 6;
  size -= 6;
  if (split > size)
    split = size;
  char path[128];
  const char *tmp = getenv("TMPDIR");
  snprintf(path, sizeof path, "%s/fuzz_boxes.%ld.lmdb", tmp ? tmp : "/tmp",
           (long)getpid());
  unlink(path);
  MDB_env *env = NULL;
  MDB_txn *t = NULL;
  MDB_dbi d;
  int rc = mdb_env_create(&env);
  if (!rc)
    rc = mdb_env_set_mapsize(env, 64u << 20);
  if (!rc)
    rc = mdb_env_open(env, path, MDB_NOSUBDIR | MDB_NOLOCK | MDB_NOSYNC, 0644);
  if (!rc)
    rc = mdb_txn_begin(env, NULL, 0, &t);
  if (!rc)
    rc = mdb_dbi_open(t, NULL, 0, &d);
  static const uint8_t jpeg[4] = {0xFF, 0xD8, 0xFF, 0xD9};
  uint8_t ix[SL_LMDB_IX_HDR + 4 * SL_LMDB_IX_ENTRY];
  memcpy(ix, SL_LMDB_IX_MAGIC, 4);
  sl_put_le32(ix + 4, n);
  for (uint32_t i = 0; !rc && i < n; i++) {
    sl_record_hdr h = {
        SL_LMDB_LAYOUT_VERSION, SL_IMAGE_JPEG, 3, 8, 8, -1, 4, 0};
    uint8_t v[SL_LMDB_HDR_BYTES + 4], key[8];
    sl_record_hdr_encode(v, &h);
    memcpy(v + SL_LMDB_HDR_BYTES, jpeg, 4);
    sl_ix_entry_encode(ix + SL_LMDB_IX_HDR + i * SL_LMDB_IX_ENTRY, &h);
    sl_put_be64(key, i);
    rc = put(t, d, key, 8, v, sizeof v);
  }
  for (uint32_t c = 0; !rc && c < chunks; c++) {
    uint8_t key[SL_LMDB_IX_KEY_LEN];
    memcpy(key, SL_LMDB_BX_PREFIX, SL_LMDB_IX_PREFIX_LEN);
    sl_put_be32(key + SL_LMDB_IX_PREFIX_LEN, c);
    const uint8_t *v = c ? data + split : data;
    size_t vl = chunks == 1 ? size : c ? size - split : split;
    rc = put(t, d, key, sizeof key, vl ? v : jpeg, vl ? vl : 1);
  }
  if (!rc) {
    uint8_t key[SL_LMDB_IX_KEY_LEN];
    memcpy(key, SL_LMDB_IX_PREFIX, SL_LMDB_IX_PREFIX_LEN);
    sl_put_be32(key + SL_LMDB_IX_PREFIX_LEN, 0);
    rc = put(t, d, key, sizeof key, ix, SL_LMDB_IX_HDR + n * SL_LMDB_IX_ENTRY);
  }
  if (!rc) {
    char meta[256];
    int ml = snprintf(meta, sizeof meta,
                      "sluice-lmdb 5\ncount %u\nclasses 4\nclass a\nclass "
                      "b\nclass c\nclass d\ntargets 0\nboxes %llu %u\n"
                      "writer fuzz\n",
                      n, (unsigned long long)total, chunks);
    rc =
        put(t, d, SL_LMDB_META_KEY, strlen(SL_LMDB_META_KEY), meta, (size_t)ml);
  }
  if (!rc)
    rc = mdb_txn_commit(t);
  else if (t)
    mdb_txn_abort(t);
  if (env)
    mdb_env_close(env);
  if (!rc)
    check_open(path, total);
  unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  if (data[0] % 2 == 0)
    one_chunk(data + 1, size - 1);
  else
    lmdb_file(data, size);
  return 0;
}
