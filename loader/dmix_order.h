/* The global order of an epoch over several datasets mixed by weight
 * (sampler.h deals it to ranks as it deals one dataset's).
 *
 * An epoch has N = count_0 + ... + count_{K-1} samples, so len(loader)
 * is exact and does not depend on the weights; member k takes n_k of them,
 * N × w_k / sum(w) rounded by largest remainder (ties to the lower k),
 * exactly n_k every epoch. Evaluation (each_once) takes n_k = count_k:
 * every sample of every member once an epoch, the weights unused.
 *
 * Each member is read without replacement from its own endless stream:
 * its passes one after the other, pass p an order of all its samples
 * (sequential: file order; random: a permutation; quasi_random: its own
 * blocks, or its shards, permuted and window-shuffled), a pure function of
 * (seed, member, p). Epoch e takes stream positions [e × n_k, (e+1) ×
 * n_k): a small member repeats (a new pass, a new order), a large one
 * continues where the last epoch stopped, and no sample comes back before
 * its pass is done.
 *
 * The members' picks are then arranged: random shuffles the epoch's N picks
 * (from (seed, epoch)); sequential and quasi_random interleave them by
 * smooth weighted round robin, so every stretch of the epoch holds each
 * member in its share and each member's picks keep their stream's order
 * (quasi_random's locality).
 *
 * Memory: per member its pass's order (8 bytes a sample) and, for
 * quasi_random, its blocks (8 bytes a block, 8 a file start): with the
 * sampler's own order, 16 bytes a sample in all. At create; fill allocates
 * nothing. Thread safety: none (the sampler's set_epoch calls it). */
#ifndef SLUICE_LOADER_DMIX_ORDER_H
#define SLUICE_LOADER_DMIX_ORDER_H

#include "common/error.h"
#include "loader/sampler.h"

typedef struct sl_dmix_order sl_dmix_order;

/* c->nmembers >= 1 members whose counts sum to c->count. Errors:
 * SL_EINVAL (bad counts or weights), SL_ECONFIG (a weight so small its
 * member gets no sample of an epoch: the message names it), SL_ENOMEM. */
sl_status sl_dmix_order_create(sl_dmix_order **out, const sl_sampler_config *c,
                               sl_err *err);
void sl_dmix_order_destroy(sl_dmix_order *m);
/* Member k's samples in an epoch (n_k). */
uint64_t sl_dmix_order_take(const sl_dmix_order *m, uint32_t k);
/* Writes epoch's global order (c->count sample indices) to order. */
void sl_dmix_order_fill(sl_dmix_order *m, uint64_t epoch, uint64_t *order);

#endif
