/* The chunk index parser (formats/hdf5/h5chunk.c) against HDF5's own answer:
 * files written by h5py (foreign/make_h5chunk.py, /usr/bin/python3) with
 * each chunk index h5py makes (v1 B-trees of one and two levels, paged and
 * unpaged fixed arrays, filtered and not, a single chunk, the implicit
 * index, extensible arrays: entries in the index block, super blocks,
 * paged data blocks, a maximum shape wider than the shape), gzip/shuffle/
 * fletcher32 chunks of varied sizes, a chunk whose filter was skipped
 * (filter mask 1), a grid over two axes with partial edge chunks,
 * unallocated chunks, blocks and pages, and a 512-byte userblock. Every
 * chunk's address, stored size and filter mask must equal
 * H5Dget_chunk_info's (with the userblock added, as HDF5 before 1.14.4
 * does not), and the chunks HDF5 does not list must be unallocated; for
 * the 140,000-chunk files (HDF5's per-chunk query is linear in the chunks)
 * every 997th chunk and the last ones are asked by coordinate. A v2
 * B-tree must be reported as not parsed.
 *
 * Then the same files cut at many lengths and with each metadata byte
 * flipped: every parse returns (ASan watches), a refusal says why, and an
 * accepted index never points outside the file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <hdf5.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "formats/hdf5/h5chunk.h"
#include "tests/support/test_dir.h"

#ifndef SLUICE_TEST_PYTHON
#define SLUICE_TEST_PYTHON "/usr/bin/python3"
#endif

static char g_dir[512];

static uint64_t sl_h5c_test_le64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--)
    v = v << 8 | p[i];
  return v;
}

static const char *const k_files[] = {
    "bt_gzip",     "bt_grid",      "bt_ub",
    "bt_mask",     "bt_big",       "fa_gzip",
    "fa_plain",    "fa_unalloc",   "implicit",
    "single_gzip", "single_plain", "ea",
    "ea_gzip",     "ea_grid",      "ea_unalloc",
    "ea_big",      "ea_paged",     "ea_pages_unwritten",
    NULL};

/* Too large to check chunk by chunk against HDF5 (sampled) or to cut and
 * flip byte by byte (the same structures as smaller files). */
static bool is_big(const char *name) {
  return strcmp(name, "bt_big") == 0 || strcmp(name, "ea_big") == 0 ||
         strncmp(name, "ea_pag", 6) == 0;
}

static const struct {
  const char *file, *kind;
} k_kinds[] = {
    {"bt_gzip", "v1 B-tree"},        {"fa_gzip", "fixed array"},
    {"single_gzip", "single chunk"}, {"implicit", "implicit"},
    {"fa_unalloc", "fixed array"},   {"ea_gzip", "extensible array"},
};

static int setup(void **state) {
  (void)state;
  const char *tmp = getenv("SLUICE_TEST_TMP");
  snprintf(g_dir, sizeof g_dir, "%s/h5chunk-%ld", tmp ? tmp : "/tmp",
           (long)getpid());
  if (mkdir(g_dir, 0755) != 0)
    return -1;
  char arg[1100];
  snprintf(arg, sizeof arg, "'%s'", g_dir);
  return sl_test_make_fixtures("test_h5chunk", SLUICE_TEST_PYTHON,
                               SLUICE_H5CHUNK_PY, arg, "python3-h5py");
}

static int teardown(void **state) {
  (void)state;
  return sl_test_remove_dir(g_dir);
}

/* A fixture: its bytes, and what HDF5 says of /images. */
typedef struct fx {
  uint8_t *bytes;
  uint64_t size;
  sl_h5_chunk_query q;
  uint64_t dims[SL_H5C_MAX_RANK], maxdims[SL_H5C_MAX_RANK];
  hid_t file, d;
} fx;

static void fx_open(const char *name, fx *x) {
  char p[700];
  snprintf(p, sizeof p, "%s/%s.h5", g_dir, name);
  FILE *f = fopen(p, "rb");
  assert_non_null(f);
  struct stat st;
  assert_int_equal(fstat(fileno(f), &st), 0);
  x->size = (uint64_t)st.st_size;
  x->bytes = malloc(x->size);
  assert_non_null(x->bytes);
  assert_int_equal(fread(x->bytes, 1, x->size, f), x->size);
  fclose(f);
  x->file = H5Fopen(p, H5F_ACC_RDONLY, H5P_DEFAULT);
  assert_true(x->file >= 0);
  x->d = H5Dopen2(x->file, "images", H5P_DEFAULT);
  assert_true(x->d >= 0);
  hid_t sp = H5Dget_space(x->d), t = H5Dget_type(x->d),
        fcpl = H5Fget_create_plist(x->file);
  hsize_t dims[SL_H5C_MAX_RANK], maxdims[SL_H5C_MAX_RANK], ub = 0;
  int rank = H5Sget_simple_extent_dims(sp, dims, maxdims);
  assert_true(rank >= 1 && rank <= SL_H5C_MAX_RANK);
  assert_true(H5Pget_userblock(fcpl, &ub) >= 0);
  for (int i = 0; i < rank; i++) {
    x->dims[i] = dims[i];
    x->maxdims[i] = maxdims[i] == H5S_UNLIMITED ? UINT64_MAX : maxdims[i];
  }
  H5O_info_t oi;
  assert_true(H5Oget_info2(x->d, &oi, H5O_INFO_BASIC) >= 0);
  x->q = (sl_h5_chunk_query){.file = x->bytes,
                             .file_size = x->size,
                             .base = ub,
                             .ohdr = oi.addr,
                             .rank = rank,
                             .dims = x->dims,
                             .maxdims = x->maxdims,
                             .elem_size = (uint32_t)H5Tget_size(t),
                             .max_chunks = 1u << 20};
  H5Sclose(sp);
  H5Tclose(t);
  H5Pclose(fcpl);
}

static void fx_close(fx *x) {
  H5Dclose(x->d);
  H5Fclose(x->file);
  free(x->bytes);
}

static void test_matches_hdf5(void **state) {
  (void)state;
  unsigned maj, min, rel;
  H5get_libversion(&maj, &min, &rel);
  bool add_ub = maj == 1 && (min < 14 || (min == 14 && rel < 4));
  for (int f = 0; k_files[f]; f++) {
    fx x;
    fx_open(k_files[f], &x);
    sl_h5_chunk_index ix;
    char why[256];
    sl_h5c_result r = sl_h5_chunk_index_read(&x.q, &ix, why, sizeof why);
    if (r != SL_H5C_OK)
      fail_msg("%s: result %d: %s", k_files[f], (int)r, why);
    for (size_t k = 0; k < sizeof k_kinds / sizeof k_kinds[0]; k++)
      if (strcmp(k_kinds[k].file, k_files[f]) == 0)
        assert_string_equal(ix.kind, k_kinds[k].kind);
    hid_t sp = H5Dget_space(x.d);
    hsize_t n = 0;
    assert_true(H5Dget_num_chunks(x.d, sp, &n) >= 0);
    uint64_t allocated = 0;
    for (uint64_t k = 0; k < ix.nchunks; k++)
      allocated += ix.chunk[k].addr != SL_H5C_UNALLOCATED;
    if (allocated != n)
      fail_msg("%s: %" PRIu64 " chunks parsed, HDF5 lists %llu", k_files[f],
               allocated, (unsigned long long)n);
    if (n > 20000) { /* sampled, by coordinate */
      for (uint64_t k = 0; k < ix.nchunks;
           k += k + 40 >= ix.nchunks ? 1 : 997) {
        hsize_t coord[SL_H5C_MAX_RANK];
        uint64_t rest = k;
        for (int a = x.q.rank - 1; a >= 0; a--) {
          coord[a] = (rest % ix.grid[a]) * ix.cdims[a];
          rest /= ix.grid[a];
        }
        unsigned mask = 0;
        haddr_t at = HADDR_UNDEF;
        hsize_t size = 0;
        assert_true(H5Dget_chunk_info_by_coord(x.d, coord, &mask, &at, &size) >=
                    0);
        const sl_h5_chunk *c = &ix.chunk[k];
        uint64_t want = at == HADDR_UNDEF ? SL_H5C_UNALLOCATED
                                          : at + (add_ub ? x.q.base : 0);
        if (c->addr != want || (at != HADDR_UNDEF && c->size != size))
          fail_msg("%s: chunk %" PRIu64 ": parsed at %" PRIu64 ", %" PRIu32
                   " bytes; HDF5: at %" PRIu64 ", %llu bytes",
                   k_files[f], k, c->addr, c->size, want,
                   (unsigned long long)size);
      }
      n = 0;
    }
    for (hsize_t i = 0; i < n; i++) {
      hsize_t off[SL_H5C_MAX_RANK], size;
      unsigned mask;
      haddr_t at;
      assert_true(H5Dget_chunk_info(x.d, sp, i, off, &mask, &at, &size) >= 0);
      uint64_t k = 0;
      for (int a = 0; a < x.q.rank; a++)
        k = k * ix.grid[a] + off[a] / ix.cdims[a];
      const sl_h5_chunk *c = &ix.chunk[k];
      uint64_t want = at + (add_ub ? x.q.base : 0);
      if (c->addr != want || c->size != size || c->mask != mask)
        fail_msg("%s: chunk %" PRIu64 ": parsed at %" PRIu64 ", %" PRIu32
                 " bytes, mask %" PRIu32 "; HDF5: at %" PRIu64
                 ", %llu bytes, mask %u",
                 k_files[f], k, c->addr, c->size, c->mask, want,
                 (unsigned long long)size, mask);
    }
    if (strcmp(k_files[f], "bt_mask") == 0)
      assert_int_equal(ix.chunk[2].mask, 1);
    if (strcmp(k_files[f], "bt_grid") == 0) {
      assert_int_equal(ix.grid[0], 7);
      assert_int_equal(ix.grid[1], 2);
      assert_int_equal(ix.nchunks, 14);
    }
    H5Sclose(sp);
    free(ix.chunk);
    fx_close(&x);
  }
}

/* A v2 B-tree is not parsed; nor an extensible array when the caller
 * gives no maximum shape (it cannot tell the entries' order). */
static void test_not_parsed(void **state) {
  (void)state;
  fx x;
  fx_open("bt2", &x);
  sl_h5_chunk_index ix;
  char why[256];
  assert_int_equal(sl_h5_chunk_index_read(&x.q, &ix, why, sizeof why),
                   SL_H5C_UNSUPPORTED);
  assert_non_null(strstr(why, "version 2 B-tree"));
  assert_int_equal(ix.nchunks, 6);
  free(ix.chunk);
  fx_close(&x);
  fx_open("ea", &x);
  x.q.maxdims = NULL;
  assert_int_equal(sl_h5_chunk_index_read(&x.q, &ix, why, sizeof why),
                   SL_H5C_UNSUPPORTED);
  assert_non_null(strstr(why, "extensible array"));
  free(ix.chunk);
  fx_close(&x);
}

/* Two data blocks swapped in the extensible array's index block: each
 * block's offset field names the slot it belongs to, so the swap is
 * damage, not other chunks' addresses. */
static void test_ea_block_in_wrong_slot(void **state) {
  (void)state;
  fx x;
  fx_open("ea_gzip", &x);
  const uint8_t *h = memmem(x.bytes, x.size, "EAHD", 4);
  assert_non_null(h);
  uint64_t ib = sl_h5c_test_le64(h + 60) + x.q.base;
  unsigned esz = h[6], idx_n = h[8];
  uint8_t *slots = x.bytes + ib + 14 + (uint64_t)idx_n * esz, tmp[8];
  memcpy(tmp, slots + 8, 8); /* data blocks 1 and 2 (super blocks 1, 2) */
  memcpy(slots + 8, slots + 16, 8);
  memcpy(slots + 16, tmp, 8);
  sl_h5_chunk_index ix;
  char why[256];
  assert_int_equal(sl_h5_chunk_index_read(&x.q, &ix, why, sizeof why),
                   SL_H5C_DAMAGED);
  if (!strstr(why, "block offset"))
    fail_msg("ea_gzip with two data blocks swapped: %s", why);
  free(ix.chunk);
  fx_close(&x);
}

static void put_le(uint8_t *p, uint64_t v, int n) {
  for (int i = 0; i < n; i++, v >>= 8)
    p[i] = (uint8_t)v;
}

/* A v1 B-tree node header at p: level, ent entries, no siblings. */
static void tree_node(uint8_t *p, int level, unsigned ent) {
  memcpy(p, "TREE", 4);
  p[4] = 1;
  p[5] = (uint8_t)level;
  put_le(p + 6, ent, 2);
  memset(p + 8, 0xff, 16);
}

/* Issue 25: bt_gzip's B-tree replaced by a root whose 601 entries all name
 * one leaf of 16,384 keys beyond the dataset's extent (skipped, as after a
 * shrink): 602 nodes, within the node bound (2 x 300 chunks + 2), but
 * 9.8 M entries to visit for a 1 MB file without a bound on entries (the
 * reviewer's 6.3 MB, 2,000 chunks: 1.2 s). Refused at the leaf's second
 * visit; the parser's own count of entries visited stays within what the
 * file has room for. */
static void test_btree_shared_subtree(void **state) {
  (void)state;
  fx x;
  fx_open("bt_gzip", &x);
  uint64_t keysz = 8 + 8 * ((uint64_t)x.q.rank + 1), esz = keysz + 8;
  sl_h5_chunk_index ix;
  char why[256];
  /* The file as h5py wrote it: every entry visited once. */
  assert_int_equal(sl_h5_chunk_index_read(&x.q, &ix, why, sizeof why),
                   SL_H5C_OK);
  assert_true(ix.entries >= 300 && ix.entries <= x.size / esz);
  uint64_t grid0 = ix.grid[0], cdim0 = ix.cdims[0], nodes_max = 2 * 300 + 2;
  free(ix.chunk);
  /* The root: the chunk node of the highest level; the layout message
   * holds its address (the only other place those 8 bytes are). */
  uint64_t root = 0;
  int level = -1;
  for (uint64_t p = 0; p + 8 <= x.size; p++)
    if (memcmp(x.bytes + p, "TREE", 4) == 0 && x.bytes[p + 4] == 1 &&
        x.bytes[p + 5] > level)
      root = p, level = x.bytes[p + 5];
  assert_true(level >= 0);
  uint64_t field = 0;
  int hits = 0;
  for (uint64_t p = 0; p + 8 <= x.size; p++)
    if (sl_h5c_test_le64(x.bytes + p) == root - x.q.base)
      field = p, hits++;
  assert_int_equal(hits, 1);
  enum { LEAF = 16384 };
  unsigned ent = (unsigned)(nodes_max - 1);
  uint64_t at_root = x.size, root_len = 24 + ent * esz + keysz;
  uint64_t at_leaf = at_root + root_len, leaf_len = 24 + LEAF * esz + keysz;
  uint64_t size = at_leaf + leaf_len;
  uint8_t *f = calloc(size, 1);
  assert_non_null(f);
  memcpy(f, x.bytes, x.size);
  put_le(f + field, at_root - x.q.base, 8);
  tree_node(f + at_root, 1, ent);
  for (unsigned e = 0; e < ent; e++)
    put_le(f + at_root + 24 + e * esz + keysz, at_leaf - x.q.base, 8);
  tree_node(f + at_leaf, 0, LEAF);
  for (unsigned e = 0; e < LEAF; e++) {
    uint8_t *k = f + at_leaf + 24 + e * esz;
    put_le(k, 1, 4);                 /* stored size */
    put_le(k + 8, grid0 * cdim0, 8); /* axis 0: past the extent */
    put_le(k + keysz, x.q.base, 8);  /* the chunk (never read) */
  }
  sl_h5_chunk_query q = x.q;
  q.file = f;
  q.file_size = size;
  sl_h5c_result r = sl_h5_chunk_index_read(&q, &ix, why, sizeof why);
  if (r != SL_H5C_DAMAGED || !strstr(why, "room for"))
    fail_msg("a shared subtree: result %d (%s), %" PRIu64 " entries visited",
             (int)r, r == SL_H5C_OK ? "accepted" : why, ix.entries);
  assert_true(ix.entries <= size / esz);
  print_message("shared subtree: refused after %" PRIu64 " entries (file of "
                "%" PRIu64 " bytes; %" PRIu64 " without the bound)\n",
                ix.entries, size, (uint64_t)ent * LEAF + ent);
  free(ix.chunk);
  free(f);
  fx_close(&x);
}

static void parse_checked(const sl_h5_chunk_query *q, const char *name,
                          const char *what, uint64_t at) {
  sl_h5_chunk_index ix;
  char why[256];
  sl_h5c_result r = sl_h5_chunk_index_read(q, &ix, why, sizeof why);
  if (r == SL_H5C_DAMAGED || r == SL_H5C_UNSUPPORTED) {
    if (!why[0])
      fail_msg("%s %s %" PRIu64 ": refused without a reason", name, what, at);
  } else if (r == SL_H5C_OK) {
    for (uint64_t k = 0; k < ix.nchunks; k++) {
      const sl_h5_chunk *c = &ix.chunk[k];
      if (c->addr != SL_H5C_UNALLOCATED &&
          (c->addr > q->file_size || c->size > q->file_size - c->addr))
        fail_msg("%s %s %" PRIu64 ": chunk %" PRIu64 " outside the file", name,
                 what, at, k);
    }
  } else if (r != SL_H5C_NOMEM) {
    fail_msg("%s %s %" PRIu64 ": result %d", name, what, at, (int)r);
  }
  free(ix.chunk);
}

static void test_damaged(void **state) {
  (void)state;
  for (int f = 0; k_files[f]; f++) {
    if (is_big(k_files[f]))
      continue; /* the same structures as smaller files */
    fx x;
    fx_open(k_files[f], &x);
    sl_h5_chunk_query q = x.q;
    /* Cut: every length up to the first 4 KiB, then every 97th byte. */
    for (uint64_t n = 0; n < x.size; n += n < 4096 ? 1 : 97) {
      uint8_t *cut = malloc(n ? n : 1);
      assert_non_null(cut);
      memcpy(cut, x.bytes, n);
      q.file = cut;
      q.file_size = n;
      parse_checked(&q, k_files[f], "cut at", n);
      free(cut);
    }
    /* Flipped: each of the first 4 KiB (the metadata h5py writes first),
     * by each of three patterns. */
    q.file_size = x.size;
    q.file = x.bytes;
    static const uint8_t pat[] = {0xff, 0x01, 0x80};
    for (uint64_t p = 0; p < x.size && p < 4096; p++)
      for (size_t v = 0; v < sizeof pat; v++) {
        x.bytes[p] ^= pat[v];
        parse_checked(&q, k_files[f], "flipped at", p);
        x.bytes[p] ^= pat[v];
      }
    fx_close(&x);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_matches_hdf5),
      cmocka_unit_test(test_not_parsed),
      cmocka_unit_test(test_ea_block_in_wrong_slot),
      cmocka_unit_test(test_btree_shared_subtree),
      cmocka_unit_test(test_damaged),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
