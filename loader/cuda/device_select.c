#include "loader/cuda/device_select.h"

#include <stdio.h>
#include <string.h>

#include "common/mem.h"
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

sl_status sl_device_ring_need(size_t staging_bytes, size_t slot_bytes,
                              int landing, int nslots, size_t *need,
                              sl_err *err) {
  size_t stride, all;
  if (slot_bytes > SIZE_MAX - SL_DEVICE_SLOT_ALIGN || nslots < 0)
    return sl_err_set(err, SL_ETOOBIG, "device ring: slot of %zu B",
                      slot_bytes);
  stride = sl_device_slot_stride(slot_bytes);
  if (!sl_mul_size(stride, (size_t)nslots, &all) ||
      (landing && all > SIZE_MAX - staging_bytes))
    return sl_err_set(err, SL_ETOOBIG, "device ring: %d slots of %zu B", nslots,
                      slot_bytes);
  *need = all + (landing ? staging_bytes : 0);
  return SL_OK;
}

size_t sl_device_alloc_bytes(size_t bytes) {
  const size_t g = SL_DEVICE_ALLOC_GRANULE;
  if (bytes > SIZE_MAX - (g - 1))
    return SIZE_MAX;
  return (bytes + g - 1) / g * g;
}

sl_status sl_device_ring_slots(uint64_t vram_budget, size_t staging_bytes,
                               size_t slot_bytes, int landing, int *nslots,
                               sl_err *err) {
  size_t two = 0;
  sl_status st =
      sl_device_ring_need(staging_bytes, slot_bytes, landing, 2, &two, err);
  if (st != SL_OK)
    return st;
  /* What the allocator can hand out within the budget: whole pages. */
  uint64_t usable =
      vram_budget / SL_DEVICE_ALLOC_GRANULE * (uint64_t)SL_DEVICE_ALLOC_GRANULE;
  if (usable < two)
    return sl_err_set(err, SL_ECONFIG,
                      "device.vram_budget = %llu B holds fewer than 2 device "
                      "slots of %zu B (one batch at the largest resolution)%s"
                      ": it needs at least %zu B (%.1f MiB), as the CUDA "
                      "allocator maps it in 2 MiB pages",
                      (unsigned long long)vram_budget, slot_bytes,
                      landing ? " plus the u8 landing buffer" : "",
                      sl_device_alloc_bytes(two),
                      (double)sl_device_alloc_bytes(two) / (1024.0 * 1024.0));
  uint64_t stride = sl_device_slot_stride(slot_bytes);
  uint64_t d = (usable - (landing ? staging_bytes : 0)) / stride;
  *nslots = d > 1024 ? 1024 : (int)d;
  return SL_OK;
}

int sl_device_needs_landing(sl_dtype dtype, sl_layout layout, int channels) {
  return !(dtype == SL_DTYPE_U8 && (layout == SL_LAYOUT_NHWC || channels == 1));
}

int sl_device_restore_choice(int prev, int ordinal, int prev_active) {
  return prev >= 0 && prev != ordinal && prev_active == 1 ? prev : -1;
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
