/* The building blocks of an epoch's order (sampler.h says which order is
 * which): a Fisher-Yates shuffle and quasi_random's blocked shuffle, shared
 * by the single-dataset sampler and a mix of several (dmix_order.c).
 *
 * Thread safety: pure functions of their arguments. Memory: none. */
#ifndef SLUICE_LOADER_ORDER_H
#define SLUICE_LOADER_ORDER_H

#include <stdint.h>

#include "common/rng.h"

/* Shuffles v[0..n) with r (Fisher-Yates, from the end). */
void sl_order_shuffle(uint64_t *v, uint64_t n, sl_rng *r);

/* The blocks quasi_random cuts n samples into. */
typedef struct sl_order_blocks {
  uint64_t n;            /* samples */
  uint64_t q, w;         /* quasi_block, quasi_window (>= 1) */
  uint64_t nblocks;      /* ceil(n / q), or the files' count */
  uint64_t *blocks;      /* nblocks entries of scratch */
  const uint64_t *first; /* NULL, or nblocks + 1 file starts (block b is
                            samples [first[b], first[b+1])) */
} sl_order_blocks;

/* Writes the quasi_random order of b's samples for (seed, epoch) to out
 * (n entries): the blocks permuted, then each run of w consecutive blocks
 * of that permutation shuffled sample by sample. */
void sl_order_quasi(const sl_order_blocks *b, uint64_t seed, uint64_t epoch,
                    uint64_t *out);

#endif
