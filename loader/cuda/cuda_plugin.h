/* The CUDA backend as a plugin: libsluice_cuda.so, loaded at run time.
 *
 * A build with SLUICE_CUDA_PLUGIN (the wheel's) keeps every CUDA line out of
 * libsluice: the ring backend, the convert kernels and the device probe go
 * into libsluice_cuda.so, which links cudart, and libsluice opens it the
 * first time a loader asks for a device. Where the plugin or the CUDA
 * runtime it needs (libcudart.so.13: the system's, or torch's
 * nvidia-cuda-runtime wheel already loaded by torch) cannot be loaded,
 * device.backend = auto uses the host backend and says why; = cuda fails
 * with that reason. A process without a GPU never maps cudart.
 *
 * The plugin is looked for beside the file that holds libsluice's code
 * (libsluice.so, the Python module, or a program linking it statically),
 * then one folder up (the wheel's sluice/bin/sluice). It stays loaded for
 * the process's life (RTLD_NODELETE), as cudart itself does: backends it
 * made may outlive any one loader. Thread-safe: no state of ours; the
 * dynamic loader serialises its own. */
#ifndef SLUICE_LOADER_CUDA_CUDA_PLUGIN_H
#define SLUICE_LOADER_CUDA_CUDA_PLUGIN_H

#include <stddef.h>

#include "common/error.h"
#include "loader/cuda/device_select.h"
#include "loader/cuda/ring_cuda.h"

#define SL_CUDA_PLUGIN_FILE "libsluice_cuda.so"
#define SL_CUDA_PLUGIN_ENTRY "sl_cuda_plugin_v1"
#define SL_CUDA_PLUGIN_ABI 1

/* What the plugin offers: the functions of the same names compiled with
 * CUDA (device_select.h, ring_cuda.h). The structs they take are the same
 * in both (plain C, no CUDA types); abi and size catch a plugin from
 * another build. */
typedef struct sl_cuda_plugin {
  int abi;     /* SL_CUDA_PLUGIN_ABI */
  size_t size; /* sizeof(sl_cuda_plugin) */
  sl_status (*device_choose)(sl_backend_kind requested, int gpu,
                             sl_device_choice *out, sl_err *err);
  sl_status (*ring_create)(sl_ring_backend **out, const sl_cuda_ring_params *p,
                           sl_err *err);
  size_t (*ring_vram)(const sl_ring_backend *b);
} sl_cuda_plugin;

typedef const sl_cuda_plugin *(*sl_cuda_plugin_entry)(void);

/* The plugin's entry point (in libsluice_cuda.so only). */
const sl_cuda_plugin *sl_cuda_plugin_v1(void);

/* libsluice's side: loads the plugin (or finds it loaded) and returns its
 * table. Errors: SL_EUNSUPPORTED naming each path tried and the dynamic
 * loader's reason ("libcudart.so.13: cannot open shared object file"), or
 * a plugin from another build. */
sl_status sl_cuda_plugin_load(const sl_cuda_plugin **out, sl_err *err);

#endif
