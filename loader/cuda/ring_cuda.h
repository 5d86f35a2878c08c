/* The CUDA backend of the staging ring (loader/ring.h).
 *
 *   staging   nstaging pinned host buffers (cudaHostAlloc), touched at open;
 *             the workers write u8 NHWC pixels into them.
 *   slots     one cudaMalloc holding the nslots device slots (each rounded
 *             up to 256 B) and, when the batch needs converting, one landing
 *             buffer of staging_bytes that the u8 pixels cross PCIe into.
 *   mover     on its own non-blocking stream: H2D copy of the u8 batch (into
 *             the slot itself for u8 NHWC, else into the landing buffer and
 *             then the convert kernel into the slot), then `ready` is
 *             recorded. The staging buffer is handed back once `ready`
 *             completes.
 *   release   records `consumed` on the user's stream; before the slot is
 *             written again the copy stream waits for it on the device
 *             (cudaStreamWaitEvent), so the training step may still be
 *             reading the slot when release returns. Converting, the wait
 *             comes after the H2D copy into the landing buffer (which does
 *             not touch the slot) and before the kernel; the time it holds
 *             the stream counts in the loader's slot_wait_ns.
 *
 * Memory bound: VRAM = nslots × slot_bytes (+ staging_bytes to land u8 when
 * converting), checked against device.vram_budget at alloc; pinned host =
 * nstaging × staging_bytes. Nothing is allocated after alloc.
 *
 * Only built with CUDA; without it, sl_ring_backend_cuda_create returns
 * SL_EUNSUPPORTED (device_select.c). */
#ifndef SLUICE_LOADER_CUDA_RING_CUDA_H
#define SLUICE_LOADER_CUDA_RING_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include "loader/ring.h"

/* What the CUDA backend needs to know at creation. */
typedef struct sl_cuda_ring_params {
  int gpu;              /* device.gpu */
  uint64_t vram_budget; /* device.vram_budget, bytes */
  sl_dtype dtype;       /* augment.dtype: what the slots hold */
  sl_layout layout;     /* augment.layout */
  int channels;         /* 1 or 3 */
  float mean[3], std[3];
} sl_cuda_ring_params;

/* Creates the backend (no allocation yet: that is the ring's alloc call).
 * Errors: SL_EINVAL for bad params (channels, a non-positive std);
 * SL_ENOMEM. alloc then fails with SL_ECONFIG when the slots and landing
 * buffer would exceed vram_budget, saying how much is needed; with
 * SL_ENODEV / SL_ECUDA / SL_ENOMEM and the runtime's message otherwise. */
sl_status sl_ring_backend_cuda_create(sl_ring_backend **out,
                                      const sl_cuda_ring_params *p,
                                      sl_err *err);

/* Bytes of device memory the backend allocated (0 before alloc). */
size_t sl_ring_backend_cuda_vram(const sl_ring_backend *b);

#endif
