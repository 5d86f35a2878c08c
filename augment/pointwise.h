/* Per-channel float maps over 8-bit pixels, the loops behind the colour
 * ops whose torchvision formula is a float32 expression of one byte,
 * truncated to uint8 (_blend with a constant, autocontrast). Each byte v of
 * channel c becomes trunc(clamp(f(v), 0, 255)) with the float32 operations
 * of the scalar formula in the same order, so the SSE2 and AVX2 paths give
 * the scalar loop's bytes:
 *   SL_MAP_MUL_ADD  f(v) = a[c] * v + b[c]
 *   SL_MAP_SUB_MUL  f(v) = (v - b[c]) * a[c]
 * Pixels are RGBX (ch 4: c is the byte's index in its pixel, X included:
 * give it a = 1, b = 0 to keep it) or gray (ch 1: channel 0 for every
 * byte). Beside them, the two-image _blend (sharpness) and the luma sum
 * (contrast's mean), under the same rule. Thread safety: none needed; no
 * state, nothing allocated. */
#ifndef SLUICE_AUGMENT_POINTWISE_H
#define SLUICE_AUGMENT_POINTWISE_H

#include <stddef.h>
#include <stdint.h>

typedef enum sl_map_form { SL_MAP_MUL_ADD, SL_MAP_SUB_MUL } sl_map_form;

/* Maps `pixels` pixels of ch bytes at p in place. */
void sl_map_channels(uint8_t *p, size_t pixels, int ch, sl_map_form form,
                     const float a[4], const float b[4]);

/* torchvision's _blend(img1, img2, ratio) on n bytes: p[i] becomes
 * trunc(clamp(a * p[i] + o * q[i], 0, 255)) in float32 (a = ratio,
 * o = 1 - ratio as floats). */
void sl_blend_bytes(uint8_t *p, const uint8_t *q, size_t n, float a, float o);

/* The sum over `pixels` RGBX pixels of rgb_to_grayscale's byte,
 * (uint8)(0.2989f r + 0.587f g + 0.114f b) in float32 (contrast's mean). */
uint64_t sl_luma_sum(const uint8_t *p, size_t pixels);

/* The scalar formula: one byte of a channel with parameters a, b. */
static inline uint8_t sl_map_one(sl_map_form form, float a, float b,
                                 uint8_t v) {
  float f = form == SL_MAP_MUL_ADD ? a * (float)v + b : ((float)v - b) * a;
  return f <= 0.0f ? 0 : f >= 255.0f ? 255 : (uint8_t)f;
}

/* rgb_to_grayscale's byte for one RGBX pixel: (0.2989 r + 0.587 g + 0.114
 * b).to(uint8) in float32, as torch computes it. */
static inline uint8_t sl_luma_one(const uint8_t *px) {
  return (uint8_t)(0.2989f * (float)px[0] + 0.587f * (float)px[1] +
                   0.114f * (float)px[2]);
}

#endif
