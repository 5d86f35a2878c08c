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

#include "formats/source.h"
#include "support/alloc_fail.h"

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
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "'%s' '%s' '%s'", SLUICE_TEST_PYTHON,
           SLUICE_H5_BOUNDS_PY, g_dir);
  if (system(cmd) != 0) {
    fprintf(stderr,
            "test_h5_bounds: %s failed: the fixtures need Debian's "
            "python3-h5py for %s (scripts/deps.sh)\n",
            cmd, SLUICE_TEST_PYTHON);
    return -1;
  }
  return 0;
}

static int teardown(void **state) {
  (void)state;
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
  return system(cmd) == 0 ? 0 : -1;
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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_chunked_shape_not_backed),
      cmocka_unit_test(test_chunked_fill_limit),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
