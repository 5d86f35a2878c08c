#include "loader/device_convert.h"

#include <math.h>
#include <string.h>

#include "common/dtype.h"
#include "common/half.h"
#include "common/mem.h"

static uint32_t f32_bits(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  return x;
}

int sl_dconv_init(sl_dconv *dc, int dtype, int layout, int channels,
                  const float *mean, const float *std) {
  if (!dc || dtype < SL_DTYPE_U8 || dtype > SL_DTYPE_FP32 ||
      (layout != SL_LAYOUT_NCHW && layout != SL_LAYOUT_NHWC) || channels < 1 ||
      channels > SL_DCONV_MAX_CHANNELS)
    return -1;
  if (dtype != SL_DTYPE_U8) {
    if (!mean || !std)
      return -1;
    for (int c = 0; c < channels; c++)
      if (!(std[c] > 0.0f) || !isfinite(std[c]) || !isfinite(mean[c]))
        return -1;
  }
  memset(dc, 0, sizeof *dc);
  dc->dtype = dtype;
  dc->layout = layout;
  dc->channels = channels;
  dc->elem_bytes = (int)sl_dtype_bytes((sl_dtype)dtype);
  for (int c = 0; c < channels; c++) {
    for (int v = 0; v < 256; v++) {
      if (dtype == SL_DTYPE_U8) {
        dc->lut[c][v] = (uint32_t)v;
        continue;
      }
      /* In double, rounded once to float: as augment/convert.c does. */
      float x = (float)(((double)v / 255.0 - (double)mean[c]) / (double)std[c]);
      dc->lut[c][v] = dtype == SL_DTYPE_FP32   ? f32_bits(x)
                      : dtype == SL_DTYPE_FP16 ? sl_f32_to_f16(x)
                                               : sl_f32_to_bf16(x);
    }
  }
  return 0;
}

int sl_dconv_is_identity(const sl_dconv *dc) {
  return dc->dtype == SL_DTYPE_U8 &&
         (dc->layout == SL_LAYOUT_NHWC || dc->channels == 1);
}

size_t sl_dconv_in_bytes(const sl_dconv *dc, size_t n, size_t h, size_t w) {
  size_t a, b, c;
  if (!sl_mul_size(n, h, &a) || !sl_mul_size(a, w, &b) ||
      !sl_mul_size(b, (size_t)dc->channels, &c))
    return 0;
  return c;
}

size_t sl_dconv_out_bytes(const sl_dconv *dc, size_t n, size_t h, size_t w) {
  size_t in = sl_dconv_in_bytes(dc, n, h, w), out;
  if (!sl_mul_size(in, (size_t)dc->elem_bytes, &out))
    return 0;
  return out;
}

unsigned sl_dconv_grid(uint64_t items, unsigned threads, int sms) {
  if (items == 0 || threads == 0)
    return 0;
  uint64_t blocks = (items + threads - 1) / threads;
  uint64_t cap = (uint64_t)(sms > 0 ? sms : 132) * 8u;
  return (unsigned)(blocks < cap ? blocks : cap);
}

static void put(void *dst, size_t i, int elem_bytes, uint32_t bits) {
  if (elem_bytes == 1)
    ((uint8_t *)dst)[i] = (uint8_t)bits;
  else if (elem_bytes == 2)
    ((uint16_t *)dst)[i] = (uint16_t)bits;
  else
    ((uint32_t *)dst)[i] = bits;
}

void sl_dconv_run_host(const sl_dconv *dc, const uint8_t *src, size_t n,
                       size_t h, size_t w, void *dst) {
  sl_dconv_run_host_mix(dc, NULL, src, n, h, w, dst);
}

/* An element's bits as float32 and back (the kernel's __half2float and
 * __float2half_rn, ...). */
static float bits_value(const sl_dconv *dc, uint32_t bits) {
  float f;
  switch (dc->dtype) {
  case SL_DTYPE_U8:
    return (float)bits;
  case SL_DTYPE_FP16:
    return sl_f16_to_f32((uint16_t)bits);
  case SL_DTYPE_BF16:
    return sl_bf16_to_f32((uint16_t)bits);
  default:
    memcpy(&f, &bits, sizeof f);
    return f;
  }
}

static uint32_t value_bits(const sl_dconv *dc, float v) {
  uint32_t bits;
  switch (dc->dtype) {
  case SL_DTYPE_U8: {
    float r = nearbyintf(v);
    return (uint32_t)(r < 0 ? 0 : r > 255 ? 255 : r);
  }
  case SL_DTYPE_FP16:
    return sl_f32_to_f16(v);
  case SL_DTYPE_BF16:
    return sl_f32_to_bf16(v);
  default:
    memcpy(&bits, &v, sizeof bits);
    return bits;
  }
}

void sl_dconv_run_host_mix(const sl_dconv *dc, const sl_dconv_mix *mix,
                           const uint8_t *src, size_t n, size_t h, size_t w,
                           void *dst) {
  const size_t C = (size_t)dc->channels, hw = h * w,
               eb = (size_t)dc->elem_bytes;
  int kind = mix ? mix->kind : 0;
  float lam = mix ? mix->lambda : 1.0f, rest = 1.0f - lam;
  for (size_t s = 0; s < n; s++) {
    const uint8_t *in = src + s * hw * C;
    const uint8_t *partner = src + (n - 1 - s) * hw * C;
    size_t base = s * hw * C;
    for (size_t p = 0; p < hw; p++) {
      size_t y = p / w, x = p - y * w;
      const uint8_t *px = in + p * C;
      if (kind == 2 && (int)y >= mix->y0 && (int)y < mix->y1 &&
          (int)x >= mix->x0 && (int)x < mix->x1)
        px = partner + p * C;
      for (size_t c = 0; c < C; c++) {
        size_t o =
            dc->layout == SL_LAYOUT_NHWC ? base + p * C + c : base + c * hw + p;
        uint32_t bits = dc->lut[c][px[c]];
        if (kind == 1 && s != n - 1 - s) { /* a middle one is unmixed */
          float a = bits_value(dc, bits),
                b = bits_value(dc, dc->lut[c][partner[p * C + c]]);
          bits = value_bits(dc, lam * a + rest * b);
        }
        put(dst, o, (int)eb, bits);
      }
    }
  }
}
