/* The progressive resolution schedule: which resolution each epoch trains at.
 *
 *   constant  resolution.max every epoch.
 *   linear    FFCV's ImageNet recipe: resolution.min while epoch <=
 *             start_epoch, resolution.max once epoch >= end_epoch, between
 *             them the linear interpolation rounded to the nearest multiple
 *             of resolution.multiple (and clamped to [min, max]).
 *   steps     "epoch:res" pairs; an epoch takes the resolution of the last
 *             pair whose epoch is <= it (before the first pair: the first).
 *   eval      (loader.mode = eval) resolution.eval every epoch, center crop.
 *
 * All buffers are sized for sl_schedule_max, so no epoch ever needs more.
 *
 * Filled from the config by sl_settings_read (loader/settings.h).
 *
 * Thread safety: a schedule is a plain value, read-only after init.
 * Memory: none beyond the struct. */
#ifndef SLUICE_LOADER_SCHEDULE_H
#define SLUICE_LOADER_SCHEDULE_H

#include <stdint.h>

#include "loader/config.h"

typedef struct sl_schedule {
  sl_schedule_kind kind;
  bool eval;
  int min, max, eval_res, multiple;
  int64_t start_epoch, end_epoch;
  sl_steps steps;
} sl_schedule;

/* Resolution (square side, pixels) of an epoch. */
int sl_schedule_res(const sl_schedule *s, uint64_t epoch);
/* The largest resolution any epoch can take. */
int sl_schedule_max(const sl_schedule *s);

#endif
