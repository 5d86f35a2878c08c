/* The CUDA ring backend where no GPU is needed (label unit): sizing the
 * ring from the VRAM budget, bad parameters, the budget check, and — on a
 * machine without a usable device — alloc failing with the runtime's
 * message and the backend staying destroyable. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "loader/cuda/device_arith.h"
#include "loader/cuda/device_select.h"
#include "loader/cuda/ring_cuda.h"
#ifdef SLUICE_HAVE_CUDA
#include "loader/cuda/cuda_check.h"
#endif

static sl_cuda_ring_params params(sl_dtype dtype, sl_layout layout,
                                  uint64_t budget) {
  sl_cuda_ring_params p = {.gpu = 0,
                           .vram_budget = budget,
                           .dtype = dtype,
                           .layout = layout,
                           .channels = 3,
                           .mean = {0.485f, 0.456f, 0.406f},
                           .std = {0.229f, 0.224f, 0.225f}};
  return p;
}

static void test_slots_from_budget(void **state) {
  (void)state;
  sl_err err;
  sl_err_clear(&err);
  int d = 0;
  /* 256 × 224² × 3 u8 = 38535168 B staging; fp16 slot twice that. */
  size_t in = 256u * 224 * 224 * 3, out = in * 2;
  assert_int_equal(sl_device_ring_slots(1ull << 30, in, out, 1, &d, &err),
                   SL_OK);
  assert_int_equal(d, (int)(((1ull << 30) - in) / out)); /* 13 */
  assert_int_equal(d, 13);
  assert_int_equal(sl_device_ring_slots(1ull << 30, in, in, 0, &d, &err),
                   SL_OK);
  assert_int_equal(d, (int)((1ull << 30) / in)); /* u8 NHWC: no landing */
  /* The allocator maps the ring in 2 MiB pages: a 5 MiB budget holds 4
   * slots of 1 MiB, not 5. */
  assert_int_equal(sl_device_ring_slots(5u << 20, 0, 1u << 20, 0, &d, &err),
                   SL_OK);
  assert_int_equal(d, 4);
  assert_int_equal(sl_device_alloc_bytes(1), 2u << 20);
  assert_int_equal(sl_device_alloc_bytes(2u << 20), 2u << 20);
  assert_int_equal(sl_device_alloc_bytes((2u << 20) + 1), 4u << 20);
  assert_int_equal(sl_device_alloc_bytes(SIZE_MAX - 5), SIZE_MAX);
  /* Slots round up to 256 B. */
  size_t need = 0;
  assert_int_equal(sl_device_ring_need(10, 100, 1, 3, &need, &err), SL_OK);
  assert_int_equal(need, 3 * 256 + 10);
  /* Fewer than two slots: an error that says how much is needed. */
  assert_int_equal(sl_device_ring_slots(2 * out, in, out, 1, &d, &err),
                   SL_ECONFIG);
  assert_non_null(strstr(err.msg, "device.vram_budget"));
  char want[64];
  snprintf(want, sizeof want, "needs at least %zu B",
           sl_device_alloc_bytes(2 * out + in));
  assert_non_null(strstr(err.msg, want));
  assert_int_equal(sl_device_ring_need(0, SIZE_MAX - 8, 0, 2, &need, &err),
                   SL_ETOOBIG);
  assert_int_equal(sl_device_ring_need(0, SIZE_MAX / 2, 0, 4, &need, &err),
                   SL_ETOOBIG);
}

static void test_landing(void **state) {
  (void)state;
  assert_false(sl_device_needs_landing(SL_DTYPE_U8, SL_LAYOUT_NHWC, 3));
  assert_false(sl_device_needs_landing(SL_DTYPE_U8, SL_LAYOUT_NCHW, 1));
  assert_true(sl_device_needs_landing(SL_DTYPE_U8, SL_LAYOUT_NCHW, 3));
  assert_true(sl_device_needs_landing(SL_DTYPE_FP16, SL_LAYOUT_NHWC, 3));
  assert_true(sl_device_needs_landing(SL_DTYPE_FP32, SL_LAYOUT_NCHW, 1));
}

static void test_create(void **state) {
  (void)state;
  sl_err err;
  sl_err_clear(&err);
  sl_ring_backend *b = (sl_ring_backend *)1;
  sl_cuda_ring_params p = params(SL_DTYPE_FP16, SL_LAYOUT_NCHW, 1ull << 30);
  sl_status st = sl_ring_backend_cuda_create(&b, &p, &err);
  if (!sl_device_cuda_built()) {
    assert_int_equal(st, SL_EUNSUPPORTED);
    assert_null(b);
    assert_non_null(strstr(err.msg, "without CUDA"));
    return;
  }
  assert_int_equal(st, SL_OK);
  assert_string_equal(b->ops->name, "cuda");
  assert_true(b->ops->on_device);
  assert_true(b->ops->converts);
  assert_int_equal(sl_ring_backend_cuda_vram(b), 0);
  b->ops->destroy(b);
  p.std[1] = 0.0f;
  assert_int_equal(sl_ring_backend_cuda_create(&b, &p, &err), SL_EINVAL);
  assert_null(b);
  p = params(SL_DTYPE_FP16, SL_LAYOUT_NCHW, 1ull << 30);
  p.channels = 5;
  assert_int_equal(sl_ring_backend_cuda_create(&b, &p, &err), SL_EINVAL);
}

/* The budget is checked before any CUDA call, so this holds everywhere. */
static void test_alloc_over_budget(void **state) {
  (void)state;
  if (!sl_device_cuda_built())
    skip();
  sl_err err;
  sl_err_clear(&err);
  sl_ring_backend *b = NULL;
  sl_cuda_ring_params p = params(SL_DTYPE_FP32, SL_LAYOUT_NCHW, 1 << 20);
  assert_int_equal(sl_ring_backend_cuda_create(&b, &p, &err), SL_OK);
  sl_status st = b->ops->alloc(b, 2, 300000, 3, 1200000, &err);
  assert_int_equal(st, SL_ECONFIG);
  assert_non_null(strstr(err.msg, "device.vram_budget = 1048576 B"));
  assert_non_null(strstr(err.msg, "3 device slots of 1200000 B"));
  assert_non_null(strstr(err.msg, "needs 3900384 B")); /* 3×1200128+300000 */
  assert_int_equal(b->ops->alloc(b, 0, 1, 1, 1, &err), SL_EINVAL);
  b->ops->destroy(b);
  /* 2 MiB + 4 KiB fits 3 MiB, but takes two 2 MiB pages: refused too. */
  p = params(SL_DTYPE_FP16, SL_LAYOUT_NCHW, 3u << 20);
  assert_int_equal(sl_ring_backend_cuda_create(&b, &p, &err), SL_OK);
  st = b->ops->alloc(b, 2, 4096, 1, 2u << 20, &err);
  assert_int_equal(st, SL_ECONFIG);
  assert_non_null(strstr(err.msg, "needs 2101248 B, 4194304 B in the CUDA "
                                  "allocator's 2 MiB pages"));
  b->ops->destroy(b);
}

/* Without a usable device alloc fails with the runtime's words, and a
 * half-built backend is destroyed cleanly (ASan checks the cleanup). With a
 * device it succeeds and takes exactly what it said. */
static void test_alloc_without_device(void **state) {
  (void)state;
  if (!sl_device_cuda_built())
    skip();
  sl_err err;
  sl_err_clear(&err);
  sl_ring_backend *b = NULL;
  sl_cuda_ring_params p = params(SL_DTYPE_FP16, SL_LAYOUT_NHWC, 64 << 20);
  assert_int_equal(sl_ring_backend_cuda_create(&b, &p, &err), SL_OK);
  sl_device_choice ch;
  sl_err probe;
  sl_err_clear(&probe);
  int have = sl_device_choose(SL_BACKEND_CUDA, 0, &ch, &probe) == SL_OK;
  sl_status st = b->ops->alloc(b, 2, 4096, 3, 8192, &err);
  if (have) {
    assert_int_equal(st, SL_OK);
    assert_int_equal(sl_ring_backend_cuda_vram(b), 3 * 8192 + 4096);
    assert_non_null(b->ops->staging(b, 1));
    assert_non_null(b->ops->ready_event(b, 2));
  } else {
    assert_int_equal(st, SL_ENODEV);
    /* The same words as the probe's (the runtime's error string). */
    const char *words = strrchr(probe.msg, ':');
    assert_non_null(words);
    assert_non_null(strstr(err.msg, words));
    assert_int_equal(sl_ring_backend_cuda_vram(b), 0);
  }
  b->ops->destroy(b);
}

/* What sl_batch_release records on: NULL is the legacy default stream
 * (PyTorch's default stream is handle 0, and the copy stream does not order
 * itself after it), SL_RELEASE_DONE nothing, any other value that stream. */
static void test_release_stream(void **state) {
  (void)state;
#ifdef SLUICE_HAVE_CUDA
  int done = -1;
  assert_ptr_equal(sl_cuda_release_stream(NULL, &done), cudaStreamLegacy);
  assert_int_equal(done, 0);
  assert_null(sl_cuda_release_stream(SL_RELEASE_DONE, &done));
  assert_int_equal(done, 1);
  void *user = (void *)(uintptr_t)0x1234;
  assert_ptr_equal(sl_cuda_release_stream(user, &done), user);
  assert_int_equal(done, 0);
#else
  skip();
#endif
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_slots_from_budget),
      cmocka_unit_test(test_landing),
      cmocka_unit_test(test_create),
      cmocka_unit_test(test_alloc_over_budget),
      cmocka_unit_test(test_alloc_without_device),
      cmocka_unit_test(test_release_stream),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
