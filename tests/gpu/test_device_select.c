/* Backend choice and CUDA error mapping, on a machine with or without a
 * usable GPU (label unit). Here the CUDA runtime answers
 * cudaErrorInsufficientDriver; on a GPU machine the device is picked. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "loader/cuda/device_arith.h"
#include "loader/cuda/device_select.h"
#ifdef SLUICE_HAVE_CUDA
#include "loader/cuda/cuda_check.h"
#endif

/* 1 when the runtime sees a device (so CUDA must be picked), else 0. */
static int runtime_has_device(void) {
#ifdef SLUICE_HAVE_CUDA
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  (void)cudaGetLastError();
  return e == cudaSuccess && n > 0;
#else
  return 0;
#endif
}

static void test_host_is_host(void **state) {
  (void)state;
  sl_device_choice ch;
  sl_err err;
  sl_err_clear(&err);
  assert_int_equal(sl_device_choose(SL_BACKEND_HOST, 0, &ch, &err), SL_OK);
  assert_int_equal(ch.backend, SL_BACKEND_HOST);
  assert_string_equal(ch.fallback_reason, "");
}

static void test_cuda_without_device_is_an_error(void **state) {
  (void)state;
  sl_device_choice ch;
  sl_err err;
  sl_err_clear(&err);
  sl_status st = sl_device_choose(SL_BACKEND_CUDA, 0, &ch, &err);
  if (runtime_has_device()) {
    assert_int_equal(st, SL_OK);
    assert_int_equal(ch.backend, SL_BACKEND_CUDA);
    assert_true(ch.total_bytes > 0);
    return;
  }
  assert_int_equal(err.code, st);
  assert_non_null(strstr(err.msg, "device.backend = cuda"));
#ifdef SLUICE_HAVE_CUDA
  /* The runtime's own words reach the user. */
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  (void)cudaGetLastError();
  assert_int_equal(st, sl_cuda_status_of(e));
  assert_non_null(strstr(err.msg, "cudaGetDeviceCount"));
  assert_non_null(strstr(err.msg, cudaGetErrorName(e)));
  assert_non_null(strstr(err.msg, cudaGetErrorString(e)));
#else
  assert_int_equal(st, SL_EUNSUPPORTED);
  assert_non_null(strstr(err.msg, "without CUDA"));
#endif
}

static void test_auto_falls_back_with_reason(void **state) {
  (void)state;
  sl_device_choice ch;
  sl_err err;
  sl_err_clear(&err);
  assert_int_equal(sl_device_choose(SL_BACKEND_AUTO, 0, &ch, &err), SL_OK);
  if (runtime_has_device()) {
    assert_int_equal(ch.backend, SL_BACKEND_CUDA);
    assert_string_equal(ch.fallback_reason, "");
    return;
  }
  assert_int_equal(ch.backend, SL_BACKEND_HOST);
#ifdef SLUICE_HAVE_CUDA
  assert_non_null(strstr(ch.fallback_reason, "no usable CUDA device"));
#endif
#ifdef SLUICE_HAVE_CUDA
  assert_non_null(strstr(ch.fallback_reason, "cudaGetDeviceCount"));
#else
  assert_non_null(strstr(ch.fallback_reason, "without CUDA"));
#endif
}

/* An ordinal past the last device is "no device", not a crash. */
static void test_bad_ordinal(void **state) {
  (void)state;
  sl_device_choice ch;
  sl_err err;
  sl_err_clear(&err);
  sl_status st = sl_device_choose(SL_BACKEND_CUDA, 1023, &ch, &err);
  assert_int_not_equal(st, SL_OK);
  assert_true(strlen(err.msg) > 0);
  sl_err_clear(&err);
  assert_int_equal(sl_device_choose(SL_BACKEND_AUTO, 1023, &ch, &err), SL_OK);
  assert_int_equal(ch.backend, SL_BACKEND_HOST);
  assert_true(strlen(ch.fallback_reason) > 0);
  assert_int_equal(sl_device_choose((sl_backend_kind)7, 0, &ch, &err),
                   SL_EINVAL);
}

/* What a device push leaves to restore: only a previous device whose
 * primary context is active, so restoring it creates no context. */
static void test_restore_choice(void **state) {
  (void)state;
  assert_int_equal(sl_device_restore_choice(1, 0, 1), 1);
  /* A thread that never chose a device reads 0 with no context behind it:
   * setting it back would create GPU 0's context. */
  assert_int_equal(sl_device_restore_choice(0, 1, 0), -1);
  assert_int_equal(sl_device_restore_choice(0, 1, -1), -1); /* unknown */
  assert_int_equal(sl_device_restore_choice(2, 2, 1), -1);  /* unchanged */
  assert_int_equal(sl_device_restore_choice(-1, 0, 1), -1);
}

#ifdef SLUICE_HAVE_CUDA
/* Without a driver the primary context's state is unknown and a push fails
 * before it sets anything; with one, device 0's state is 0 or 1. */
static void test_primary_state(void **state) {
  (void)state;
  sl_err err;
  sl_err_clear(&err);
  int a = sl_cuda_primary_active(0);
  assert_int_equal(sl_cuda_primary_active(1 << 20), -1); /* no such device */
  int prev = 7;
  sl_status st = sl_cuda_device_push(0, &prev, &err);
  if (!runtime_has_device()) {
    assert_int_equal(a, -1);
    assert_int_not_equal(st, SL_OK);
    assert_int_equal(prev, -1);
    assert_non_null(strstr(err.msg, "cudaGetDevice"));
    return;
  }
  assert_true(a == 0 || a == 1);
  assert_int_equal(st, SL_OK);
  sl_cuda_device_pop(prev);
}

static void test_error_mapping(void **state) {
  (void)state;
  sl_err err;
  sl_err_clear(&err);
  assert_int_equal(sl_cuda_check(cudaSuccess, &err, "x"), SL_OK);
  assert_int_equal(
      sl_cuda_check(cudaErrorInsufficientDriver, &err, "cudaGetDeviceCount"),
      SL_ENODEV);
  assert_string_equal(err.msg, "cudaGetDeviceCount: "
                               "cudaErrorInsufficientDriver: CUDA driver "
                               "version is insufficient for CUDA runtime "
                               "version");
  assert_int_equal(sl_cuda_check(cudaErrorNoDevice, &err, "a"), SL_ENODEV);
  assert_int_equal(
      sl_cuda_check(cudaErrorMemoryAllocation, &err, "cudaMalloc(%d slots)", 4),
      SL_ENOMEM);
  assert_non_null(strstr(err.msg, "cudaMalloc(4 slots)"));
  assert_int_equal(sl_cuda_check(cudaErrorLaunchFailure, &err, "k"), SL_ECUDA);
  assert_int_equal(sl_cuda_check(cudaErrorInvalidValue, NULL, "k"), SL_ECUDA);
}

/* Pinned memory: works with a device, fails cleanly without one. */
static void test_host_alloc(void **state) {
  (void)state;
  sl_err err;
  sl_err_clear(&err);
  void *p = (void *)1;
  sl_status st = sl_cuda_host_alloc(&p, 1 << 20, "staging", &err);
  if (runtime_has_device()) {
    assert_int_equal(st, SL_OK);
    assert_non_null(p);
    assert_int_equal(((unsigned char *)p)[12345], 0);
    assert_int_equal(cudaFreeHost(p), cudaSuccess);
  } else {
    assert_int_not_equal(st, SL_OK);
    assert_null(p);
    assert_non_null(strstr(err.msg, "cudaHostAlloc(staging: 1048576 B)"));
  }
}
#endif

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_host_is_host),
      cmocka_unit_test(test_cuda_without_device_is_an_error),
      cmocka_unit_test(test_auto_falls_back_with_reason),
      cmocka_unit_test(test_bad_ordinal),
      cmocka_unit_test(test_restore_choice),
#ifdef SLUICE_HAVE_CUDA
      cmocka_unit_test(test_primary_state),
      cmocka_unit_test(test_error_mapping),
      cmocka_unit_test(test_host_alloc),
#endif
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
