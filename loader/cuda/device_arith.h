/* The device side's pure arithmetic, built in every configuration: how
 * many ring slots a VRAM budget holds, and which device to make current
 * again after a call. A leaf: the backend choice (device_select.c), the
 * runtime wrappers (cuda_check.c), the CUDA ring and the loader's memory
 * plan call it, and it calls none of them.
 *
 * Thread-safe: no state. */
#ifndef SLUICE_LOADER_CUDA_DEVICE_ARITH_H
#define SLUICE_LOADER_CUDA_DEVICE_ARITH_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "sluice.h"

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

#endif
