/* HDF5 files a small writer makes whose shape or structure, not their
 * bytes, would size the memory or the work of sluice's open (issue 25):
 * written by h5py (foreign/make_h5_bounds.py, /usr/bin/python3), some then
 * grafted with hand-made bytes. Each bound is checked on the code's own
 * counters: the largest allocation the formats' objects request (linked
 * through tests/support/alloc_fail.c), and the source's parse counters;
 * never a timer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hdf5.h>

#include "formats/core/source.h"
#include "formats/core/source_impl.h"
#include "support/alloc_fail.h"
#include "tests/support/test_dir.h"

#ifndef SLUICE_TEST_PYTHON
#define SLUICE_TEST_PYTHON "/usr/bin/python3"
#endif

static char g_dir[512];

static int setup(void **state) {
  (void)state;
  const char *tmp = getenv("SLUICE_TEST_TMP");
  snprintf(g_dir, sizeof g_dir, "%s/h5bounds-%ld", tmp ? tmp : "/tmp",
           (long)getpid());
  if (mkdir(g_dir, 0755) != 0)
    return -1;
  char args[600];
  snprintf(args, sizeof args, "'%s'", g_dir);
  return sl_test_make_fixtures("test_h5_bounds", SLUICE_TEST_PYTHON,
                               SLUICE_H5_BOUNDS_PY, args,
                               "python3-h5py and python3-numpy");
}

static int teardown(void **state) {
  (void)state;
  return sl_test_remove_dir(g_dir);
}

static void fixture(const char *name, char *p, size_t cap) {
  snprintf(p, cap, "%s/%s.h5", g_dir, name);
}

/* Opens path with opts (NULL: defaults): the status, the message in err,
 * the largest allocation requested meanwhile in *largest. */
static sl_status open_counted(const char *path, const sl_source_opts *opts,
                              sl_source **src, sl_err *err,
                              unsigned long long *largest) {
  sl_alloc_largest_reset();
  sl_status st = sl_source_open_opts(src, path, opts, SL_SOURCE_MMAP, err);
  *largest = sl_alloc_largest();
  return st;
}

/* 1,400 bytes claiming (2^32, 4, 4) in chunks of 1,024 rows, none written:
 * before the bound, 4 M chunk entries and then a 103 GB index were asked
 * for. Refused before anything is sized by the shape. */
static void test_chunked_shape_not_backed(void **state) {
  (void)state;
  char p[700];
  fixture("sparse_huge", p, sizeof p);
  sl_source *src = NULL;
  sl_err err = {0};
  unsigned long long largest = 0;
  sl_status st = open_counted(p, NULL, &src, &err, &largest);
  print_message("sparse_huge (1400 bytes): status %d, largest request %llu "
                "bytes: %s\n",
                (int)st, largest, err.msg);
  assert_int_equal(st, SL_ETOOBIG);
  assert_non_null(strstr(err.msg, "dataset.max_fill_samples"));
  assert_non_null(strstr(err.msg, "/images"));
  assert_true(largest <= 1u << 20);
  sl_source_close(src);
}

/* 100,352 of 102,400 samples in chunks never written: refused by default
 * (saying so, and by which setting), read once the limit is raised. */
static void test_chunked_fill_limit(void **state) {
  (void)state;
  char p[700];
  fixture("sparse_part", p, sizeof p);
  sl_source *src = NULL;
  sl_err err = {0};
  unsigned long long largest = 0;
  sl_status st = open_counted(p, NULL, &src, &err, &largest);
  assert_int_equal(st, SL_ETOOBIG);
  assert_non_null(strstr(err.msg, "100352 samples in 98 chunks never"));
  assert_non_null(strstr(err.msg, "dataset.max_fill_samples = 65536"));
  assert_true(largest <= 1u << 20); /* refused before the index */
  sl_source_close(src);
  src = NULL;
  sl_source_opts o = {0};
  o.max_fill_samples = 100352;
  st = open_counted(p, &o, &src, &err, &largest);
  if (st != SL_OK)
    fail_msg("max_fill_samples = 100352: %s", err.msg);
  assert_int_equal(sl_source_count(src), 100 * 1024);
  assert_true(largest >= 100 * 1024 * SL_SAMPLE_INFO_BYTES);
  sl_source_close(src);
}

static void put_le(uint8_t *p, uint64_t v, int n) {
  for (int i = 0; i < n; i++, v >>= 8)
    p[i] = (uint8_t)v;
}

/* vlen_png with ncoll heap collections appended, each holding the PNG as
 * object 1 and fill objects 2..filler+1 of one byte, and descriptor i
 * pointing at collection i % ncoll: written to name. */
static void graft_heaps(const char *name, int ncoll, unsigned filler) {
  char in[700], out[700];
  fixture("vlen_png", in, sizeof in);
  fixture(name, out, sizeof out);
  hid_t f = H5Fopen(in, H5F_ACC_RDONLY, H5P_DEFAULT);
  assert_true(f >= 0);
  hid_t d = H5Dopen2(f, "images", H5P_DEFAULT);
  assert_true(d >= 0);
  haddr_t desc = H5Dget_offset(d);
  assert_true(desc != HADDR_UNDEF);
  H5Dclose(d);
  H5Fclose(f);
  FILE *fp = fopen(in, "rb");
  assert_non_null(fp);
  struct stat st;
  assert_int_equal(fstat(fileno(fp), &st), 0);
  uint64_t size = (uint64_t)st.st_size;
  /* The PNG: the first descriptor's object, found in its collection. */
  uint8_t *b = malloc(size);
  assert_non_null(b);
  assert_int_equal(fread(b, 1, size, fp), size);
  fclose(fp);
  uint32_t n = (uint32_t)b[desc] | (uint32_t)b[desc + 1] << 8;
  uint64_t coll = 0;
  for (int k = 7; k >= 0; k--)
    coll = coll << 8 | b[desc + 4 + k];
  const uint8_t *png = NULL;
  for (uint64_t p = coll + 16; p + 16 <= size; p++)
    if (memcmp(b + p, "\x89PNG", 4) == 0) {
      png = b + p;
      break;
    }
  assert_non_null(png);
  uint64_t obj1 = 16 + ((n + 7) & ~7u), csize = 16 + obj1 + 24ull * filler;
  uint64_t total = size + (uint64_t)ncoll * csize;
  uint8_t *o = calloc(total, 1);
  assert_non_null(o);
  memcpy(o, b, size);
  for (int c = 0; c < ncoll; c++) {
    uint8_t *g = o + size + (uint64_t)c * csize;
    memcpy(g, "GCOL", 4);
    g[4] = 1;
    put_le(g + 8, csize, 8);
    uint8_t *e = g + 16;
    put_le(e, 1, 2);
    put_le(e + 8, n, 8);
    memcpy(e + 16, png, n);
    e += obj1;
    for (unsigned k = 0; k < filler; k++, e += 24) {
      put_le(e, 2 + k % 65000, 2);
      put_le(e + 8, 1, 8);
    }
  }
  for (uint64_t i = 0; i < 1024; i++) {
    uint8_t *dd = o + desc + 16 * i;
    put_le(dd + 4, size + (i % (uint64_t)ncoll) * csize, 8);
    put_le(dd + 12, 1, 4);
  }
  fp = fopen(out, "wb");
  assert_non_null(fp);
  assert_int_equal(fwrite(o, 1, total, fp), total);
  assert_int_equal(fclose(fp), 0);
  free(o);
  free(b);
}

/* 1,024 descriptors alternating between two collections of 20,000 objects
 * (h5py's collections hold under 171): before, every sample parsed its
 * collection again, 20 M objects stepped; now both stay parsed. */
static void test_vlen_two_heaps_alternating(void **state) {
  (void)state;
  graft_heaps("vlen_two", 2, 20000);
  char p[700];
  fixture("vlen_two", p, sizeof p);
  sl_source *src = NULL;
  sl_err err = {0};
  sl_status st = sl_source_open(&src, p, SL_FORMAT_AUTO, SL_SOURCE_MMAP, &err);
  if (st != SL_OK)
    fail_msg("vlen_two: %s", err.msg);
  assert_int_equal(sl_source_count(src), 1024);
  print_message("vlen_two: %" PRIu64 " heap objects stepped (%d without "
                "the slots)\n",
                src->heap_steps, 1024 * 20001);
  assert_true(src->heap_steps <= 2 * 20001 + 64);
  sl_source_close(src);
}

static void count_bad(void *user, uint64_t index, const char *reason) {
  (void)index;
  (void)reason;
  ++*(uint64_t *)user;
}

/* Twelve such collections in turn, more than the parsed slots: refused
 * once the work passes its bound, the work stepped within it. */
static void test_vlen_heaps_cycling(void **state) {
  (void)state;
  graft_heaps("vlen_twelve", 12, 20000);
  char p[700];
  fixture("vlen_twelve", p, sizeof p);
  struct stat sb;
  assert_int_equal(stat(p, &sb), 0);
  sl_source *src = NULL;
  sl_err err = {0};
  sl_status st = sl_source_open(&src, p, SL_FORMAT_AUTO, SL_SOURCE_MMAP, &err);
  print_message("vlen_twelve (%lld bytes): status %d: %s\n",
                (long long)sb.st_size, (int)st, err.msg);
  assert_int_not_equal(st, SL_OK);
  assert_non_null(strstr(err.msg, "out of their order"));
  sl_source_close(src);
  /* The bound itself, on the counter, through verify mode (which goes on
   * past the refused samples). */
  uint64_t nbad = 0;
  st = sl_source_open_verify_opts(&src, p, NULL, SL_SOURCE_MMAP, count_bad,
                                  &nbad, &err);
  if (st != SL_OK)
    fail_msg("vlen_twelve, verify: %s", err.msg);
  uint64_t bound = (uint64_t)sb.st_size / 8 + 256 * 1024;
  print_message("vlen_twelve, verify: %" PRIu64 " samples refused, %" PRIu64
                " objects stepped, bound %" PRIu64 " (%d without it)\n",
                nbad, src->heap_steps, bound, 1024 * 20001);
  assert_true(nbad > 0 && src->heap_steps <= bound);
  sl_source_close(src);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_chunked_shape_not_backed),
      cmocka_unit_test(test_chunked_fill_limit),
      cmocka_unit_test(test_vlen_two_heaps_alternating),
      cmocka_unit_test(test_vlen_heaps_cycling),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
