/* torchvision's ImageNet training transform as sl_aug_params: the reference
 * setting of the augment tests and of bench_decode. layout and dtype are the
 * caller's to set. */
#ifndef SLUICE_TESTS_SUPPORT_AUG_PARAMS_H
#define SLUICE_TESTS_SUPPORT_AUG_PARAMS_H

#include "augment/pipeline.h"

static inline sl_aug_params sl_test_aug_params(sl_layout layout) {
  sl_aug_params p = {.crop = SL_CROP_RANDOM_RESIZED,
                     .scale = {0.08, 1.0},
                     .ratio = {3.0 / 4.0, 4.0 / 3.0},
                     .flip = 0.5,
                     .center_ratio = 0.875,
                     .channels = 3,
                     .mean = {0.485f, 0.456f, 0.406f},
                     .std = {0.229f, 0.224f, 0.225f},
                     .dtype = SL_DTYPE_U8,
                     .layout = layout,
                     .filter = SL_FILTER_BOX,
                     .max_pixels = 100000000};
  return p;
}

#endif
