/* 16-bit PNGs scale linearly to 8 bits (rounded v / 257), with no gamma
 * curve: through `sluice pack` (decoded, then stored as JPEG) and through
 * the loader's PNG codec (a PNG stored as it is by sl_writer), both read
 * back with the public sl_dataset_decode. The PNGs are written here with
 * libpng (bit depth 16, no gAMA chunk, as numpy-based writers make them)
 * and compared against the linear formula computed here. Also: a PNG over
 * pack's pixel limit is skipped with a reason that names the limit. */
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
#include "tests/support/test_dir.h"
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
  return sl_test_remove_dir(g_dir);
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

static uint32_t crc32_png(const uint8_t *p, size_t n) {
  uint32_t c = 0xffffffffu;
  for (size_t i = 0; i < n; i++) {
    c ^= p[i];
    for (int k = 0; k < 8; k++)
      c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
  }
  return c ^ 0xffffffffu;
}

static void put_be32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16);
  p[2] = (uint8_t)(v >> 8), p[3] = (uint8_t)v;
}

/* Appends a chunk (length, type, data, CRC) at out + *n. */
static void chunk(uint8_t *out, size_t *n, const char *type,
                  const uint8_t *data, uint32_t len) {
  put_be32(out + *n, len);
  memcpy(out + *n + 4, type, 4);
  if (len)
    memcpy(out + *n + 8, data, len);
  put_be32(out + *n + 8 + len, crc32_png(out + *n + 4, len + 4));
  *n += 12 + len;
}

/* A PNG whose header says 40000x40000 (8-bit gray), then a short IDAT (a
 * zlib stream of one zero byte) and IEND: enough for pack to read the
 * size, which is all it needs to refuse it. */
static void write_huge_png(const char *path) {
  uint8_t png[128];
  size_t n = 8;
  static const uint8_t sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  memcpy(png, sig, 8);
  uint8_t ihdr[13] = {0};
  put_be32(ihdr, 40000);
  put_be32(ihdr + 4, 40000);
  ihdr[8] = 8; /* depth; colour type 0 (gray), no interlace */
  chunk(png, &n, "IHDR", ihdr, 13);
  static const uint8_t idat[] = {0x78, 0x9c, 0x63, 0, 0, 0, 1, 0, 1};
  chunk(png, &n, "IDAT", idat, sizeof idat);
  chunk(png, &n, "IEND", NULL, 0);
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(png, 1, n, f), n);
  assert_int_equal(fclose(f), 0);
}

/* Pack skips an image over its pixel limit whatever --max-side says, and
 * the reason names the limit and why --max-side does not lift it. */
static void test_pack_too_large_names_limit(void **state) {
  (void)state;
  char p[700], args[2000];
  snprintf(p, sizeof p, "%s/huge/a", g_dir);
  char cmd[800];
  snprintf(cmd, sizeof cmd, "mkdir -p '%s'", p);
  assert_int_equal(system(cmd), 0);
  snprintf(p, sizeof p, "%s/huge/a/big.png", g_dir);
  write_huge_png(p);
  snprintf(p, sizeof p, "%s/huge/a/small.png", g_dir);
  write_png16(p, 1);
  snprintf(p, sizeof p, "%s/huge.lmdb", g_dir);
  snprintf(args, sizeof args,
           "pack --quiet --threads 1 --max-side 512 '%s/huge' '%s'", g_dir, p);
  if (cli_run(args, g_out, sizeof g_out) != 0)
    fail_msg("%s", g_out);
  snprintf(p, sizeof p, "%s/huge.lmdb.skipped.txt", g_dir);
  FILE *f = fopen(p, "r");
  assert_non_null(f);
  char text[2048];
  size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = 0;
  if (!strstr(text, "40000x40000") || !strstr(text, "268435456") ||
      !strstr(text, "--max-side"))
    fail_msg("reason lacks the size, the limit or --max-side: %s", text);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pack_linear),
      cmocka_unit_test(test_codec_linear),
      cmocka_unit_test(test_pack_too_large_names_limit),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
