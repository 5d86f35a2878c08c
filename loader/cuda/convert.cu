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

// An element's bits as float32 and back, as the host twin's bits_value
// and value_bits (loader/device_convert.c).
__device__ float bits_value(int dtype, uint32_t bits) {
  switch (dtype) {
  case SL_DTYPE_U8:
    return (float)bits;
  case SL_DTYPE_FP16:
    return __half2float(__ushort_as_half((unsigned short)bits));
  case SL_DTYPE_BF16:
    return __bfloat162float(__ushort_as_bfloat16((unsigned short)bits));
  default:
    return __uint_as_float(bits);
  }
}

__device__ uint32_t value_bits(int dtype, float v) {
  switch (dtype) {
  case SL_DTYPE_U8: {
    float r = rintf(v);
    return (uint32_t)(r < 0.0f ? 0.0f : r > 255.0f ? 255.0f : r);
  }
  case SL_DTYPE_FP16:
    return __half_as_ushort(__float2half_rn(v));
  case SL_DTYPE_BF16:
    return __bfloat16_as_ushort(__float2bfloat16_rn(v));
  default:
    return __float_as_uint(v);
  }
}

// The batch mixing of sl_dconv_mix, for the kernel.
struct Mix {
  int kind, dtype;
  float lambda;
  int y0, y1, x0, x1;
  uint64_t n, w;
};

// One thread per pixel: reads its `channels` bytes, writes one element per
// channel (NCHW: to each plane; NHWC: side by side). The table is copied to
// shared memory first: lanes look up different entries, which the constant
// bank would serialise. With mixing, CutMix reads the partner's pixel in
// the box; Mixup mixes the two values with the products and the sum each
// rounded once (__fmul_rn, __fadd_rn: no fused multiply-add), as the host.
template <typename T>
__global__ void convert_kernel(Lut<T> lut, int channels, int nchw,
                               const uint8_t *__restrict__ src,
                               T *__restrict__ dst, uint64_t hw,
                               uint64_t pixels, Mix mix) {
  __shared__ T s_lut[kLut];
  for (int i = threadIdx.x; i < channels * 256; i += blockDim.x)
    s_lut[i] = lut.v[i];
  __syncthreads();
  const float rest = 1.0f - mix.lambda;
  const uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
  for (uint64_t p = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; p < pixels;
       p += stride) {
    const uint64_t sample = p / hw, pix = p - sample * hw;
    const uint8_t *in = src + p * channels;
    const uint8_t *other = src + ((mix.n - 1 - sample) * hw + pix) * channels;
    if (mix.kind == 2) {
      const int y = (int)(pix / mix.w), x = (int)(pix - (uint64_t)y * mix.w);
      if (y >= mix.y0 && y < mix.y1 && x >= mix.x0 && x < mix.x1)
        in = other;
    }
    T *out = nchw ? dst + sample * hw * channels + pix : dst + p * channels;
    const uint64_t step = nchw ? hw : 1;
    for (int c = 0; c < channels; c++) {
      T v = s_lut[c * 256 + in[c]];
      if (mix.kind == 1 && sample != mix.n - 1 - sample) { // middle: as is
        float a = bits_value(mix.dtype, (uint32_t)v),
              b = bits_value(mix.dtype, (uint32_t)s_lut[c * 256 + other[c]]);
        v = (T)value_bits(
            mix.dtype, __fadd_rn(__fmul_rn(mix.lambda, a), __fmul_rn(rest, b)));
      }
      out[(uint64_t)c * step] = v;
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
                   uint64_t pixels, void *d_dst, cudaStream_t s, Mix mix) {
  Lut<T> lut;
  for (int c = 0; c < SL_DCONV_MAX_CHANNELS; c++)
    for (int v = 0; v < 256; v++)
      lut.v[c * 256 + v] = (T)dc->lut[c][v];
  // The grid-stride loop covers what the capped grid does not.
  const unsigned blocks = sl_dconv_grid(pixels, kThreads, multiprocessors());
  convert_kernel<T><<<blocks, kThreads, 0, s>>>(
      lut, dc->channels, dc->layout == SL_LAYOUT_NCHW,
      static_cast<const uint8_t *>(d_src), static_cast<T *>(d_dst), hw, pixels,
      mix);
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

extern "C" cudaError_t sl_dconv_launch_mix(const sl_dconv *dc,
                                           const sl_dconv_mix *mix,
                                           const void *d_src, size_t n,
                                           size_t h, size_t w, void *d_dst,
                                           cudaStream_t s) {
  const uint64_t hw = (uint64_t)h * w, pixels = (uint64_t)n * hw;
  if (pixels == 0)
    return cudaSuccess;
  if (dc->channels < 1 || dc->channels > SL_DCONV_MAX_CHANNELS)
    return cudaErrorInvalidValue;
  Mix m = {0, dc->dtype, 1.0f, 0, 0, 0, 0, (uint64_t)n, (uint64_t)w};
  if (mix && (mix->kind == 1 || mix->kind == 2)) {
    m.kind = mix->kind, m.lambda = mix->lambda;
    m.y0 = mix->y0, m.y1 = mix->y1, m.x0 = mix->x0, m.x1 = mix->x1;
  }
  switch (dc->elem_bytes) {
  case 1:
    return launch<uint8_t>(dc, d_src, hw, pixels, d_dst, s, m);
  case 2:
    return launch<uint16_t>(dc, d_src, hw, pixels, d_dst, s, m);
  case 4:
    return launch<uint32_t>(dc, d_src, hw, pixels, d_dst, s, m);
  default:
    return cudaErrorInvalidValue;
  }
}

extern "C" cudaError_t sl_dconv_launch(const sl_dconv *dc, const void *d_src,
                                       size_t n, size_t h, size_t w,
                                       void *d_dst, cudaStream_t s) {
  return sl_dconv_launch_mix(dc, NULL, d_src, n, h, w, d_dst, s);
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
