/* The codecs foreign datasets bring: WebP (libwebp, lossy and lossless,
 * alpha dropped; crops decoded through libwebp's cropping, reductions
 * through its scaler) and raw CHW planes in RGB and BGR order (Caffe's
 * raw Datums), each region against the source or libwebp's own decode. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <webp/decode.h>
#include <webp/encode.h>

#include "codecs/codec.h"

enum { W = 61, H = 47 };

static uint8_t g_rgba[W * H * 4];

static int setup(void **state) {
  (void)state;
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) {
      uint8_t *p = g_rgba + (y * W + x) * 4;
      p[0] = (uint8_t)(x * 3 + y);
      p[1] = (uint8_t)(y * 4 + (x ^ y) / 2);
      p[2] = (uint8_t)(200 - x * 2 + y);
      p[3] = (uint8_t)((x + y) % 3 ? 255 : 100); /* alpha: dropped */
    }
  return 0;
}

static sl_decoder *new_decoder(void) {
  sl_decoder *d;
  sl_err err;
  assert_int_equal(sl_decoder_create(&d, 1u << 24, 128, 128, &err), SL_OK);
  return d;
}

static void decode(sl_decoder *d, const sl_encoded *in, int x, int y, int w,
                   int h, int min_w, int min_h, int ch, sl_decoded *out) {
  sl_decode_req q = {x, y, w, h, 8, min_w, min_h, ch, 0};
  sl_err err;
  if (sl_decoder_decode(d, in, &q, out, &err) != SL_OK)
    fail_msg("%s", err.msg);
}

/* Lossless: every region, at odd and even origins, is the source's pixels;
 * gray is their luma; the probe reports alpha as a 4th component. */
static void test_webp_lossless(void **state) {
  (void)state;
  uint8_t *bytes = NULL;
  size_t len = WebPEncodeLosslessRGBA(g_rgba, W, H, W * 4, &bytes);
  assert_true(len > 0);
  sl_encoded in = {bytes, len, SL_IMAGE_WEBP, 0, 0, 0};
  sl_decoder *d = new_decoder();
  sl_image_info info;
  sl_err err;
  assert_int_equal(sl_decoder_probe(d, &in, &info, &err), SL_OK);
  assert_int_equal(info.width, W);
  assert_int_equal(info.height, H);
  assert_int_equal(info.components, 4);
  static const int boxes[][4] = {
      {0, 0, W, H}, {7, 5, 20, 17}, {8, 6, 21, 16}, {W - 1, H - 1, 1, 1}};
  for (int b = 0; b < 4; b++) {
    sl_decoded o;
    const int *r = boxes[b];
    decode(d, &in, r[0], r[1], r[2], r[3], 0, 0, 4, &o);
    assert_int_equal(o.w, r[2]);
    assert_int_equal(o.h, r[3]);
    for (int y = 0; y < o.h; y++)
      for (int x = 0; x < o.w; x++) {
        const uint8_t *g = o.pixels + y * o.stride + x * 4;
        const uint8_t *s = g_rgba + ((r[1] + y) * W + r[0] + x) * 4;
        if (memcmp(g, s, 3) != 0 || g[3] != 255)
          fail_msg("box %d pixel %d,%d: %u %u %u %u vs %u %u %u", b, x, y, g[0],
                   g[1], g[2], g[3], s[0], s[1], s[2]);
      }
    decode(d, &in, r[0], r[1], r[2], r[3], 0, 0, 1, &o);
    const uint8_t *s = g_rgba + (r[1] * W + r[0]) * 4;
    int luma = (s[0] * 77 + s[1] * 150 + s[2] * 29 + 128) >> 8;
    assert_int_equal(o.pixels[0], luma);
  }
  /* A reduction: libwebp scales the 60x44 crop to 15x11 (4x4 boxes). */
  sl_decoded o;
  decode(d, &in, 0, 0, 60, 44, 15, 11, 4, &o);
  assert_int_equal(o.w, 15);
  assert_int_equal(o.h, 11);
  assert_int_equal(o.kx, 4);
  for (int y = 0; y < 11; y++)
    for (int x = 0; x < 15; x++)
      for (int c = 0; c < 3; c++) {
        int sum = 0;
        for (int v = 0; v < 4; v++)
          for (int u = 0; u < 4; u++)
            sum += g_rgba[((y * 4 + v) * W + x * 4 + u) * 4 + c];
        int got = o.pixels[y * o.stride + x * 4 + c];
        if (abs(got - (sum + 8) / 16) > 2)
          fail_msg("reduced %d,%d c%d: %d vs box mean %d", x, y, c, got,
                   (sum + 8) / 16);
      }
  sl_decoder_destroy(d);
  WebPFree(bytes);
}

/* Lossy: the whole image is libwebp's own RGB decode, and a crop is that
 * decode's region (the margin keeps its edges' chroma upsampling as in
 * the whole image). */
static void test_webp_lossy(void **state) {
  (void)state;
  uint8_t rgb[W * H * 3];
  for (int p = 0; p < W * H; p++)
    memcpy(rgb + p * 3, g_rgba + p * 4, 3);
  uint8_t *bytes = NULL;
  size_t len = WebPEncodeRGB(rgb, W, H, W * 3, 75.0f, &bytes);
  assert_true(len > 0);
  int rw, rh;
  uint8_t *ref = WebPDecodeRGB(bytes, len, &rw, &rh);
  assert_non_null(ref);
  sl_encoded in = {bytes, len, SL_IMAGE_WEBP, 0, 0, 0};
  sl_decoder *d = new_decoder();
  static const int boxes[][4] = {{0, 0, W, H}, {7, 5, 20, 17}, {30, 12, 31, 9}};
  for (int b = 0; b < 3; b++) {
    sl_decoded o;
    const int *r = boxes[b];
    decode(d, &in, r[0], r[1], r[2], r[3], 0, 0, 4, &o);
    for (int y = 0; y < o.h; y++)
      for (int x = 0; x < o.w; x++)
        for (int c = 0; c < 3; c++) {
          int got = o.pixels[y * o.stride + x * 4 + c];
          int want = ref[((r[1] + y) * W + r[0] + x) * 3 + c];
          if (got != want)
            fail_msg("box %d pixel %d,%d c%d: %d vs libwebp %d", b, x, y, c,
                     got, want);
        }
  }
  /* Damage: a truncated file is an error, and the decoder goes on. */
  sl_encoded cut = {bytes, len / 2, SL_IMAGE_WEBP, 0, 0, 0};
  sl_decode_req q = {0, 0, W, H, 8, 0, 0, 4, 0};
  sl_decoded o;
  sl_err err;
  assert_int_equal(sl_decoder_decode(d, &cut, &q, &o, &err), SL_EDECODE);
  sl_encoded junk = {
      (const uint8_t *)"RIFFxxxxWEBPjunk", 16, SL_IMAGE_WEBP, 0, 0, 0};
  assert_int_equal(sl_decoder_decode(d, &junk, &q, &o, &err), SL_EDECODE);
  decode(d, &in, 0, 0, W, H, 0, 0, 4, &o);
  assert_int_equal(o.w, W);
  sl_decoder_destroy(d);
  WebPFree(ref);
  WebPFree(bytes);
}

/* Raw CHW planes: a region gathers R, G, B from the planes in the order
 * the codec names; one plane is gray; a 4-plane array is refused. */
static void test_raw_chw(void **state) {
  (void)state;
  static uint8_t planes[3 * W * H];
  for (int c = 0; c < 3; c++)
    for (int p = 0; p < W * H; p++)
      planes[c * W * H + p] = g_rgba[p * 4 + c];
  sl_decoder *d = new_decoder();
  for (int bgr = 0; bgr < 2; bgr++) {
    sl_encoded in = {planes,
                     sizeof planes,
                     bgr ? SL_IMAGE_RAW_CHW_BGR : SL_IMAGE_RAW_CHW,
                     H,
                     W,
                     3};
    sl_decoded o;
    decode(d, &in, 9, 4, 30, 20, 0, 0, 4, &o);
    for (int y = 0; y < 20; y++)
      for (int x = 0; x < 30; x++)
        for (int c = 0; c < 3; c++) {
          int sc = bgr ? 2 - c : c;
          assert_int_equal(o.pixels[y * o.stride + x * 4 + c],
                           g_rgba[((4 + y) * W + 9 + x) * 4 + sc]);
        }
  }
  sl_encoded gray = {planes, (size_t)W * H, SL_IMAGE_RAW_CHW, H, W, 1};
  sl_decoded o;
  decode(d, &gray, 3, 2, 10, 10, 0, 0, 4, &o);
  assert_int_equal(o.pixels[0], planes[2 * W + 3]);
  assert_int_equal(o.pixels[1], planes[2 * W + 3]);
  sl_encoded four = {planes, sizeof planes, SL_IMAGE_RAW_CHW, H / 4, W, 4};
  sl_image_info info;
  sl_err err;
  assert_int_equal(sl_decoder_probe(d, &four, &info, &err), SL_EDECODE);
  sl_encoded short_ = {planes, sizeof planes - 1, SL_IMAGE_RAW_CHW_BGR, H, W,
                       3};
  assert_int_equal(sl_decoder_probe(d, &short_, &info, &err), SL_EDECODE);
  sl_decoder_destroy(d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_webp_lossless),
      cmocka_unit_test(test_webp_lossy),
      cmocka_unit_test(test_raw_chw),
  };
  return cmocka_run_group_tests(tests, setup, NULL);
}
