/* The last step of the pipeline: resized 8-bit pixels (RGBX or gray) to
 * the caller's dtype and layout, with the horizontal flip and per-channel
 * normalisation folded into 256-entry tables built once per pipeline. */
#ifndef SLUICE_AUGMENT_CONVERT_H
#define SLUICE_AUGMENT_CONVERT_H

#include <stdint.h>

#include "augment/pipeline.h"
#include "augment/recipe.h"
#include "common/half.h"

typedef struct sl_convert_tables {
  float f32[3][256];    /* (v/255 - mean[c]) / std[c] */
  uint16_t h16[3][256]; /* the same as fp16 or bf16 bits */
} sl_convert_tables;

void sl_convert_tables_init(sl_convert_tables *t, const sl_aug_params *p);

/* src: h rows of w pixels of src_ch bytes, tightly packed: 4 (RGBX) for
 * 3-channel output, 1 (gray) for 1-channel output. Writes
 * sl_aug_sample_bytes(p, h, w) bytes to dst. */
void sl_convert_out(const sl_convert_tables *t, const sl_aug_params *p,
                    const uint8_t *src, int src_ch, int h, int w, int flip,
                    void *dst);

/* RandomErasing on a converted sample (sl_aug_sample_bytes(p, h, w) bytes
 * at dst): the box's elements set to 0 in normalized units, or with
 * random, to N(0, 1) draws from rng in torchvision's order (channel, row,
 * column). u8 samples are not normalized, so they get the byte that
 * normalizes to the value: round((v * std + mean) * 255), clamped. */
void sl_convert_erase(const sl_aug_params *p, void *dst, int h, int w,
                      const sl_erase_box *box, int random, sl_rng *rng);

#endif
