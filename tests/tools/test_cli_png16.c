/* 16-bit PNGs scale linearly to 8 bits (rounded v / 257), with no gamma
 * curve: through `sluice pack` (decoded, then stored as JPEG) and through
 * the loader's PNG codec (a PNG stored as it is by sl_writer), both read
 * back with the public sl_dataset_decode. The PNGs are written here with
 * libpng (bit depth 16, no gAMA chunk, as numpy-based writers make them)
 * and compared against the linear formula computed here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sluice.h"
#include "tests/tools/cli_run.h"

#define W 64
#define H 48

static char g_dir[400];
static char g_out[16384];

/* Sample value of channel c at (x, y): gradients over the whole 16-bit
 * range, different per channel. */
static uint16_t value(int ch, int c, int x, int y) {
  if (ch == 1)
    return (uint16_t)(((uint32_t)y * W + (uint32_t)x) * 65535u / (W * H - 1));
  if (c == 0)
    return (uint16_t)((uint32_t)x * 65535u / (W - 1));
  if (c == 1)
    return (uint16_t)((uint32_t)y * 65535u / (H - 1));
  return (uint16_t)((uint32_t)(x + y) * 65535u / (W + H - 2));
}

/* The 8-bit value a linear scaling gives: round(v / 257). */
static int expect8(uint16_t v) {
  return (int)lround(v / 257.0);
}

static void write_png16(const char *path, int ch) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  png_structp p =
      png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
  assert_non_null(p);
  png_infop info = png_create_info_struct(p);
  assert_non_null(info);
  if (setjmp(png_jmpbuf(p)))
    fail_msg("libpng failed writing %s", path);
  png_init_io(p, f);
  png_set_IHDR(p, info, W, H, 16,
               ch == 1 ? PNG_COLOR_TYPE_GRAY : PNG_COLOR_TYPE_RGB,
               PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  png_write_info(p, info);
  uint8_t row[W * 3 * 2];
  for (int y = 0; y < H; y++) {
    for (int x = 0; x < W; x++)
      for (int c = 0; c < ch; c++) {
        uint16_t v = value(ch, c, x, y);
        row[(x * ch + c) * 2] = (uint8_t)(v >> 8); /* big-endian */
        row[(x * ch + c) * 2 + 1] = (uint8_t)(v & 0xff);
      }
    png_write_row(p, row);
  }
  png_write_end(p, info);
  png_destroy_write_struct(&p, &info);
  assert_int_equal(fclose(f), 0);
}

static int setup(void **state) {
  (void)state;
  const char *tmp = getenv("SLUICE_TEST_TMP");
  snprintf(g_dir, sizeof g_dir, "%s/cli-png16-%ld", tmp ? tmp : "/tmp",
           (long)getpid());
  char cmd[1000];
  snprintf(cmd, sizeof cmd, "mkdir -p '%s/img/gray' '%s/img/rgb'", g_dir,
           g_dir);
  return system(cmd) == 0 ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
  return system(cmd) == 0 ? 0 : -1;
}

/* Decodes sample i of ds and compares it with the formula: the largest and
 * the mean absolute difference. */
static void compare(sl_dataset *ds, uint64_t i, int ch, int *max_err,
                    double *mean_err) {
  sl_sample_meta m;
  assert_int_equal(sl_dataset_info(ds, i, &m), SL_OK);
  assert_int_equal(m.width, W);
  assert_int_equal(m.height, H);
  assert_int_equal(m.channels, (uint32_t)ch);
  static uint8_t px[W * H * 3];
  size_t len;
  if (sl_dataset_decode(ds, i, px, sizeof px, &len) != SL_OK)
    fail_msg("%s", sl_dataset_errmsg(ds));
  assert_int_equal(len, (size_t)W * H * ch);
  long sum = 0;
  *max_err = 0;
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++)
      for (int c = 0; c < ch; c++) {
        int d = abs(px[(y * W + x) * ch + c] - expect8(value(ch, c, x, y)));
        sum += d;
        *max_err = d > *max_err ? d : *max_err;
      }
  *mean_err = (double)sum / ((double)W * H * ch);
}

static void load_png(const char *path, uint8_t **buf, size_t *len) {
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  assert_int_equal(fseek(f, 0, SEEK_END), 0);
  long n = ftell(f);
  assert_true(n > 0);
  rewind(f);
  *buf = malloc((size_t)n);
  assert_non_null(*buf);
  assert_int_equal(fread(*buf, 1, (size_t)n, f), (size_t)n);
  fclose(f);
  *len = (size_t)n;
}

/* `sluice pack` decodes the PNGs and stores JPEGs (quality 100): the
 * pixels read back are the linear scaling, up to JPEG's rounding (a gamma
 * curve would be off by ~50 on average). */
static void test_pack_linear(void **state) {
  (void)state;
  char p[700], args[2000];
  snprintf(p, sizeof p, "%s/img/gray/g.png", g_dir);
  write_png16(p, 1);
  snprintf(p, sizeof p, "%s/img/rgb/c.png", g_dir);
  write_png16(p, 3);
  snprintf(p, sizeof p, "%s/packed.lmdb", g_dir);
  snprintf(args, sizeof args,
           "pack --quiet --threads 1 --quality 100 '%s/img' '%s'", g_dir, p);
  if (cli_run(args, g_out, sizeof g_out) != 0)
    fail_msg("%s", g_out);
  sl_dataset *ds;
  if (sl_dataset_open_file(&ds, p) != SL_OK)
    fail_msg("%s", sl_dataset_errmsg(ds));
  assert_int_equal(sl_dataset_count(ds), 2);
  for (uint64_t i = 0; i < 2; i++) {
    char name[64];
    assert_int_equal(sl_dataset_name(ds, i, name, sizeof name), SL_OK);
    int ch = strncmp(name, "gray/", 5) == 0 ? 1 : 3;
    int max_err;
    double mean_err;
    compare(ds, i, ch, &max_err, &mean_err);
    if (mean_err > 1.0 || max_err > 8)
      fail_msg("%s: mean error %.2f, largest %d against round(v / 257)", name,
               mean_err, max_err);
  }
  sl_dataset_close(ds);
}

/* A PNG stored as it is goes through the loader's PNG codec, which gives
 * exactly round(v / 257), as pack does before its JPEG encode. */
static void test_codec_linear(void **state) {
  (void)state;
  char p[700], out[700];
  snprintf(out, sizeof out, "%s/stored.lmdb", g_dir);
  sl_writer *w;
  if (sl_writer_create(&w, out, NULL) != SL_OK)
    fail_msg("%s", sl_writer_errmsg(w));
  for (int ch = 1; ch <= 3; ch += 2) {
    snprintf(p, sizeof p, "%s/direct%d.png", g_dir, ch);
    write_png16(p, ch);
    uint8_t *buf;
    size_t len;
    load_png(p, &buf, &len);
    if (sl_writer_add_encoded(w, buf, len, 0, NULL, p) != SL_OK)
      fail_msg("%s", sl_writer_errmsg(w));
    free(buf);
  }
  if (sl_writer_commit(w) != SL_OK)
    fail_msg("%s", sl_writer_errmsg(w));
  sl_writer_destroy(w);
  sl_dataset *ds;
  if (sl_dataset_open_file(&ds, out) != SL_OK)
    fail_msg("%s", sl_dataset_errmsg(ds));
  for (uint64_t i = 0; i < 2; i++) {
    sl_sample_meta m;
    assert_int_equal(sl_dataset_info(ds, i, &m), SL_OK);
    assert_int_equal(m.codec, SL_IMAGE_PNG);
    int max_err;
    double mean_err;
    compare(ds, i, i == 0 ? 1 : 3, &max_err, &mean_err);
    if (max_err != 0)
      fail_msg("sample %llu: mean error %.2f, largest %d against round(v / "
               "257)",
               (unsigned long long)i, mean_err, max_err);
  }
  sl_dataset_close(ds);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pack_linear),
      cmocka_unit_test(test_codec_linear),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
