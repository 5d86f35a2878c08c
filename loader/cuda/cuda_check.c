#include "loader/cuda/cuda_check.h"

#include <cudaTypedefs.h> /* driver API types only: libcuda is not linked */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "loader/cuda/device_arith.h"

sl_status sl_cuda_status_of(cudaError_t e) {
  switch (e) {
  case cudaSuccess:
    return SL_OK;
  case cudaErrorInsufficientDriver:
  case cudaErrorNoDevice:
  case cudaErrorInvalidDevice:
  case cudaErrorDevicesUnavailable:
  case cudaErrorStubLibrary:
  case cudaErrorSystemDriverMismatch:
  case cudaErrorSystemNotReady:
  case cudaErrorCompatNotSupportedOnDevice:
  case cudaErrorNoKernelImageForDevice:
  case cudaErrorInitializationError:
    return SL_ENODEV;
  case cudaErrorMemoryAllocation:
    return SL_ENOMEM;
  default:
    return SL_ECUDA;
  }
}

sl_status sl_cuda_check(cudaError_t e, sl_err *err, const char *what_fmt, ...) {
  if (e == cudaSuccess)
    return SL_OK;
  (void)cudaGetLastError(); /* reset the non-sticky error state */
  char what[256];
  va_list ap;
  va_start(ap, what_fmt);
  vsnprintf(what, sizeof what, what_fmt, ap);
  va_end(ap);
  return sl_err_set(err, sl_cuda_status_of(e), "%s: %s: %s", what,
                    cudaGetErrorName(e), cudaGetErrorString(e));
}

sl_status sl_cuda_probe(int ordinal, sl_cuda_device *out, sl_err *err) {
  sl_cuda_device d;
  memset(&d, 0, sizeof d);
  d.ordinal = ordinal;
  sl_status st =
      sl_cuda_check(cudaGetDeviceCount(&d.count), err, "cudaGetDeviceCount");
  if (st != SL_OK)
    return st;
  if (ordinal < 0 || ordinal >= d.count)
    return sl_err_set(err, SL_ENODEV,
                      "device.gpu = %d, but the CUDA runtime sees %d device%s",
                      ordinal, d.count, d.count == 1 ? "" : "s");
  struct cudaDeviceProp p;
  if ((st = sl_cuda_check(cudaGetDeviceProperties(&p, ordinal), err,
                          "cudaGetDeviceProperties(%d)", ordinal)) != SL_OK)
    return st;
  snprintf(d.name, sizeof d.name, "%s", p.name);
  d.cc_major = p.major;
  d.cc_minor = p.minor;
  int prev;
  if ((st = sl_cuda_device_push(ordinal, &prev, err)) != SL_OK)
    return st;
  st = sl_cuda_check(cudaMemGetInfo(&d.free_bytes, &d.total_bytes), err,
                     "cudaMemGetInfo on device %d", ordinal);
  sl_cuda_device_pop(prev);
  if (st != SL_OK)
    return st;
  if (out)
    *out = d;
  return SL_OK;
}

/* A driver API function, by name, through the runtime (which loads the
 * driver itself), or NULL. */
static void *driver_fn(const char *name, unsigned version) {
  void *fn = NULL;
  enum cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
  if (cudaGetDriverEntryPointByVersion(name, &fn, version, cudaEnableDefault,
                                       &q) != cudaSuccess ||
      q != cudaDriverEntryPointSuccess)
    fn = NULL;
  (void)cudaGetLastError();
  return fn;
}

int sl_cuda_primary_active(int ordinal) {
  PFN_cuInit_v2000 init = (PFN_cuInit_v2000)driver_fn("cuInit", 2000);
  PFN_cuDeviceGet_v2000 get =
      (PFN_cuDeviceGet_v2000)driver_fn("cuDeviceGet", 2000);
  PFN_cuDevicePrimaryCtxGetState_v7000 state =
      (PFN_cuDevicePrimaryCtxGetState_v7000)driver_fn(
          "cuDevicePrimaryCtxGetState", 7000);
  CUdevice dev;
  unsigned flags = 0;
  int active = 0;
  if (!init || !get || !state || init(0) != CUDA_SUCCESS ||
      get(&dev, ordinal) != CUDA_SUCCESS ||
      state(dev, &flags, &active) != CUDA_SUCCESS)
    return -1;
  return active != 0;
}

sl_status sl_cuda_device_push(int ordinal, int *prev, sl_err *err) {
  *prev = -1;
  int cur = -1;
  sl_status st = sl_cuda_check(cudaGetDevice(&cur), err, "cudaGetDevice");
  if (st != SL_OK || cur == ordinal)
    return st;
  /* Asked before ordinal's context exists: cur's state is the caller's. */
  int restore =
      sl_device_restore_choice(cur, ordinal, sl_cuda_primary_active(cur));
  if ((st = sl_cuda_check(cudaSetDevice(ordinal), err, "cudaSetDevice(%d)",
                          ordinal)) != SL_OK)
    return st;
  *prev = restore;
  return SL_OK;
}

void sl_cuda_device_pop(int prev) {
  int cur;
  if (prev >= 0 && cudaGetDevice(&cur) == cudaSuccess && cur != prev)
    (void)cudaSetDevice(prev);
  (void)cudaGetLastError();
}

sl_status sl_cuda_host_alloc(void **out, size_t size, const char *what,
                             sl_err *err) {
  *out = NULL;
  void *p = NULL;
  sl_status st =
      sl_cuda_check(cudaHostAlloc(&p, size ? size : 1, cudaHostAllocPortable),
                    err, "cudaHostAlloc(%s: %zu B)", what, size);
  if (st != SL_OK)
    return st;
  memset(p, 0, size); /* touch every page once, now */
  *out = p;
  return SL_OK;
}
