/* The CUDA plugin's side (cuda_plugin.h): the one symbol libsluice_cuda.so
 * exports. */
#include "loader/cuda/cuda_plugin.h"

#include "sluice.h" /* SL_API: default visibility */

static const sl_cuda_plugin plugin = {
    .abi = SL_CUDA_PLUGIN_ABI,
    .size = sizeof(sl_cuda_plugin),
    .device_choose = sl_device_choose,
    .ring_create = sl_ring_backend_cuda_create,
    .ring_vram = sl_ring_backend_cuda_vram,
};

SL_API const sl_cuda_plugin *sl_cuda_plugin_v1(void) {
  return &plugin;
}
