/* Which backend a loader uses: device.backend = auto | cuda | host.
 *
 *   host   the host backend, always.
 *   cuda   CUDA, or an error: SL_ENODEV / SL_ECUDA with the CUDA runtime's
 *          message when no device is usable (here: "cudaGetDeviceCount:
 *          cudaErrorInsufficientDriver: CUDA driver version is insufficient
 *          for CUDA runtime version"), SL_EUNSUPPORTED when libsluice was
 *          built without CUDA.
 *   auto   CUDA when device.gpu is usable, otherwise host, with the reason in
 *          the choice so the loader can say it once (log callback and stats).
 *
 * Built in every configuration (without CUDA it never picks CUDA).
 * Thread-safe: no state; leaves the calling thread's current CUDA device
 * as it was. */
#ifndef SLUICE_LOADER_CUDA_DEVICE_SELECT_H
#define SLUICE_LOADER_CUDA_DEVICE_SELECT_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "loader/config.h"

typedef struct sl_device_choice {
  sl_backend_kind backend; /* SL_BACKEND_CUDA or SL_BACKEND_HOST */
  /* auto fell back to host: why, for the caller to say once ("no usable
   * CUDA device (device.gpu = 0): cudaGetDeviceCount:
   * cudaErrorInsufficientDriver: CUDA driver version is insufficient for CUDA
   * runtime version", or "libsluice was built without CUDA"); "" when no
   * fallback happened. */
  char fallback_reason[SL_ERRMSG_MAX + 128];
  /* CUDA picked: the device's name, and its free/total memory at the time. */
  char device_name[256];
  size_t free_bytes, total_bytes;
} sl_device_choice;

/* Decides as described above. On error *out is unspecified. */
sl_status sl_device_choose(sl_backend_kind requested, int gpu,
                           sl_device_choice *out, sl_err *err);

/* ---- Sizing the device ring (pure arithmetic, every build) ----------------
 * Each device slot starts on a 256 B boundary, as cudaMalloc's allocation
 * itself does, so every slot is aligned as the first: a slot of slot_bytes
 * takes sl_device_slot_stride(slot_bytes) of the ring's allocation
 * (slot_bytes <= SIZE_MAX - SL_DEVICE_SLOT_ALIGN). */
#define SL_DEVICE_SLOT_ALIGN ((size_t)256)
static inline size_t sl_device_slot_stride(size_t slot_bytes) {
  return (slot_bytes + SL_DEVICE_SLOT_ALIGN - 1) / SL_DEVICE_SLOT_ALIGN *
         SL_DEVICE_SLOT_ALIGN;
}
/* VRAM of nslots slots of slot_bytes (each rounded up to 256 B) plus, when
 * the batch is converted on the device (landing), one u8 landing buffer of
 * staging_bytes. */
sl_status sl_device_ring_need(size_t staging_bytes, size_t slot_bytes,
                              int landing, int nslots, size_t *need,
                              sl_err *err);
/* The device memory one cudaMalloc of `bytes` takes: the allocator maps
 * large allocations in 2 MiB pages, so the ring's one allocation of
 * sl_device_ring_need bytes takes this, which is what is held against
 * device.vram_budget. SIZE_MAX on overflow. */
#define SL_DEVICE_ALLOC_GRANULE ((size_t)2 << 20)
size_t sl_device_alloc_bytes(size_t bytes);
/* The most slots D for which the ring's allocation, rounded up to the
 * allocator's 2 MiB pages, fits vram_budget: D = floor((floor(budget / 2 MiB)
 * × 2 MiB - landing) / slot). Fewer than 2 is SL_ECONFIG saying how much
 * device.vram_budget needs to be. */
sl_status sl_device_ring_slots(uint64_t vram_budget, size_t staging_bytes,
                               size_t slot_bytes, int landing, int *nslots,
                               sl_err *err);
/* 1 when the device converts the batch after the copy and so needs the
 * landing buffer: every dtype but u8, and u8 NCHW with more than one
 * channel. */
int sl_device_needs_landing(sl_dtype dtype, sl_layout layout, int channels);

/* ---- Restoring the caller's device (pure, every build) -------------------
 * What sl_cuda_device_push saves for pop to restore, having made `ordinal`
 * current on a thread whose current device was `prev`: prev when it differs
 * from ordinal and its primary context is active (prev_active 1), so that
 * setting it back creates nothing; -1 (restore nothing) otherwise. A thread
 * that never chose a device reads device 0 with no context behind it, and
 * setting 0 back would create GPU 0's primary context (hundreds of MiB, and
 * in EXCLUSIVE_PROCESS mode the device itself) in every rank of a job with
 * one process per GPU. prev_active -1 (the state could not be read) counts
 * as inactive: a library call never creates a context nobody asked for.
 * Such a thread keeps the loader's device current afterwards. */
int sl_device_restore_choice(int prev, int ordinal, int prev_active);

/* 1 when this build has the CUDA backend. */
int sl_device_cuda_built(void);

#endif
