/* Small CUDA helpers for the GPU tests and bench/bench_gpu.c. */
#ifndef SLUICE_TESTS_GPU_UTIL_H
#define SLUICE_TESTS_GPU_UTIL_H

#include <cuda_runtime_api.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Enqueues a one-thread kernel on s that busy-waits ns nanoseconds of the
 * GPU's global timer: a training step of fixed length. */
cudaError_t sl_test_spin(uint64_t ns, cudaStream_t s);

#ifdef __cplusplus
}
#endif
#endif
