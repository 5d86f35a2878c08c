/* The device ring's sizing and the device-restore rule: pure arithmetic
 * (device_arith.h), built in every configuration. */
#include "loader/cuda/device_arith.h"

#include "common/mem.h"

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
