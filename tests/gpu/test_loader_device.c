/* device.backend through the public loader (label unit), on a synthetic
 * source: `cuda` without a usable device fails at open with the CUDA
 * runtime's message; `auto` falls back to host memory, says why exactly
 * once through the log callback, and then delivers correct host batches.
 * On a machine with a GPU the no-device cases skip (test_loader_gpu covers
 * that side). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "loader/cuda/device_select.h"
#include "loader/fake_src.h"
#include "loader/loader_internal.h"
#ifdef SLUICE_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

/* clang-format off */
static const char *const kBase[] = {
    "loader.batch_size", "4", "loader.workers", "2",
    "resolution.min", "32", "resolution.max", "32",
    "augment.dtype", "fp16", "augment.layout", "nchw", NULL};
/* clang-format on */

static int usable_device(void) {
  sl_device_choice ch;
  sl_err err;
  sl_err_clear(&err);
  return sl_device_choose(SL_BACKEND_CUDA, 0, &ch, &err) == SL_OK;
}

/* The runtime's sentence for "no device" here, or "" without CUDA. */
static const char *runtime_words(void) {
#ifdef SLUICE_HAVE_CUDA
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  (void)cudaGetLastError();
  return e == cudaSuccess ? "" : cudaGetErrorString(e);
#else
  return "";
#endif
}

static void test_cuda_without_device_fails_open(void **state) {
  (void)state;
  if (usable_device())
    skip();
  sl_config *cfg = make_cfg(kBase);
  assert_non_null(cfg);
  assert_int_equal(sl_config_set(cfg, "device.backend", "cuda"), SL_OK);
  fake_ctx fc = {.seed = 5, .dtype = SL_DTYPE_U8, .channels = 3};
  sl_sample_src src = fake_src(40, &fc);
  sl_loader *ld = NULL;
  sl_status st = sl_loader_open_with(&ld, cfg, &src, NULL);
  assert_int_not_equal(st, SL_OK);
  char msg[600];
  snprintf(msg, sizeof msg, "%s", sl_loader_errmsg(ld));
  sl_loader_close(ld);
  if (!strstr(msg, "device.backend = cuda"))
    fail_msg("status %d: %s", (int)st, msg);
  if (sl_device_cuda_built()) {
    assert_true(st == SL_ENODEV || st == SL_ECUDA);
    assert_non_null(strstr(msg, runtime_words()));
  } else {
    assert_int_equal(st, SL_EUNSUPPORTED);
    assert_non_null(strstr(msg, "without CUDA"));
  }
  sl_config_destroy(cfg);
}

typedef struct log_count {
  int fallback, total;
  char last[512];
} log_count;

static void count_log(void *user, sl_log_level level, const char *message) {
  log_count *lc = user;
  lc->total++;
  if (strstr(message, "no usable CUDA device") ||
      strstr(message, "built without CUDA")) {
    lc->fallback++;
    snprintf(lc->last, sizeof lc->last, "%s", message);
  }
}

static void test_auto_falls_back_once(void **state) {
  (void)state;
  if (usable_device())
    skip();
  sl_config *cfg = make_cfg(kBase);
  assert_non_null(cfg);
  assert_int_equal(sl_config_set(cfg, "device.backend", "auto"), SL_OK);
  log_count lc;
  memset(&lc, 0, sizeof lc);
  sl_config_set_log(cfg, count_log, &lc);
  fake_ctx fc = {.seed = 5, .dtype = SL_DTYPE_FP16, .channels = 3};
  sl_sample_src src = fake_src(40, &fc);
  sl_loader *ld = NULL;
  if (sl_loader_open_with(&ld, cfg, &src, NULL) != SL_OK)
    fail_msg("%s", sl_loader_errmsg(ld));
  assert_int_equal(lc.fallback, 1);
  assert_non_null(strstr(lc.last, "host"));
  sl_loader_stats stats;
  assert_int_equal(sl_loader_stats_get(ld, &stats), SL_OK);
  assert_string_equal(stats.backend, "host");
  /* The reason is in the stats too, and it is the one that was logged. */
  assert_true(strlen(stats.backend_note) > 0);
  assert_non_null(strstr(lc.last, stats.backend_note));
  for (uint64_t epoch = 0; epoch < 2; epoch++) {
    assert_int_equal(sl_loader_start_epoch(ld, epoch), SL_OK);
    sl_batch b;
    int n = 0;
    sl_status st;
    while ((st = sl_loader_next(ld, &b)) == SL_OK) {
      assert_int_equal(b.on_device, 0);
      assert_null(b.ready);
      assert_true(fake_batch_ok(&b, 5, SL_DTYPE_FP16));
      assert_int_equal(sl_batch_release(ld, &b, NULL), SL_OK);
      n++;
    }
    assert_int_equal(st, SL_END);
    assert_int_equal(n, 10);
  }
  sl_loader_close(ld);
  assert_int_equal(lc.fallback, 1); /* said once, not per epoch */
  sl_config_destroy(cfg);
}

/* The device plan reserves the u8 landing buffer only when the device
 * converts after the copy: u8 NHWC lands in its slot directly (as the CUDA
 * backend allocates), so its VRAM is the slots alone. */
static void test_plan_landing_only_when_converting(void **state) {
  (void)state;
  static const struct {
    const char *dtype, *layout;
    int landing;
  } cases[] = {{"u8", "nhwc", 0}, {"u8", "nchw", 1}, {"fp16", "nhwc", 1}};
  for (int k = 0; k < 3; k++) {
    sl_config *cfg;
    assert_int_equal(sl_config_create(&cfg), SL_OK);
    assert_int_equal(sl_config_set(cfg, "loader.batch_size", "4"), SL_OK);
    assert_int_equal(sl_config_set(cfg, "resolution.schedule", "constant"),
                     SL_OK);
    assert_int_equal(sl_config_set(cfg, "resolution.max", "64"), SL_OK);
    assert_int_equal(sl_config_set(cfg, "augment.dtype", cases[k].dtype),
                     SL_OK);
    assert_int_equal(sl_config_set(cfg, "augment.layout", cases[k].layout),
                     SL_OK);
    sl_loader_plan plan;
    sl_err err;
    sl_err_clear(&err);
    sl_settings s;
    assert_int_equal(sl_settings_from_config(&s, cfg, &err), SL_OK);
    assert_int_equal(sl_loader_plan_make(&s, 3, true, true, &plan, &err),
                     SL_OK);
    size_t slot = (plan.batch_bytes_max + 255) / 256 * 256;
    size_t want = slot * (size_t)plan.nslots +
                  (cases[k].landing ? plan.staging_bytes : 0);
    if (plan.device_bytes != want)
      fail_msg("%s %s: device bytes %zu, want %zu", cases[k].dtype,
               cases[k].layout, plan.device_bytes, want);
    sl_config_destroy(cfg);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cuda_without_device_fails_open),
      cmocka_unit_test(test_auto_falls_back_once),
      cmocka_unit_test(test_plan_landing_only_when_converting),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
