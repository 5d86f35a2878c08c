/* YCbCr to RGBX at the output size: JFIF's full-range BT.601 with
 * libjpeg's constants and rounding (jdcolor.c: 16-bit fixed point, the
 * chroma terms rounded before adding luma, results clamped to 0..255), so
 * a pixel converted here is the byte libjpeg's C converter gives for the
 * same Y, Cb, Cr. AVX2 where the CPU has it (the same integer arithmetic:
 * the same bytes).
 *
 * Thread safety: pure functions. Memory: none. */
#ifndef SLUICE_AUGMENT_YCC_H
#define SLUICE_AUGMENT_YCC_H

#include <stddef.h>
#include <stdint.h>

/* n pixels of planes y, cb, cr to RGBX (X = 255) at out (4n bytes). */
void sl_ycc_to_rgbx(const uint8_t *y, const uint8_t *cb, const uint8_t *cr,
                    size_t n, uint8_t *out);
/* The plain C version (for the test that the AVX2 one matches it). */
void sl_ycc_to_rgbx_c(const uint8_t *y, const uint8_t *cb, const uint8_t *cr,
                      size_t n, uint8_t *out);
/* n gray pixels to RGBX (R = G = B = y, X = 255). */
void sl_gray_to_rgbx(const uint8_t *y, size_t n, uint8_t *out);

#endif
