/* See common/half.h. */
#include "common/half.h"

#include <math.h>
#include <string.h>

static uint32_t f32_bits(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  return x;
}

static float bits_f32(uint32_t x) {
  float f;
  memcpy(&f, &x, sizeof f);
  return f;
}

uint16_t sl_f32_to_f16(float f) {
  uint32_t x = f32_bits(f);
  uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
  uint32_t a = x & 0x7fffffffu;
  if (a > 0x7f800000u) /* NaN: keep the top payload bits, force quiet */
    return (uint16_t)(sign | 0x7e00u | ((a >> 13) & 0x3ffu));
  if (a >= 0x477ff000u) /* ≥ 65520 rounds past 65504: infinity */
    return (uint16_t)(sign | 0x7c00u);
  if (a >= 0x38800000u) { /* normal: rebias 127 → 15, round 13 bits away */
    uint32_t r = a - 0x38000000u;
    r += 0xfffu + ((r >> 13) & 1u);
    return (uint16_t)(sign | (r >> 13));
  }
  if (a <= 0x33000000u) /* ≤ 2^-25: rounds (ties to even) to zero */
    return sign;
  /* Subnormal half: value = m × 2^-24 with m = mant × 2^(e - 126). */
  uint32_t e = a >> 23, mant = (a & 0x7fffffu) | 0x800000u;
  uint32_t shift = 126u - e; /* 14..24 */
  uint32_t m = mant >> shift, rem = mant & ((1u << shift) - 1u);
  uint32_t half = 1u << (shift - 1u);
  if (rem > half || (rem == half && (m & 1u)))
    m++;
  return (uint16_t)(sign | m);
}

uint16_t sl_f32_to_bf16(float f) {
  uint32_t x = f32_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return (uint16_t)((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return (uint16_t)(x >> 16);
}

float sl_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0x1f)
    return bits_f32(sign | 0x7f800000u | (m << 13));
  if (e == 0) { /* zero or subnormal: m × 2^-24, exact in binary32 */
    float v = ldexpf((float)m, -24);
    return sign ? -v : v;
  }
  return bits_f32(sign | ((e + 112u) << 23) | (m << 13));
}

float sl_bf16_to_f32(uint16_t b) {
  return bits_f32((uint32_t)b << 16);
}
