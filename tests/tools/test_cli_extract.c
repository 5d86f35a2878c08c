/* `sluice extract`: stored bytes out by index, raw arrays as PNM, every
 * index checked before anything is written, existing files kept, sample
 * names shown. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "formats/core/layout.h"
#include "formats/core/writer.h"
#include "tests/support/test_dir.h"
#include "tests/tools/cli_run.h"

static char g_out[1 << 16];
static char g_dir[512];

static const uint8_t k_jpeg[] = {0xFF, 0xD8, 1, 2, 3, 0xFF, 0xD9};
static const uint8_t k_png[] = {0x89, 'P', 'N', 'G', 9, 8, 7};
static const uint8_t k_raw[2 * 3 * 3] = {1,  2,  3,  4,  5,  6,  7,  8,  9,
                                         10, 11, 12, 13, 14, 15, 16, 17, 18};
static const char *const k_classes[] = {"cat", "dog"};

static void path_in(char *buf, size_t cap, const char *name) {
  snprintf(buf, cap, "%s/%s", g_dir, name);
}

/* Samples: 0 JPEG (cat), 1 PNG (dog), 2 raw 3x2 RGB (unlabelled). */
static int setup(void **state) {
  (void)state;
  const char *tmp = getenv("SLUICE_TEST_TMP");
  snprintf(g_dir, sizeof g_dir, "%s/extract-%d", tmp ? tmp : "/tmp",
           (int)getpid());
  if (mkdir(g_dir, 0755) != 0)
    return -1;
  char p[600];
  path_in(p, sizeof p, "d.h5");
  sl_err err;
  sl_fwriter *w;
  if (sl_fwriter_open(&w, p, SL_FORMAT_AUTO, &err) != SL_OK)
    return -1;
  sl_sample_info a = {
      .label = 0, .codec = 1, .channels = 3, .height = 4, .width = 4};
  sl_sample_info b = {
      .label = 1, .codec = 2, .channels = 3, .height = 2, .width = 2};
  sl_sample_info c = {
      .label = -1, .codec = 3, .channels = 3, .height = 2, .width = 3};
  if (sl_fwriter_add(w, k_jpeg, sizeof k_jpeg, &a, &err) != SL_OK ||
      sl_fwriter_add(w, k_png, sizeof k_png, &b, &err) != SL_OK ||
      sl_fwriter_add(w, k_raw, sizeof k_raw, &c, &err) != SL_OK)
    return -1;
  return sl_fwriter_commit(w, 2, k_classes, "test", false, &err) == SL_OK ? 0
                                                                          : -1;
}

static int teardown(void **state) {
  (void)state;
  return sl_test_remove_dir(g_dir);
}

static void assert_file(const char *name, const void *head, size_t hlen,
                        const void *body, size_t blen) {
  char p[600];
  path_in(p, sizeof p, name);
  FILE *f = fopen(p, "rb");
  assert_non_null(f);
  uint8_t got[256];
  size_t n = fread(got, 1, sizeof got, f);
  fclose(f);
  assert_int_equal(n, hlen + blen);
  assert_memory_equal(got, head, hlen);
  assert_memory_equal(got + hlen, body, blen);
}

static int exists(const char *name) {
  char p[600];
  struct stat sb;
  path_in(p, sizeof p, name);
  return stat(p, &sb) == 0;
}

static void test_extract_all_codecs(void **state) {
  (void)state;
  char args[1400];
  snprintf(args, sizeof args, "extract '%s/d.h5' 0-2 --out '%s/o1'", g_dir,
           g_dir);
  char o1[600];
  path_in(o1, sizeof o1, "o1");
  assert_int_equal(mkdir(o1, 0755), 0);
  assert_int_equal(cli_run(args, g_out, sizeof g_out), 0);
  assert_file("o1/0.jpg", "", 0, k_jpeg, sizeof k_jpeg);
  assert_file("o1/1.png", "", 0, k_png, sizeof k_png);
  static const char pnm[] = "P6\n3 2\n255\n";
  assert_file("o1/2.ppm", pnm, sizeof pnm - 1, k_raw, sizeof k_raw);
  assert_non_null(strstr(g_out, "0\tlabel 0\tcat\t4x4x3\t7 bytes"));
  assert_non_null(strstr(g_out, "1\tlabel 1\tdog\t2x2x3"));
  assert_non_null(strstr(g_out, "2\tlabel -1\t-\t3x2x3\t18 bytes"));
}

static void test_out_of_range_writes_nothing(void **state) {
  (void)state;
  char args[1400], o2[600];
  path_in(o2, sizeof o2, "o2");
  assert_int_equal(mkdir(o2, 0755), 0);
  snprintf(args, sizeof args, "extract '%s/d.h5' 0 3 --out '%s'", g_dir, o2);
  assert_int_equal(cli_run(args, g_out, sizeof g_out), 1);
  assert_non_null(strstr(g_out, "has 3 samples (0..2): index 3 is out of "
                                "range; nothing written"));
  assert_false(exists("o2/0.jpg"));
  snprintf(args, sizeof args, "extract '%s/d.h5' 2-1", g_dir);
  assert_int_equal(cli_run(args, g_out, sizeof g_out), 2);
  snprintf(args, sizeof args, "extract '%s/d.h5' x", g_dir);
  assert_int_equal(cli_run(args, g_out, sizeof g_out), 2);
  snprintf(args, sizeof args, "extract '%s/d.h5'", g_dir);
  assert_int_equal(cli_run(args, g_out, sizeof g_out), 2);
}

/* --out names a folder that need not exist: it is made (with its parents),
 * but only once every index has been checked. */
static void test_out_folder_made(void **state) {
  (void)state;
  char args[1400];
  snprintf(args, sizeof args, "extract '%s/d.h5' 0 3 --out '%s/o7/sub'", g_dir,
           g_dir);
  assert_int_equal(cli_run(args, g_out, sizeof g_out), 1);
  assert_false(exists("o7"));
  snprintf(args, sizeof args, "extract '%s/d.h5' 0 --out '%s/o7/sub/deeper/'",
           g_dir, g_dir);
  if (cli_run(args, g_out, sizeof g_out) != 0)
    fail_msg("%s", g_out);
  assert_file("o7/sub/deeper/0.jpg", "", 0, k_jpeg, sizeof k_jpeg);
  /* A file where the folder should be is an error naming it. */
  char p[700];
  path_in(p, sizeof p, "o8");
  FILE *f = fopen(p, "w");
  assert_non_null(f);
  fclose(f);
  snprintf(args, sizeof args, "extract '%s/d.h5' 0 --out '%s/o8/sub'", g_dir,
           g_dir);
  assert_int_equal(cli_run(args, g_out, sizeof g_out), 1);
  assert_non_null(strstr(g_out, "o8"));
}

static void test_keeps_existing_files(void **state) {
  (void)state;
  char args[1400], o3[600], p[700];
  path_in(o3, sizeof o3, "o3");
  assert_int_equal(mkdir(o3, 0755), 0);
  snprintf(p, sizeof p, "%s/1.png", o3);
  FILE *f = fopen(p, "w");
  assert_non_null(f);
  fputs("mine", f);
  fclose(f);
  snprintf(args, sizeof args, "extract '%s/d.h5' 1 --out '%s'", g_dir, o3);
  assert_int_equal(cli_run(args, g_out, sizeof g_out), 1);
  assert_non_null(strstr(g_out, "(--force replaces it)"));
  assert_file("o3/1.png", "", 0, "mine", 4);
  snprintf(args, sizeof args, "extract '%s/d.h5' 1 --out '%s' --force", g_dir,
           o3);
  assert_int_equal(cli_run(args, g_out, sizeof g_out), 0);
  assert_file("o3/1.png", "", 0, k_png, sizeof k_png);
}

/* An LMDB whose sample 1 has a bad label in its index entry: a plain open
 * refuses the file; extract still gives up samples 0 and 2. */
static void test_damaged_record(void **state) {
  (void)state;
  char p[600], args[1400], o4[600];
  path_in(p, sizeof p, "bad.lmdb");
  sl_err err;
  sl_fwriter *w;
  assert_int_equal(sl_fwriter_open(&w, p, SL_FORMAT_LMDB, &err), SL_OK);
  sl_sample_info m = {
      .label = 0, .codec = 1, .channels = 3, .height = 4, .width = 4};
  for (int i = 0; i < 3; i++)
    assert_int_equal(sl_fwriter_add(w, k_jpeg, sizeof k_jpeg, &m, &err), SL_OK);
  assert_int_equal(sl_fwriter_commit(w, 2, k_classes, "test", false, &err),
                   SL_OK);
  FILE *f = fopen(p, "r+b");
  assert_non_null(f);
  static uint8_t b[1 << 16];
  size_t len = fread(b, 1, sizeof b, f);
  size_t at = 0;
  while (at + SL_LMDB_IX_HDR + 3 * SL_LMDB_IX_ENTRY <= len &&
         !(memcmp(b + at, SL_LMDB_IX_MAGIC, 4) == 0 && b[at + 4] == 3))
    at++;
  assert_true(at + SL_LMDB_IX_HDR + 3 * SL_LMDB_IX_ENTRY <= len);
  uint8_t *label = b + at + SL_LMDB_IX_HDR + SL_LMDB_IX_ENTRY + 4;
  *label = 99; /* sample 1: class 99 of 2 */
  assert_int_equal(fseek(f, (long)(label - b), SEEK_SET), 0);
  assert_int_equal(fwrite(label, 1, 1, f), 1);
  assert_int_equal(fclose(f), 0);

  path_in(o4, sizeof o4, "o4");
  assert_int_equal(mkdir(o4, 0755), 0);
  snprintf(args, sizeof args, "extract '%s' 0-2 --out '%s'", p, o4);
  assert_int_equal(cli_run(args, g_out, sizeof g_out), 1);
  assert_non_null(strstr(g_out, "sample 1 has a damaged record"));
  assert_false(exists("o4/0.jpg"));
  snprintf(args, sizeof args, "extract '%s' 0 2 --out '%s'", p, o4);
  assert_int_equal(cli_run(args, g_out, sizeof g_out), 0);
  assert_file("o4/0.jpg", "", 0, k_jpeg, sizeof k_jpeg);
  assert_file("o4/2.jpg", "", 0, k_jpeg, sizeof k_jpeg);
}

/* A file that records names (sample 0's, not sample 1's): each extracted
 * sample's line ends with the image it was packed from. */
static void test_names(void **state) {
  (void)state;
  char p[600], args[1400], o5[600], want[1400];
  path_in(p, sizeof p, "named.lmdb");
  sl_err err;
  sl_fwriter *w;
  assert_int_equal(sl_fwriter_open(&w, p, SL_FORMAT_AUTO, &err), SL_OK);
  sl_sample_info a = {
      .label = 0, .codec = 1, .channels = 3, .height = 4, .width = 4};
  sl_sample_info b = {
      .label = 1, .codec = 2, .channels = 3, .height = 2, .width = 2};
  assert_int_equal(sl_fwriter_add_named(w, k_jpeg, sizeof k_jpeg, &a,
                                        "cats/tom 1.jpg", NULL, &err),
                   SL_OK);
  assert_int_equal(
      sl_fwriter_add_named(w, k_png, sizeof k_png, &b, NULL, NULL, &err),
      SL_OK);
  assert_int_equal(sl_fwriter_commit(w, 2, k_classes, "test", false, &err),
                   SL_OK);
  path_in(o5, sizeof o5, "o5");
  assert_int_equal(mkdir(o5, 0755), 0);
  snprintf(args, sizeof args, "extract '%s' 0-1 --out '%s'", p, o5);
  assert_int_equal(cli_run(args, g_out, sizeof g_out), 0);
  assert_file("o5/0.jpg", "", 0, k_jpeg, sizeof k_jpeg);
  assert_file("o5/1.png", "", 0, k_png, sizeof k_png);
  snprintf(want, sizeof want,
           "0\tlabel 0\tcat\t4x4x3\t7 bytes\t%s/0.jpg  (from cats/tom "
           "1.jpg)\n1\tlabel 1\tdog\t2x2x3\t7 bytes\t%s/1.png\n",
           o5, o5);
  assert_string_equal(g_out, want);
}

/* `sluice info` prints the smallest and the largest image as they are (by
 * pixel count), not the largest width and the largest height of different
 * images. */
static void test_info_sizes_are_real_images(void **state) {
  (void)state;
  char p[600], args[800];
  path_in(p, sizeof p, "sizes.h5");
  sl_err err;
  sl_fwriter *w;
  assert_int_equal(sl_fwriter_open(&w, p, SL_FORMAT_AUTO, &err), SL_OK);
  static const uint8_t px[10 * 8 * 3];
  const int wh[3][2] = {{10, 2}, {3, 8}, {1, 1}};
  for (int i = 0; i < 3; i++) {
    sl_sample_info m = {.label = 0,
                        .codec = 3,
                        .channels = 3,
                        .height = (uint16_t)wh[i][1],
                        .width = (uint16_t)wh[i][0]};
    assert_int_equal(
        sl_fwriter_add(w, px, (size_t)wh[i][0] * wh[i][1] * 3, &m, &err),
        SL_OK);
  }
  assert_int_equal(sl_fwriter_commit(w, 2, k_classes, "test", false, &err),
                   SL_OK);
  snprintf(args, sizeof args, "info '%s'", p);
  if (cli_run(args, g_out, sizeof g_out) != 0)
    fail_msg("%s", g_out);
  if (!strstr(g_out, "smallest 1x1 (sample 2), largest 3x8 (sample 1)") ||
      strstr(g_out, "10x8"))
    fail_msg("%s", g_out);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_extract_all_codecs),
      cmocka_unit_test(test_out_of_range_writes_nothing),
      cmocka_unit_test(test_out_folder_made),
      cmocka_unit_test(test_keeps_existing_files),
      cmocka_unit_test(test_damaged_record),
      cmocka_unit_test(test_names),
      cmocka_unit_test(test_info_sizes_are_real_images),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
