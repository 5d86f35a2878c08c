/* `sluice config`, `--version` and `help` as a user runs them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sluice.h"
#include "tests/tools/cli_run.h"

static char g_out[1 << 16]; /* test-local output buffer */

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  assert_int_equal(fclose(f), 0);
}

static void tmp_path(char *buf, size_t len, const char *name) {
  const char *tmp = getenv("SLUICE_TEST_TMP");
  snprintf(buf, len, "%s/%d-%s", tmp ? tmp : "/tmp", (int)getpid(), name);
}

static void test_check_typo_fails_with_line_and_suggestion(void **state) {
  (void)state;
  char path[512], args[600], want[700];
  tmp_path(path, sizeof path, "typo.ini");
  write_file(path, "[dataset]\npath = x.lmdb\n[loader]\nbatch_sise = 64\n");
  snprintf(args, sizeof args, "config --check '%s'", path);
  assert_int_equal(cli_run(args, g_out, sizeof g_out), 1);
  snprintf(want, sizeof want,
           "%s:4: unknown key 'loader.batch_sise' (did you mean "
           "loader.batch_size?)",
           path);
  if (!strstr(g_out, want))
    fail_msg("output '%s' lacks '%s'", g_out, want);
  unlink(path);
}

/* Runs `sluice config --check NAME` from the test folder, so the messages
 * name a short relative path and their length does not depend on where
 * the checkout lives (a long path leaves room for fewer lines). */
static int check_in_tmp(const char *name, const char *text) {
  const char *tmp = getenv("SLUICE_TEST_TMP");
  const char *bin = getenv("SLUICE_BIN");
  char cwd[1024], args[600], abs[4096];
  /* The binary's path must survive the chdir (tests/valgrind.sh gives a
   * relative one). */
  if (bin && bin[0] != '/' && realpath(bin, abs))
    assert_int_equal(setenv("SLUICE_BIN", abs, 1), 0);
  assert_non_null(getcwd(cwd, sizeof cwd));
  assert_int_equal(chdir(tmp ? tmp : "/tmp"), 0);
  write_file(name, text);
  snprintf(args, sizeof args, "config --check '%s'", name);
  int rc = cli_run(args, g_out, sizeof g_out);
  unlink(name);
  assert_int_equal(chdir(cwd), 0);
  return rc;
}

/* Every bad line of a file is reported, each with its line, not only the
 * first; the config is still left unchanged. */
static void test_check_reports_every_error(void **state) {
  (void)state;
  char name[64], want[128];
  snprintf(name, sizeof name, "%d-errors.ini", (int)getpid());
  assert_int_equal(check_in_tmp(name, "[loader]\nbatch_sise = 64\n"
                                      "workers = lots\n[resolution]\n"
                                      "schedule = liner\nthis is not ini\n"
                                      "max = 128\n"),
                   1);
  const char *needles[] = {
      ":2: unknown key 'loader.batch_sise'", ":3: loader.workers = 'lots'",
      ":5: resolution.schedule = 'liner'", ":6: syntax error"};
  for (int i = 0; i < 4; i++) {
    snprintf(want, sizeof want, "%s%s", name, needles[i]);
    if (!strstr(g_out, want))
      fail_msg("output '%s' lacks '%s'", g_out, want);
  }
}

/* One run shows every error of a file however many there are: each bad
 * line, the relations between the good values (augment.scale reversed),
 * and the dataset the good lines name, so fixing them takes one round. */
static void test_check_shows_every_error_in_one_run(void **state) {
  (void)state;
  enum { BAD = 40 };
  char name[64], text[4096], want[128];
  snprintf(name, sizeof name, "%d-many.ini", (int)getpid());
  /* A typo in augment.crop leaves the default, random_resized, whose
   * relation to augment.scale is still told. */
  size_t used = (size_t)snprintf(text, sizeof text,
                                 "[dataset]\npath = /nonexistent/t.lmdb\n"
                                 "[augment]\nscale = 0.9, 0.1\n"
                                 "crop = rndom\n[loader]\n");
  for (int i = 0; i < BAD; i++)
    used += (size_t)snprintf(text + used, sizeof text - used,
                             "no_such_key_%02d = 1\n", i);
  assert_int_equal(check_in_tmp(name, text), 1);
  for (int i = 0; i < BAD; i++) {
    snprintf(want, sizeof want, "%s:%d: unknown key 'loader.no_such_key_%02d'",
             name, 7 + i, i);
    if (!strstr(g_out, want))
      fail_msg("output '%s' lacks '%s'", g_out, want);
  }
  assert_null(strstr(g_out, "more error"));
  snprintf(want, sizeof want, "%s:5: augment.crop = 'rndom'", name);
  if (!strstr(g_out, want))
    fail_msg("output '%s' lacks '%s'", g_out, want);
  snprintf(want, sizeof want, "%s: augment.scale: the lower bound (0.9)", name);
  if (!strstr(g_out, want))
    fail_msg("output '%s' lacks '%s'", g_out, want);
  snprintf(want, sizeof want, "%s: dataset.path: ", name);
  if (!strstr(g_out, want) || !strstr(g_out, "/nonexistent/t.lmdb"))
    fail_msg("output '%s' lacks '%s' and the path", g_out, want);
}

/* --check opens dataset.path, so a typo in it shows before a job is
 * queued; --no-open skips that (a machine without the data). */
static void test_check_opens_dataset(void **state) {
  (void)state;
  char path[512], args[700], want[800];
  tmp_path(path, sizeof path, "nodata.ini");
  write_file(path, "[dataset]\npath = /nonexistent/train.lmdb\n");
  snprintf(args, sizeof args, "config --check '%s'", path);
  assert_int_equal(cli_run(args, g_out, sizeof g_out), 1);
  snprintf(want, sizeof want, "%s: dataset.path:", path);
  if (!strstr(g_out, want) || !strstr(g_out, "/nonexistent/train.lmdb"))
    fail_msg("output '%s' lacks '%s' and the path", g_out, want);
  snprintf(args, sizeof args, "config --check '%s' --no-open", path);
  assert_int_equal(cli_run(args, g_out, sizeof g_out), 0);
  assert_non_null(strstr(g_out, ": ok"));
  unlink(path);
}

static void test_check_valid_file_passes(void **state) {
  (void)state;
  char path[512], args[600];
  tmp_path(path, sizeof path, "good.ini");
  write_file(path, "[loader]\nbatch_size = 64\n[resolution]\nschedule = "
                   "linear\nmin = 128\nmax = 192\nstart_epoch = 2\n"
                   "end_epoch = 5\n");
  snprintf(args, sizeof args, "config --check '%s'", path);
  assert_int_equal(cli_run(args, g_out, sizeof g_out), 0);
  assert_non_null(strstr(g_out, ": ok"));
  snprintf(args, sizeof args, "config --show '%s'", path);
  assert_int_equal(cli_run(args, g_out, sizeof g_out), 0);
  assert_non_null(strstr(g_out, "loader.batch_size = 64\n"));
  assert_non_null(strstr(g_out, "resolution.schedule = linear\n"));
  unlink(path);
  snprintf(args, sizeof args, "config --check '%s'", path);
  assert_int_equal(cli_run(args, g_out, sizeof g_out), 1);
  assert_non_null(strstr(g_out, "No such file"));
}

/* --check refuses a step above resolution.max (max = 128 trained 160x160
 * epochs silently) and a schedule whose host buffers exceed the memory
 * available, naming the bytes it would need. */
static void test_check_bounds_the_schedule(void **state) {
  (void)state;
  char path[512], args[600];
  tmp_path(path, sizeof path, "steps.ini");
  write_file(path, "[resolution]\nschedule = steps\nmax = 128\n"
                   "steps = 0:128, 3:160\n");
  snprintf(args, sizeof args, "config --check '%s' --no-open", path);
  assert_int_equal(cli_run(args, g_out, sizeof g_out), 1);
  if (!strstr(g_out, "resolution.steps: step 2 (3:160) exceeds "
                     "resolution.max (128)") ||
      !strstr(g_out, "raise resolution.max to 160"))
    fail_msg("output: %s", g_out);
  write_file(path, "[loader]\nbatch_size = 65536\n[resolution]\n"
                   "schedule = steps\nmax = 8192\nsteps = 0:8192\n");
  assert_int_equal(cli_run(args, g_out, sizeof g_out), 1);
  if (!strstr(g_out, "need 120.0 TiB of host memory") ||
      !strstr(g_out, "lower resolution.steps, loader.batch_size, "
                     "device.staging or device.prefetch (host slots)"))
    fail_msg("output: %s", g_out);
  unlink(path);
}

/* The plan `sluice schedule` prints counts the device ring in the CUDA
 * allocator's 2 MiB pages (3 slots of 96 KiB and a 48 KiB landing buffer
 * take one page) and names the context that comes on top. */
static void test_schedule_counts_pages(void **state) {
  (void)state;
  char path[512], args[600];
  tmp_path(path, sizeof path, "sched.ini");
  write_file(path, "[loader]\nbatch_size = 4\n[resolution]\nschedule = "
                   "constant\nmax = 64\n[augment]\ndtype = fp16\n"
                   "[device]\nprefetch = 3\n");
  snprintf(args, sizeof args, "schedule '%s' --epochs 1", path);
  assert_int_equal(cli_run(args, g_out, sizeof g_out), 0);
  if (!strstr(g_out, "3 device slots, 336.0 KiB of device memory, 2.0 MiB in "
                     "the allocator's 2 MiB pages"))
    fail_msg("schedule output: %s", g_out);
  assert_non_null(strstr(g_out, "plus the CUDA context"));
  unlink(path);
}

static void test_list_has_every_key(void **state) {
  (void)state;
  assert_int_equal(cli_run("config --list", g_out, sizeof g_out), 0);
  for (size_t i = 0; i < sl_option_count(); i++) {
    sl_option_info info;
    assert_int_equal(sl_option_info_get(i, &info), SL_OK);
    if (!strstr(g_out, info.key))
      fail_msg("--list lacks %s", info.key);
  }
}

static void test_usage_errors(void **state) {
  (void)state;
  assert_int_equal(cli_run("config", g_out, sizeof g_out), 2);
  assert_int_equal(cli_run("config --bogus", g_out, sizeof g_out), 2);
  assert_int_equal(cli_run("nosuchcommand", g_out, sizeof g_out), 2);
  assert_non_null(strstr(g_out, "unknown command"));
}

static void test_version_and_help(void **state) {
  (void)state;
  char want[64];
  snprintf(want, sizeof want, "sluice %s\n", sl_version_string());
  assert_int_equal(cli_run("--version", g_out, sizeof g_out), 0);
  assert_string_equal(g_out, want);
  assert_int_equal(cli_run("help", g_out, sizeof g_out), 0);
  assert_non_null(strstr(g_out, "config"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_check_typo_fails_with_line_and_suggestion),
      cmocka_unit_test(test_check_reports_every_error),
      cmocka_unit_test(test_check_shows_every_error_in_one_run),
      cmocka_unit_test(test_check_opens_dataset),
      cmocka_unit_test(test_check_valid_file_passes),
      cmocka_unit_test(test_check_bounds_the_schedule),
      cmocka_unit_test(test_schedule_counts_pages),
      cmocka_unit_test(test_list_has_every_key),
      cmocka_unit_test(test_usage_errors),
      cmocka_unit_test(test_version_and_help),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
