/* bench_gpu: the GPU path measured in one run (bench/gpu.sh runs it).
 *
 *   1. H2D bandwidth of the ring (CUDA backend, u8 NHWC batches: the copy is
 *      the whole job) against plain cudaMemcpyAsync of the same bytes from
 *      one pinned buffer; and of the ring converting to --dtype/--layout on
 *      the device (bytes counted as u8 crossing the bus).
 *   2. The fraction of time a simulated training step waits for data, with
 *      a real producer: --producers threads write every pixel of every
 *      sample into the pinned staging buffers, as the workers do, and the
 *      ring holds device.prefetch slots (3), not as many as the budget
 *      allows, so the prefetch does not hide the steady state. The step (a
 *      spin kernel on the user's stream) lasts 1.5× the time the whole
 *      pipeline, producers included, takes a batch with no step at all: a
 *      ring that keeps up leaves it waiting < 10 % of the time.
 *   3. The VRAM the ring took (cudaMemGetInfo before and after) against
 *      device.vram_budget and against what the backend reports; and what the
 *      device holds after this process's first CUDA call (its context, when
 *      no other process uses the device).
 *   4. The convert kernel alone: GB/s of bytes read and written, against
 *      the device's memory bandwidth (memory clock × bus width × 2).
 *   5. The convert kernel against the CPU convert formula computed in double
 *      ((x/255 - mean)/std): exact for u8, ≤ 1 ulp for fp16/bf16, and an
 *      absolute error ≤ 1e-6 for fp32 (near zero the subtraction makes ulps
 *      meaningless for fp32).
 *
 * Prints a table, the last thing on stdout, and with --json FILE appends
 * the measurements as one JSON object line. Exit status 1 if a check fails
 * (the convert, the VRAM budget, or the step waiting ≥ 10 %) or no device.
 * --quick (the dtype sweep) skips 1's u8 ring, 3 and 5.
 *
 * usage: bench_gpu [--batch N] [--res R] [--batches K] [--budget MiB]
 *                  [--dtype u8|fp16|bf16|fp32] [--layout nchw|nhwc]
 *                  [--producers P] [--quick] [--json FILE] */
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
#include "loader/cuda/device_arith.h"
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
  int batch, res, batches, producers, quick;
  uint64_t budget;
  sl_dtype dtype;
  sl_layout layout;
  const char *json;
} opts;

enum { PREFETCH = 3, MAX_PRODUCERS = 64 };

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
  int batch, res, nproducers;
  uint64_t nbatches;
  size_t in_bytes, out_bytes, sample_bytes;
  /* One sample's pixels, which producers copy into staging; NULL: they
   * only mark samples done, so the ring and the bus are what is measured. */
  const uint8_t *pattern;
  pthread_t producers[MAX_PRODUCERS];
} bench_ring;

typedef struct producer_arg {
  bench_ring *br;
  int t;
} producer_arg;

static producer_arg g_args[MAX_PRODUCERS];

/* Producer t of P: samples j ≡ t (mod P) of every batch, each written in
 * full into the staging buffer, as a worker writes its crop there. */
static void *producer_main(void *arg) {
  producer_arg *pa = arg;
  bench_ring *br = pa->br;
  for (uint64_t k = 0; k < br->nbatches; k++) {
    sl_ring_staging st;
    if (sl_ring_staging_acquire(br->ring, k, &st) != SL_OK)
      return NULL;
    for (int j = pa->t; j < br->batch; j += br->nproducers) {
      if (br->pattern) {
        memcpy(st.data + (size_t)j * br->sample_bytes, br->pattern,
               br->sample_bytes);
        st.data[(size_t)j * br->sample_bytes] = (uint8_t)(k + (uint64_t)j);
      }
      st.labels[j] = j;
      st.indices[j] = k * (uint64_t)br->batch + (uint64_t)j;
      sl_ring_staging_done(br->ring, k, j, SL_OK, NULL);
    }
  }
  return NULL;
}

/* Opens a ring of nslots (0: as many as the budget holds) and starts the
 * producers for nbatches. */
static void ring_start(bench_ring *br, const opts *o, sl_dtype dtype,
                       sl_layout layout, uint64_t nbatches, int nslots,
                       const uint8_t *pattern) {
  sl_err err;
  sl_err_clear(&err);
  memset(br, 0, sizeof *br);
  br->batch = o->batch;
  br->res = o->res;
  br->nbatches = nbatches;
  br->nproducers = o->producers;
  br->pattern = pattern;
  sl_dconv dc;
  if (sl_dconv_init(&dc, (int)dtype, (int)layout, 3, kMean, kStd) != 0)
    exit(1);
  br->in_bytes =
      sl_dconv_in_bytes(&dc, (size_t)o->batch, (size_t)o->res, (size_t)o->res);
  br->out_bytes =
      sl_dconv_out_bytes(&dc, (size_t)o->batch, (size_t)o->res, (size_t)o->res);
  br->sample_bytes = br->in_bytes / (size_t)o->batch;
  int landing = sl_device_needs_landing(dtype, layout, 3), fit = 0;
  if (sl_device_ring_slots(o->budget, br->in_bytes, br->out_bytes, landing,
                           &fit, &err) != SL_OK) {
    fprintf(stderr, "bench_gpu: %s\n", err.msg);
    exit(1);
  }
  if (nslots <= 0 || nslots > fit)
    nslots = fit;
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
  ep.src_sample_bytes = br->sample_bytes;
  ep.dst_sample_bytes = br->out_bytes / (size_t)o->batch;
  sl_ring_reset(br->ring, &ep);
  for (int t = 0; t < br->nproducers; t++) {
    g_args[t].br = br;
    g_args[t].t = t;
    if (pthread_create(&br->producers[t], NULL, producer_main, &g_args[t]) != 0)
      exit(1);
  }
}

static void ring_stop(bench_ring *br) {
  sl_ring_abort(br->ring);
  for (int t = 0; t < br->nproducers; t++)
    pthread_join(br->producers[t], NULL);
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

/* GB/s of u8 through the ring, no step (host clock, first batch excluded);
 * *per_batch_s receives the pipeline's time per batch. */
static double ring_gbps(const opts *o, sl_dtype dtype, sl_layout layout,
                        cudaStream_t user, const uint8_t *pattern,
                        double *per_batch_s) {
  bench_ring br;
  ring_start(&br, o, dtype, layout, (uint64_t)o->batches, PREFETCH, pattern);
  double t = consume_all(&br, 0, user);
  /* The first batch's copy precedes the clock: count the others. */
  double gbps = (double)br.in_bytes * (double)(o->batches - 1) / t / 1e9;
  if (per_batch_s)
    *per_batch_s = t / (double)(o->batches - 1);
  ring_stop(&br);
  return gbps;
}

/* ---- 4. The kernel alone --------------------------------------------------
 */

/* GB/s of bytes read and written by the convert of one batch. */
static double kernel_gbps(const opts *o, double *peak_gbps) {
  sl_dconv dc;
  if (sl_dconv_init(&dc, (int)o->dtype, (int)o->layout, 3, kMean, kStd) != 0)
    exit(1);
  size_t n = (size_t)o->batch, r = (size_t)o->res;
  size_t in = sl_dconv_in_bytes(&dc, n, r, r),
         out = sl_dconv_out_bytes(&dc, n, r, r);
  void *d_src, *d_dst;
  CK(cudaMalloc(&d_src, in));
  CK(cudaMalloc(&d_dst, out));
  CK(cudaMemset(d_src, 7, in));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  CK(sl_dconv_launch(&dc, d_src, n, r, r, d_dst, 0)); /* warm */
  const int reps = 20;
  CK(cudaEventRecord(e0, 0));
  for (int i = 0; i < reps; i++)
    CK(sl_dconv_launch(&dc, d_src, n, r, r, d_dst, 0));
  CK(cudaEventRecord(e1, 0));
  CK(cudaEventSynchronize(e1));
  float ms = 0;
  CK(cudaEventElapsedTime(&ms, e0, e1));
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  CK(cudaFree(d_src));
  CK(cudaFree(d_dst));
  int dev = 0, khz = 0, bits = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, dev));
  CK(cudaDeviceGetAttribute(&bits, cudaDevAttrGlobalMemoryBusWidth, dev));
  *peak_gbps = 2.0 * (double)khz * 1e3 * (double)bits / 8.0 / 1e9;
  return (double)(in + out) * reps / ((double)ms / 1e3) / 1e9;
}

/* ---- 5. Convert vs the CPU formula -----------------------------------------
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

static const char *const kDtypes[] = {"u8", "fp16", "bf16", "fp32"};
static const char *const kLayouts[] = {"nchw", "nhwc"};

static int name_index(const char *v, const char *const *names, int n) {
  for (int i = 0; i < n; i++)
    if (!strcmp(v, names[i]))
      return i;
  return -1;
}

static int usage(void) {
  fprintf(stderr, "usage: bench_gpu [--batch N] [--res R] [--batches K] "
                  "[--budget MiB] [--dtype u8|fp16|bf16|fp32] "
                  "[--layout nchw|nhwc] [--producers P] [--quick] "
                  "[--json FILE]\n");
  return 2;
}

int main(int argc, char **argv) {
  opts o = {.batch = 256,
            .res = 224,
            .batches = 40,
            .producers = 8,
            .budget = 1ull << 30,
            .dtype = SL_DTYPE_FP16,
            .layout = SL_LAYOUT_NCHW};
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--quick")) {
      o.quick = 1;
      continue;
    }
    if (i + 1 >= argc)
      return usage();
    const char *v = argv[++i];
    int k;
    if (!strcmp(argv[i - 1], "--batch"))
      o.batch = atoi(v);
    else if (!strcmp(argv[i - 1], "--res"))
      o.res = atoi(v);
    else if (!strcmp(argv[i - 1], "--batches"))
      o.batches = atoi(v);
    else if (!strcmp(argv[i - 1], "--producers"))
      o.producers = atoi(v);
    else if (!strcmp(argv[i - 1], "--budget"))
      o.budget = strtoull(v, NULL, 10) << 20;
    else if (!strcmp(argv[i - 1], "--json"))
      o.json = v;
    else if (!strcmp(argv[i - 1], "--dtype") &&
             (k = name_index(v, kDtypes, 4)) >= 0)
      o.dtype = (sl_dtype)(SL_DTYPE_U8 + k);
    else if (!strcmp(argv[i - 1], "--layout") &&
             (k = name_index(v, kLayouts, 2)) >= 0)
      o.layout = k == 0 ? SL_LAYOUT_NCHW : SL_LAYOUT_NHWC;
    else
      return usage();
  }
  if (o.batch < 1 || o.res < 8 || o.batches < 4 || o.producers < 1 ||
      o.producers > MAX_PRODUCERS) {
    fprintf(stderr,
            "bench_gpu: need batch >= 1, res >= 8, batches >= 4, "
            "1 <= producers <= %d\n",
            MAX_PRODUCERS);
    return 2;
  }
  sl_err err;
  sl_err_clear(&err);
  sl_cuda_device dev;
  if (sl_cuda_probe(0, &dev, &err) != SL_OK) {
    fprintf(stderr, "bench_gpu: %s\n", err.msg);
    return 1;
  }
  /* The probe made this process's context: what the device holds now is
   * it (and whatever other processes hold). */
  size_t free_c, total_c;
  CK(cudaMemGetInfo(&free_c, &total_c));
  size_t context = total_c - free_c;
  cudaStream_t user;
  CK(cudaStreamCreateWithFlags(&user, cudaStreamNonBlocking));
  size_t sample_u8 = (size_t)o.res * (size_t)o.res * 3;
  size_t batch_u8 = (size_t)o.batch * sample_u8;
  uint8_t *pattern = malloc(sample_u8);
  if (!pattern)
    return 1;
  for (size_t b = 0; b < sample_u8; b++)
    pattern[b] = (uint8_t)(b * 131);
  const char *dt = kDtypes[o.dtype - SL_DTYPE_U8];
  const char *ly = kLayouts[o.layout == SL_LAYOUT_NCHW ? 0 : 1];

  /* 1. */
  double plain = plain_gbps(batch_u8, o.batches);
  double ring_u8 =
      o.quick ? 0
              : ring_gbps(&o, SL_DTYPE_U8, SL_LAYOUT_NHWC, user, NULL, NULL);
  double ring_cv = ring_gbps(&o, o.dtype, o.layout, user, NULL, NULL);
  /* The whole pipeline, producers writing every pixel, no step. */
  double per_batch = 0;
  double piped = ring_gbps(&o, o.dtype, o.layout, user, pattern, &per_batch);

  /* 2. A step 1.5× the pipeline's time a batch: the ring should keep up. */
  uint64_t step_ns = (uint64_t)(1.5 * per_batch * 1e9);
  bench_ring br;
  ring_start(&br, &o, o.dtype, o.layout, (uint64_t)o.batches, PREFETCH,
             pattern);
  double wall = consume_all(&br, step_ns, user);
  uint64_t slot_wait = sl_ring_slot_wait_ns(br.ring);
  ring_stop(&br);
  double busy = (double)step_ns * 1e-9 * (double)o.batches;
  double wait_frac = wall > busy ? (wall - busy) / wall : 0.0;

  /* 3. */
  size_t taken = 0, reported = 0;
  if (!o.quick) {
    size_t free0, free1, total;
    CK(cudaDeviceSynchronize());
    CK(cudaMemGetInfo(&free0, &total));
    ring_start(&br, &o, o.dtype, o.layout, 1, 0, pattern);
    CK(cudaMemGetInfo(&free1, &total));
    taken = free0 > free1 ? free0 - free1 : 0;
    reported = sl_ring_backend_cuda_vram(br.be);
    ring_stop(&br);
  }

  /* 4. */
  double peak = 0, kern = kernel_gbps(&o, &peak);

  /* 5. */
  conv_check cc;
  memset(&cc, 0, sizeof cc);
  int conv_ok = o.quick ? 1 : check_convert(&cc);

  int vram_ok = taken <= o.budget, wait_ok = wait_frac < 0.10;
  int ok = conv_ok && vram_ok && wait_ok;
  printf("\nsluice GPU path on %s (batch %d × %d² × 3 → %s %s, %d batches, "
         "%d producers)\n",
         dev.name, o.batch, o.res, dt, ly, o.batches, o.producers);
  printf("| measure | value | reference | ratio / check |\n");
  printf("|---|---|---|---|\n");
  if (!o.quick)
    printf("| ring H2D, u8 NHWC (GB/s) | %.2f | plain pinned "
           "cudaMemcpyAsync %.2f | %.2f |\n",
           ring_u8, plain, ring_u8 / plain);
  printf("| ring H2D + convert to %s %s (GB/s of u8) | %.2f | %.2f | %.2f |\n",
         dt, ly, ring_cv, plain, ring_cv / plain);
  printf("| pipeline with %d producers writing the pixels (GB/s of u8) | "
         "%.2f | %.2f | %.2f |\n",
         o.producers, piped, plain, piped / plain);
  printf("| step waits for data (step %.2f ms = 1.5× pipeline, %d slots) | "
         "%.1f %% of %.3f s (mover waited %.3f s for slots) | 0 %% | %s |\n",
         (double)step_ns / 1e6, PREFETCH, 100 * wait_frac, wall,
         (double)slot_wait * 1e-9, wait_ok ? "ok (< 10 %)" : "SLOW");
  if (!o.quick)
    printf("| VRAM taken, cudaMemGetInfo (MiB) | %.1f | budget %.1f, backend "
           "says %.1f | %s |\n",
           (double)taken / 1048576.0, (double)o.budget / 1048576.0,
           (double)reported / 1048576.0,
           vram_ok ? "within budget" : "OVER BUDGET");
  printf("| device memory in use after the first call (MiB) | %.1f | "
         "the context, if no other process | - |\n",
         (double)context / 1048576.0);
  printf("| convert kernel, %s %s (GB/s read + written) | %.1f | memory "
         "bandwidth %.1f | %.2f |\n",
         dt, ly, kern, peak, peak > 0 ? kern / peak : 0.0);
  if (!o.quick)
    printf("| convert kernel vs CPU formula | u8 %.0f mismatches, fp16 %.2f "
           "ulp, bf16 %.2f ulp, fp32 |err| %.1e | exact, ≤1 ulp, ≤1 ulp, "
           "≤1e-6 | %s |\n",
           cc.u8_mismatches, cc.f16_ulp, cc.bf16_ulp, cc.f32_abs,
           conv_ok ? "ok" : "FAIL");
  if (o.json) {
    FILE *f = fopen(o.json, "a");
    if (!f) {
      perror(o.json);
      return 1;
    }
    fprintf(f,
            "{\"device\": \"%s\", \"batch\": %d, \"res\": %d, \"dtype\": "
            "\"%s\", \"layout\": \"%s\", \"batches\": %d, \"producers\": %d, "
            "\"quick\": %s, \"plain_h2d_gbps\": %.3f, \"ring_u8_gbps\": %.3f, "
            "\"ring_convert_gbps\": %.3f, \"pipeline_gbps\": %.3f, "
            "\"pipeline_ms_per_batch\": %.4f, "
            "\"step_ms\": %.4f, \"step_wait_fraction\": %.4f, "
            "\"slot_wait_s\": %.4f, \"vram_taken\": %zu, \"vram_budget\": "
            "%llu, \"vram_backend\": %zu, \"context_bytes\": %zu, "
            "\"kernel_gbps\": %.2f, \"memory_gbps\": %.2f, \"u8_mismatches\": "
            "%.0f, \"fp16_ulp\": %.3f, \"bf16_ulp\": %.3f, \"fp32_abs\": %.3g, "
            "\"ok\": %s}\n",
            dev.name, o.batch, o.res, dt, ly, o.batches, o.producers,
            o.quick ? "true" : "false", plain, ring_u8, ring_cv, piped,
            per_batch * 1e3, (double)step_ns / 1e6, wait_frac,
            (double)slot_wait * 1e-9, taken, (unsigned long long)o.budget,
            reported, context, kern, peak, cc.u8_mismatches, cc.f16_ulp,
            cc.bf16_ulp, cc.f32_abs, ok ? "true" : "false");
    fclose(f);
  }
  free(pattern);
  CK(cudaStreamDestroy(user));
  return ok ? 0 : 1;
}
