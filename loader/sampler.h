/* The sampler: which dataset samples this rank reads in an epoch, in order.
 *
 * An epoch's order is a pure function of (seed, epoch, rank, world_size):
 *
 *   1. A global order of all N samples, from (seed, epoch) only:
 *        sequential    file order;
 *        random        a full permutation (Fisher-Yates);
 *        quasi_random  the file is cut into blocks of quasi_block
 *                      neighbouring samples (a dataset of many files: a
 *                      block per file, so a run reads whole files, each
 *                      in sequence); the blocks are permuted, then
 *                      each run of quasi_window consecutive blocks of that
 *                      permutation is shuffled sample by sample.
 *      Several datasets mixed by weight: dmix_order.h's order.
 *   2. Padding or dropping so every rank gets the same whole number of
 *      batches: per-rank samples P = floor(N / (W*B)) * B with drop_last,
 *      P = ceil(N / (W*B)) * B otherwise, where the global positions
 *      N..W*P-1 repeat the order from its start (position p reads p mod N).
 *   3. Rank r takes the contiguous positions [r*P, (r+1)*P).
 *
 * Elastic resume (sl_sampler_set_rest): a run of W ranks that each read
 * c batches of an epoch left, in the global order, the positions
 * [r*P + c*B, (r+1)*P) of each old rank r that are below N (the rest; its
 * length M). A loader resumed on W' ranks (W' != W) deals the rest, kept
 * in the old order, as steps 2 and 3 deal an epoch: P' = ceil(M / (W'*B))
 * * B per rank (floor with drop_last: the last M mod (W'*B) samples of
 * the rest, the old last ranks' tails, are dropped), rank r' taking rest
 * positions [r'*P', (r'+1)*P'), rest positions from M on repeating the
 * rest from its start. The batch size B stays the per-rank one. A rest
 * resumed again on another world size is dealt the same way, one level
 * deeper: the rest of the rest. Later epochs are dealt whole again
 * (sl_sampler_set_epoch).
 *
 * So in an epoch the ranks' samples are disjoint (apart from padding
 * repeats), and with padding they cover the dataset; this holds for every
 * order, since sharding is applied to the global order. Padding holds the
 * global positions from N on, so it comes last: in the last batches of the
 * last ranks, after every real sample of its batch. A batch's valid count
 * (its positions below N) marks it, and the ranks' valid samples are then
 * each sample exactly once: what evaluation (which never drops) needs.
 *
 * Working set of quasi_random: a run of quasi_window blocks holds at most
 * quasi_block * quasi_window samples from quasi_window contiguous regions of
 * the file. The loader reads positions in order, with at most
 * staging * batch_size positions in flight, so the samples being read at any
 * moment come from at most ceil(staging*B / (quasi_block*quasi_window)) + 1
 * such runs: a dataset larger than RAM is read in bounded, local pieces.
 *
 * Thread safety: sl_sampler_set_epoch must not run concurrently with
 * anything; sl_sampler_at may then be called from any number of threads.
 * Memory: 8 bytes per sample plus 8 bytes per quasi block, allocated at
 * create (a mix: dmix_order.h's too); set_epoch allocates nothing. */
#ifndef SLUICE_LOADER_SAMPLER_H
#define SLUICE_LOADER_SAMPLER_H

#include <stdbool.h>
#include <stdint.h>

#include "common/error.h"
#include "loader/config.h"
#include "loader/dmix_member.h"

typedef struct sl_sampler_config {
  uint64_t count;      /* samples in the dataset */
  uint64_t batch_size; /* >= 1 */
  uint64_t rank, world_size;
  sl_order order;
  uint64_t seed;
  bool drop_last;
  uint64_t quasi_block, quasi_window; /* >= 1 */
  /* quasi_random over a dataset of many files of varying sample counts
   * (WebDataset shards): NULL, or the first sample of each of nfiles
   * blocks (rising, the first 0), block b being samples
   * [file_first[b], file_first[b+1]) and the last running to count; the
   * blocks are then these instead of quasi_block's (copied at create). */
  const uint64_t *file_first;
  uint64_t nfiles;
  /* Several datasets mixed by weight (dmix_order.h): nmembers >= 1
   * members whose counts sum to count (copied at create; quasi_block,
   * file_first and nfiles above are then unused: each member has its own),
   * each_once for evaluation (every sample once an epoch, weights unused).
   * 0: one dataset. */
  uint32_t nmembers;
  const sl_dmix_member *members;
  bool each_once;
} sl_sampler_config;

typedef struct sl_sampler sl_sampler;

/* Batches per rank per epoch for c, without a sampler: what create checks
 * and sl_sampler_batches then says. Errors as create's, but SL_ENOMEM. */
sl_status sl_sampler_batch_count(const sl_sampler_config *c, uint64_t *nb,
                                 sl_err *err);
/* Errors: SL_EINVAL (bad values), SL_ECONFIG (drop_last leaves no whole
 * batch for a rank: the message gives the numbers), SL_ENOMEM. */
sl_status sl_sampler_create(sl_sampler **out, const sl_sampler_config *c,
                            sl_err *err);
void sl_sampler_destroy(sl_sampler *s);

/* Batches per rank per epoch (the same for every rank). */
uint64_t sl_sampler_batches(const sl_sampler *s);
/* Real samples (global positions below N) in this rank's batch `batch`:
 * its first ones; batch_size but in the last batches without drop_last, 0
 * for a batch of padding only. Thread-safe (reads only settings). */
uint64_t sl_sampler_valid(const sl_sampler *s, uint64_t batch);
/* Computes the order of an epoch: O(N). Deals it whole (undoes
 * sl_sampler_set_rest). */
void sl_sampler_set_epoch(sl_sampler *s, uint64_t epoch);
/* An earlier deal of an epoch resumed on another world size: its ranks
 * and the batches each had read when the state was saved. */
typedef struct sl_sampler_deal {
  uint64_t world, consumed;
} sl_sampler_deal;
/* Most earlier deals of one epoch (resumes on another world size). */
#define SL_SAMPLER_DEALS_MAX 8
/* Deals only the rest of the epoch set last: the whole epoch was dealt on
 * past[0].world ranks of the same count, batch size and drop_last, which
 * read past[0].consumed batches each; the rest of it (see the top) on
 * past[1].world ranks, which read past[1].consumed; and so on: what the
 * last left is dealt on this sampler's world size, as the top says.
 * sl_sampler_batches and sl_sampler_valid then describe that deal
 * (batches may be 0: nothing left, or all of it dropped). O(npast),
 * allocates nothing. Errors: SL_EINVAL (more than SL_SAMPLER_DEALS_MAX
 * deals, a world of 0, or consumed beyond a deal's batches: the message
 * gives them). */
sl_status sl_sampler_set_rest(sl_sampler *s, const sl_sampler_deal *past,
                              uint32_t npast, sl_err *err);
/* Where an epoch stands, without a sampler: the deal on c->world_size
 * ranks of the whole epoch (npast 0) or of the rest the past deals left,
 * once every rank has read `consumed` batches of it. */
typedef struct sl_sampler_progress {
  uint64_t batches; /* per rank in the deal */
  uint64_t read;    /* real samples read, all ranks and all deals together */
  uint64_t left;    /* real samples the deal still gives */
} sl_sampler_progress;
/* Errors as sl_sampler_batch_count's (a drop_last deal of the rest with no
 * whole batch is fine: 0 batches), and SL_EINVAL as set_rest's and for
 * consumed beyond the deal's batches. */
sl_status sl_sampler_progress_of(const sl_sampler_config *c,
                                 const sl_sampler_deal *past, uint32_t npast,
                                 uint64_t consumed, sl_sampler_progress *out,
                                 sl_err *err);
/* Dataset index at position pos < batches * batch_size of this rank. */
uint64_t sl_sampler_at(const sl_sampler *s, uint64_t pos);

#endif
