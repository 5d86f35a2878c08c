/* The GPU path on a GPU (label gpu; bench/gpu.sh runs it): the convert
 * kernel against its host twin, the rounding against CUDA's intrinsics, and
 * the ring with the CUDA backend end to end, including a slow consumer whose
 * slots must not be rewritten while its stream still reads them.
 *
 * Without a usable device every test skips, unless SLUICE_REQUIRE_GPU=1
 * (set by bench/gpu.sh) makes that a failure. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "common/half.h"
#include "gpu_test.h"
#include "gpu_util.h"
#include "loader/cuda/convert.h"
#include "loader/cuda/cuda_check.h"
#include "loader/cuda/ring_cuda.h"
#include "loader/device_convert.h"
#include "loader/ring.h"

static const float kMean[3] = {0.485f, 0.456f, 0.406f};
static const float kStd[3] = {0.229f, 0.224f, 0.225f};

static void fill_pattern(uint8_t *p, size_t n, uint32_t seed) {
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    p[i] = (uint8_t)x;
  }
}

/* Every dtype × layout × channel count, on a ragged shape and on a batch
 * large enough to use the grid-stride loop: bytes equal to the twin's. */
static void test_kernel_matches_twin(void **state) {
  (void)state;
  need_device();
  const size_t shapes[][3] = {{3, 37, 41}, {64, 224, 224}};
  for (int si = 0; si < 2; si++) {
    size_t n = shapes[si][0], h = shapes[si][1], w = shapes[si][2];
    size_t in_max = n * h * w * 3, out_max = in_max * 4;
    uint8_t *src = malloc(in_max), *want = malloc(out_max),
            *got = malloc(out_max);
    assert_true(src && want && got);
    fill_pattern(src, in_max, (uint32_t)si + 7);
    void *d_src, *d_dst;
    CK(cudaMalloc(&d_src, in_max));
    CK(cudaMalloc(&d_dst, out_max));
    CK(cudaMemcpy(d_src, src, in_max, cudaMemcpyHostToDevice));
    for (int ch = 1; ch <= 3; ch += 2)
      for (int dtype = SL_DTYPE_U8; dtype <= SL_DTYPE_FP32; dtype++)
        for (int layout = 0; layout < 2; layout++) {
          sl_dconv dc;
          assert_int_equal(sl_dconv_init(&dc, dtype, layout, ch, kMean, kStd),
                           0);
          size_t out = sl_dconv_out_bytes(&dc, n, h, w);
          sl_dconv_run_host(&dc, src, n, h, w, want);
          CK(cudaMemset(d_dst, 0x5a, out_max));
          CK(sl_dconv_launch(&dc, d_src, n, h, w, d_dst, 0));
          CK(cudaMemcpy(got, d_dst, out_max, cudaMemcpyDeviceToHost));
          if (memcmp(got, want, out) != 0)
            fail_msg("kernel ≠ twin: %zux%zux%zu ch %d dtype %d layout %d", n,
                     h, w, ch, dtype, layout);
          /* with Mixup and CutMix (augment.mixup / .cutmix) */
          const sl_dconv_mix mixes[2] = {{1, 0.3137f, 0, 0, 0, 0},
                                         {2, 0.7f, 3, 19, 5, 30}};
          for (int mk = 0; mk < 2; mk++) {
            sl_dconv_run_host_mix(&dc, &mixes[mk], src, n, h, w, want);
            CK(sl_dconv_launch_mix(&dc, &mixes[mk], d_src, n, h, w, d_dst, 0));
            CK(cudaMemcpy(got, d_dst, out_max, cudaMemcpyDeviceToHost));
            if (memcmp(got, want, out) != 0)
              fail_msg("mixing kernel ≠ twin: kind %d, %zux%zux%zu ch %d "
                       "dtype %d layout %d",
                       mixes[mk].kind, n, h, w, ch, dtype, layout);
          }
          for (size_t i = out; i < out_max; i++)
            if (got[i] != 0x5a)
              fail_msg("kernel wrote past its output (byte %zu)", i);
        }
    CK(cudaFree(d_src));
    CK(cudaFree(d_dst));
    free(src);
    free(want);
    free(got);
  }
}

/* sl_f32_to_f16/bf16 equal __float2half_rn/__float2bfloat16_rn on a sweep
 * of a million float bit patterns across every exponent. */
static void test_rounding_matches_intrinsics(void **state) {
  (void)state;
  need_device();
  const size_t count = (size_t)(0x100000000ull / 4099) + 1;
  float *in = malloc(count * sizeof *in);
  uint16_t *f16 = malloc(count * 2), *bf16 = malloc(count * 2);
  assert_true(in && f16 && bf16);
  size_t m = 0;
  for (uint64_t x = 3; x <= 0xffffffffu; x += 4099) {
    uint32_t b = (uint32_t)x;
    if ((b & 0x7f800000u) == 0x7f800000u && (b & 0x7fffffu))
      continue; /* NaN payloads may differ: not produced by the convert */
    memcpy(&in[m++], &b, 4);
  }
  float *d_in;
  uint16_t *d_f16, *d_bf16;
  CK(cudaMalloc((void **)&d_in, m * sizeof *in));
  CK(cudaMalloc((void **)&d_f16, m * 2));
  CK(cudaMalloc((void **)&d_bf16, m * 2));
  CK(cudaMemcpy(d_in, in, m * sizeof *in, cudaMemcpyHostToDevice));
  CK(sl_dconv_round_launch(d_in, m, d_f16, d_bf16, 0));
  CK(cudaMemcpy(f16, d_f16, m * 2, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(bf16, d_bf16, m * 2, cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < m; i++) {
    if (sl_f32_to_f16(in[i]) != f16[i])
      fail_msg("f16(%a): host %04x, __float2half_rn %04x", (double)in[i],
               sl_f32_to_f16(in[i]), f16[i]);
    if (sl_f32_to_bf16(in[i]) != bf16[i])
      fail_msg("bf16(%a): host %04x, __float2bfloat16_rn %04x", (double)in[i],
               sl_f32_to_bf16(in[i]), bf16[i]);
  }
  CK(cudaFree(d_in));
  CK(cudaFree(d_f16));
  CK(cudaFree(d_bf16));
  free(in);
  free(f16);
  free(bf16);
}

/* ---- The ring with the CUDA backend ---------------------------------------
 */

enum { B = 4, H = 16, W = 24, C = 3 };

typedef struct ring_fixture {
  sl_ring *ring;
  sl_dconv dc;
  size_t in_bytes, out_bytes; /* per batch */
} ring_fixture;

static void ring_open(ring_fixture *f, sl_dtype dtype, sl_layout layout,
                      int nslots, uint64_t nbatches) {
  sl_err err;
  sl_err_clear(&err);
  assert_int_equal(
      sl_dconv_init(&f->dc, (int)dtype, (int)layout, C, kMean, kStd), 0);
  f->in_bytes = sl_dconv_in_bytes(&f->dc, B, H, W);
  f->out_bytes = sl_dconv_out_bytes(&f->dc, B, H, W);
  sl_cuda_ring_params p = {.gpu = 0,
                           .vram_budget = 64 << 20,
                           .dtype = dtype,
                           .layout = layout,
                           .channels = C};
  memcpy(p.mean, kMean, sizeof kMean);
  memcpy(p.std, kStd, sizeof kStd);
  sl_ring_backend *be;
  if (sl_ring_backend_cuda_create(&be, &p, &err) != SL_OK)
    fail_msg("%s", err.msg);
  sl_ring_config rc = {.nstaging = 2,
                       .nslots = nslots,
                       .staging_bytes = f->in_bytes,
                       .slot_bytes = f->out_bytes,
                       .batch_size = B};
  if (sl_ring_create(&f->ring, &rc, be, &err) != SL_OK)
    fail_msg("%s", err.msg);
  sl_ring_epoch ep;
  memset(&ep, 0, sizeof ep);
  ep.epoch = 0;
  ep.nbatches = nbatches;
  ep.copy.n = B;
  ep.copy.height = H;
  ep.copy.width = W;
  ep.copy.channels = C;
  ep.copy.src_dtype = SL_DTYPE_U8;
  ep.copy.src_layout = SL_LAYOUT_NHWC;
  ep.copy.dst_dtype = dtype;
  ep.copy.dst_layout = layout;
  memcpy(ep.copy.mean, kMean, sizeof kMean);
  memcpy(ep.copy.std, kStd, sizeof kStd);
  ep.src_sample_bytes = f->in_bytes / B;
  ep.dst_sample_bytes = f->out_bytes / B;
  sl_ring_reset(f->ring, &ep);
}

/* Batch k's pixels and labels, as a worker would write them. */
static void produce(ring_fixture *f, uint64_t k) {
  sl_ring_staging st;
  assert_int_equal(sl_ring_staging_acquire(f->ring, k, &st), SL_OK);
  for (int j = 0; j < B; j++) {
    fill_pattern(st.data + (size_t)j * (f->in_bytes / B), f->in_bytes / B,
                 (uint32_t)(k * B + (uint64_t)j));
    st.labels[j] = (int32_t)(k * 10 + (uint64_t)j);
    st.indices[j] = k * B + (uint64_t)j;
    sl_ring_staging_done(f->ring, k, j, SL_OK, NULL);
  }
}

static void expected(ring_fixture *f, uint64_t k, uint8_t *out) {
  uint8_t *src = malloc(f->in_bytes);
  assert_non_null(src);
  for (int j = 0; j < B; j++)
    fill_pattern(src + (size_t)j * (f->in_bytes / B), f->in_bytes / B,
                 (uint32_t)(k * B + (uint64_t)j));
  sl_dconv_run_host(&f->dc, src, B, H, W, out);
  free(src);
}

/* Batches arrive in order, converted exactly as the twin does, with their
 * labels; every dtype and layout. */
static void test_ring_end_to_end(void **state) {
  (void)state;
  need_device();
  for (int dtype = SL_DTYPE_U8; dtype <= SL_DTYPE_FP32; dtype++)
    for (int layout = 0; layout < 2; layout++) {
      ring_fixture f;
      const uint64_t N = 9;
      ring_open(&f, (sl_dtype)dtype, (sl_layout)layout, 3, N);
      uint8_t *want = malloc(f.out_bytes), *got = malloc(f.out_bytes);
      assert_true(want && got);
      sl_err err;
      sl_err_clear(&err);
      for (uint64_t k = 0; k <= N; k++) {
        if (k < N)
          produce(&f, k);
        if (k == 0)
          continue;
        sl_ring_batch b;
        assert_int_equal(sl_ring_next(f.ring, &b, NULL, &err), SL_OK);
        assert_int_equal(b.index, k - 1);
        assert_non_null(b.ready);
        CK(cudaEventSynchronize((cudaEvent_t)b.ready));
        CK(cudaMemcpy(got, b.data, f.out_bytes, cudaMemcpyDeviceToHost));
        expected(&f, k - 1, want);
        assert_memory_equal(got, want, f.out_bytes);
        for (int j = 0; j < B; j++)
          assert_int_equal(b.labels[j], (int32_t)((k - 1) * 10 + (uint64_t)j));
        assert_int_equal(
            sl_ring_release(f.ring, b.slot, b.generation, b.labels, NULL, &err),
            SL_OK);
      }
      sl_ring_batch b;
      assert_int_equal(sl_ring_next(f.ring, &b, NULL, &err), SL_END);
      sl_ring_destroy(f.ring);
      free(want);
      free(got);
    }
}

/* The consumer's step reads each batch for 30 ms on its own stream (a spin
 * kernel, then a copy of the slot), and releases it at once, long before the
 * stream gets there. With 2 slots the mover wants each slot back right away;
 * if it rewrote one before `consumed` completed, the step's copy would hold a
 * later batch. */
static void test_slow_consumer(void **state) {
  (void)state;
  need_device();
  ring_fixture f;
  const uint64_t N = 8;
  ring_open(&f, SL_DTYPE_FP16, SL_LAYOUT_NCHW, 2, N);
  cudaStream_t user;
  CK(cudaStreamCreateWithFlags(&user, cudaStreamNonBlocking));
  uint8_t *d_seen;
  CK(cudaMalloc((void **)&d_seen, f.out_bytes * N));
  sl_err err;
  sl_err_clear(&err);
  for (uint64_t k = 0; k <= N; k++) {
    if (k < N)
      produce(&f, k);
    if (k == 0)
      continue;
    sl_ring_batch b;
    assert_int_equal(sl_ring_next(f.ring, &b, NULL, &err), SL_OK);
    CK(cudaStreamWaitEvent(user, (cudaEvent_t)b.ready, 0));
    CK(sl_test_spin(30 * 1000 * 1000, user));
    CK(cudaMemcpyAsync(d_seen + (k - 1) * f.out_bytes, b.data, f.out_bytes,
                       cudaMemcpyDeviceToDevice, user));
    assert_int_equal(
        sl_ring_release(f.ring, b.slot, b.generation, b.labels, user, &err),
        SL_OK);
  }
  CK(cudaStreamSynchronize(user));
  uint8_t *want = malloc(f.out_bytes), *got = malloc(f.out_bytes);
  assert_true(want && got);
  for (uint64_t k = 0; k < N; k++) {
    expected(&f, k, want);
    CK(cudaMemcpy(got, d_seen + k * f.out_bytes, f.out_bytes,
                  cudaMemcpyDeviceToHost));
    if (memcmp(got, want, f.out_bytes) != 0)
      fail_msg("batch %llu was overwritten while the step read it",
               (unsigned long long)k);
  }
  sl_ring_destroy(f.ring);
  CK(cudaFree(d_seen));
  CK(cudaStreamDestroy(user));
  free(want);
  free(got);
}

/* A budget too small for the requested slots fails at open with the
 * amount needed; the real allocation matches what the backend reports. */
static void test_vram_accounting(void **state) {
  (void)state;
  need_device();
  sl_err err;
  sl_err_clear(&err);
  sl_cuda_ring_params p = {.gpu = 0,
                           .vram_budget = 256 << 20,
                           .dtype = SL_DTYPE_FP16,
                           .layout = SL_LAYOUT_NCHW,
                           .channels = 3,
                           .mean = {0.5f, 0.5f, 0.5f},
                           .std = {0.5f, 0.5f, 0.5f}};
  sl_ring_backend *be;
  assert_int_equal(sl_ring_backend_cuda_create(&be, &p, &err), SL_OK);
  size_t fr0, fr1, tot;
  CK(cudaMemGetInfo(&fr0, &tot));
  size_t in = 32u << 20, out = 64u << 20;
  assert_int_equal(be->ops->alloc(be, 2, in, 3, out, &err), SL_OK);
  CK(cudaMemGetInfo(&fr1, &tot));
  assert_int_equal(sl_ring_backend_cuda_vram(be), 3 * out + in);
  /* The driver may round up to its page size (2 MiB). */
  assert_true(fr0 - fr1 >= 3 * out + in);
  assert_true(fr0 - fr1 <= 3 * out + in + (4u << 20));
  be->ops->destroy(be);
  assert_int_equal(sl_ring_backend_cuda_create(&be, &p, &err), SL_OK);
  assert_int_equal(be->ops->alloc(be, 2, in, 4, out, &err), SL_ECONFIG);
  be->ops->destroy(be);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_kernel_matches_twin),
      cmocka_unit_test(test_rounding_matches_intrinsics),
      cmocka_unit_test(test_ring_end_to_end),
      cmocka_unit_test(test_slow_consumer),
      cmocka_unit_test(test_vram_accounting),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
