/* CUDA runtime calls with sluice errors.
 *
 * Every runtime call goes through sl_cuda_check, which turns a cudaError_t
 * into a status and a message naming the call, the runtime's error name and
 * its own sentence (cudaGetErrorString):
 *
 *   cudaMalloc(ring: 4 slots × 19267584 B): cudaErrorMemoryAllocation: out of
 *   memory
 *
 * Errors that mean "no usable device" (no driver, a driver too old for this
 * runtime, no device, a bad ordinal, devices busy or unavailable) map to
 * SL_ENODEV; out of memory to SL_ENOMEM; the rest to SL_ECUDA.
 *
 * Only built with CUDA (SLUICE_HAVE_CUDA). Thread-safe: no state. */
#ifndef SLUICE_LOADER_CUDA_CHECK_H
#define SLUICE_LOADER_CUDA_CHECK_H

#include <cuda_runtime_api.h>
#include <stddef.h>

#include "common/error.h"

/* SL_OK for cudaSuccess; otherwise fills err ("<what>: <name>: <string>")
 * and returns the mapped status. Clears the runtime's non-sticky last error
 * so the next call does not report it again. */
sl_status sl_cuda_check(cudaError_t e, sl_err *err, const char *what_fmt, ...)
    SL_PRINTF(3, 4);

/* The status a runtime error maps to (SL_OK for cudaSuccess). */
sl_status sl_cuda_status_of(cudaError_t e);

/* What sl_cuda_probe learns about the device. */
typedef struct sl_cuda_device {
  int ordinal;
  int count; /* devices the runtime sees */
  int cc_major, cc_minor;
  size_t total_bytes, free_bytes;
  char name[256];
} sl_cuda_device;

/* Checks that device `ordinal` is usable: the runtime finds a driver and the
 * device, and reports its memory. The calling thread's current device is
 * left as it was.
 * Errors: SL_ENODEV with the runtime's message ("cudaGetDeviceCount:
 * cudaErrorInsufficientDriver: CUDA driver version is insufficient for CUDA
 * runtime version"), or naming the ordinal and the count. */
sl_status sl_cuda_probe(int ordinal, sl_cuda_device *out, sl_err *err);

/* Makes `ordinal` the calling thread's current device, saving the previous
 * one in *prev for sl_cuda_device_pop, so the library does not change the
 * caller's CUDA state behind its back. */
sl_status sl_cuda_device_push(int ordinal, int *prev, sl_err *err);
void sl_cuda_device_pop(int prev);

/* Pinned host memory: cudaHostAlloc(size), every page touched once so the
 * faults happen here and not on the hot path. Free with cudaFreeHost. */
sl_status sl_cuda_host_alloc(void **out, size_t size, const char *what,
                             sl_err *err);

/* The stream sl_batch_release's argument stands for: the given stream, or
 * the legacy default stream for NULL; *done says SL_RELEASE_DONE (then the
 * result is NULL: nothing to record). A pure function (ring_cuda.c). */
cudaStream_t sl_cuda_release_stream(void *stream, int *done);

#endif
