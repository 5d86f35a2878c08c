/* The batch convert that runs on the device after the copy, and its host twin.
 *
 * u8 crosses PCIe; on the device one small kernel (loader/cuda/convert.cu)
 * turns a batch of u8 NHWC pixels into the configured dtype and layout:
 *
 *   u8                 the pixel itself (only the layout changes)
 *   fp32               v = (x / 255 - mean[c]) / std[c], computed in double
 *                      and rounded once to fp32 (as the CPU convert does)
 *   fp16, bf16         v rounded to nearest, ties to even (IEEE RNE), as
 *                      CUDA's __float2half_rn / __float2bfloat16_rn do
 *   layout             NCHW: dst[n][c][y][x];  NHWC: dst[n][y][x][c]
 *
 * A pixel is one of 256 values, so the plan holds a table per channel of the
 * output bits for every value, computed once on the host by the functions
 * below. The kernel and the host twin (sl_dconv_run_host) only look values up
 * and lay them out, so the two agree bit for bit by construction; the GPU
 * tests check it, and check sl_f32_to_f16/bf16 (common/half.h) against the CUDA
 * intrinsics; the unit tests check the twin against augment's CPU convert.
 *
 * Thread safety: a plan is read-only after sl_dconv_init; share it freely.
 * Memory: a plan is a fixed 3 KiB struct; nothing is allocated. */
#ifndef SLUICE_LOADER_DEVICE_CONVERT_H
#define SLUICE_LOADER_DEVICE_CONVERT_H

#include <stddef.h>
#include <stdint.h>

#include "sluice.h" /* sl_dtype, sl_layout */

#ifdef __cplusplus
extern "C" {
#endif

#define SL_DCONV_MAX_CHANNELS 3

typedef struct sl_dconv {
  int dtype;      /* an sl_dtype: SL_DTYPE_U8 .. SL_DTYPE_FP32 */
  int layout;     /* an sl_layout: SL_LAYOUT_NCHW | SL_LAYOUT_NHWC */
  int channels;   /* 1..SL_DCONV_MAX_CHANNELS */
  int elem_bytes; /* 1, 2 or 4 */
  /* Output bits for pixel value v of channel c, in the low elem_bytes*8
   * bits. */
  uint32_t lut[SL_DCONV_MAX_CHANNELS][256];
} sl_dconv;

/* Fills a plan. mean/std hold `channels` values (ignored for u8). Returns 0,
 * or -1 for a bad argument (dtype/layout out of range, channels outside
 * 1..3, a std that is not a positive finite number). */
int sl_dconv_init(sl_dconv *dc, int dtype, int layout, int channels,
                  const float *mean, const float *std);

/* True when the output equals the input bytes (u8 NHWC): no kernel needed. */
int sl_dconv_is_identity(const sl_dconv *dc);

/* Bytes of n samples of h × w in and out; 0 on overflow. */
size_t sl_dconv_in_bytes(const sl_dconv *dc, size_t n, size_t h, size_t w);
size_t sl_dconv_out_bytes(const sl_dconv *dc, size_t n, size_t h, size_t w);

/* Blocks of `threads` for the kernel's grid-stride loop over `items`:
 * enough to fill a device of `sms` multiprocessors (8 blocks each, 2048
 * threads an SM at 256 a block) and no more, so each block's copy of the
 * table into shared memory is spread over many pixels; a batch of
 * 256 × 224² would otherwise launch 50176 blocks, each copying the table for
 * one pixel a thread. sms <= 0 (unknown) counts as 132 (an H100/H200). At
 * least 1; 0 items gives 0. */
unsigned sl_dconv_grid(uint64_t items, unsigned threads, int sms);

/* Batch mixing done while converting (augment/mix.h's Mixup/CutMix, as
 * the mover passes it when the device converts): sample j is mixed with
 * sample n - 1 - j. Mixup mixes the converted values in float32,
 * lambda * a + (1.0f - lambda) * b with each product and the sum rounded
 * once (no fused multiply-add), and rounds the result to the element type
 * (u8: to nearest even, clamped): the same bits as the host's mixing of a
 * batch converted by the workers (the middle sample of an odd batch is its
 * own partner and stays as it is). CutMix takes the partner's pixels in
 * rows [y0, y1) and columns [x0, x1). */
typedef struct sl_dconv_mix {
  int kind; /* 0 none, 1 Mixup, 2 CutMix */
  float lambda;
  int y0, y1, x0, x1;
} sl_dconv_mix;

/* The host twin with mixing: mix NULL or of kind 0 converts only. */
void sl_dconv_run_host_mix(const sl_dconv *dc, const sl_dconv_mix *mix,
                           const uint8_t *src, size_t n, size_t h, size_t w,
                           void *dst);

/* The host twin of the kernel: converts n samples of h × w u8 NHWC pixels at
 * src into dst (sl_dconv_out_bytes bytes). src and dst must not overlap. */
void sl_dconv_run_host(const sl_dconv *dc, const uint8_t *src, size_t n,
                       size_t h, size_t w, void *dst);

#ifdef __cplusplus
}
#endif
#endif
