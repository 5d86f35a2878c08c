#include "loader/cuda/device_select.h"

#include <stdio.h>
#include <string.h>

#include "loader/cuda/ring_cuda.h"
#ifdef SLUICE_HAVE_CUDA
#include "loader/cuda/cuda_check.h"
#elif defined(SLUICE_CUDA_PLUGIN)
#include "loader/cuda/cuda_plugin.h"
#endif

int sl_device_cuda_built(void) {
#if defined(SLUICE_HAVE_CUDA)
  return 1;
#elif defined(SLUICE_CUDA_PLUGIN)
  const sl_cuda_plugin *p;
  sl_err why;
  return sl_cuda_plugin_load(&p, &why) == SL_OK;
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
           "no usable CUDA device (device.gpu = %d): %s", gpu, why.msg);
  return SL_OK;
#elif defined(SLUICE_CUDA_PLUGIN)
  const sl_cuda_plugin *p;
  sl_err why;
  sl_err_clear(&why);
  if (sl_cuda_plugin_load(&p, &why) == SL_OK)
    return p->device_choose(requested, gpu, out, err);
  if (requested == SL_BACKEND_CUDA)
    return sl_err_set(err, SL_EUNSUPPORTED, "device.backend = cuda: %s",
                      why.msg);
  snprintf(out->fallback_reason, sizeof out->fallback_reason, "%s", why.msg);
  return SL_OK;
#else
  (void)gpu;
  if (requested == SL_BACKEND_CUDA)
    return sl_err_set(err, SL_EUNSUPPORTED,
                      "device.backend = cuda, but this libsluice was built "
                      "without CUDA (configure with -DSLUICE_CUDA=ON and the "
                      "CUDA toolkit)");
  snprintf(out->fallback_reason, sizeof out->fallback_reason,
           "libsluice was built without CUDA");
  return SL_OK;
#endif
}

#if defined(SLUICE_CUDA_PLUGIN) && !defined(SLUICE_HAVE_CUDA)
sl_status sl_ring_backend_cuda_create(sl_ring_backend **out,
                                      const sl_cuda_ring_params *p,
                                      sl_err *err) {
  const sl_cuda_plugin *plugin;
  *out = NULL;
  sl_status st = sl_cuda_plugin_load(&plugin, err);
  return st != SL_OK ? st : plugin->ring_create(out, p, err);
}

size_t sl_ring_backend_cuda_vram(const sl_ring_backend *b) {
  const sl_cuda_plugin *plugin;
  sl_err why;
  return b && sl_cuda_plugin_load(&plugin, &why) == SL_OK ? plugin->ring_vram(b)
                                                          : 0;
}
#elif !defined(SLUICE_HAVE_CUDA)
sl_status sl_ring_backend_cuda_create(sl_ring_backend **out,
                                      const sl_cuda_ring_params *p,
                                      sl_err *err) {
  (void)p;
  *out = NULL;
  return sl_err_set(err, SL_EUNSUPPORTED,
                    "the CUDA ring backend is not in this build (libsluice "
                    "was built without CUDA)");
}

size_t sl_ring_backend_cuda_vram(const sl_ring_backend *b) {
  (void)b;
  return 0;
}
#endif
