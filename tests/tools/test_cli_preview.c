/* `sluice preview`: the PNG grid holds exactly the loader's first batch of
 * the epoch (u8 NHWC, the config's crops and resolution), laid out row by
 * row; epochs differ; bad arguments are usage errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "formats/core/writer.h"
#include "sluice.h"
#include "tests/support/synth_jpeg.h"
#include "tests/support/test_dir.h"
#include "tests/tools/cli_run.h"

enum { k_samples = 12, k_gap = 2 };

static char g_out[1 << 16];
static char g_dir[512], g_ini[600];
static const char *const k_classes[] = {"a", "b", "c"};

static int setup(void **state) {
  (void)state;
  const char *tmp = getenv("SLUICE_TEST_TMP");
  snprintf(g_dir, sizeof g_dir, "%s/preview-%d", tmp ? tmp : "/tmp",
           (int)getpid());
  if (mkdir(g_dir, 0755) != 0)
    return -1;
  char data[600];
  snprintf(data, sizeof data, "%s/d.lmdb", g_dir);
  sl_err err;
  sl_fwriter *w;
  if (sl_fwriter_open(&w, data, SL_FORMAT_LMDB, &err) != SL_OK)
    return -1;
  for (int i = 0; i < k_samples; i++) {
    sl_synth_jpeg_opts o = sl_synth_jpeg_defaults();
    o.label = i % 3;
    int wd = 120 + 8 * i, ht = 90 + 4 * i;
    blob b = sl_test_jpeg(100 + (uint64_t)i, wd, ht, &o);
    sl_sample_info m = {.label = i % 3,
                        .codec = 1,
                        .channels = 3,
                        .height = (uint16_t)ht,
                        .width = (uint16_t)wd};
    sl_status st = sl_fwriter_add(w, b.p, b.n, &m, &err);
    free(b.p);
    if (st != SL_OK)
      return -1;
  }
  if (sl_fwriter_commit(w, 3, k_classes, "test", false, &err) != SL_OK)
    return -1;
  snprintf(g_ini, sizeof g_ini, "%s/c.ini", g_dir);
  FILE *f = fopen(g_ini, "w");
  if (!f)
    return -1;
  /* fp16 NCHW with the CUDA backend asked for: preview ignores all three. */
  fprintf(f,
          "[dataset]\npath = %s\n[loader]\norder = random\nseed = 7\n"
          "batch_size = 4\n"
          "[resolution]\nschedule = linear\nmin = 32\nmax = 64\n"
          "start_epoch = 0\nend_epoch = 2\nmultiple = 16\n"
          "[augment]\ndtype = fp16\nlayout = nchw\n"
          "[device]\nbackend = auto\n",
          data);
  return fclose(f) == 0 ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  return sl_test_remove_dir(g_dir);
}

static uint8_t *read_png(const char *path, unsigned *w, unsigned *h) {
  png_image pi;
  memset(&pi, 0, sizeof pi);
  pi.version = PNG_IMAGE_VERSION;
  assert_true(png_image_begin_read_from_file(&pi, path));
  pi.format = PNG_FORMAT_RGB;
  uint8_t *px = malloc(PNG_IMAGE_SIZE(pi));
  assert_non_null(px);
  assert_true(png_image_finish_read(&pi, NULL, px, 0, NULL));
  *w = pi.width;
  *h = pi.height;
  return px;
}

/* The loader's first batch of epoch, opened as preview opens it. */
static void first_batch(sl_loader **ld, sl_batch *b, int epoch, int count) {
  sl_config *cfg;
  assert_int_equal(sl_config_create(&cfg), SL_OK);
  assert_int_equal(sl_config_load_ini(cfg, g_ini), SL_OK);
  char n[16];
  snprintf(n, sizeof n, "%d", count);
  const char *kv[] = {"augment.dtype",
                      "u8",
                      "augment.layout",
                      "nhwc",
                      "device.backend",
                      "host",
                      "loader.batch_size",
                      n,
                      "loader.drop_last",
                      "false",
                      "loader.workers",
                      "2",
                      NULL};
  for (int i = 0; kv[i]; i += 2)
    assert_int_equal(sl_config_set(cfg, kv[i], kv[i + 1]), SL_OK);
  assert_int_equal(sl_loader_open(ld, cfg), SL_OK);
  sl_config_destroy(cfg);
  assert_int_equal(sl_loader_start_epoch(*ld, (uint64_t)epoch), SL_OK);
  assert_int_equal(sl_loader_next(*ld, b), SL_OK);
}

/* Runs preview for epoch and count and checks every cell against the
 * loader's batch; returns the PNG's pixels (free them). */
static uint8_t *check_preview(int epoch, int count, unsigned res, int cols,
                              const char *name) {
  char png[700], args[1500];
  snprintf(png, sizeof png, "%s/%s", g_dir, name);
  snprintf(args, sizeof args, "preview '%s' --epoch %d --count %d --out '%s'",
           g_ini, epoch, count, png);
  assert_int_equal(cli_run(args, g_out, sizeof g_out), 0);
  unsigned w, h;
  uint8_t *px = read_png(png, &w, &h);
  int rows = (count + cols - 1) / cols;
  assert_int_equal(w, cols * res + (cols + 1) * k_gap);
  assert_int_equal(h, rows * res + (rows + 1) * k_gap);
  sl_loader *ld;
  sl_batch b;
  first_batch(&ld, &b, epoch, count);
  assert_int_equal(b.width, res);
  assert_int_equal(b.channels, 3);
  const uint8_t *data = b.data;
  for (int k = 0; k < count; k++) {
    size_t x0 = k_gap + (size_t)(k % cols) * (res + k_gap);
    size_t y0 = k_gap + (size_t)(k / cols) * (res + k_gap);
    for (unsigned y = 0; y < res; y++)
      assert_memory_equal(px + ((y0 + y) * w + x0) * 3,
                          data + ((size_t)k * res + y) * res * 3, res * 3);
    char want[64];
    snprintf(want, sizeof want, "row %d col %d: sample %llu, label %d",
             k / cols, k % cols, (unsigned long long)b.indices[k], b.labels[k]);
    assert_non_null(strstr(g_out, want));
  }
  sl_batch_release(ld, &b, NULL);
  sl_loader_close(ld);
  return px;
}

static void test_grid_is_the_loaders_batch(void **state) {
  (void)state;
  uint8_t *e0 = check_preview(0, 9, 32, 3, "e0.png");
  uint8_t *e0b = check_preview(0, 9, 32, 3, "e0b.png");
  unsigned side = 3 * 32 + 4 * k_gap;
  assert_memory_equal(e0, e0b, (size_t)side * side * 3); /* deterministic */
  /* Epoch 2 is at the schedule's full 64 px; 5 samples: 3 per row. */
  uint8_t *e2 = check_preview(2, 5, 64, 3, "e2.png");
  free(e0), free(e0b), free(e2);
  /* Epoch 1, half way along the linear schedule: 48 px. */
  uint8_t *e1 = check_preview(1, 9, 48, 3, "e1.png");
  free(e1);
}

/* With a recipe on (TrivialAugmentWide, erasing, jitter), the grid is
 * still the loader's batch, and it differs from the grid without it. */
static void test_grid_shows_the_recipe(void **state) {
  (void)state;
  uint8_t *plain = check_preview(0, 9, 32, 3, "plain.png");
  FILE *f = fopen(g_ini, "a");
  assert_non_null(f);
  fprintf(f, "[augment]\nauto = trivial\nerasing = 0.5\n"
             "color_jitter = 0.4, 0.4, 0.4, 0.1\n");
  assert_int_equal(fclose(f), 0);
  uint8_t *rec = check_preview(0, 9, 32, 3, "recipe.png");
  unsigned side = 3 * 32 + 4 * k_gap;
  assert_true(memcmp(plain, rec, (size_t)side * side * 3) != 0);
  free(plain), free(rec);
}

static void test_bad_arguments(void **state) {
  (void)state;
  char args[1500];
  snprintf(args, sizeof args, "preview '%s' --count 0", g_ini);
  assert_int_equal(cli_run(args, g_out, sizeof g_out), 2);
  snprintf(args, sizeof args, "preview '%s' --epoch -1", g_ini);
  assert_int_equal(cli_run(args, g_out, sizeof g_out), 2);
  assert_int_equal(cli_run("preview", g_out, sizeof g_out), 2);
  snprintf(args, sizeof args, "preview '%s' --out '%s/no/such/dir.png'", g_ini,
           g_dir);
  assert_int_equal(cli_run(args, g_out, sizeof g_out), 1);
  assert_non_null(strstr(g_out, "dir.png"));
  snprintf(args, sizeof args, "preview '%s/none.ini'", g_dir);
  assert_int_equal(cli_run(args, g_out, sizeof g_out), 1);
  assert_non_null(strstr(g_out, "none.ini"));
}

/* A config the loader would refuse (12 samples, batch_size 32 and
 * drop_last: no whole batch) is refused by preview too, with the loader's
 * reason, though the preview's own batch (--count) would fit. */
static void test_refuses_what_the_loader_refuses(void **state) {
  (void)state;
  char ini[700], args[1500];
  snprintf(ini, sizeof ini, "%s/big_batch.ini", g_dir);
  FILE *f = fopen(ini, "w");
  assert_non_null(f);
  fprintf(f, "[dataset]\npath = %s/d.lmdb\n[loader]\nbatch_size = 32\n", g_dir);
  assert_int_equal(fclose(f), 0);
  snprintf(args, sizeof args, "preview '%s' --count 4 --out '%s/x.png'", ini,
           g_dir);
  assert_int_equal(cli_run(args, g_out, sizeof g_out), 1);
  if (!strstr(g_out, "loader.drop_last") || !strstr(g_out, "12 samples"))
    fail_msg("%s", g_out);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_grid_is_the_loaders_batch),
      cmocka_unit_test(test_bad_arguments),
      cmocka_unit_test(test_refuses_what_the_loader_refuses),
      cmocka_unit_test(test_grid_shows_the_recipe), /* last: edits g_ini */
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
