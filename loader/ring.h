/* The staging ring: workers fill staging buffers, one mover thread copies each
 * full buffer into an output slot, the consumer takes slots in batch order and
 * gives them back.
 *
 *   workers ──► staging[k % S] ──► mover: copy_to_slot ──► slot s ──► next()
 *                  ▲                 record_ready,              │
 *                  └─ freed once ─── wait_ready                 ▼
 *                     the copy ends          wait_consumed ◄── release(stream)
 *
 * The protocol (which slot holds what, who waits for whom, in-order delivery,
 * epoch abandon) is written once, in ring.c. Where the memory lives and how
 * bytes move is a backend's business, behind sl_ring_backend_ops: the host
 * backend (ring_host.c) uses host memory and completes every copy at once;
 * a CUDA backend uses pinned staging, device slots, a copy stream and events.
 *
 * Invariants ring.c guarantees to every backend:
 *   - A slot is never written (copy_to_slot) between the moment it is handed
 *     to the consumer and the moment the consumer releases it AND
 *     wait_consumed(slot) has returned.
 *   - A staging buffer is never handed to a worker again before wait_ready
 *     of the copy that read it has returned.
 *   - Batches reach the consumer in batch order; every batch has exactly
 *     batch_size samples.
 *
 * Threads: ring functions marked (consumer) are called from the one thread
 * that calls sl_loader_next/release/start_epoch; (worker) from any worker;
 * backend ops are called as noted on each op.
 *
 * Memory: all of it at sl_ring_create: nstaging × staging_bytes of staging
 * plus nslots × slot_bytes of slots (in the backend), plus per buffer
 * batch_size × (12 + 4 × target_width) bytes of labels, indices and
 * targets and, with box_capacity C > 0, batch_size × (4 + 20 × C) bytes
 * of boxes, box labels and counts. Nothing after. */
#ifndef SLUICE_LOADER_RING_H
#define SLUICE_LOADER_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "loader/config.h"
#include "loader/device_convert.h"
#include "loader/sample.h"

/* ---- Backend interface ----------------------------------------------------
 */

/* One batch's move from a staging buffer into a slot. */
typedef struct sl_ring_copy {
  const void *src;  /* staging buffer (host memory from alloc) */
  int src_index;    /* its index: src == staging(src_index) */
  size_t src_bytes; /* bytes of src in use: n samples at h × w */
  size_t dst_bytes; /* bytes the slot receives */
  int n, height, width, channels;
  sl_dtype src_dtype;   /* what the workers wrote: U8 + NHWC when the */
  sl_layout src_layout; /* backend converts, else the same as dst   */
  sl_dtype dst_dtype;   /* what the consumer gets */
  sl_layout dst_layout;
  float mean[3], std[3]; /* for the conversion (channels values used) */
  sl_dconv_mix mix;      /* batch mixing for a backend that mixes (below) */
} sl_ring_copy;

typedef struct sl_ring_backend sl_ring_backend;

typedef struct sl_ring_backend_ops {
  const char *name; /* "host", "cuda" */
  bool on_device;   /* slots are device memory (sl_batch.on_device) */
  bool converts;    /* copy_to_slot converts u8 NHWC to dst dtype/layout;
                       the workers then write u8 NHWC into staging */
  /* Optional (NULL: never): whether copy_to_slot applies c->mix (the CUDA
   * backend's convert kernel does, when it converts); otherwise the batch
   * op mixes the staging buffer's pixels on the host. After alloc. */
  bool (*mixes)(sl_ring_backend *b);

  /* Opening thread. Allocates nstaging host staging buffers of
   * staging_bytes and nslots slots of slot_bytes, plus whatever events and
   * streams the backend needs; touches host memory once. On error the
   * backend stays destroyable. */
  sl_status (*alloc)(sl_ring_backend *b, int nstaging, size_t staging_bytes,
                     int nslots, size_t slot_bytes, sl_err *err);
  /* Opening/closing thread, after the mover has stopped. Frees everything
   * and the backend object itself. Accepts a backend whose alloc failed. */
  void (*destroy)(sl_ring_backend *b);
  /* After alloc: where staging buffer i and slot s are now. The ring asks
   * each time it hands one out (staging to a worker, a slot to the
   * consumer), under its lock, because a backend may exchange a staging
   * buffer with a slot in copy_to_slot instead of copying (the host backend
   * does). */
  void *(*staging)(sl_ring_backend *b, int i);
  void *(*slot)(sl_ring_backend *b, int s);

  /* Mover thread, once before its first copy (may be NULL): e.g.
   * cudaSetDevice. */
  sl_status (*thread_init)(sl_ring_backend *b, sl_err *err);
  /* Mover thread. Starts moving c into slot s (asynchronously allowed).
   * The ring calls record_ready(s) right after. */
  sl_status (*copy_to_slot)(sl_ring_backend *b, int s, const sl_ring_copy *c,
                            sl_err *err);
  /* Mover thread. Marks the end of the work started on s (an event). */
  sl_status (*record_ready)(sl_ring_backend *b, int s, sl_err *err);
  /* Mover thread. Blocks until the copy into s has completed, so the
   * staging buffer it read may be reused. */
  sl_status (*wait_ready)(sl_ring_backend *b, int s, sl_err *err);
  /* Consumer thread. What sl_batch.ready holds for slot s (a cudaEvent_t),
   * or NULL when the data is ready on return from next. */
  void *(*ready_event)(sl_ring_backend *b, int s);
  /* Consumer thread, from sl_batch_release. Records that the consumer's
   * stream (see sl_batch_release: NULL is the legacy default stream,
   * SL_RELEASE_DONE means done now) will be done with s once the work queued
   * on it so far completes. */
  sl_status (*record_consumed)(sl_ring_backend *b, int s, void *stream,
                               sl_err *err);
  /* Mover thread. Blocks until what record_consumed(s) recorded has
   * completed; called before s is written again. */
  sl_status (*wait_consumed)(sl_ring_backend *b, int s, sl_err *err);
  /* Mover thread, after wait_ready(s) (may be NULL): nanoseconds the move
   * into s spent waiting, on the device, for the consumer's release of s
   * (the CUDA copy stream waits for `consumed` there, not in
   * wait_consumed). The ring adds them to the slot wait. */
  uint64_t (*consumer_wait_ns)(sl_ring_backend *b, int s);
  /* Mover thread, after any of its calls failed (may be NULL): waits until
   * no work the backend started still reads a staging buffer or writes a
   * slot, so the ring can hand them out again. Errors are ignored. */
  void (*drain)(sl_ring_backend *b);
} sl_ring_backend_ops;

/* A backend object. Implementations embed it as their first member. */
struct sl_ring_backend {
  const sl_ring_backend_ops *ops;
};

/* The host backend: host memory for staging and slots, which trade buffers
 * instead of copying; no events. */
sl_status sl_ring_backend_host_create(sl_ring_backend **out, sl_err *err);
/* The CUDA backend: loader/cuda/ring_cuda.h. */

/* ---- The ring ---------------------------------------------------------------
 */

typedef struct sl_ring sl_ring;

/* The part of an epoch a batch op needs. mix_pixels (its argument): 0
 * when the backend mixes the pixels while it copies (it gets the note as
 * sl_ring_copy.mix), so the op only fills the targets and the note. */
typedef struct sl_ring_epoch_view {
  uint64_t epoch;
  int n, height, width, channels;
  sl_dtype dtype;   /* of staging */
  sl_layout layout; /* of staging */
} sl_ring_epoch_view;

typedef struct sl_ring_config {
  int nstaging;         /* staging buffers (device.staging) >= 1 */
  int nslots;           /* output slots (device.prefetch) >= 1 */
  size_t staging_bytes; /* one batch at the largest resolution, src dtype */
  size_t slot_bytes;    /* one batch at the largest resolution, dst dtype */
  int batch_size;
  uint32_t target_width; /* floats of targets per sample (0: none) */
  uint32_t box_capacity; /* detection boxes per sample (0: none) */
  /* Optional, mover thread: runs on each complete batch in staging before
   * its move (at data: the staging buffer in the epoch's src dtype and
   * layout), with its labels and targets; the note travels with the
   * batch to the consumer. */
  void (*batch_op)(void *user, const sl_ring_epoch_view *ep, uint64_t k,
                   void *data, int mix_pixels, const int32_t *labels,
                   float *targets, sl_mix_note *note);
  void *batch_user;
} sl_ring_config;

/* What one epoch's batches look like. */
typedef struct sl_ring_epoch {
  uint64_t epoch;
  uint64_t first_batch; /* resume point: batches before it are skipped */
  uint64_t nbatches;    /* batches in the epoch */
  sl_ring_copy copy;    /* n, height, width, dtypes...; src/src_bytes/
                           dst_bytes are filled per batch by the ring */
  size_t src_sample_bytes, dst_sample_bytes;
} sl_ring_epoch;

/* Where a worker writes sample j of batch k. */
typedef struct sl_ring_staging {
  uint8_t *data; /* batch_size × src_sample_bytes */
  int32_t *labels;
  uint64_t *indices;
  float *targets; /* batch_size × target_width; NULL when 0 */
  /* batch_size × box_capacity × 4, × box_capacity, batch_size; NULL when
   * box_capacity is 0 */
  float *boxes;
  int32_t *box_labels;
  uint32_t *box_counts;
} sl_ring_staging;

/* A delivered batch. */
typedef struct sl_ring_batch {
  int slot;
  uint32_t generation; /* bumps each time the slot is delivered */
  void *data;          /* the slot (device memory when on_device) */
  const int32_t *labels;
  const uint64_t *indices;
  const float *targets; /* NULL when target_width is 0 */
  const float *boxes;   /* NULL when box_capacity is 0, as the next two */
  const int32_t *box_labels;
  const uint32_t *box_counts;
  void *ready;
  uint64_t epoch, index;
  size_t bytes;
  sl_mix_note mix; /* what the batch op did (zero without one) */
} sl_ring_batch;

/* Allocates everything through backend (which the ring then owns, also on
 * failure) and starts the mover thread. Idle until sl_ring_reset. */
sl_status sl_ring_create(sl_ring **out, const sl_ring_config *rc,
                         sl_ring_backend *backend, sl_err *err);
/* Stops the mover and frees all. Workers must be stopped. Accepts NULL. */
void sl_ring_destroy(sl_ring *r);

bool sl_ring_on_device(const sl_ring *r);
const char *sl_ring_backend_name(const sl_ring *r);

/* (consumer) Abandons the current epoch: wakes every waiter; worker calls
 * return SL_ESTATE from now on; waits until the mover is idle. Slots held by
 * the consumer stay held until released. */
void sl_ring_abort(sl_ring *r);
/* (consumer) Starts an epoch once workers are quiet (after sl_ring_abort and
 * the pool has stopped): staging and undelivered slots are reclaimed. */
void sl_ring_reset(sl_ring *r, const sl_ring_epoch *ep);

/* (worker) Blocks until batch k's staging buffer belongs to batch k (the
 * batch S earlier has been moved out), then fills *st. Returns SL_ESTATE
 * when the epoch is abandoned meanwhile. */
sl_status sl_ring_staging_acquire(sl_ring *r, uint64_t k, sl_ring_staging *st);
/* (worker) Sample j of batch k is written (status SL_OK) or failed (msg
 * names the sample). The batch moves once all batch_size are done; the
 * error of the lowest failing j travels with it to the consumer. */
void sl_ring_staging_done(sl_ring *r, uint64_t k, int j, sl_status status,
                          const char *msg);

/* (consumer) The next batch in order: SL_OK, SL_END after the epoch's last
 * batch, SL_ESTATE when every slot is held by the consumer (release one) or
 * no epoch was started, or the error a batch carried (sticky until the next
 * reset). wait_ns receives the time spent blocked. */
sl_status sl_ring_next(sl_ring *r, sl_ring_batch *out, uint64_t *wait_ns,
                       sl_err *err);
/* (consumer) Gives slot back; stream as in record_consumed. labels: the
 * batch's labels pointer, which only this ring's slot `slot` hands out, so
 * a batch of another ring (whose slot and generation may well match one
 * held here) is told apart. SL_EINVAL for a batch of another ring, a slot
 * that is not held or a stale generation (double release). */
sl_status sl_ring_release(sl_ring *r, int slot, uint32_t generation,
                          const int32_t *labels, void *stream, sl_err *err);

/* (consumer) Hands back the batch sl_ring_next returned last, unreleased:
 * it goes back to the head of the ready queue and deliver steps back, so
 * the next sl_ring_next returns it again. SL_EINVAL for a batch not held
 * (released, handed back) or not the last one delivered in this epoch. */
sl_status sl_ring_unget(sl_ring *r, int slot, uint32_t generation,
                        const int32_t *labels, sl_err *err);
/* Nanoseconds the mover spent waiting for the consumer: for a free slot,
 * in wait_consumed, and (consumer_wait_ns) on the device. */
uint64_t sl_ring_slot_wait_ns(sl_ring *r);

#endif
