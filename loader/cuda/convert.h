/* The device convert kernel (convert.cu): u8 NHWC batch → the plan's dtype
 * and layout, by the plan's per-channel tables (loader/device_convert.h).
 *
 * Only built with CUDA. Thread-safe: launches are independent. */
#ifndef SLUICE_LOADER_CUDA_CONVERT_H
#define SLUICE_LOADER_CUDA_CONVERT_H

#include <cuda_runtime_api.h>
#include <stddef.h>

#include "loader/device_convert.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Enqueues the conversion of n samples of h × w u8 NHWC pixels at d_src
 * (device memory) into d_dst (sl_dconv_out_bytes bytes of device memory) on
 * stream s. The regions must not overlap. Returns the launch's error
 * (cudaSuccess when enqueued); n*h*w*channels must fit in 2^62. */
cudaError_t sl_dconv_launch(const sl_dconv *dc, const void *d_src, size_t n,
                            size_t h, size_t w, void *d_dst, cudaStream_t s);

/* The same with batch mixing (sl_dconv_mix; NULL: none), as the host twin
 * sl_dconv_run_host_mix computes it. */
cudaError_t sl_dconv_launch_mix(const sl_dconv *dc, const sl_dconv_mix *mix,
                                const void *d_src, size_t n, size_t h, size_t w,
                                void *d_dst, cudaStream_t s);

/* For the GPU tests: converts count floats from d_in to binary16 and bfloat16
 * bits with __float2half_rn and __float2bfloat16_rn. */
cudaError_t sl_dconv_round_launch(const float *d_in, size_t count,
                                  uint16_t *d_f16, uint16_t *d_bf16,
                                  cudaStream_t s);

#ifdef __cplusplus
}
#endif
#endif
