#include "loader/cuda/device_select.h"

#include <stdio.h>
#include <string.h>

#ifdef SLUICE_HAVE_CUDA
#include "loader/cuda/cuda_check.h"
#endif

int sl_device_cuda_built(void) {
#ifdef SLUICE_HAVE_CUDA
  return 1;
#else
  return 0;
#endif
}

sl_status sl_device_choose(sl_backend_kind requested, int gpu,
                           sl_device_choice *out, sl_err *err) {
  memset(out, 0, sizeof *out);
  out->backend = SL_BACKEND_HOST;
  if (requested == SL_BACKEND_HOST)
    return SL_OK;
  if (requested != SL_BACKEND_CUDA && requested != SL_BACKEND_AUTO)
    return sl_err_set(err, SL_EINVAL, "device.backend: unknown value %d",
                      (int)requested);
#ifdef SLUICE_HAVE_CUDA
  sl_err why;
  sl_err_clear(&why);
  sl_cuda_device dev;
  sl_status st = sl_cuda_probe(gpu, &dev, &why);
  if (st == SL_OK) {
    out->backend = SL_BACKEND_CUDA;
    snprintf(out->device_name, sizeof out->device_name, "%s", dev.name);
    out->free_bytes = dev.free_bytes;
    out->total_bytes = dev.total_bytes;
    return SL_OK;
  }
  if (requested == SL_BACKEND_CUDA)
    return sl_err_set(
        err, st, "device.backend = cuda: no usable CUDA device: %s", why.msg);
  snprintf(out->fallback_reason, sizeof out->fallback_reason,
           "device.backend = auto: using the host backend: no usable CUDA "
           "device: %s",
           why.msg);
  return SL_OK;
#else
  (void)gpu;
  if (requested == SL_BACKEND_CUDA)
    return sl_err_set(err, SL_EUNSUPPORTED,
                      "device.backend = cuda, but this libsluice was built "
                      "without CUDA (configure with -DSLUICE_CUDA=ON and the "
                      "CUDA toolkit)");
  snprintf(out->fallback_reason, sizeof out->fallback_reason,
           "device.backend = auto: using the host backend: this libsluice "
           "was built without CUDA");
  return SL_OK;
#endif
}
