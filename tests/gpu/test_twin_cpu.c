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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_same_bytes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
