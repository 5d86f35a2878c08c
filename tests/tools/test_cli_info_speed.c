/* `sluice info --speed`: on an image folder made by `sluice synth` it packs
 * a sample, times the loader on both and prints a positive, finite ratio,
 * leaving nothing in $TMPDIR, also when packing fails (a truncated JPEG);
 * on a file already packed it says so, on a folder of PNGs that there is
 * no JPEG to gain; bad --samples/--res values are usage errors. Without
 * --speed, a folder's info names `--speed`. No assertion on the ratio's
 * size (timings vary). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <png.h>

#include "tests/support/test_dir.h"
#include "tests/tools/cli_run.h"

static char g_dir[400];
static char g_out[32768];

static int setup(void **state) {
  (void)state;
  const char *tmp = getenv("SLUICE_TEST_TMP");
  snprintf(g_dir, sizeof g_dir, "%s/cli-info-speed-%ld", tmp ? tmp : "/tmp",
           (long)getpid());
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "mkdir -p '%s/tmp'", g_dir);
  if (system(cmd) != 0)
    return -1;
  snprintf(cmd, sizeof cmd, "synth '%s/img' --count 40 --classes 3 --seed 5",
           g_dir);
  return cli_run(cmd, g_out, sizeof g_out) == 0 ? 0 : -1;
}

/* A 24x16 gray-gradient RGB PNG at path, by libpng. */
static int write_png(const char *path) {
  FILE *f = fopen(path, "wb");
  if (!f)
    return -1;
  png_structp p =
      png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
  png_infop info = p ? png_create_info_struct(p) : NULL;
  if (!info || setjmp(png_jmpbuf(p))) {
    png_destroy_write_struct(&p, &info);
    fclose(f);
    return -1;
  }
  png_init_io(p, f);
  png_set_IHDR(p, info, 24, 16, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(p, info);
  uint8_t row[24 * 3];
  for (int y = 0; y < 16; y++) {
    for (int x = 0; x < 24 * 3; x++)
      row[x] = (uint8_t)(x * 3 + y * 7);
    png_write_row(p, row);
  }
  png_write_end(p, info);
  png_destroy_write_struct(&p, &info);
  return fclose(f) == 0 ? 0 : -1;
}

/* DIR/a/x.jpg: the first half of the synth folder's first JPEG (its header
 * intact, so the folder opens; its rewrite fails). */
static int write_truncated_jpeg(const char *dir) {
  char src[700], dst[1300];
  snprintf(src, sizeof src, "%s/img/class_000/img_00000.jpg", g_dir);
  snprintf(dst, sizeof dst, "%s/a/x.jpg", dir);
  FILE *in = fopen(src, "rb");
  if (!in)
    return -1;
  static uint8_t buf[1 << 20];
  size_t n = fread(buf, 1, sizeof buf, in);
  fclose(in);
  FILE *out = fopen(dst, "wb");
  if (!out)
    return -1;
  size_t w = fwrite(buf, 1, n / 2, out);
  return fclose(out) == 0 && w == n / 2 ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  return sl_test_remove_dir(g_dir);
}

/* Entries in DIR other than . and .. */
static int entries(const char *dir) {
  DIR *d = opendir(dir);
  assert_non_null(d);
  int k = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;)
    k += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
  closedir(d);
  return k;
}

static int info(const char *args) {
  char cmd[2000];
  snprintf(cmd, sizeof cmd, "info %s", args);
  return cli_run(cmd, g_out, sizeof g_out);
}

static void test_folder_speed(void **state) {
  (void)state;
  char args[1200], tmp[500];
  snprintf(tmp, sizeof tmp, "%s/tmp", g_dir);
  snprintf(args, sizeof args, "'%s/img' --speed --samples 16 --res 64", g_dir);
  /* the command inherits this process's environment */
  assert_int_equal(setenv("TMPDIR", tmp, 1), 0);
  int rc = info(args);
  assert_int_equal(unsetenv("TMPDIR"), 0);
  if (rc != 0)
    fail_msg("info --speed failed: %s", g_out);
  const char *s = strstr(g_out, "speed:       packed (sluice pack) decodes "
                                "these crops ");
  if (!s)
    fail_msg("no speed line: %s", g_out);
  s += strlen("speed:       packed (sluice pack) decodes these crops ");
  char *end;
  double ratio = strtod(s, &end);
  assert_true(end > s && isfinite(ratio) && ratio > 0);
  assert_true(!strncmp(end, "x faster", 8) || !strncmp(end, "x slower", 8));
  assert_non_null(strstr(g_out, "(16 samples, 64 px random-resized crops, "
                                "one worker, median of 3 rounds;"));
  /* the temporary directory and the packed sample are gone */
  assert_int_equal(entries(tmp), 0);
}

/* Packing fails on a truncated JPEG: status 1, the writer's message, and
 * the temporary directory removed all the same. */
static void test_failure_cleans_up(void **state) {
  (void)state;
  char cmd[1200], tmp[500], args[1200];
  snprintf(cmd, sizeof cmd, "mkdir -p '%s/bad/a'", g_dir);
  assert_int_equal(system(cmd), 0);
  snprintf(cmd, sizeof cmd, "%s/bad", g_dir);
  assert_int_equal(write_truncated_jpeg(cmd), 0);
  snprintf(tmp, sizeof tmp, "%s/tmp", g_dir);
  snprintf(args, sizeof args, "'%s/bad' --speed", g_dir);
  assert_int_equal(setenv("TMPDIR", tmp, 1), 0);
  int rc = info(args);
  assert_int_equal(unsetenv("TMPDIR"), 0);
  if (rc != 1 || !strstr(g_out, "a/x.jpg"))
    fail_msg("status %d: %s", rc, g_out);
  assert_int_equal(entries(tmp), 0);
}

/* A folder of PNGs: nothing to gain, said without --speed and with it
 * (nothing packed). */
static void test_no_jpeg(void **state) {
  (void)state;
  char cmd[1200], args[1200];
  snprintf(cmd, sizeof cmd, "mkdir -p '%s/png/a'", g_dir);
  assert_int_equal(system(cmd), 0);
  for (int i = 0; i < 3; i++) {
    snprintf(cmd, sizeof cmd, "%s/png/a/%d.png", g_dir, i);
    assert_int_equal(write_png(cmd), 0);
  }
  snprintf(args, sizeof args, "'%s/png'", g_dir);
  assert_int_equal(info(args), 0);
  if (!strstr(g_out, "speed:       no JPEGs"))
    fail_msg("%s", g_out);
  snprintf(args, sizeof args, "'%s/png' --speed", g_dir);
  assert_int_equal(info(args), 0);
  if (!strstr(g_out, "none of the 3 sampled images is a JPEG"))
    fail_msg("%s", g_out);
}

static void test_packed_and_plain(void **state) {
  (void)state;
  char args[1200];
  snprintf(args, sizeof args, "'%s/img'", g_dir);
  assert_int_equal(info(args), 0);
  if (!strstr(g_out, "speed:       read in place") ||
      !strstr(g_out, "`sluice info PATH --speed` measures it on this"))
    fail_msg("no speed note: %s", g_out);
  snprintf(args, sizeof args, "pack --from '%s/img' '%s/p.lmdb'", g_dir, g_dir);
  assert_int_equal(cli_run(args, g_out, sizeof g_out), 0);
  snprintf(args, sizeof args, "'%s/p.lmdb'", g_dir);
  assert_int_equal(info(args), 0);
  assert_null(strstr(g_out, "speed:"));
  snprintf(args, sizeof args, "'%s/p.lmdb' --speed --samples 4", g_dir);
  assert_int_equal(info(args), 0);
  if (!strstr(g_out, "speed:       already packed"))
    fail_msg("not said packed: %s", g_out);
}

static void test_usage_errors(void **state) {
  (void)state;
  const char *bad[] = {"--speed --samples 0", "--speed --samples -3",
                       "--speed --samples x", "--speed --samples 65537",
                       "--speed --samples",   "--speed --res 7",
                       "--speed --res 8193",  "--speed --res 1.5",
                       "--samples 16",        "--res 64",
                       "--speed --set foo=1", "--speed --classes",
                       "--set dataset.nope=1"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char args[1200];
    snprintf(args, sizeof args, "'%s/img' %s", g_dir, bad[i]);
    int rc = info(args);
    if (rc != 2)
      fail_msg("info %s: status %d, not 2: %s", bad[i], rc, g_out);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_folder_speed),
      cmocka_unit_test(test_failure_cleans_up),
      cmocka_unit_test(test_no_jpeg),
      cmocka_unit_test(test_packed_and_plain),
      cmocka_unit_test(test_usage_errors),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
