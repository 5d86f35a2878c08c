/* IEEE binary32 <-> binary16 and bfloat16, shared by the CPU convert
 * (augment/convert.c) and the device convert's host twin and tables
 * (loader/device_convert.c). Round to nearest, ties to even, as CUDA's
 * __float2half_rn / __float2bfloat16_rn (tests/gpu/test_gpu.c compares them
 * on a device). Thread safety: pure functions. */
#ifndef SLUICE_COMMON_HALF_H
#define SLUICE_COMMON_HALF_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Overflow gives +-infinity; a NaN gives a quiet NaN of the same sign. */
uint16_t sl_f32_to_f16(float f);
uint16_t sl_f32_to_bf16(float f);
/* Exact widenings back to binary32. */
float sl_f16_to_f32(uint16_t h);
float sl_bf16_to_f32(uint16_t b);

#ifdef __cplusplus
}
#endif
#endif
