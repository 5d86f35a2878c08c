/* The WebDataset helpers on hand-made input: brace patterns and shard
 * lists (formats/files/shard_paths.c), tar headers the fixtures of test_wds do
 * not carry (GNU base-256 sizes, a signed-sum checksum, a ustar prefix),
 * and the .npy header parser's refusals (formats/files/npy.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "formats/files/npy.h"
#include "formats/files/shard_paths.h"
#include "formats/files/tar.h"

typedef struct got {
  char all[4096];
  int n;
} got;

static sl_status add(void *ctx, const char *p, sl_err *err) {
  (void)err;
  got *g = ctx;
  size_t l = strlen(g->all);
  snprintf(g->all + l, sizeof g->all - l, "%s%s", g->n ? " " : "", p);
  g->n++;
  return SL_OK;
}

static void expands(const char *pattern, const char *want) {
  got g = {{0}, 0};
  sl_err err = {0};
  if (sl_shard_expand(pattern, false, add, &g, &err) != SL_OK)
    fail_msg("%s: %s", pattern, err.msg);
  if (strcmp(g.all, want) != 0)
    fail_msg("%s: '%s', expected '%s'", pattern, g.all, want);
}

static void test_braces(void **state) {
  (void)state;
  expands("a.tar", "a.tar");
  expands("s-{000008..000010}.tar", "s-000008.tar s-000009.tar s-000010.tar");
  expands("s-{8..10}.tar", "s-8.tar s-9.tar s-10.tar");
  expands("s-{08..10}.tar", "s-08.tar s-09.tar s-10.tar");
  expands("{a,b}-{0..1}.tar", "a-0.tar a-1.tar b-0.tar b-1.tar");
  expands("x{,y}.tar", "x.tar xy.tar");
  const char *bad[] = {"s-{3..1}.tar", "s-{a..b}.tar", "s-{..3}.tar",
                       "s-{0..2000000}.tar"};
  for (int i = 0; i < 4; i++) {
    got g = {{0}, 0};
    sl_err err = {0};
    assert_int_equal(sl_shard_expand(bad[i], false, add, &g, &err), SL_ECONFIG);
    assert_non_null(strstr(err.msg, bad[i]));
  }
}

static void test_list(void **state) {
  (void)state;
  char dir[256], p[300];
  const char *tmp = getenv("SLUICE_TEST_TMP");
  snprintf(dir, sizeof dir, "%s", tmp ? tmp : "/tmp");
  snprintf(p, sizeof p, "%s/list-%ld.txt", dir, (long)getpid());
  FILE *f = fopen(p, "w");
  assert_non_null(f);
  fputs("# shards\n\n  a-{0..1}.tar  \n/abs/b.tar\r\n", f);
  fclose(f);
  got g = {{0}, 0};
  sl_err err = {0};
  assert_int_equal(sl_shard_expand(p, true, add, &g, &err), SL_OK);
  char want[1024];
  snprintf(want, sizeof want, "%s/a-0.tar %s/a-1.tar /abs/b.tar", dir, dir);
  assert_string_equal(g.all, want);
  f = fopen(p, "w");
  assert_non_null(f);
  fputs("# nothing\n", f);
  fclose(f);
  g = (got){{0}, 0};
  assert_int_equal(sl_shard_expand(p, true, add, &g, &err), SL_ECONFIG);
  assert_non_null(strstr(err.msg, "without shards"));
  unlink(p);
}

/* One ustar header: name (with prefix), size field as given, checksum. */
static void header(uint8_t *h, const char *prefix, const char *name,
                   const uint8_t *size12, char type, int signed_sum) {
  memset(h, 0, 512);
  memcpy(h, name, strlen(name));
  memcpy(h + 100, "0000644", 7);
  memcpy(h + 124, size12, 12);
  h[156] = (uint8_t)type;
  memcpy(h + 257,
         "ustar\0"
         "00",
         8);
  if (prefix)
    memcpy(h + 345, prefix, strlen(prefix));
  memset(h + 148, ' ', 8);
  long sum = 0;
  for (int i = 0; i < 512; i++)
    sum += signed_sum ? (long)(int8_t)h[i] : (long)h[i];
  snprintf((char *)h + 148, 8, "%06lo", (unsigned long)sum & 0777777);
  h[155] = ' ';
}

static void test_headers(void **state) {
  (void)state;
  static uint8_t tar[512 * 8];
  memset(tar, 0, sizeof tar);
  uint8_t b256[12] = {0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5};
  header(tar, "dir/sub", "k.cls", b256, '0', 0);
  memcpy(tar + 512, "12345", 5);
  uint8_t oct[12] = "00000000003";
  header(tar + 1024, NULL, "k\xe9.txt", oct, '0', 1); /* a byte >= 0x80 */
  sl_tar_member m;
  char why[256];
  uint64_t pos = 0;
  assert_int_equal(sl_tar_next(tar, sizeof tar, &pos, &m, why, sizeof why), 1);
  assert_string_equal(m.name, "dir/sub/k.cls");
  assert_int_equal(m.size, 5);
  assert_int_equal(m.data, 512);
  assert_int_equal(pos, 1024);
  assert_int_equal(sl_tar_next(tar, sizeof tar, &pos, &m, why, sizeof why), 1);
  assert_int_equal(m.size, 3);
  assert_int_equal(sl_tar_next(tar, sizeof tar, &pos, &m, why, sizeof why), 0);
  /* not a number */
  uint8_t junk[12] = "0000000x003";
  header(tar, NULL, "k.cls", junk, '0', 0);
  pos = 0;
  assert_int_equal(sl_tar_next(tar, sizeof tar, &pos, &m, why, sizeof why), -1);
  assert_non_null(strstr(why, "offset 0: size field"));
  /* an extension header and then the end */
  memset(tar, 0, sizeof tar);
  header(tar, NULL, "././@LongLink", oct, 'L', 0);
  memcpy(tar + 512, "abc", 3);
  pos = 0;
  assert_int_equal(sl_tar_next(tar, sizeof tar, &pos, &m, why, sizeof why), -1);
  assert_non_null(strstr(why, "without its member"));
}

static void test_npy(void **state) {
  (void)state;
  char why[256];
  uint64_t k, at;
  uint8_t f[160];
  const char *hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  size_t hl = 128 - 10; /* padded to 128 with spaces and a newline */
  memcpy(f, "\x93NUMPY\x01\x00", 8);
  f[8] = (uint8_t)hl;
  f[9] = 0;
  memset(f + 10, ' ', hl);
  memcpy(f + 10, hdr, strlen(hdr));
  f[10 + hl - 1] = '\n';
  memset(f + 128, 0, 8);
  assert_int_equal(sl_npy_f32_vector(f, 136, &k, &at, why, sizeof why), 0);
  assert_int_equal(k, 2);
  assert_int_equal(at, 128);
  assert_int_equal(sl_npy_f32_vector(f, 135, &k, &at, why, sizeof why), -1);
  const char *bad[] = {
      "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 1), }",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (), }",
      "{'descr': '<f4', 'shape': (2,), }",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}"};
  for (int i = 0; i < 5; i++) {
    memset(f + 10, ' ', hl);
    memcpy(f + 10, bad[i], strlen(bad[i]));
    f[10 + hl - 1] = '\n';
    assert_int_equal(sl_npy_f32_vector(f, 136, &k, &at, why, sizeof why), -1);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_braces),
      cmocka_unit_test(test_list),
      cmocka_unit_test(test_headers),
      cmocka_unit_test(test_npy),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
