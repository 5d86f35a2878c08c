/* The host twin of the device convert: rounding, tables and layouts. Runs
 * anywhere (label unit). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/half.h"
#include "loader/device_convert.h"

static float from_bits(uint32_t x) {
  float f;
  memcpy(&f, &x, sizeof f);
  return f;
}

/* h is the nearest binary16 to f, ties to the even one: no neighbour is
 * closer, and on a tie h's last bit is 0. Checked in double, exactly. */
static int is_rne(float f, uint16_t h, float (*widen)(uint16_t),
                  uint16_t max_finite) {
  double top = (double)widen(max_finite);
  double limit = top + 0.5 * (top - (double)widen(max_finite - 1));
  uint16_t mag = h & 0x7fff;
  if (fabs((double)f) >= limit) /* rounds past the largest finite value */
    return mag == (uint16_t)(max_finite + 1) && !!signbit(f) == !!(h >> 15);
  if (mag > max_finite)
    return 0;
  double w = (double)widen(h), d = fabs((double)f - w);
  if (w != 0.0 && !!signbit(f) != !!signbit(w))
    return 0;
  uint16_t nb[2] = {(uint16_t)(h + 1), (uint16_t)(h - 1)};
  for (int i = 0; i < 2; i++) {
    if ((nb[i] & 0x7fff) > max_finite || (mag == 0 && i == 1))
      continue;
    double dn = fabs((double)f - (double)widen(nb[i]));
    if (dn < d || (dn == d && (h & 1)))
      return 0;
  }
  return 1;
}

static void test_f16_known_values(void **state) {
  (void)state;
  assert_int_equal(sl_f32_to_f16(0.0f), 0x0000);
  assert_int_equal(sl_f32_to_f16(-0.0f), 0x8000);
  assert_int_equal(sl_f32_to_f16(1.0f), 0x3c00);
  assert_int_equal(sl_f32_to_f16(-2.0f), 0xc000);
  assert_int_equal(sl_f32_to_f16(65504.0f), 0x7bff);
  assert_int_equal(sl_f32_to_f16(65519.99f), 0x7bff);
  assert_int_equal(sl_f32_to_f16(65520.0f), 0x7c00); /* tie → even = inf */
  assert_int_equal(sl_f32_to_f16(INFINITY), 0x7c00);
  assert_int_equal(sl_f32_to_f16(-INFINITY), 0xfc00);
  assert_int_equal(sl_f32_to_f16(ldexpf(1, -14)), 0x0400); /* min normal */
  assert_int_equal(sl_f32_to_f16(ldexpf(1, -24)), 0x0001); /* min subnormal */
  assert_int_equal(sl_f32_to_f16(ldexpf(1, -25)), 0x0000); /* tie → 0 */
  assert_int_equal(sl_f32_to_f16(ldexpf(1.5f, -25)), 0x0001);
  assert_int_equal(sl_f32_to_f16(ldexpf(3, -25)), 0x0002); /* 1.5 → 2 */
  /* 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even (1). */
  assert_int_equal(sl_f32_to_f16(1.0f + ldexpf(1, -11)), 0x3c00);
  assert_int_equal(sl_f32_to_f16(1.0f + 3 * ldexpf(1, -11)), 0x3c02);
  uint16_t nan = sl_f32_to_f16(NAN);
  assert_true((nan & 0x7c00) == 0x7c00 && (nan & 0x03ff) != 0);
}

static void test_bf16_known_values(void **state) {
  (void)state;
  assert_int_equal(sl_f32_to_bf16(1.0f), 0x3f80);
  assert_int_equal(sl_f32_to_bf16(-1.0f), 0xbf80);
  assert_int_equal(sl_f32_to_bf16(1.0f + ldexpf(1, -8)), 0x3f80); /* tie */
  assert_int_equal(sl_f32_to_bf16(1.0f + 3 * ldexpf(1, -8)), 0x3f82);
  assert_int_equal(sl_f32_to_bf16(FLT_MAX), 0x7f80); /* rounds to inf */
  assert_int_equal(sl_f32_to_bf16(INFINITY), 0x7f80);
  uint16_t nan = sl_f32_to_bf16(NAN);
  assert_true((nan & 0x7f80) == 0x7f80 && (nan & 0x007f) != 0);
}

/* A sweep over every 251st float bit pattern (17 million values, all
 * exponents and signs): each result is the round-to-nearest-even one, and
 * widening back is exact for representable values. */
static void test_rounding_sweep(void **state) {
  (void)state;
  long bad16 = 0, bad_bf = 0;
  for (uint64_t x = 0; x <= 0xffffffffu; x += 251) {
    float f = from_bits((uint32_t)x);
    if (isnan(f))
      continue;
    uint16_t h = sl_f32_to_f16(f), b = sl_f32_to_bf16(f);
    bad16 += !is_rne(f, h, sl_f16_to_f32, 0x7bff);
    bad_bf += !is_rne(f, b, sl_bf16_to_f32, 0x7f7f);
  }
  assert_int_equal(bad16, 0);
  assert_int_equal(bad_bf, 0);
  for (uint32_t h = 0; h < 0x10000; h++) {
    if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff))
      continue; /* NaN */
    assert_int_equal(sl_f32_to_f16(sl_f16_to_f32((uint16_t)h)), h);
    if ((h & 0x7f80) == 0x7f80 && (h & 0x7f))
      continue;
    assert_int_equal(sl_f32_to_bf16(sl_bf16_to_f32((uint16_t)h)), h);
  }
}

#if defined(__FLT16_MAX__) && defined(__x86_64__)
/* The compiler's own binary16 conversion (RNE) agrees. */
static void test_f16_matches_compiler(void **state) {
  (void)state;
  for (uint64_t x = 7; x <= 0xffffffffu; x += 4099) {
    float f = from_bits((uint32_t)x);
    if (isnan(f))
      continue;
    _Float16 c = (_Float16)f;
    uint16_t cb;
    memcpy(&cb, &c, sizeof cb);
    if (sl_f32_to_f16(f) != cb)
      fail_msg("0x%08x: %04x vs compiler %04x", (unsigned)x, sl_f32_to_f16(f),
               cb);
  }
}
#endif

static const float kMean[3] = {0.485f, 0.456f, 0.406f};
static const float kStd[3] = {0.229f, 0.224f, 0.225f};

static void test_init_rejects_bad_arguments(void **state) {
  (void)state;
  sl_dconv dc;
  float bad_std[3] = {0.2f, 0.0f, 0.2f}, nan_mean[3] = {0, NAN, 0};
  assert_int_equal(sl_dconv_init(&dc, 4, SL_LAYOUT_NCHW, 3, kMean, kStd), -1);
  assert_int_equal(sl_dconv_init(&dc, -1, SL_LAYOUT_NCHW, 3, kMean, kStd), -1);
  assert_int_equal(sl_dconv_init(&dc, SL_DTYPE_FP16, 2, 3, kMean, kStd), -1);
  assert_int_equal(sl_dconv_init(&dc, SL_DTYPE_FP16, 0, 0, kMean, kStd), -1);
  assert_int_equal(sl_dconv_init(&dc, SL_DTYPE_FP16, 0, 4, kMean, kStd), -1);
  assert_int_equal(sl_dconv_init(&dc, SL_DTYPE_FP16, 0, 3, kMean, bad_std), -1);
  assert_int_equal(sl_dconv_init(&dc, SL_DTYPE_FP16, 0, 3, nan_mean, kStd), -1);
  assert_int_equal(sl_dconv_init(&dc, SL_DTYPE_FP16, 0, 3, NULL, kStd), -1);
  assert_int_equal(sl_dconv_init(NULL, SL_DTYPE_U8, 0, 3, NULL, NULL), -1);
  /* u8 needs no mean/std. */
  assert_int_equal(sl_dconv_init(&dc, SL_DTYPE_U8, 0, 3, NULL, NULL), 0);
}

static void test_sizes(void **state) {
  (void)state;
  sl_dconv dc;
  assert_int_equal(sl_dconv_init(&dc, SL_DTYPE_BF16, 0, 3, kMean, kStd), 0);
  assert_int_equal(sl_dconv_in_bytes(&dc, 2, 4, 5), 2 * 4 * 5 * 3);
  assert_int_equal(sl_dconv_out_bytes(&dc, 2, 4, 5), 2 * 4 * 5 * 3 * 2);
  assert_int_equal(sl_dconv_out_bytes(&dc, SIZE_MAX / 2, 2, 2), 0);
  assert_false(sl_dconv_is_identity(&dc));
  assert_int_equal(sl_dconv_init(&dc, SL_DTYPE_U8, SL_LAYOUT_NHWC, 3, 0, 0), 0);
  assert_true(sl_dconv_is_identity(&dc));
  assert_int_equal(sl_dconv_init(&dc, SL_DTYPE_U8, SL_LAYOUT_NCHW, 3, 0, 0), 0);
  assert_false(sl_dconv_is_identity(&dc));
}

/* Every element lands where its layout says, with the value the formula
 * gives, for every dtype. */
static void test_layouts_and_values(void **state) {
  (void)state;
  enum { N = 2, H = 3, W = 5, C = 3 };
  uint8_t src[N * H * W * C];
  for (size_t i = 0; i < sizeof src; i++)
    src[i] = (uint8_t)(i * 37 + 11);
  static uint8_t dst[N * H * W * C * 4];
  for (int dtype = SL_DTYPE_U8; dtype <= SL_DTYPE_FP32; dtype++)
    for (int layout = 0; layout < 2; layout++) {
      sl_dconv dc;
      assert_int_equal(sl_dconv_init(&dc, dtype, layout, C, kMean, kStd), 0);
      memset(dst, 0xab, sizeof dst);
      sl_dconv_run_host(&dc, src, N, H, W, dst);
      for (int n = 0; n < N; n++)
        for (int y = 0; y < H; y++)
          for (int x = 0; x < W; x++)
            for (int c = 0; c < C; c++) {
              uint8_t v = src[((n * H + y) * W + x) * C + c];
              size_t o = layout == SL_LAYOUT_NHWC
                             ? (size_t)((n * H + y) * W + x) * C + c
                             : (size_t)((n * C + c) * H + y) * W + x;
              float want = (float)(((double)v / 255.0 - (double)kMean[c]) /
                                   (double)kStd[c]);
              if (dtype == SL_DTYPE_U8) {
                assert_int_equal(dst[o], v);
              } else if (dtype == SL_DTYPE_FP32) {
                float got;
                memcpy(&got, dst + o * 4, 4);
                assert_true(got == want);
              } else {
                uint16_t got;
                memcpy(&got, dst + o * 2, 2);
                assert_int_equal(got, dtype == SL_DTYPE_FP16
                                          ? sl_f32_to_f16(want)
                                          : sl_f32_to_bf16(want));
              }
            }
      /* Nothing written past the output. */
      size_t out = sl_dconv_out_bytes(&dc, N, H, W);
      for (size_t i = out; i < sizeof dst; i++)
        assert_int_equal(dst[i], 0xab);
    }
}

/* One channel: NCHW and NHWC coincide. */
/* The kernel's grid: one block per 256 pixels up to SMs × 8, so a large
 * batch does not launch a block (and a table copy) per 256 pixels. */
static void test_grid(void **state) {
  (void)state;
  assert_int_equal(sl_dconv_grid(0, 256, 132), 0);
  assert_int_equal(sl_dconv_grid(1, 256, 132), 1);
  assert_int_equal(sl_dconv_grid(257, 256, 132), 2);
  assert_int_equal(sl_dconv_grid(256ull * 224 * 224, 256, 132), 1056);
  assert_int_equal(sl_dconv_grid(256ull * 224 * 224, 256, 108), 864);
  assert_int_equal(sl_dconv_grid(256ull * 224 * 224, 256, 0), 1056);
  assert_int_equal(sl_dconv_grid(1ull << 62, 256, 132), 1056);
  assert_int_equal(sl_dconv_grid(5, 0, 132), 0);
}

static void test_gray(void **state) {
  (void)state;
  uint8_t src[12], a[48], b[48];
  for (int i = 0; i < 12; i++)
    src[i] = (uint8_t)(i * 20);
  float m = 0.5f, s = 0.25f;
  sl_dconv dn, dh;
  assert_int_equal(sl_dconv_init(&dn, SL_DTYPE_FP32, SL_LAYOUT_NCHW, 1, &m, &s),
                   0);
  assert_int_equal(sl_dconv_init(&dh, SL_DTYPE_FP32, SL_LAYOUT_NHWC, 1, &m, &s),
                   0);
  sl_dconv_run_host(&dn, src, 2, 2, 3, a);
  sl_dconv_run_host(&dh, src, 2, 2, 3, b);
  assert_memory_equal(a, b, sizeof a);
  float first;
  memcpy(&first, a, 4);
  assert_true(first == -2.0f); /* (0 - 0.5) / 0.25 */
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_f16_known_values),
    cmocka_unit_test(test_grid),
    cmocka_unit_test(test_bf16_known_values),
    cmocka_unit_test(test_rounding_sweep),
#if defined(__FLT16_MAX__) && defined(__x86_64__)
    cmocka_unit_test(test_f16_matches_compiler),
#endif
    cmocka_unit_test(test_init_rejects_bad_arguments),
    cmocka_unit_test(test_sizes),
    cmocka_unit_test(test_layouts_and_values),
    cmocka_unit_test(test_gray),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
