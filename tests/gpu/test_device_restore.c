/* Which contexts the loader's device handling creates, on a GPU (label
 * gpu). Its own executable: a process's primary contexts exist once made,
 * so each check starts from a process where no CUDA context exists yet.
 *
 *   - The primary-context query answers through the runtime (0 before any
 *     context, 1 after), so pushes really restore an active device.
 *   - A thread that never chose a device, probing and pushing device 1 (on
 *     a machine with two), leaves GPU 0 without a context; a thread whose
 *     device 1 is active gets it back.
 *
 * Without a usable device every test skips, unless SLUICE_REQUIRE_GPU=1. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <pthread.h>

#include "gpu_test.h"
#include "loader/cuda/cuda_check.h"
#include "loader/cuda/device_select.h"

typedef struct fresh_thread {
  int ordinal;
  int dev0_after, cur_after; /* device 0's state, the thread's device */
  sl_status st;
} fresh_thread;

/* On a thread that never chose a device: probe `ordinal`, push and pop it
 * as a release does. */
static void *fresh_main(void *arg) {
  fresh_thread *f = arg;
  sl_err err;
  sl_err_clear(&err);
  f->st = sl_cuda_probe(f->ordinal, NULL, &err);
  int prev = -2;
  if (f->st == SL_OK)
    f->st = sl_cuda_device_push(f->ordinal, &prev, &err);
  if (f->st == SL_OK)
    sl_cuda_device_pop(prev);
  f->dev0_after = sl_cuda_primary_active(0);
  if (cudaGetDevice(&f->cur_after) != cudaSuccess)
    f->cur_after = -1;
  return NULL;
}

static int device_count(void) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess)
    n = 0;
  (void)cudaGetLastError();
  return n;
}

/* First in this process: no context exists yet. The check is probe-free
 * (a probe makes a context) and needs the device only to exist. */
static void test_query_before_and_after(void **state) {
  (void)state;
  if (device_count() < 1)
    need_device(); /* skips or fails */
  int n = device_count();
  for (int d = 0; d < n; d++)
    assert_int_equal(sl_cuda_primary_active(d), 0);
  if (n >= 2) {
    fresh_thread f = {.ordinal = 1};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, fresh_main, &f), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(f.st, SL_OK);
    assert_int_equal(sl_cuda_primary_active(1), 1);
    /* The point of the check: GPU 0 was never made a context. */
    assert_int_equal(f.dev0_after, 0);
    assert_int_equal(f.cur_after, 1); /* it keeps the loader's device */
  } else {
    print_message("one device: the two-device part is skipped\n");
  }
  fresh_thread f0 = {.ordinal = 0};
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, fresh_main, &f0), 0);
  assert_int_equal(pthread_join(t, NULL), 0);
  assert_int_equal(f0.st, SL_OK);
  assert_int_equal(f0.dev0_after, 1);
  assert_int_equal(f0.cur_after, 0);
}

/* A thread whose own device is active gets it back after a push. */
static void test_active_device_restored(void **state) {
  (void)state;
  need_device();
  if (device_count() < 2)
    skip();
  CK(cudaSetDevice(1));
  CK(cudaFree(NULL)); /* make its context */
  sl_err err;
  sl_err_clear(&err);
  int prev = -2;
  assert_int_equal(sl_cuda_device_push(0, &prev, &err), SL_OK);
  assert_int_equal(prev, 1);
  int cur = -1;
  CK(cudaGetDevice(&cur));
  assert_int_equal(cur, 0);
  sl_cuda_device_pop(prev);
  CK(cudaGetDevice(&cur));
  assert_int_equal(cur, 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_query_before_and_after),
      cmocka_unit_test(test_active_device_restored),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
