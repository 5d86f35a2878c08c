/* `sluice bench`: one line per epoch and worker count, with the schedule's
 * resolution and the batch and image counts the loader really handed out;
 * --from, --batches and --workers; a failing sample fails the run and names
 * it, a skipped one is reported; bad arguments are usage errors. (No timing
 * is asserted: speed is not a test's business.) */
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

#include "codecs/jpeg_rewrite.h"
#include "formats/core/writer.h"
#include "sluice.h"
#include "tests/support/synth_jpeg.h"
#include "tests/support/test_dir.h"
#include "tests/tools/cli_run.h"

enum { k_samples = 12, k_bad = 5 };

static char g_out[1 << 16];
static char g_dir[512], g_ini[600], g_laid_ini[600], g_bad_fail[600],
    g_bad_skip[600];
static const char *const k_classes[] = {"a", "b", "c"};

/* A dataset of k_samples JPEGs; with_bad: sample k_bad is a cut-off JPEG;
 * laid: every JPEG rewritten into the restart layout, as `sluice pack`
 * writes them. */
static int write_dataset(const char *path, int with_bad, int laid) {
  sl_err err;
  sl_fwriter *w;
  sl_jpeg_rewriter *rw = NULL;
  if (laid && sl_jpeg_rewriter_create(&rw, 0, &err) != SL_OK)
    return -1;
  if (sl_fwriter_open(&w, path, SL_FORMAT_LMDB, &err) != SL_OK) {
    sl_jpeg_rewriter_destroy(rw);
    return -1;
  }
  for (int i = 0; i < k_samples; i++) {
    sl_synth_jpeg_opts o = sl_synth_jpeg_defaults();
    int wd = 100 + 8 * i, ht = 80 + 4 * i;
    blob b = sl_test_jpeg(300 + (uint64_t)i, wd, ht, &o);
    sl_sample_info m = {.label = i % 3,
                        .codec = 1,
                        .channels = 3,
                        .height = (uint16_t)ht,
                        .width = (uint16_t)wd};
    size_t n = with_bad && i == k_bad ? b.n / 3 : b.n;
    if (rw) {
      uint8_t *out;
      size_t out_len;
      if (sl_jpeg_rewrite(rw, b.p, b.n, &out, &out_len, &err) != SL_OK)
        return -1;
      free(b.p);
      b.p = out;
      n = out_len;
    }
    sl_status st = sl_fwriter_add(w, b.p, n, &m, &err);
    free(b.p);
    if (st != SL_OK)
      return -1;
  }
  sl_jpeg_rewriter_destroy(rw);
  return sl_fwriter_commit(w, 3, k_classes, "test", false, &err) == SL_OK ? 0
                                                                          : -1;
}

static int write_ini(const char *ini, const char *data, const char *extra) {
  FILE *f = fopen(ini, "w");
  if (!f)
    return -1;
  fprintf(f,
          "[dataset]\npath = %s\n[loader]\nbatch_size = 4\norder = random\n"
          "seed = 3\n%s\n[resolution]\nschedule = linear\nmin = 32\n"
          "max = 64\nstart_epoch = 0\nend_epoch = 2\nmultiple = 16\n"
          "[augment]\ndtype = fp16\n[device]\nbackend = host\n",
          data, extra);
  return fclose(f) == 0 ? 0 : -1;
}

static int setup(void **state) {
  (void)state;
  const char *tmp = getenv("SLUICE_TEST_TMP");
  snprintf(g_dir, sizeof g_dir, "%s/bench-%d", tmp ? tmp : "/tmp",
           (int)getpid());
  if (mkdir(g_dir, 0755) != 0)
    return -1;
  char good[600], bad[600], laid[600];
  snprintf(good, sizeof good, "%s/good.lmdb", g_dir);
  snprintf(laid, sizeof laid, "%s/laid.lmdb", g_dir);
  snprintf(g_laid_ini, sizeof g_laid_ini, "%s/laid.ini", g_dir);
  snprintf(bad, sizeof bad, "%s/bad.lmdb", g_dir);
  snprintf(g_ini, sizeof g_ini, "%s/c.ini", g_dir);
  snprintf(g_bad_fail, sizeof g_bad_fail, "%s/fail.ini", g_dir);
  snprintf(g_bad_skip, sizeof g_bad_skip, "%s/skip.ini", g_dir);
  if (write_dataset(good, 0, 0) || write_dataset(bad, 1, 0) ||
      write_dataset(laid, 0, 1) || write_ini(g_ini, good, "") ||
      write_ini(g_laid_ini, laid, "") ||
      write_ini(g_bad_fail, bad, "on_error = fail") ||
      write_ini(g_bad_skip, bad, "on_error = skip"))
    return -1;
  return 0;
}

static int teardown(void **state) {
  (void)state;
  return sl_test_remove_dir(g_dir);
}

typedef struct row {
  unsigned workers, epoch, w, h, batches, images;
  char windowed[16];
  unsigned stall; /* percent */
} row;

/* The epoch lines of bench's output (those that start with a number). */
static int rows_of(const char *out, row *r, int cap) {
  int n = 0;
  for (const char *l = out; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : l) {
    row x;
    if (sscanf(l,
               " %u %u %ux%u %u %u %*s %*s %*s %*s %*s %*s %*s %*s %15s %u%%",
               &x.workers, &x.epoch, &x.w, &x.h, &x.batches, &x.images,
               x.windowed, &x.stall) == 8) {
      assert_true(n < cap);
      r[n++] = x;
    }
  }
  return n;
}

static void test_epochs_and_workers(void **state) {
  (void)state;
  char args[1500];
  row r[16];
  snprintf(args, sizeof args, "bench '%s' --workers 1,2", g_ini);
  assert_int_equal(cli_run(args, g_out, sizeof g_out), 0);
  /* default: two epochs, 0 and 1, at 32 and 48 px (linear 32 -> 64) */
  assert_int_equal(rows_of(g_out, r, 16), 4);
  static const unsigned workers[4] = {1, 1, 2, 2}, res[4] = {32, 48, 32, 48};
  for (int i = 0; i < 4; i++) {
    assert_int_equal(r[i].workers, workers[i]);
    assert_int_equal(r[i].epoch, (unsigned)i % 2);
    assert_int_equal(r[i].w, res[i]);
    assert_int_equal(r[i].h, res[i]);
    assert_int_equal(r[i].batches, k_samples / 4);
    assert_int_equal(r[i].images, k_samples);
    assert_string_equal(r[i].windowed, "0%"); /* JPEGs as encoded */
  }
  assert_non_null(strstr(g_out, "host backend"));
  assert_non_null(strstr(g_out, "best epoch per worker count: 1: "));
  assert_non_null(strstr(g_out, "; 2: "));

  snprintf(args, sizeof args, "bench '%s' --from 2 --epochs 3 --batches 2",
           g_ini);
  assert_int_equal(cli_run(args, g_out, sizeof g_out), 0);
  assert_int_equal(rows_of(g_out, r, 16), 3);
  for (int i = 0; i < 3; i++) {
    assert_int_equal(r[i].epoch, 2 + (unsigned)i);
    assert_int_equal(r[i].w, 64);
    assert_int_equal(r[i].batches, 2);
    assert_int_equal(r[i].images, 8);
  }
}

/* The same JPEGs in the restart layout: crops decode only their part. */
static void test_windowed_share(void **state) {
  (void)state;
  char args[1500];
  row r[4];
  snprintf(args, sizeof args, "bench '%s' --epochs 1 --from 2", g_laid_ini);
  assert_int_equal(cli_run(args, g_out, sizeof g_out), 0);
  assert_int_equal(rows_of(g_out, r, 4), 1);
  assert_int_equal(r[0].images, k_samples);
  int pct = atoi(r[0].windowed);
  assert_true(pct > 0 && pct <= 100);
  assert_non_null(strchr(r[0].windowed, '%'));
}

/* --step-ms holds each batch; the epoch still hands out every batch and the
 * stall share stays a share. (Its size depends on the machine: not
 * asserted.) */
static void test_step(void **state) {
  (void)state;
  char args[1500];
  row r[4];
  snprintf(args, sizeof args, "bench '%s' --epochs 1 --step-ms 2.5", g_ini);
  assert_int_equal(cli_run(args, g_out, sizeof g_out), 0);
  assert_int_equal(rows_of(g_out, r, 4), 1);
  assert_int_equal(r[0].batches, k_samples / 4);
  assert_true(r[0].stall <= 100);
  assert_non_null(strstr(g_out, "with each batch held for the step"));
}

static void test_bad_samples(void **state) {
  (void)state;
  char args[1500];
  snprintf(args, sizeof args, "bench '%s' --epochs 1", g_bad_fail);
  assert_int_equal(cli_run(args, g_out, sizeof g_out), 1);
  char want[64];
  snprintf(want, sizeof want, "sample %d", k_bad);
  assert_non_null(strstr(g_out, want));
  assert_non_null(strstr(g_out, "epoch 0"));
  row r[4];
  snprintf(args, sizeof args, "bench '%s' --epochs 1", g_bad_skip);
  assert_int_equal(cli_run(args, g_out, sizeof g_out), 0);
  assert_int_equal(rows_of(g_out, r, 4), 1);
  assert_int_equal(r[0].images, k_samples);
  assert_non_null(strstr(g_out, "1 bad sample(s) replaced"));
}

static void test_bad_arguments(void **state) {
  (void)state;
  static const char *const bad[] = {
      "--workers ''",   "--workers 1,,2",
      "--workers ,1",   "--workers 1,",
      "--workers x",    "--workers -1",
      "--workers 1025", "--epochs 0",
      "--batches 0",    "--from -1",
      "--epochs",       "--nope",
      "other.ini",      "--workers 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17",
      "--step-ms 0",    "--step-ms -1",
      "--step-ms x",    "--step-ms 60001",
      "--step-ms ''",   "--step-ms 1ms",
      "--step-ms"};
  char args[1500];
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    snprintf(args, sizeof args, "bench '%s' %s", g_ini, bad[i]);
    assert_int_equal(cli_run(args, g_out, sizeof g_out), 2);
    assert_non_null(strstr(g_out, "sluice bench"));
  }
  assert_int_equal(cli_run("bench", g_out, sizeof g_out), 2);
  snprintf(args, sizeof args, "bench '%s/none.ini'", g_dir);
  assert_int_equal(cli_run(args, g_out, sizeof g_out), 1);
  assert_non_null(strstr(g_out, "none.ini"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_epochs_and_workers),
      cmocka_unit_test(test_windowed_share),
      cmocka_unit_test(test_step),
      cmocka_unit_test(test_bad_samples),
      cmocka_unit_test(test_bad_arguments),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
