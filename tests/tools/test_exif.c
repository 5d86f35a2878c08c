/* EXIF orientation of JPEG (APP1) and PNG (eXIf) inputs to `sluice pack`
 * (tools/pack/pack_exif.c): both byte orders, and every kind of bad input —
 * cut-off blocks, offsets and counts past the end, values outside 1..8 —
 * gives 1 (upright) without reading outside the bytes (ASan). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "tools/pack/pack_image.h"

enum { TIFF = 26 };

/* A TIFF block with IFD0 holding the orientation tag, in byte order big. */
static void tiff(uint8_t t[TIFF], int big, int orient) {
  memset(t, 0, TIFF);
  t[0] = t[1] = big ? 'M' : 'I';
#define PUT16(o, v)                                                            \
  (big ? (t[o] = (uint8_t)((v) >> 8), t[(o) + 1] = (uint8_t)(v))               \
       : (t[o] = (uint8_t)(v), t[(o) + 1] = (uint8_t)((v) >> 8)))
  PUT16(2, 42);
  PUT16(4, 0); /* IFD0 at offset 8 (32-bit, high half first if big) */
  PUT16(6, 0);
  t[big ? 7 : 4] = 8;
  PUT16(8, 1);       /* one entry */
  PUT16(10, 0x0112); /* orientation */
  PUT16(12, 3);      /* SHORT */
  PUT16(14, 0);
  PUT16(16, 0);
  t[big ? 17 : 14] = 1; /* count 1 */
  PUT16(18, orient);
#undef PUT16
}

/* SOI, APP1 "Exif\0\0" + the TIFF block (n bytes of it), EOI. */
static size_t jpeg(uint8_t *out, const uint8_t *t, size_t n) {
  size_t seg = 2 + 6 + n;
  out[0] = 0xFF, out[1] = 0xD8, out[2] = 0xFF, out[3] = 0xE1;
  out[4] = (uint8_t)(seg >> 8), out[5] = (uint8_t)seg;
  memcpy(out + 6, "Exif\0\0", 6);
  memcpy(out + 12, t, n);
  out[12 + n] = 0xFF, out[13 + n] = 0xD9;
  return 14 + n;
}

/* PNG signature, an eXIf chunk of the TIFF block (CRC not checked by the
 * parser: zeros), IEND. */
static size_t png(uint8_t *out, const uint8_t *t, size_t n) {
  static const uint8_t sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  memcpy(out, sig, 8);
  out[8] = (uint8_t)(n >> 24), out[9] = (uint8_t)(n >> 16);
  out[10] = (uint8_t)(n >> 8), out[11] = (uint8_t)n;
  memcpy(out + 12, "eXIf", 4);
  memcpy(out + 16, t, n);
  memset(out + 16 + n, 0, 4);
  memcpy(out + 20 + n, "\0\0\0\0IEND\xae\x42\x60\x82", 12);
  return 32 + n;
}

static void test_both_byte_orders(void **state) {
  (void)state;
  uint8_t t[TIFF], buf[128];
  for (int big = 0; big < 2; big++)
    for (int o = 1; o <= 8; o++) {
      tiff(t, big, o);
      assert_int_equal(sl_exif_orientation(buf, jpeg(buf, t, TIFF)), o);
      assert_int_equal(sl_png_exif_orientation(buf, png(buf, t, TIFF)), o);
    }
}

static void test_bad_input_is_upright(void **state) {
  (void)state;
  uint8_t t[TIFF], buf[128];
  for (int o = 0; o <= 9; o += 9) { /* outside 1..8 */
    tiff(t, 0, o);
    assert_int_equal(sl_exif_orientation(buf, jpeg(buf, t, TIFF)), 1);
    assert_int_equal(sl_png_exif_orientation(buf, png(buf, t, TIFF)), 1);
  }
  tiff(t, 0, 6);
  /* Every cut of the whole file, and of the TIFF block alone: copied into
   * exactly-sized heap blocks so ASan sees any read past the end. */
  size_t n = jpeg(buf, t, TIFF);
  for (size_t k = 0; k < n; k++) {
    uint8_t *cut = malloc(k ? k : 1);
    memcpy(cut, buf, k);
    int o = sl_exif_orientation(cut, k);
    assert_true(o >= 1 && o <= 8);
    free(cut);
  }
  /* The one entry ends at byte 22: shorter blocks hold no orientation. */
  for (size_t k = 0; k < TIFF; k++) {
    n = jpeg(buf, t, k);
    assert_int_equal(sl_exif_orientation(buf, n), k >= 22 ? 6 : 1);
    n = png(buf, t, k);
    assert_int_equal(sl_png_exif_orientation(buf, n), k >= 22 ? 6 : 1);
  }
  n = png(buf, t, TIFF);
  for (size_t k = 0; k < n; k++) {
    uint8_t *cut = malloc(k ? k : 1);
    memcpy(cut, buf, k);
    int o = sl_png_exif_orientation(cut, k);
    assert_true(o >= 1 && o <= 8);
    free(cut);
  }
  /* IFD offset past the end, an entry count past the end, a wrong magic,
   * a chunk length past the end. */
  uint8_t bad[TIFF];
  memcpy(bad, t, TIFF), bad[4] = 200;
  assert_int_equal(sl_exif_orientation(buf, jpeg(buf, bad, TIFF)), 1);
  memcpy(bad, t, TIFF), bad[8] = 50, bad[10] = 0x13; /* no 0x0112 within */
  assert_int_equal(sl_exif_orientation(buf, jpeg(buf, bad, TIFF)), 1);
  memcpy(bad, t, TIFF), bad[2] = 43;
  assert_int_equal(sl_png_exif_orientation(buf, png(buf, bad, TIFF)), 1);
  n = png(buf, t, TIFF);
  buf[8] = 0x7F; /* eXIf length 2 GB */
  assert_int_equal(sl_png_exif_orientation(buf, n), 1);
  assert_int_equal(sl_png_exif_orientation(buf, 7), 1);
  assert_int_equal(sl_exif_orientation(buf, 0), 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_both_byte_orders),
      cmocka_unit_test(test_bad_input_is_upright),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
