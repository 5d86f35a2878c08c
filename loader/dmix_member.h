/* One dataset of a weighted mix (dataset.mix, dataset.weights), as the
 * sampler deals it: the mixed loader's sample indices are the members'
 * indices one after the other (member k's sample i is index
 * count_0 + ... + count_{k-1} + i). */
#ifndef SLUICE_LOADER_DMIX_MEMBER_H
#define SLUICE_LOADER_DMIX_MEMBER_H

#include <stdint.h>

/* At most this many datasets in one mix (batch.sources fit a byte). */
#define SL_DMIX_MAX 16

typedef struct sl_dmix_member {
  uint64_t count; /* its samples (>= 1) */
  double weight;  /* > 0: its share of each epoch is weight / sum */
  /* quasi_random: its blocks are whole chunks of block_samples (0 or 1:
   * none), or its files when file_first (nfiles starts, rising, the first
   * 0) is given, as sl_sampler_config's are for one dataset. */
  uint64_t block_samples;
  const uint64_t *file_first;
  uint64_t nfiles;
} sl_dmix_member;

#endif
