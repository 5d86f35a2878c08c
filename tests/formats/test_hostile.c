/* Hostile inputs from issue 41's review, each made here by a few lines of C
 * (no big file in the repository): folders whose links would make a walk
 * exponential, dangling links, shards that shrink under their mapping,
 * brace patterns that would expand to gigabytes, small files that would ask
 * for gigabytes. Each case checks that the reader's cost follows what the
 * input holds (docs/FAULTS.md states the bounds) and that its error names
 * the file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
// clang-format off
#include <cmocka.h>
// clang-format on

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "formats/source.h"
#include "support/test_dir.h"

static char g_dir[512];

/* A whole 1x1 grey PNG (67 bytes). */
static const unsigned char k_png[] = {
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d,
    0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01,
    0x08, 0x00, 0x00, 0x00, 0x00, 0x3a, 0x7e, 0x9b, 0x55, 0x00, 0x00, 0x00,
    0x0a, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x60, 0x00, 0x00, 0x00,
    0x02, 0x00, 0x01, 0x48, 0xaf, 0xa4, 0x71, 0x00, 0x00, 0x00, 0x00, 0x49,
    0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82};

static void in_dir(char *out, size_t cap, const char *fmt, ...) {
  int n = snprintf(out, cap, "%s/", g_dir);
  assert_true(n > 0 && (size_t)n < cap);
  va_list ap;
  va_start(ap, fmt);
  int m = vsnprintf(out + n, cap - (size_t)n, fmt, ap);
  va_end(ap);
  assert_true(m >= 0 && (size_t)m < cap - (size_t)n);
}

static void write_bytes(const char *path, const void *p, size_t n) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(p, 1, n, f), n);
  assert_int_equal(fclose(f), 0);
}

static void make_dir(const char *path) {
  if (mkdir(path, 0755) != 0)
    fail_msg("mkdir %s: %s", path, strerror(errno));
}

/* ---- 6: a dangling link last in readdir ---------------------------------- */

/* Class "b" holds only dangling links, so whatever order readdir returns,
 * the last entry it sees is one: skipped as os.walk skips it, the folder
 * read (errno was left set by the failed stat and read as readdir's). */
static void test_folder_dangling_link_last(void **state) {
  (void)state;
  char root[700], p[900];
  in_dir(root, sizeof root, "dangling");
  make_dir(root);
  snprintf(p, sizeof p, "%s/a", root);
  make_dir(p);
  snprintf(p, sizeof p, "%s/a/x.png", root);
  write_bytes(p, k_png, sizeof k_png);
  snprintf(p, sizeof p, "%s/b", root);
  make_dir(p);
  for (int i = 0; i < 3; i++) {
    snprintf(p, sizeof p, "%s/b/gone%d.png", root, i);
    assert_int_equal(symlink("nowhere.png", p), 0);
  }
  sl_err err = {0};
  sl_source *src = NULL;
  sl_status st =
      sl_source_open(&src, root, SL_FORMAT_AUTO, SL_SOURCE_PREAD, &err);
  if (st != SL_OK)
    fail_msg("%s", err.msg);
  assert_int_equal(sl_source_count(src), 1);
  sl_source_close(src);
}

static int setup(void **state) {
  (void)state;
  return sl_test_make_dir(g_dir, sizeof g_dir, "hostile");
}

static int teardown(void **state) {
  (void)state;
  return sl_test_remove_dir(g_dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_folder_dangling_link_last),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
