/* The device convert's host twin against augment's CPU convert (label
 * unit): the same u8 pixels give the same bytes for every dtype, layout and
 * channel count, so a batch converted on the GPU equals one converted on
 * the CPU. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "augment/convert.h"
#include "augment/mix.h"
#include "augment/pipeline.h"
#include "common/half.h"
#include "loader/device_convert.h"

enum { H = 13, W = 17 };

static void run_case(int channels, sl_dtype dtype, sl_layout layout,
                     const float *mean, const float *std, unsigned seed) {
  sl_aug_params p;
  memset(&p, 0, sizeof p);
  p.channels = channels;
  p.dtype = dtype;
  p.layout = layout;
  for (int c = 0; c < 3; c++) {
    p.mean[c] = mean[channels == 1 ? 0 : c];
    p.std[c] = std[channels == 1 ? 0 : c];
  }
  /* augment reads RGBX (4 bytes a pixel) or gray; the twin packed u8. */
  int src_ch = channels == 1 ? 1 : 4;
  uint8_t cpu_src[H * W * 4], packed[H * W * 3];
  uint32_t x = seed * 2654435761u + 12345;
  for (int i = 0; i < H * W; i++)
    for (int c = 0; c < src_ch; c++) {
      x ^= x << 13;
      x ^= x >> 17;
      x ^= x << 5;
      cpu_src[i * src_ch + c] = (uint8_t)x;
      if (c < channels)
        packed[i * channels + c] = (uint8_t)x;
    }
  sl_convert_tables *t = malloc(sizeof *t);
  assert_non_null(t);
  sl_convert_tables_init(t, &p);
  size_t bytes = sl_aug_sample_bytes(&p, H, W);
  uint8_t *cpu = malloc(bytes), *twin = malloc(bytes);
  assert_true(cpu && twin);
  sl_convert_out(t, &p, cpu_src, src_ch, H, W, 0, cpu);
  sl_dconv dc;
  assert_int_equal(
      sl_dconv_init(&dc, (int)dtype, (int)layout, channels, p.mean, p.std), 0);
  assert_int_equal(sl_dconv_out_bytes(&dc, 1, H, W), bytes);
  sl_dconv_run_host(&dc, packed, 1, H, W, twin);
  if (memcmp(cpu, twin, bytes) != 0)
    fail_msg("twin ≠ CPU convert: %d channels, dtype %d, layout %d", channels,
             (int)dtype, (int)layout);
  free(t);
  free(cpu);
  free(twin);
}

static void test_same_bytes(void **state) {
  (void)state;
  const float mean[3] = {0.485f, 0.456f, 0.406f};
  const float std[3] = {0.229f, 0.224f, 0.225f};
  const float mean2[3] = {0.5f, 0.25f, -3.0f}, std2[3] = {0.01f, 7.0f, 1e-3f};
  unsigned seed = 1;
  for (int ch = 1; ch <= 3; ch += 2)
    for (int d = SL_DTYPE_U8; d <= SL_DTYPE_FP32; d++)
      for (int l = SL_LAYOUT_NCHW; l <= SL_LAYOUT_NHWC; l++) {
        run_case(ch, (sl_dtype)d, (sl_layout)l, mean, std, seed++);
        run_case(ch, (sl_dtype)d, (sl_layout)l, mean2, std2, seed++);
      }
}

/* Batch mixing: the twin's mixing while converting (what the convert
 * kernel does) gives the bytes of the host's mixing of a batch the workers
 * converted (augment/mix.c), for Mixup and CutMix in every dtype and
 * layout. */
static void test_mixing_same_bytes(void **state) {
  (void)state;
  enum { N = 5 };
  const float mean[3] = {0.485f, 0.456f, 0.406f};
  const float std[3] = {0.229f, 0.224f, 0.225f};
  uint8_t src[N * H * W * 3];
  uint32_t x = 77;
  for (size_t i = 0; i < sizeof src; i++) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    src[i] = (uint8_t)x;
  }
  const sl_mix_plan plans[] = {{SL_MIX_MIXUP, 0.3137f, 0, 0, 0, 0},
                               {SL_MIX_MIXUP, 0.999f, 0, 0, 0, 0},
                               {SL_MIX_CUTMIX, 0.6f, 2, 11, 3, 16}};
  for (size_t k = 0; k < sizeof plans / sizeof plans[0]; k++)
    for (int ch = 1; ch <= 3; ch += 2)
      for (int d = SL_DTYPE_U8; d <= SL_DTYPE_FP32; d++)
        for (int l = SL_LAYOUT_NCHW; l <= SL_LAYOUT_NHWC; l++) {
          sl_dconv dc;
          assert_int_equal(sl_dconv_init(&dc, d, l, ch, mean, std), 0);
          size_t bytes = sl_dconv_out_bytes(&dc, N, H, W);
          uint8_t *host = malloc(bytes), *twin = malloc(bytes);
          assert_true(host && twin);
          sl_dconv_run_host(&dc, src, N, H, W, host);
          sl_mix_pixels(&plans[k], host, N, H, W, ch, d, l);
          const sl_mix_plan *m = &plans[k];
          sl_dconv_mix dm = {
              (int)m->kind, (float)m->lambda, m->y0, m->y1, m->x0, m->x1};
          sl_dconv_run_host_mix(&dc, &dm, src, N, H, W, twin);
          if (memcmp(host, twin, bytes) != 0)
            fail_msg("mixing twin ≠ host mixing: plan %zu, %d channels, "
                     "dtype %d, layout %d",
                     k, ch, d, l);
          free(host);
          free(twin);
        }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_same_bytes),
      cmocka_unit_test(test_mixing_same_bytes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
