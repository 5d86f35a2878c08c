// The device twin of sl_dconv_run_host (loader/device_convert.c): a table
// lookup per element plus the layout change, so both agree bit for bit.
#include "loader/cuda/convert.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

namespace {

constexpr int kThreads = 256;
constexpr int kLut = SL_DCONV_MAX_CHANNELS * 256;

// The plan's tables, by value (3 KiB of kernel parameters, which live in
// the constant bank), narrowed to the element type. Each block copies them
// to shared memory once; the grid is capped near SMs × 8 (sl_dconv_grid), so
// a block converts many pixels per copy.
template <typename T> struct Lut { T v[kLut]; };

// One thread per pixel: reads its `channels` bytes, writes one element per
// channel (NCHW: to each plane; NHWC: side by side). The table is copied to
// shared memory first: lanes look up different entries, which the constant
// bank would serialise.
template <typename T>
__global__ void convert_kernel(Lut<T> lut, int channels, int nchw,
                               const uint8_t *__restrict__ src,
                               T *__restrict__ dst, uint64_t hw,
                               uint64_t pixels) {
  __shared__ T s_lut[kLut];
  for (int i = threadIdx.x; i < channels * 256; i += blockDim.x)
    s_lut[i] = lut.v[i];
  __syncthreads();
  const uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
  for (uint64_t p = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; p < pixels;
       p += stride) {
    const uint8_t *in = src + p * channels;
    if (nchw) {
      const uint64_t sample = p / hw, pix = p - sample * hw;
      T *out = dst + sample * hw * channels + pix;
      for (int c = 0; c < channels; c++)
        out[(uint64_t)c * hw] = s_lut[c * 256 + in[c]];
    } else {
      T *out = dst + p * channels;
      for (int c = 0; c < channels; c++)
        out[c] = s_lut[c * 256 + in[c]];
    }
  }
}

// The current device's multiprocessors, or 0 when the runtime cannot say
// (sl_dconv_grid then assumes an H100's). A cached attribute: cheap.
int multiprocessors() {
  int dev = 0, sms = 0;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) !=
          cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return sms;
}

template <typename T>
cudaError_t launch(const sl_dconv *dc, const void *d_src, uint64_t hw,
                   uint64_t pixels, void *d_dst, cudaStream_t s) {
  Lut<T> lut;
  for (int c = 0; c < SL_DCONV_MAX_CHANNELS; c++)
    for (int v = 0; v < 256; v++)
      lut.v[c * 256 + v] = (T)dc->lut[c][v];
  // The grid-stride loop covers what the capped grid does not.
  const unsigned blocks = sl_dconv_grid(pixels, kThreads, multiprocessors());
  convert_kernel<T><<<blocks, kThreads, 0, s>>>(
      lut, dc->channels, dc->layout == SL_LAYOUT_NCHW,
      static_cast<const uint8_t *>(d_src), static_cast<T *>(d_dst), hw, pixels);
  return cudaGetLastError();
}

__global__ void round_kernel(const float *in, uint64_t count, uint16_t *f16,
                             uint16_t *bf16) {
  const uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
  for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    f16[i] = __half_as_ushort(__float2half_rn(in[i]));
    bf16[i] = __bfloat16_as_ushort(__float2bfloat16_rn(in[i]));
  }
}

} // namespace

extern "C" cudaError_t sl_dconv_launch(const sl_dconv *dc, const void *d_src,
                                       size_t n, size_t h, size_t w,
                                       void *d_dst, cudaStream_t s) {
  const uint64_t hw = (uint64_t)h * w, pixels = (uint64_t)n * hw;
  if (pixels == 0)
    return cudaSuccess;
  if (dc->channels < 1 || dc->channels > SL_DCONV_MAX_CHANNELS)
    return cudaErrorInvalidValue;
  switch (dc->elem_bytes) {
  case 1:
    return launch<uint8_t>(dc, d_src, hw, pixels, d_dst, s);
  case 2:
    return launch<uint16_t>(dc, d_src, hw, pixels, d_dst, s);
  case 4:
    return launch<uint32_t>(dc, d_src, hw, pixels, d_dst, s);
  default:
    return cudaErrorInvalidValue;
  }
}

extern "C" cudaError_t sl_dconv_round_launch(const float *d_in, size_t count,
                                             uint16_t *d_f16, uint16_t *d_bf16,
                                             cudaStream_t s) {
  if (count == 0)
    return cudaSuccess;
  round_kernel<<<sl_dconv_grid(count, kThreads, multiprocessors()), kThreads, 0,
                 s>>>(d_in, count, d_f16, d_bf16);
  return cudaGetLastError();
}
