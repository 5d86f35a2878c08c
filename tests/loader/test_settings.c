/* loader/settings.h: the config read once into the loader's settings and
 * the other stages' option structs (augment's parameters, the reader's
 * options), eval's overrides, the backend's dtype/layout choice, and
 * validation at the same step. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "loader/settings.h"

static void test_aug_params_from_config(void **state) {
  (void)state;
  sl_config *cfg;
  assert_int_equal(sl_config_create(&cfg), SL_OK);
  assert_int_equal(sl_config_set(cfg, "augment.std", "0.5"), SL_OK);
  assert_int_equal(sl_config_set(cfg, "augment.dtype", "bf16"), SL_OK);
  sl_settings s;
  sl_settings_read(&s, cfg);
  sl_aug_params p = s.aug;
  assert_int_equal(p.crop, SL_CROP_RANDOM_RESIZED);
  assert_true(fabs(p.scale[0] - 0.08) < 1e-9 && p.scale[1] == 1.0);
  assert_true(fabs(p.ratio[1] - 4.0 / 3.0) < 1e-6);
  assert_true(p.flip == 0.5 && fabs(p.center_ratio - 0.875) < 1e-9);
  assert_true(fabsf(p.mean[2] - 0.406f) < 1e-6f && p.std[1] == 0.5f);
  assert_int_equal(p.channels, 3);
  assert_int_equal(p.dtype, SL_DTYPE_BF16);
  assert_int_equal(p.layout, SL_LAYOUT_NCHW);
  assert_int_equal(p.filter, SL_FILTER_BOX);
  assert_int_equal(p.jpeg_planes, 0);
  assert_int_equal(p.max_pixels, 100000000);
  assert_int_equal(sl_aug_sample_bytes(&p, 224, 160), 224 * 160 * 3 * 2);
  assert_int_equal(sl_config_set(cfg, "augment.crop", "none"), SL_OK);
  assert_int_equal(sl_config_set(cfg, "augment.filter", "bilinear"), SL_OK);
  assert_int_equal(sl_config_set(cfg, "augment.layout", "nhwc"), SL_OK);
  assert_int_equal(sl_config_set(cfg, "augment.jpeg_planes", "true"), SL_OK);
  sl_settings_read(&s, cfg);
  p = s.aug;
  assert_int_equal(p.jpeg_planes, 1);
  assert_int_equal(p.crop, SL_CROP_NONE);
  assert_int_equal(p.filter, SL_FILTER_BILINEAR);
  assert_int_equal(p.layout, SL_LAYOUT_NHWC);
  sl_config_destroy(cfg);
}

static void test_io_opts_from_config(void **state) {
  (void)state;
  sl_config *cfg;
  assert_int_equal(sl_config_create(&cfg), SL_OK);
  assert_int_equal(sl_config_set(cfg, "loader.batch_size", "32"), SL_OK);
  sl_settings s;
  sl_settings_read(&s, cfg);
  sl_io_opts o = s.io;
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
  sl_settings_read(&s, cfg);
  o = s.io;
  assert_int_equal(o.kind, SL_IO_URING);
  assert_true(o.direct);
  assert_int_equal(o.queue_depth, 8);
  sl_config_destroy(cfg);
}

/* Eval's overrides are made once, in the settings: center crop, no flip,
 * no recipe, no mixing, sequential order, no drop. A converting backend
 * makes the workers write u8 NHWC; the batch keeps the configured dtype. */
static void test_eval_and_backend(void **state) {
  (void)state;
  sl_config *cfg;
  assert_int_equal(sl_config_create(&cfg), SL_OK);
  const char *kv[] = {"loader.mode",
                      "eval",
                      "augment.flip",
                      "0.7",
                      "augment.auto",
                      "trivial",
                      "augment.mixup",
                      "0.2",
                      "loader.order",
                      "random",
                      "loader.drop_last",
                      "true",
                      "augment.dtype",
                      "fp32",
                      "augment.layout",
                      "nchw",
                      NULL};
  for (int i = 0; kv[i]; i += 2)
    assert_int_equal(sl_config_set(cfg, kv[i], kv[i + 1]), SL_OK);
  sl_settings s;
  sl_err err;
  sl_err_clear(&err);
  assert_int_equal(sl_settings_from_config(&s, cfg, &err), SL_OK);
  assert_true(s.eval && s.sched.eval);
  assert_int_equal(s.aug.crop, SL_CROP_CENTER);
  assert_true(s.aug.flip == 0);
  assert_int_equal(s.aug.recipe.policy.policy, SL_AUTO_NONE);
  assert_true(s.mix.mixup == 0);
  assert_int_equal(s.sampler.order, SL_ORDER_SEQUENTIAL);
  assert_false(s.sampler.drop_last);
  /* The recipe's keys keep their configured text for the fingerprint. */
  assert_string_equal(s.recipe_text[0], "trivial");
  assert_int_equal(s.aug.dtype, SL_DTYPE_FP32);
  sl_settings_use_backend(&s, true);
  assert_int_equal(s.aug.dtype, SL_DTYPE_U8);
  assert_int_equal(s.aug.layout, SL_LAYOUT_NHWC);
  assert_int_equal(s.dtype, SL_DTYPE_FP32);
  assert_int_equal(s.layout, SL_LAYOUT_NCHW);
  sl_settings_use_backend(&s, false);
  assert_int_equal(s.aug.dtype, SL_DTYPE_FP32);
  assert_int_equal(s.aug.layout, SL_LAYOUT_NCHW);
  /* A bad config is refused with the key named, before anything is read. */
  assert_int_equal(sl_config_set(cfg, "resolution.schedule", "steps"), SL_OK);
  assert_int_equal(sl_config_set(cfg, "resolution.max", "128"), SL_OK);
  assert_int_equal(sl_config_set(cfg, "resolution.steps", "0:256"), SL_OK);
  assert_int_equal(sl_settings_from_config(&s, cfg, &err), SL_ECONFIG);
  if (!strstr(err.msg, "resolution"))
    fail_msg("%s", err.msg);
  sl_config_destroy(cfg);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_aug_params_from_config),
      cmocka_unit_test(test_io_opts_from_config),
      cmocka_unit_test(test_eval_and_backend),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
