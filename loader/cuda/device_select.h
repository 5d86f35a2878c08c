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

/* 1 when this build has the CUDA backend. */
int sl_device_cuda_built(void);

#endif
