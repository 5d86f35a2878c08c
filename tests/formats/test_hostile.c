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
#include "tools/pack_scan.h"

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

/* ---- 1: links that would make a folder walk exponential ------------------ */

/* top/root/c/{a,b} -> top/chain/d0, and each chain/dI holds an image and two
 * links a, b to chain/dI+1 (the last holds the image only): 2^k paths reach
 * the last folder, k + 2 images are there. */
static void make_doubling_chain(const char *top, int k) {
  char p[900], q[900];
  make_dir(top);
  snprintf(p, sizeof p, "%s/chain", top);
  make_dir(p);
  for (int i = 0; i <= k; i++) {
    snprintf(p, sizeof p, "%s/chain/d%d", top, i);
    make_dir(p);
    snprintf(p, sizeof p, "%s/chain/d%d/img%d.png", top, i, i);
    write_bytes(p, k_png, sizeof k_png);
    for (int l = 0; i < k && l < 2; l++) {
      snprintf(p, sizeof p, "%s/chain/d%d/%c", top, i, "ab"[l]);
      snprintf(q, sizeof q, "../d%d", i + 1);
      assert_int_equal(symlink(q, p), 0);
    }
  }
  snprintf(p, sizeof p, "%s/root", top);
  make_dir(p);
  snprintf(p, sizeof p, "%s/root/c", top);
  make_dir(p);
  snprintf(p, sizeof p, "%s/root/c/top.png", top);
  write_bytes(p, k_png, sizeof k_png);
  for (int l = 0; l < 2; l++) {
    snprintf(p, sizeof p, "%s/root/c/%c", top, "ab"[l]);
    assert_int_equal(symlink("../../chain/d0", p), 0);
  }
}

/* The library's folder reader walks each folder once: k + 2 images, not
 * 2^(k+2) - 1 (k = 16: 262,143 before). */
static void test_folder_links_walked_once(void **state) {
  (void)state;
  enum { K = 16 };
  char top[700], root[800];
  in_dir(top, sizeof top, "chain-src");
  make_doubling_chain(top, K);
  snprintf(root, sizeof root, "%s/root", top);
  sl_err err = {0};
  sl_source *src = NULL;
  sl_status st =
      sl_source_open(&src, root, SL_FORMAT_AUTO, SL_SOURCE_PREAD, &err);
  if (st != SL_OK)
    fail_msg("%s", err.msg);
  assert_int_equal(sl_source_count(src), K + 2);
  sl_source_close(src);
}

/* pack's scan too: k + 2 inputs, and the second way into each folder
 * listed as skipped. */
static void test_pack_links_walked_once(void **state) {
  (void)state;
  enum { K = 16 };
  char top[700], root[800], msg[1024];
  in_dir(top, sizeof top, "chain-pack");
  make_doubling_chain(top, K);
  snprintf(root, sizeof root, "%s/root", top);
  sl_pack_inputs in;
  if (sl_pack_scan(&in, root, NULL, msg, sizeof msg) != 0)
    fail_msg("%s", msg);
  assert_int_equal(in.n, K + 2);
  assert_int_equal(in.skipped.n, K + 1);
  assert_non_null(strstr(in.skipped.v[0].reason, "walked once"));
  sl_pack_inputs_free(&in);
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
      cmocka_unit_test(test_folder_links_walked_once),
      cmocka_unit_test(test_pack_links_walked_once),
      cmocka_unit_test(test_folder_dangling_link_last),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
