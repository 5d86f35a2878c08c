/* Hashes of the settings that decide what a batch holds, for the state
 * blob (loader_state.c). Pure functions of the settings: the config is not
 * read. Thread safety: none needed (no state). */
#ifndef SLUICE_LOADER_FINGERPRINT_H
#define SLUICE_LOADER_FINGERPRINT_H

#include <stdint.h>

#include "loader/settings.h"

/* The augmentation's keys in groups (crop, flip, normalization, filter,
 * auto policy, colour ops, erasing, mixing), each with a 16-bit hash (tag)
 * in the state blob, so that a refused resume names the group that changed
 * (loader_state.c names them). */
enum {
  SL_AUGMENT_GROUP_CROP,
  SL_AUGMENT_GROUP_FLIP,
  SL_AUGMENT_GROUP_NORM,
  SL_AUGMENT_GROUP_FILTER,
  SL_AUGMENT_GROUP_AUTO,
  SL_AUGMENT_GROUP_COLOR,
  SL_AUGMENT_GROUP_ERASING,
  SL_AUGMENT_GROUP_MIX,
  SL_AUGMENT_GROUPS
};

/* The schedule's hash (only the resolution.* values its kind uses, or
 * resolution.eval in eval) into *schedule_fp, and the augmentation's (crop
 * and its parameters, flip, mean, std, filter, the batch's box_capacity
 * when boxes travel, and the recipe's keys when one of its ops is on;
 * dtype and layout are kept apart) into *augment_fp; and each augmentation
 * group's tag (a 16-bit hash of what the group adds to *augment_fp; the
 * recipe's groups from their keys whether or not an op is on, none in
 * eval) into tags. */
void sl_settings_fingerprints(const sl_settings *s, uint32_t box_capacity,
                              uint64_t *schedule_fp, uint64_t *augment_fp,
                              uint16_t tags[SL_AUGMENT_GROUPS]);

#endif
