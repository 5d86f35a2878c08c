/* `sluice info --speed`: on an image folder made by `sluice synth` it packs
 * a sample, times the loader on both and prints a positive, finite ratio,
 * leaving nothing in $TMPDIR; on a file already packed it says so; bad
 * --samples/--res values are usage errors. Without --speed, a folder's
 * info names `--speed`. No assertion on the ratio's size (timings vary). */
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
      cmocka_unit_test(test_packed_and_plain),
      cmocka_unit_test(test_usage_errors),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
