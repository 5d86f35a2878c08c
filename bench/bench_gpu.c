/* bench_gpu: the GPU path measured in one run (bench/gpu.sh runs it).
 *
 *   1. H2D bandwidth of the ring (CUDA backend, u8 NHWC batches: the copy is
 *      the whole job) against plain cudaMemcpyAsync of the same bytes from
 *      one pinned buffer; and of the ring converting to fp16 NCHW on the
 *      device (bytes counted as u8 crossing the bus).
 *   2. The fraction of time a simulated training step (a spin kernel of fixed
 *      length, 1.5× the measured copy time of a batch) waits for data.
 *   3. The VRAM the ring took (cudaMemGetInfo before and after) against
 *      device.vram_budget and against what the backend reports.
 *   4. The convert kernel against the CPU convert formula computed in double
 *      ((x/255 - mean)/std): exact for u8, ≤ 1 ulp for fp16/bf16, and an
 *      absolute error ≤ 1e-6 for fp32 (near zero the subtraction makes ulps
 *      meaningless for fp32).
 *
 * The producer thread plays the workers: it marks samples done without
 * decoding, so the ring and the bus are what is measured. Prints a table,
 * the last thing on stdout. Exit status 1 if a check fails or no device.
 *
 * usage: bench_gpu [--batch N] [--res R] [--batches K] [--budget MiB] */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/half.h"
#include "gpu_util.h"
#include "loader/cuda/convert.h"
#include "loader/cuda/cuda_check.h"
#include "loader/cuda/device_select.h"
#include "loader/cuda/ring_cuda.h"
#include "loader/device_convert.h"
#include "loader/ring.h"

#define CK(call)                                                               \
  do {                                                                         \
    cudaError_t e_ = (call);                                                   \
    if (e_ != cudaSuccess) {                                                   \
      fprintf(stderr, "bench_gpu: %s: %s\n", #call, cudaGetErrorString(e_));   \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

static const float kMean[3] = {0.485f, 0.456f, 0.406f};
static const float kStd[3] = {0.229f, 0.224f, 0.225f};

typedef struct opts {
  int batch, res, batches;
  uint64_t budget;
} opts;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- A ring and its producer ----------------------------------------------
 */

typedef struct bench_ring {
  sl_ring *ring;
  sl_ring_backend *be; /* owned by ring; kept for the VRAM query */
  int batch, res;
  uint64_t nbatches;
  size_t in_bytes, out_bytes;
  pthread_t producer;
} bench_ring;

static void *producer_main(void *arg) {
  bench_ring *br = arg;
  for (uint64_t k = 0; k < br->nbatches; k++) {
    sl_ring_staging st;
    if (sl_ring_staging_acquire(br->ring, k, &st) != SL_OK)
      return NULL;
    for (int j = 0; j < br->batch; j++) {
      st.labels[j] = j;
      st.indices[j] = k * (uint64_t)br->batch + (uint64_t)j;
      sl_ring_staging_done(br->ring, k, j, SL_OK, NULL);
    }
  }
  return NULL;
}

/* Opens a ring sized from the budget, fills its staging once with a
 * pattern, and starts the producer for nbatches. */
static void ring_start(bench_ring *br, const opts *o, sl_dtype dtype,
                       sl_layout layout, uint64_t nbatches) {
  sl_err err;
  sl_err_clear(&err);
  memset(br, 0, sizeof *br);
  br->batch = o->batch;
  br->res = o->res;
  br->nbatches = nbatches;
  sl_dconv dc;
  if (sl_dconv_init(&dc, (int)dtype, (int)layout, 3, kMean, kStd) != 0)
    exit(1);
  br->in_bytes =
      sl_dconv_in_bytes(&dc, (size_t)o->batch, (size_t)o->res, (size_t)o->res);
  br->out_bytes =
      sl_dconv_out_bytes(&dc, (size_t)o->batch, (size_t)o->res, (size_t)o->res);
  int landing = sl_device_needs_landing(dtype, layout, 3), nslots = 0;
  if (sl_device_ring_slots(o->budget, br->in_bytes, br->out_bytes, landing,
                           &nslots, &err) != SL_OK) {
    fprintf(stderr, "bench_gpu: %s\n", err.msg);
    exit(1);
  }
  sl_cuda_ring_params p = {.gpu = 0,
                           .vram_budget = o->budget,
                           .dtype = dtype,
                           .layout = layout,
                           .channels = 3};
  memcpy(p.mean, kMean, sizeof kMean);
  memcpy(p.std, kStd, sizeof kStd);
  sl_ring_config rc = {.nstaging = 2,
                       .nslots = nslots,
                       .staging_bytes = br->in_bytes,
                       .slot_bytes = br->out_bytes,
                       .batch_size = o->batch};
  if (sl_ring_backend_cuda_create(&br->be, &p, &err) != SL_OK ||
      sl_ring_create(&br->ring, &rc, br->be, &err) != SL_OK) {
    fprintf(stderr, "bench_gpu: %s\n", err.msg);
    exit(1);
  }
  for (int i = 0; i < rc.nstaging; i++) {
    uint8_t *s = br->be->ops->staging(br->be, i);
    for (size_t b = 0; b < br->in_bytes; b++)
      s[b] = (uint8_t)(b * 131 + (size_t)i);
  }
  sl_ring_epoch ep;
  memset(&ep, 0, sizeof ep);
  ep.nbatches = nbatches;
  ep.copy.n = o->batch;
  ep.copy.height = o->res;
  ep.copy.width = o->res;
  ep.copy.channels = 3;
  ep.copy.src_dtype = SL_DTYPE_U8;
  ep.copy.src_layout = SL_LAYOUT_NHWC;
  ep.copy.dst_dtype = dtype;
  ep.copy.dst_layout = layout;
  memcpy(ep.copy.mean, kMean, sizeof kMean);
  memcpy(ep.copy.std, kStd, sizeof kStd);
  ep.src_sample_bytes = br->in_bytes / (size_t)o->batch;
  ep.dst_sample_bytes = br->out_bytes / (size_t)o->batch;
  sl_ring_reset(br->ring, &ep);
  if (pthread_create(&br->producer, NULL, producer_main, br) != 0)
    exit(1);
}

static void ring_stop(bench_ring *br) {
  sl_ring_abort(br->ring);
  pthread_join(br->producer, NULL);
  sl_ring_destroy(br->ring);
}

/* Takes every batch; with step_ns > 0 runs a step of that length on the
 * user's stream per batch. Returns the wall seconds of the GPU timeline
 * (first step's start to the last one's end, by events on the stream) when
 * stepping, else host seconds from the first next to the last release. */
static double consume_all(bench_ring *br, uint64_t step_ns, cudaStream_t user) {
  sl_err err;
  sl_err_clear(&err);
  cudaEvent_t t0, t1;
  CK(cudaEventCreate(&t0));
  CK(cudaEventCreate(&t1));
  double h0 = 0;
  for (uint64_t k = 0; k < br->nbatches; k++) {
    sl_ring_batch b;
    sl_status st = sl_ring_next(br->ring, &b, NULL, &err);
    if (st != SL_OK) {
      fprintf(stderr, "bench_gpu: next: %s\n", err.msg);
      exit(1);
    }
    if (k == 0) {
      h0 = now_s();
      CK(cudaEventRecord(t0, user));
    }
    if (step_ns) {
      CK(cudaStreamWaitEvent(user, (cudaEvent_t)b.ready, 0));
      CK(sl_test_spin(step_ns, user));
    }
    if (sl_ring_release(br->ring, b.slot, b.generation, b.labels,
                        step_ns ? user : NULL, &err) != SL_OK) {
      fprintf(stderr, "bench_gpu: release: %s\n", err.msg);
      exit(1);
    }
  }
  CK(cudaEventRecord(t1, user));
  CK(cudaEventSynchronize(t1));
  double h1 = now_s();
  float ms = 0;
  CK(cudaEventElapsedTime(&ms, t0, t1));
  CK(cudaEventDestroy(t0));
  CK(cudaEventDestroy(t1));
  return step_ns ? ms / 1e3 : h1 - h0;
}

/* ---- 1. Bandwidth ----------------------------------------------------------
 */

static double plain_gbps(size_t bytes, int reps) {
  void *h, *d;
  sl_err err;
  sl_err_clear(&err);
  if (sl_cuda_host_alloc(&h, bytes, "bench", &err) != SL_OK) {
    fprintf(stderr, "bench_gpu: %s\n", err.msg);
    exit(1);
  }
  CK(cudaMalloc(&d, bytes));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CK(cudaMemcpyAsync(d, h, bytes, cudaMemcpyHostToDevice, s)); /* warm */
  CK(cudaStreamSynchronize(s));
  double t0 = now_s();
  for (int i = 0; i < reps; i++)
    CK(cudaMemcpyAsync(d, h, bytes, cudaMemcpyHostToDevice, s));
  CK(cudaStreamSynchronize(s));
  double t = now_s() - t0;
  CK(cudaStreamDestroy(s));
  CK(cudaFree(d));
  CK(cudaFreeHost(h));
  return (double)bytes * reps / t / 1e9;
}

static double ring_gbps(const opts *o, sl_dtype dtype, sl_layout layout,
                        cudaStream_t user) {
  bench_ring br;
  ring_start(&br, o, dtype, layout, (uint64_t)o->batches);
  double t = consume_all(&br, 0, user);
  /* The first batch's copy precedes the clock: count the others. */
  double gbps = (double)br.in_bytes * (double)(o->batches - 1) / t / 1e9;
  ring_stop(&br);
  return gbps;
}

/* ---- 4. Convert vs the CPU formula -----------------------------------------
 */

/* Units in the last place between got and the correctly rounded want, for
 * an element type of `bits` significand bits (fp16 11, bf16 8, fp32 24). */
static double ulps(double got, double want, int bits) {
  if (got == want)
    return 0;
  int e;
  frexp(want != 0 ? want : got, &e);
  double ulp = ldexp(1.0, e - bits);
  return fabs(got - want) / ulp;
}

typedef struct conv_check {
  double u8_mismatches, f16_ulp, bf16_ulp, f32_abs;
} conv_check;

static int check_convert(conv_check *cc) {
  enum { N = 8, R = 160 };
  size_t in_bytes = (size_t)N * R * R * 3;
  uint8_t *src = malloc(in_bytes), *got = malloc(in_bytes * 4);
  if (!src || !got)
    exit(1);
  for (size_t i = 0; i < in_bytes; i++)
    src[i] = (uint8_t)((i * 2654435761u) >> 13);
  void *d_src, *d_dst;
  CK(cudaMalloc(&d_src, in_bytes));
  CK(cudaMalloc(&d_dst, in_bytes * 4));
  CK(cudaMemcpy(d_src, src, in_bytes, cudaMemcpyHostToDevice));
  int ok;
  memset(cc, 0, sizeof *cc);
  for (int dtype = SL_DTYPE_U8; dtype <= SL_DTYPE_FP32; dtype++) {
    for (int layout = 0; layout < 2; layout++) {
      sl_dconv dc;
      sl_dconv_init(&dc, dtype, layout, 3, kMean, kStd);
      CK(sl_dconv_launch(&dc, d_src, N, R, R, d_dst, 0));
      CK(cudaMemcpy(got, d_dst, sl_dconv_out_bytes(&dc, N, R, R),
                    cudaMemcpyDeviceToHost));
      for (size_t i = 0; i < in_bytes; i++) {
        size_t p = i / 3, c = i % 3, n = p / (R * R), pix = p % (R * R);
        size_t o = layout == SL_LAYOUT_NHWC ? i : (n * 3 + c) * R * R + pix;
        double want = ((double)src[i] / 255.0 - kMean[c]) / kStd[c];
        if (dtype == SL_DTYPE_U8) {
          cc->u8_mismatches += got[o] != src[i];
        } else if (dtype == SL_DTYPE_FP32) {
          float f;
          memcpy(&f, got + o * 4, 4);
          cc->f32_abs = fmax(cc->f32_abs, fabs((double)f - want));
        } else {
          uint16_t h;
          memcpy(&h, got + o * 2, 2);
          double *m = dtype == SL_DTYPE_FP16 ? &cc->f16_ulp : &cc->bf16_ulp;
          double g =
              dtype == SL_DTYPE_FP16 ? sl_f16_to_f32(h) : sl_bf16_to_f32(h);
          *m = fmax(*m, ulps(g, want, dtype == SL_DTYPE_FP16 ? 11 : 8));
        }
      }
    }
  }
  ok = cc->u8_mismatches == 0 && cc->f16_ulp <= 1 && cc->bf16_ulp <= 1 &&
       cc->f32_abs <= 1e-6;
  CK(cudaFree(d_src));
  CK(cudaFree(d_dst));
  free(src);
  free(got);
  return ok;
}

/* ---- Main ------------------------------------------------------------------
 */

int main(int argc, char **argv) {
  opts o = {.batch = 256, .res = 224, .batches = 40, .budget = 1ull << 30};
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--batch"))
      o.batch = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--res"))
      o.res = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--batches"))
      o.batches = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--budget"))
      o.budget = strtoull(argv[i + 1], NULL, 10) << 20;
    else {
      fprintf(stderr, "usage: bench_gpu [--batch N] [--res R] [--batches K] "
                      "[--budget MiB]\n");
      return 2;
    }
  }
  if (o.batch < 1 || o.res < 8 || o.batches < 4) {
    fprintf(stderr, "bench_gpu: need batch >= 1, res >= 8, batches >= 4\n");
    return 2;
  }
  sl_err err;
  sl_err_clear(&err);
  sl_cuda_device dev;
  if (sl_cuda_probe(0, &dev, &err) != SL_OK) {
    fprintf(stderr, "bench_gpu: %s\n", err.msg);
    return 1;
  }
  cudaStream_t user;
  CK(cudaStreamCreateWithFlags(&user, cudaStreamNonBlocking));
  size_t batch_u8 = (size_t)o.batch * (size_t)o.res * (size_t)o.res * 3;

  /* 1. */
  double plain = plain_gbps(batch_u8, o.batches);
  double ring_u8 = ring_gbps(&o, SL_DTYPE_U8, SL_LAYOUT_NHWC, user);
  double ring_f16 = ring_gbps(&o, SL_DTYPE_FP16, SL_LAYOUT_NCHW, user);

  /* 2. A step 1.5× the copy time of a batch: the ring should keep up. */
  uint64_t step_ns = (uint64_t)(1.5 * (double)batch_u8 / (plain * 1e9) * 1e9);
  bench_ring br;
  ring_start(&br, &o, SL_DTYPE_FP16, SL_LAYOUT_NCHW, (uint64_t)o.batches);
  double wall = consume_all(&br, step_ns, user);
  ring_stop(&br);
  double busy = (double)step_ns * 1e-9 * (double)o.batches;
  double wait_frac = wall > busy ? (wall - busy) / wall : 0.0;

  /* 3. */
  size_t free0, free1, total;
  CK(cudaDeviceSynchronize());
  CK(cudaMemGetInfo(&free0, &total));
  ring_start(&br, &o, SL_DTYPE_FP16, SL_LAYOUT_NCHW, 1);
  CK(cudaMemGetInfo(&free1, &total));
  size_t taken = free0 > free1 ? free0 - free1 : 0;
  size_t reported = sl_ring_backend_cuda_vram(br.be);
  ring_stop(&br);

  /* 4. */
  conv_check cc;
  int conv_ok = check_convert(&cc);

  int ok = conv_ok && taken <= o.budget;
  printf("\nsluice GPU path on %s (batch %d × %d² × 3, %d batches)\n", dev.name,
         o.batch, o.res, o.batches);
  printf("| measure | value | reference | ratio / check |\n");
  printf("|---|---|---|---|\n");
  printf("| ring H2D, u8 NHWC (GB/s) | %.2f | plain pinned cudaMemcpyAsync "
         "%.2f | %.2f |\n",
         ring_u8, plain, ring_u8 / plain);
  printf("| ring H2D + convert to fp16 NCHW (GB/s of u8) | %.2f | %.2f | "
         "%.2f |\n",
         ring_f16, plain, ring_f16 / plain);
  printf("| step waits for data (step %.2f ms = 1.5× copy) | %.1f %% of "
         "%.3f s | 0 %% | %s |\n",
         (double)step_ns / 1e6, 100 * wait_frac, wall,
         wait_frac < 0.10 ? "ok (< 10 %)" : "SLOW");
  printf("| VRAM taken, cudaMemGetInfo (MiB) | %.1f | budget %.1f, backend "
         "says %.1f | %s |\n",
         (double)taken / 1048576.0, (double)o.budget / 1048576.0,
         (double)reported / 1048576.0,
         taken <= o.budget ? "within budget" : "OVER BUDGET");
  printf("| convert kernel vs CPU formula | u8 %.0f mismatches, fp16 %.2f "
         "ulp, bf16 %.2f ulp, fp32 |err| %.1e | exact, ≤1 ulp, ≤1 ulp, "
         "≤1e-6 | %s |\n",
         cc.u8_mismatches, cc.f16_ulp, cc.bf16_ulp, cc.f32_abs,
         conv_ok ? "ok" : "FAIL");
  CK(cudaStreamDestroy(user));
  return ok ? 0 : 1;
}
