/* Hashes of the settings that decide what a batch holds, for the state
 * blob (loader_state.c). Pure functions of the settings: the config is not
 * read. Thread safety: none needed (no state). */
#ifndef SLUICE_LOADER_FINGERPRINT_H
#define SLUICE_LOADER_FINGERPRINT_H

#include <stdint.h>

#include "loader/settings.h"

/* The schedule's hash (only the resolution.* values its kind uses, or
 * resolution.eval in eval) into *schedule_fp, and the augmentation's (crop
 * and its parameters, flip, mean, std, filter, the batch's box_capacity
 * when boxes travel, and the recipe's keys when one of its ops is on;
 * dtype and layout are kept apart) into *augment_fp. */
void sl_settings_fingerprints(const sl_settings *s, uint32_t box_capacity,
                              uint64_t *schedule_fp, uint64_t *augment_fp);

#endif
