/* The whole loader on a GPU (label gpu), on a synthetic u8 source:
 * device.backend = cuda delivers device batches that equal the host twin's
 * conversion of the workers' u8 pixels, for every dtype and layout, across
 * a resolution schedule; a slow consumer's slots are not rewritten early; a
 * budget too small fails at open; the VRAM taken stays within the budget.
 * Without a usable device every test skips, unless SLUICE_REQUIRE_GPU=1. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "gpu_test.h"
#include "gpu_util.h"
#include "loader/cuda/cuda_check.h"
#include "loader/device_convert.h"
#include "loader/fake_src.h"

static const float kMean[3] = {0.5f, 0.25f, 0.125f};
static const float kStd[3] = {0.2f, 0.3f, 0.4f};
enum { SEED = 9, COUNT = 48, BATCH = 4 };

static sl_loader *open_cuda(const char *dtype, const char *layout,
                            const char *budget, sl_status *st_out,
                            sl_config **cfg_out) {
  /* clang-format off */
  const char *kv[] = {
      "device.backend", "cuda", "loader.batch_size", "4",
      "loader.workers", "3", "device.prefetch", "3",
      "resolution.schedule", "linear", "resolution.min", "32",
      "resolution.max", "64", "resolution.start_epoch", "0",
      "resolution.end_epoch", "2", "resolution.multiple", "16",
      "augment.mean", "0.5, 0.25, 0.125", "augment.std", "0.2, 0.3, 0.4",
      "augment.dtype", dtype, "augment.layout", layout,
      "device.vram_budget", budget, NULL};
  /* clang-format on */
  sl_config *cfg = make_cfg(kv);
  assert_non_null(cfg);
  fake_ctx fc = {.seed = SEED, .dtype = SL_DTYPE_U8, .channels = 3};
  sl_sample_src src = fake_src(COUNT, &fc);
  sl_loader *ld = NULL;
  *st_out = sl_loader_open_with(&ld, cfg, &src, NULL);
  *cfg_out = cfg;
  return ld;
}

/* What sample `index` of a batch must hold on the device. */
static void expected_sample(const sl_dconv *dc, uint64_t index, uint64_t epoch,
                            int res, uint8_t *u8, uint8_t *out) {
  size_t n = (size_t)res * (size_t)res * 3;
  for (size_t i = 0; i < n; i++)
    u8[i] = fake_byte(SEED, index, epoch, res, i);
  sl_dconv_run_host(dc, u8, 1, (size_t)res, (size_t)res, out);
}

static void check_batch(const sl_batch *b, const sl_dconv *dc) {
  assert_true(b->on_device);
  assert_non_null(b->ready);
  CK(cudaEventSynchronize((cudaEvent_t)b->ready));
  uint8_t *got = malloc(b->bytes);
  size_t res = b->height, sb = sl_dconv_out_bytes(dc, 1, res, res);
  uint8_t *u8 = malloc(res * res * 3), *want = malloc(sb);
  assert_true(got && u8 && want);
  assert_int_equal(b->bytes, sb * b->n);
  CK(cudaMemcpy(got, b->data, b->bytes, cudaMemcpyDeviceToHost));
  for (uint32_t j = 0; j < b->n; j++) {
    assert_int_equal(b->labels[j], fake_label(b->indices[j]));
    expected_sample(dc, b->indices[j], b->epoch, (int)res, u8, want);
    if (memcmp(got + j * sb, want, sb) != 0)
      fail_msg("epoch %llu batch %llu sample %u (index %llu) differs",
               (unsigned long long)b->epoch, (unsigned long long)b->index, j,
               (unsigned long long)b->indices[j]);
  }
  free(got);
  free(u8);
  free(want);
}

static void test_batches_match_twin(void **state) {
  (void)state;
  need_device();
  const char *cases[][2] = {{"fp16", "nchw"},
                            {"bf16", "nhwc"},
                            {"fp32", "nchw"},
                            {"u8", "nhwc"},
                            {"u8", "nchw"}};
  for (int ci = 0; ci < 5; ci++) {
    sl_status st;
    sl_config *cfg;
    sl_loader *ld = open_cuda(cases[ci][0], cases[ci][1], "64MiB", &st, &cfg);
    if (st != SL_OK)
      fail_msg("%s", sl_loader_errmsg(ld));
    sl_loader_stats stats;
    assert_int_equal(sl_loader_stats_get(ld, &stats), SL_OK);
    assert_string_equal(stats.backend, "cuda");
    int dtype = !strcmp(cases[ci][0], "u8")     ? SL_DTYPE_U8
                : !strcmp(cases[ci][0], "fp16") ? SL_DTYPE_FP16
                : !strcmp(cases[ci][0], "bf16") ? SL_DTYPE_BF16
                                                : SL_DTYPE_FP32;
    int layout =
        !strcmp(cases[ci][1], "nchw") ? SL_LAYOUT_NCHW : SL_LAYOUT_NHWC;
    sl_dconv dc;
    assert_int_equal(sl_dconv_init(&dc, dtype, layout, 3, kMean, kStd), 0);
    for (uint64_t epoch = 0; epoch < 3; epoch++) {
      assert_int_equal(sl_loader_start_epoch(ld, epoch), SL_OK);
      sl_batch b;
      int n = 0;
      while ((st = sl_loader_next(ld, &b)) == SL_OK) {
        assert_int_equal(b.height, sl_loader_epoch_resolution(ld, epoch));
        check_batch(&b, &dc);
        assert_int_equal(sl_batch_release(ld, &b, NULL), SL_OK);
        n++;
      }
      if (st != SL_END)
        fail_msg("%s", sl_loader_errmsg(ld));
      assert_int_equal(n, COUNT / BATCH);
    }
    sl_loader_close(ld);
    sl_config_destroy(cfg);
  }
}

/* Each step reads its batch for 20 ms on the user's stream and releases it
 * at once; every copy the step made must hold its own batch. */
static void test_slow_consumer(void **state) {
  (void)state;
  need_device();
  sl_status st;
  sl_config *cfg;
  sl_loader *ld = open_cuda("fp16", "nchw", "64MiB", &st, &cfg);
  if (st != SL_OK)
    fail_msg("%s", sl_loader_errmsg(ld));
  sl_dconv dc;
  assert_int_equal(
      sl_dconv_init(&dc, SL_DTYPE_FP16, SL_LAYOUT_NCHW, 3, kMean, kStd), 0);
  cudaStream_t user;
  CK(cudaStreamCreateWithFlags(&user, cudaStreamNonBlocking));
  enum { NB = COUNT / BATCH };
  size_t bytes = 0;
  uint8_t *d_seen = NULL;
  uint64_t idx[NB][BATCH]; /* the batch's metadata is reused with its slot */
  const uint64_t epoch = 2;
  int res = (int)sl_loader_epoch_resolution(ld, epoch);
  assert_int_equal(sl_loader_start_epoch(ld, epoch), SL_OK);
  for (int k = 0; k < NB; k++) {
    sl_batch b;
    if (sl_loader_next(ld, &b) != SL_OK)
      fail_msg("%s", sl_loader_errmsg(ld));
    if (!d_seen) {
      bytes = b.bytes;
      CK(cudaMalloc((void **)&d_seen, bytes * NB));
    }
    memcpy(idx[k], b.indices, sizeof idx[k]);
    CK(cudaStreamWaitEvent(user, (cudaEvent_t)b.ready, 0));
    CK(sl_test_spin(20 * 1000 * 1000, user));
    CK(cudaMemcpyAsync(d_seen + (size_t)k * bytes, b.data, bytes,
                       cudaMemcpyDeviceToDevice, user));
    assert_int_equal(sl_batch_release(ld, &b, user), SL_OK);
  }
  CK(cudaStreamSynchronize(user));
  size_t sb = bytes / BATCH;
  uint8_t *got = malloc(bytes), *u8 = malloc((size_t)res * res * 3),
          *want = malloc(sb);
  assert_true(got && u8 && want);
  for (int k = 0; k < NB; k++) {
    CK(cudaMemcpy(got, d_seen + (size_t)k * bytes, bytes,
                  cudaMemcpyDeviceToHost));
    for (int j = 0; j < BATCH; j++) {
      expected_sample(&dc, idx[k][j], epoch, res, u8, want);
      if (memcmp(got + (size_t)j * sb, want, sb) != 0)
        fail_msg("batch %d was rewritten while the step read it", k);
    }
  }
  free(got);
  free(u8);
  free(want);
  sl_loader_close(ld);
  CK(cudaFree(d_seen));
  CK(cudaStreamDestroy(user));
  sl_config_destroy(cfg);
}

static void test_budget_too_small(void **state) {
  (void)state;
  need_device();
  sl_status st;
  sl_config *cfg;
  /* 4 × 64² × 3 × 4 B = 196608 B per fp32 slot: 1 MiB holds them, so ask
   * for less than two by making batches big. */
  sl_loader *ld = open_cuda("fp32", "nchw", "1MiB", &st, &cfg);
  assert_non_null(ld); /* fits */
  sl_loader_close(ld);
  sl_config_destroy(cfg);
  /* clang-format off */
  const char *kv[] = {"device.backend", "cuda", "loader.batch_size", "64",
                      "resolution.min", "64", "resolution.max", "64",
                      "augment.dtype", "fp32", "device.vram_budget", "1MiB",
                      NULL};
  /* clang-format on */
  cfg = make_cfg(kv);
  fake_ctx fc = {.seed = SEED, .dtype = SL_DTYPE_U8, .channels = 3};
  sl_sample_src src = fake_src(COUNT * 64, &fc);
  st = sl_loader_open_with(&ld, cfg, &src, NULL);
  assert_int_equal(st, SL_ECONFIG);
  assert_non_null(strstr(sl_loader_errmsg(ld), "device.vram_budget"));
  assert_non_null(strstr(sl_loader_errmsg(ld), "needs at least"));
  sl_loader_close(ld);
  sl_config_destroy(cfg);
}

static void test_vram_within_budget(void **state) {
  (void)state;
  need_device();
  size_t free0, free1, total;
  CK(cudaDeviceSynchronize());
  CK(cudaMemGetInfo(&free0, &total));
  sl_status st;
  sl_config *cfg;
  sl_loader *ld = open_cuda("fp16", "nchw", "2MiB", &st, &cfg);
  if (st != SL_OK)
    fail_msg("%s", sl_loader_errmsg(ld));
  CK(cudaMemGetInfo(&free1, &total));
  /* The driver maps in 2 MiB pages: allow one more page. Free memory may
   * also rise meanwhile (another process freed some): no unsigned wrap. */
  assert_true(free1 >= free0 || free0 - free1 <= (2u << 20) + (2u << 20));
  sl_loader_close(ld);
  sl_config_destroy(cfg);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_batches_match_twin),
      cmocka_unit_test(test_slow_consumer),
      cmocka_unit_test(test_budget_too_small),
      cmocka_unit_test(test_vram_within_budget),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
