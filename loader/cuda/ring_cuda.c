#include "loader/cuda/ring_cuda.h"

#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "loader/cuda/convert.h"
#include "loader/cuda/cuda_check.h"
#include "loader/cuda/device_arith.h"
#include "loader/device_convert.h"

typedef struct cuda_backend {
  sl_ring_backend base; /* first: the ring sees this */
  sl_cuda_ring_params p;
  sl_dconv plan;
  int identity; /* u8 NHWC (or u8 gray): the copy is the whole job */
  int nstaging, nslots;
  size_t staging_bytes, slot_bytes, slot_stride;
  void **staging;      /* nstaging pinned buffers */
  unsigned char *vram; /* the one device allocation */
  size_t vram_bytes;
  unsigned char *landing;          /* inside vram; NULL when identity */
  cudaStream_t stream;             /* the copy stream (non-blocking) */
  cudaEvent_t *ready;              /* per slot: copy (and convert) done */
  cudaEvent_t *consumed;           /* per slot: the user's step done with it */
  unsigned char *consumed_pending; /* per slot: a CONSUMED_* state */
  cudaEvent_t landed;              /* the copy into the landing buffer done */
  /* The move under way waits for consumed[waits_on] on the device (-1:
   * for nothing); wait_ready measures how long, into last_wait_ns. */
  int waits_on, wait_after_landing;
  uint64_t last_wait_ns;
} cuda_backend;

/* What the copy into a slot must wait for first. */
enum {
  CONSUMED_NONE = 0,     /* nothing: the consumer is done with it */
  CONSUMED_RECORDED = 1, /* consumed[s]: the copy stream waits on it */
  CONSUMED_UNKNOWN = 2   /* its release could not be ordered: never rewrite */
};

static cuda_backend *cb_of(sl_ring_backend *b) {
  return (cuda_backend *)b;
}

static sl_status alloc_on_device(cuda_backend *cb, int nstaging,
                                 size_t staging_bytes, int nslots,
                                 size_t slot_bytes, size_t need, sl_err *err);

static sl_status cb_alloc(sl_ring_backend *b, int nstaging,
                          size_t staging_bytes, int nslots, size_t slot_bytes,
                          sl_err *err) {
  cuda_backend *cb = cb_of(b);
  sl_status st;
  if (nstaging < 1 || nslots < 1 || staging_bytes == 0 || slot_bytes == 0)
    return sl_err_set(err, SL_EINVAL,
                      "cuda ring: %d staging buffers of %zu B, %d slots of "
                      "%zu B",
                      nstaging, staging_bytes, nslots, slot_bytes);
  size_t need = 0;
  if ((st = sl_device_ring_need(staging_bytes, slot_bytes, !cb->identity,
                                nslots, &need, err)) != SL_OK)
    return st;
  /* The allocator maps it in 2 MiB pages: those count against the budget. */
  if (sl_device_alloc_bytes(need) > cb->p.vram_budget)
    return sl_err_set(err, SL_ECONFIG,
                      "device.vram_budget = %llu B is too small for %d device "
                      "slots of %zu B%s: it needs %zu B, %zu B in the CUDA "
                      "allocator's 2 MiB pages",
                      (unsigned long long)cb->p.vram_budget, nslots, slot_bytes,
                      cb->identity ? "" : " plus the u8 landing buffer", need,
                      sl_device_alloc_bytes(need));
  int prev;
  if ((st = sl_cuda_device_push(cb->p.gpu, &prev, err)) != SL_OK)
    return st;
  st = alloc_on_device(cb, nstaging, staging_bytes, nslots, slot_bytes, need,
                       err);
  sl_cuda_device_pop(prev);
  return st;
}

/* cb_alloc's work, with the backend's device current. */
static sl_status alloc_on_device(cuda_backend *cb, int nstaging,
                                 size_t staging_bytes, int nslots,
                                 size_t slot_bytes, size_t need, sl_err *err) {
  sl_status st;
  cb->staging = calloc((size_t)nstaging, sizeof *cb->staging);
  cb->ready = calloc((size_t)nslots, sizeof *cb->ready);
  cb->consumed = calloc((size_t)nslots, sizeof *cb->consumed);
  cb->consumed_pending = calloc((size_t)nslots, 1);
  if (!cb->staging || !cb->ready || !cb->consumed || !cb->consumed_pending)
    return sl_err_set(err, SL_ENOMEM, "cuda ring: bookkeeping for %d slots",
                      nslots);
  cb->nstaging = nstaging;
  cb->staging_bytes = staging_bytes;
  cb->slot_bytes = slot_bytes;
  cb->slot_stride = sl_device_slot_stride(slot_bytes);
  for (int i = 0; i < nstaging; i++)
    if ((st = sl_cuda_host_alloc(&cb->staging[i], staging_bytes, "staging",
                                 err)) != SL_OK)
      return st;
  void *vram = NULL;
  if ((st = sl_cuda_check(cudaMalloc(&vram, need), err,
                          "cudaMalloc(device ring: %d slots of %zu B, %zu B "
                          "in all)",
                          nslots, slot_bytes, need)) != SL_OK)
    return st;
  cb->vram = vram;
  cb->vram_bytes = need;
  if (!cb->identity)
    cb->landing = cb->vram + (size_t)nslots * cb->slot_stride;
  if ((st = sl_cuda_check(
           cudaStreamCreateWithFlags(&cb->stream, cudaStreamNonBlocking), err,
           "cudaStreamCreateWithFlags(copy stream)")) != SL_OK)
    return st;
  /* Blocking sync: the mover sleeps in wait_ready instead of spinning on a
   * core the workers need. No timing: cheaper records. */
  const unsigned flags = cudaEventDisableTiming | cudaEventBlockingSync;
  for (int s = 0; s < nslots; s++) {
    if ((st = sl_cuda_check(cudaEventCreateWithFlags(&cb->ready[s], flags), err,
                            "cudaEventCreate(ready %d)", s)) != SL_OK)
      return st;
    cb->nslots = s + 1; /* destroy frees events up to here */
    if ((st = sl_cuda_check(cudaEventCreateWithFlags(&cb->consumed[s], flags),
                            err, "cudaEventCreate(consumed %d)", s)) != SL_OK)
      return st;
  }
  if ((st = sl_cuda_check(cudaEventCreateWithFlags(&cb->landed, flags), err,
                          "cudaEventCreate(landed)")) != SL_OK)
    return st;
  /* Zero the slots on the copy stream itself: the non-blocking stream does
   * not wait for the legacy default stream a plain cudaMemset would use. */
  if ((st = sl_cuda_check(cudaMemsetAsync(cb->vram, 0, need, cb->stream), err,
                          "cudaMemsetAsync(device ring)")) != SL_OK)
    return st;
  return sl_cuda_check(cudaStreamSynchronize(cb->stream), err,
                       "cudaStreamSynchronize(copy stream)");
}

static void cb_destroy(sl_ring_backend *b) {
  cuda_backend *cb = cb_of(b);
  if (!cb)
    return;
  /* Errors are ignored here: nothing can be done about them at close. */
  int prev = -1;
  if (cb->vram || cb->staging)
    (void)sl_cuda_device_push(cb->p.gpu, &prev, NULL);
  if (cb->stream)
    (void)cudaStreamSynchronize(cb->stream);
  for (int s = 0; s < cb->nslots; s++) {
    if (cb->ready && cb->ready[s])
      (void)cudaEventDestroy(cb->ready[s]);
    if (cb->consumed && cb->consumed[s]) {
      (void)cudaEventSynchronize(cb->consumed[s]);
      (void)cudaEventDestroy(cb->consumed[s]);
    }
  }
  if (cb->landed)
    (void)cudaEventDestroy(cb->landed);
  if (cb->stream)
    (void)cudaStreamDestroy(cb->stream);
  if (cb->vram)
    (void)cudaFree(cb->vram);
  for (int i = 0; cb->staging && i < cb->nstaging; i++)
    if (cb->staging[i])
      (void)cudaFreeHost(cb->staging[i]);
  if (prev >= 0)
    sl_cuda_device_pop(prev);
  (void)cudaGetLastError();
  free(cb->staging);
  free(cb->ready);
  free(cb->consumed);
  free(cb->consumed_pending);
  free(cb);
}

static void *cb_staging(sl_ring_backend *b, int i) {
  return cb_of(b)->staging[i];
}

static void *cb_slot(sl_ring_backend *b, int s) {
  cuda_backend *cb = cb_of(b);
  return cb->vram + (size_t)s * cb->slot_stride;
}

static sl_status cb_thread_init(sl_ring_backend *b, sl_err *err) {
  int gpu = cb_of(b)->p.gpu;
  return sl_cuda_check(cudaSetDevice(gpu), err, "mover: cudaSetDevice(%d)",
                       gpu);
}

/* Makes the copy stream wait for the consumer's release of s. */
static sl_status wait_consumed_on_device(cuda_backend *cb, int s, sl_err *err) {
  sl_status st =
      sl_cuda_check(cudaStreamWaitEvent(cb->stream, cb->consumed[s], 0), err,
                    "cudaStreamWaitEvent(consumed %d)", s);
  if (st != SL_OK)
    return st;
  cb->consumed_pending[s] = CONSUMED_NONE;
  cb->waits_on = s;
  cb->wait_after_landing = 0;
  return SL_OK;
}

static sl_status cb_copy_to_slot(sl_ring_backend *b, int s,
                                 const sl_ring_copy *c, sl_err *err) {
  cuda_backend *cb = cb_of(b);
  const sl_dconv *dc = &cb->plan;
  if (c->src_dtype != SL_DTYPE_U8 || c->src_layout != SL_LAYOUT_NHWC ||
      (int)c->dst_dtype != dc->dtype || (int)c->dst_layout != dc->layout ||
      c->channels != dc->channels || c->n < 0 || c->height < 0 || c->width < 0)
    return sl_err_set(err, SL_EINVAL,
                      "cuda ring: batch of %d×%d×%d×%d (dtype %d/%d, layout "
                      "%d/%d) does not match the backend's convert plan",
                      c->n, c->height, c->width, c->channels, (int)c->src_dtype,
                      (int)c->dst_dtype, (int)c->src_layout,
                      (int)c->dst_layout);
  size_t in =
      sl_dconv_in_bytes(dc, (size_t)c->n, (size_t)c->height, (size_t)c->width);
  size_t out =
      sl_dconv_out_bytes(dc, (size_t)c->n, (size_t)c->height, (size_t)c->width);
  if (in > c->src_bytes || in > cb->staging_bytes || out > cb->slot_bytes ||
      out > c->dst_bytes)
    return sl_err_set(err, SL_EINVAL,
                      "cuda ring: batch needs %zu B in and %zu B out; staging "
                      "holds %zu B, a slot %zu B",
                      in, out, cb->staging_bytes, cb->slot_bytes);
  /* The user's step may still read s: the stream waits for it on the
   * device before writing s. Into the landing buffer the copy does not
   * touch s, so only the kernel waits: the copy overlaps the user's step. */
  sl_status st;
  if (cb->consumed_pending[s] == CONSUMED_UNKNOWN)
    return sl_err_set(err, SL_ECUDA,
                      "cuda ring: slot %d was released on a stream the loader "
                      "could neither record on nor wait for; it is not "
                      "rewritten (see the sl_batch_release error)",
                      s);
  int wait = cb->consumed_pending[s] == CONSUMED_RECORDED;
  cb->waits_on = -1;
  cb->last_wait_ns = 0;
  void *slot = cb_slot(b, s);
  if (cb->identity && wait &&
      (st = wait_consumed_on_device(cb, s, err)) != SL_OK)
    return st;
  void *dst = cb->identity ? slot : cb->landing;
  if ((st = sl_cuda_check(
           cudaMemcpyAsync(dst, c->src, in, cudaMemcpyHostToDevice, cb->stream),
           err, "cudaMemcpyAsync(staging → slot %d, %zu B)", s, in)) != SL_OK)
    return st;
  if (cb->identity)
    return SL_OK;
  if (wait) {
    /* Marks the end of the copy, so wait_ready can tell the time the
     * kernel then waits for the consumer. */
    if ((st = sl_cuda_check(cudaEventRecord(cb->landed, cb->stream), err,
                            "cudaEventRecord(landed)")) != SL_OK ||
        (st = wait_consumed_on_device(cb, s, err)) != SL_OK)
      return st;
    cb->wait_after_landing = 1;
  }
  return sl_cuda_check(sl_dconv_launch_mix(dc, &c->mix, cb->landing,
                                           (size_t)c->n, (size_t)c->height,
                                           (size_t)c->width, slot, cb->stream),
                       err, "convert kernel (slot %d, %d×%d×%d)", s, c->n,
                       c->height, c->width);
}

static sl_status cb_record_ready(sl_ring_backend *b, int s, sl_err *err) {
  cuda_backend *cb = cb_of(b);
  return sl_cuda_check(cudaEventRecord(cb->ready[s], cb->stream), err,
                       "cudaEventRecord(ready %d)", s);
}

static sl_status cb_wait_ready(sl_ring_backend *b, int s, sl_err *err) {
  cuda_backend *cb = cb_of(b);
  sl_status st;
  if (cb->waits_on == s) {
    /* The time the stream stood still for the consumer: from the end of
     * the copy into the landing buffer (or now, when the copy itself
     * waited) to the consumer's release. The mover sleeps that long in
     * any case, here or below. */
    if (cb->wait_after_landing &&
        (st = sl_cuda_check(cudaEventSynchronize(cb->landed), err,
                            "cudaEventSynchronize(landed)")) != SL_OK)
      return st;
    uint64_t t0 = sl_now_ns();
    if ((st = sl_cuda_check(cudaEventSynchronize(cb->consumed[s]), err,
                            "cudaEventSynchronize(consumed %d)", s)) != SL_OK)
      return st;
    cb->last_wait_ns = sl_now_ns() - t0;
    cb->waits_on = -1;
  }
  return sl_cuda_check(cudaEventSynchronize(cb->ready[s]), err,
                       "cudaEventSynchronize(ready %d)", s);
}

static uint64_t cb_consumer_wait_ns(sl_ring_backend *b, int s) {
  cuda_backend *cb = cb_of(b);
  (void)s;
  uint64_t v = cb->last_wait_ns;
  cb->last_wait_ns = 0;
  return v;
}

static void *cb_ready_event(sl_ring_backend *b, int s) {
  return (void *)cb_of(b)->ready[s]; /* the handle: a pointer type */
}

cudaStream_t sl_cuda_release_stream(void *stream, int *done) {
  *done = stream == SL_RELEASE_DONE;
  /* The copy stream is non-blocking, so it does not order itself after
   * the legacy default stream: handle 0 (PyTorch's default stream) must be
   * recorded on explicitly, or the next copy could overlap its kernels. */
  return *done ? NULL : stream ? (cudaStream_t)stream : cudaStreamLegacy;
}

static sl_status cb_record_consumed(sl_ring_backend *b, int s, void *stream,
                                    sl_err *err) {
  cuda_backend *cb = cb_of(b);
  int done;
  cudaStream_t on = sl_cuda_release_stream(stream, &done);
  if (done) {
    cb->consumed_pending[s] = CONSUMED_NONE;
    return SL_OK;
  }
  /* Recorded with the loader's device current: the event belongs to it,
   * and the legacy stream is the current device's. */
  int prev;
  sl_status st = sl_cuda_device_push(cb->p.gpu, &prev, err);
  if (st == SL_OK)
    st = sl_cuda_check(cudaEventRecord(cb->consumed[s], on), err,
                       "sl_batch_release: cudaEventRecord(consumed %d) on "
                       "the given stream",
                       s);
  if (st == SL_OK) {
    cb->consumed_pending[s] = CONSUMED_RECORDED;
  } else if (cudaStreamSynchronize(on) == cudaSuccess) {
    /* Not recordable (a stream of another device?), but waited for: the
     * slot is safe to rewrite; the caller still hears of its stream. */
    cb->consumed_pending[s] = CONSUMED_NONE;
    sl_err_prefix(err, "(the loader waited for the stream instead) ");
  } else {
    cb->consumed_pending[s] = CONSUMED_UNKNOWN;
  }
  (void)cudaGetLastError();
  if (prev >= 0)
    sl_cuda_device_pop(prev);
  return st;
}

static void cb_drain(sl_ring_backend *b) {
  (void)cudaStreamSynchronize(cb_of(b)->stream);
  (void)cudaGetLastError();
}

/* Nothing to wait for here: copy_to_slot makes the copy stream wait for
 * `consumed` before writing s (after the copy into the landing buffer, when
 * converting). The mover does wait for the training step later, in
 * wait_ready, whose event is queued behind that stream wait, and counts
 * that wait (consumer_wait_ns); the staging buffer is not handed out again
 * before the copy is done. */
static sl_status cb_wait_consumed(sl_ring_backend *b, int s, sl_err *err) {
  (void)b;
  (void)s;
  (void)err;
  return SL_OK;
}

/* The convert kernel mixes (sl_dconv_mix); a u8 NHWC batch is copied as
 * it is, so the host mixes its staging. */
static bool cb_mixes(sl_ring_backend *b) {
  return !cb_of(b)->identity;
}

static const sl_ring_backend_ops cuda_ops = {
    .name = "cuda",
    .on_device = true,
    .converts = true,
    .mixes = cb_mixes,
    .alloc = cb_alloc,
    .destroy = cb_destroy,
    .staging = cb_staging,
    .slot = cb_slot,
    .thread_init = cb_thread_init,
    .copy_to_slot = cb_copy_to_slot,
    .record_ready = cb_record_ready,
    .wait_ready = cb_wait_ready,
    .ready_event = cb_ready_event,
    .record_consumed = cb_record_consumed,
    .wait_consumed = cb_wait_consumed,
    .consumer_wait_ns = cb_consumer_wait_ns,
    .drain = cb_drain,
};

sl_status sl_ring_backend_cuda_create(sl_ring_backend **out,
                                      const sl_cuda_ring_params *p,
                                      sl_err *err) {
  *out = NULL;
  cuda_backend *cb = calloc(1, sizeof *cb);
  if (!cb)
    return sl_err_set(err, SL_ENOMEM, "cuda ring backend");
  cb->base.ops = &cuda_ops;
  cb->p = *p;
  if (sl_dconv_init(&cb->plan, (int)p->dtype, (int)p->layout, p->channels,
                    p->mean, p->std) != 0) {
    free(cb);
    return sl_err_set(err, SL_EINVAL,
                      "cuda ring: no convert plan for dtype %d, layout %d, %d "
                      "channels (std must be positive)",
                      (int)p->dtype, (int)p->layout, p->channels);
  }
  cb->identity = sl_dconv_is_identity(&cb->plan);
  cb->waits_on = -1;
  *out = &cb->base;
  return SL_OK;
}

size_t sl_ring_backend_cuda_vram(const sl_ring_backend *b) {
  return b ? ((const cuda_backend *)b)->vram_bytes : 0;
}
