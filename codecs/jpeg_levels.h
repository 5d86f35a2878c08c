/* Resolution levels of one JPEG (the codec-7 record of formats/core/levels.h):
 * the image as given (level 0) plus smaller copies, each made from the
 * full image with an exact area average (level pixel p is the mean of the
 * level-0 pixels under [p * W0 / Wk, (p + 1) * W0 / Wk), fractions of
 * pixels weighted by their share, so a crop maps to a level exactly by
 * Wk / W0 and Hk / H0) and encoded as a sequential JPEG in the restart
 * layout (codecs/jpeg_layout.h: optimized Huffman tables, 4:2:0 for
 * colour).
 *
 * Thread safety: pure functions; every call allocates what it needs and
 * frees it before returning. Memory: the decoded image (W0 × H0 × C bytes)
 * plus 4 × Wk × H0 × C bytes of the horizontal pass, and libjpeg's pools. */
#ifndef SLUICE_CODECS_JPEG_LEVELS_H
#define SLUICE_CODECS_JPEG_LEVELS_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

/* A level is stored only when its shorter side is at least this many
 * pixels: smaller ones cover no crop a training resolution would take. */
#define SL_LEVEL_MIN_SIDE 64

/* The size of a side of n pixels at level scale m/8 (m = 1..7): n * m / 8
 * rounded to the nearest pixel (at least 1). */
static inline int sl_level_side(int n, int m) {
  int s = (int)(((int64_t)n * m + 4) / 8);
  return s < 1 ? 1 : s;
}

/* Builds the level record of the restart-layout JPEG jpeg[0..len): level 0
 * is jpeg itself; then one level for each bit m - 1 set in scales (m/8,
 * m = 1..7, largest first, at most 3), skipping a level whose shorter side
 * is under SL_LEVEL_MIN_SIDE. Levels are encoded at quality (1..100).
 * *out (malloc'd, free with free()) and *out_len get the record; when no
 * level is made (all too small, a CMYK image, scales 0) *out is NULL and
 * the JPEG is to be stored as it is. Errors: SL_EINVAL (bad scales or
 * quality), SL_EDECODE (the JPEG does not decode: libjpeg's message),
 * SL_ETOOBIG (over max_pixels), SL_ENOMEM. */
sl_status sl_jpeg_levels_make(const uint8_t *jpeg, size_t len, unsigned scales,
                              int quality, uint64_t max_pixels, uint8_t **out,
                              size_t *out_len, sl_err *err);

#endif
