/* loader/stage_options.h: the config read into the other stages' option
 * structs (augment's parameters, the reader's options). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "loader/stage_options.h"

static void test_aug_params_from_config(void **state) {
  (void)state;
  sl_config *cfg;
  assert_int_equal(sl_config_create(&cfg), SL_OK);
  assert_int_equal(sl_config_set(cfg, "augment.std", "0.5"), SL_OK);
  assert_int_equal(sl_config_set(cfg, "augment.dtype", "bf16"), SL_OK);
  sl_aug_params p;
  sl_aug_params_from_config(&p, cfg);
  assert_int_equal(p.crop, SL_CROP_RANDOM_RESIZED);
  assert_true(fabs(p.scale[0] - 0.08) < 1e-9 && p.scale[1] == 1.0);
  assert_true(fabs(p.ratio[1] - 4.0 / 3.0) < 1e-6);
  assert_true(p.flip == 0.5 && fabs(p.center_ratio - 0.875) < 1e-9);
  assert_true(fabsf(p.mean[2] - 0.406f) < 1e-6f && p.std[1] == 0.5f);
  assert_int_equal(p.channels, 3);
  assert_int_equal(p.dtype, SL_DTYPE_BF16);
  assert_int_equal(p.layout, SL_LAYOUT_NCHW);
  assert_int_equal(p.filter, SL_FILTER_BOX);
  assert_int_equal(p.max_pixels, 100000000);
  assert_int_equal(sl_aug_sample_bytes(&p, 224, 160), 224 * 160 * 3 * 2);
  assert_int_equal(sl_config_set(cfg, "augment.crop", "none"), SL_OK);
  assert_int_equal(sl_config_set(cfg, "augment.filter", "bilinear"), SL_OK);
  assert_int_equal(sl_config_set(cfg, "augment.layout", "nhwc"), SL_OK);
  sl_aug_params_from_config(&p, cfg);
  assert_int_equal(p.crop, SL_CROP_NONE);
  assert_int_equal(p.filter, SL_FILTER_BILINEAR);
  assert_int_equal(p.layout, SL_LAYOUT_NHWC);
  sl_config_destroy(cfg);
}

static void test_io_opts_from_config(void **state) {
  (void)state;
  sl_config *cfg;
  assert_int_equal(sl_config_create(&cfg), SL_OK);
  sl_io_opts o;
  memset(&o, 0, sizeof o);
  sl_io_opts_from_config(&o, cfg, 32);
  assert_int_equal(o.kind, SL_IO_AUTO);
  assert_int_equal(o.batch_size, 32);
  assert_int_equal(o.readahead_batches, 2);
  assert_int_equal(o.queue_depth, 64);
  assert_int_equal(o.pool_bytes, 64u << 20);
  assert_false(o.direct);
  assert_true(fabs(o.auto_share - 0.5) < 1e-12);
  assert_int_equal(sl_config_set(cfg, "loader.io", "uring"), SL_OK);
  assert_int_equal(sl_config_set(cfg, "io.direct", "true"), SL_OK);
  assert_int_equal(sl_config_set(cfg, "io.queue_depth", "8"), SL_OK);
  sl_io_opts_from_config(&o, cfg, 1);
  assert_int_equal(o.kind, SL_IO_URING);
  assert_true(o.direct);
  assert_int_equal(o.queue_depth, 8);
  sl_config_destroy(cfg);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_aug_params_from_config),
      cmocka_unit_test(test_io_opts_from_config),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
