/* The sampler; see sampler.h for the orders, sharding and bounds. */
#include "loader/sampler.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/rng.h"
#include "loader/dmix_order.h"
#include "loader/order.h"

/* Keeps the order's random stream apart from augmentation's, which is keyed
 * by (seed, epoch, sample index) directly. */
#define ORDER_SALT 0x6f726465722d2d31ULL /* "order--1" */

struct sl_sampler {
  sl_sampler_config c;
  uint64_t per_rank; /* P: samples per rank in the epoch's deal */
  uint64_t whole;    /* P of a whole epoch */
  uint64_t limit;    /* real positions of the deal: N, or the rest's M */
  /* The rest being dealt (set_rest): nlevels earlier deals, or 0: the
   * whole epoch. A position j of deal l + 1 is position (j / lv[l].left) *
   * lv[l].per + lv[l].skip + j % lv[l].left of deal l. */
  uint32_t nlevels;
  struct rest_level {
    uint64_t per, skip, left;
  } lv[SL_SAMPLER_DEALS_MAX];
  uint64_t nblocks;
  uint64_t *order;    /* N entries: the global order of the epoch */
  uint64_t *blocks;   /* nblocks entries (quasi_random only) */
  uint64_t *first;    /* nblocks + 1 block starts (file blocks), or NULL */
  sl_dmix_order *mix; /* several datasets by weight, or NULL */
};

sl_status sl_sampler_batch_count(const sl_sampler_config *c, uint64_t *nb_out,
                                 sl_err *err) {
  *nb_out = 0;
  if (c->count == 0)
    return sl_err_set(err, SL_EINVAL, "sampler: the dataset has no samples");
  if (c->batch_size == 0 || c->world_size == 0 || c->rank >= c->world_size ||
      c->quasi_block == 0 || c->quasi_window == 0)
    return sl_err_set(
        err, SL_EINVAL,
        "sampler: bad settings (batch %llu, rank %llu of %llu, "
        "quasi %llu x %llu)",
        (unsigned long long)c->batch_size, (unsigned long long)c->rank,
        (unsigned long long)c->world_size, (unsigned long long)c->quasi_block,
        (unsigned long long)c->quasi_window);
  uint64_t wb;
  if (__builtin_mul_overflow(c->world_size, c->batch_size, &wb))
    return sl_err_set(err, SL_EINVAL,
                      "sampler: world_size x batch_size "
                      "overflows");
  uint64_t nb =
      c->drop_last ? c->count / wb : c->count / wb + (c->count % wb != 0);
  if (nb == 0)
    return sl_err_set(err, SL_ECONFIG,
                      "loader.drop_last: %llu samples are fewer than "
                      "loader.world_size (%llu) x loader.batch_size (%llu), "
                      "so no rank gets a whole batch; lower batch_size or set "
                      "drop_last = false",
                      (unsigned long long)c->count,
                      (unsigned long long)c->world_size,
                      (unsigned long long)c->batch_size);
  *nb_out = nb;
  return SL_OK;
}

/* Real positions (below limit) in [r*per + lo, r*per + hi) over the ranks
 * r < world, lo <= hi <= per: what a deal's ranks read between two
 * offsets. O(1): the first `full` ranks lie below limit whole, the next
 * one in part, the rest above it (a state blob may name 2^32 ranks). */
static uint64_t real_in(uint64_t limit, uint64_t world, uint64_t per,
                        uint64_t lo, uint64_t hi) {
  if (per == 0 || hi <= lo || world == 0)
    return 0;
  uint64_t full = limit >= hi ? (limit - hi) / per + 1 : 0;
  if (full > world)
    full = world;
  uint64_t n = full * (hi - lo);
  if (full < world) { /* rank `full` ends past limit: its part below it */
    uint64_t a = full * per + lo;
    if (limit > a)
      n += limit - a;
  }
  return n;
}

/* Batches per rank of a deal of `limit` real positions on `world` ranks
 * (the rest of an epoch: 0 is fine). */
static sl_status rest_batches(const sl_sampler_config *c, uint64_t world,
                              uint64_t limit, uint64_t *nb, sl_err *err) {
  uint64_t wb;
  if (world == 0 || __builtin_mul_overflow(world, c->batch_size, &wb))
    return sl_err_set(err, SL_EINVAL, "sampler: bad world size %llu",
                      (unsigned long long)world);
  *nb = c->drop_last ? limit / wb : limit / wb + (limit % wb != 0);
  return SL_OK;
}

/* The deals an epoch went through: the whole epoch on past[0].world ranks,
 * each reading past[0].consumed batches, the rest of it dealt on
 * past[1].world ranks, and so on; then the rest of the last on
 * c->world_size ranks. Fills lv (npast levels; may be NULL), the real
 * positions *read by the past deals, *limit (the current deal's real
 * positions) and *nb (its batches per rank). */
static sl_status deal_chain(const sl_sampler_config *c,
                            const sl_sampler_deal *past, uint32_t npast,
                            struct rest_level *lv, uint64_t *read,
                            uint64_t *limit, uint64_t *nb, sl_err *err) {
  *read = 0;
  *limit = c->count;
  if (npast > SL_SAMPLER_DEALS_MAX)
    return sl_err_set(err, SL_EINVAL, "sampler: %u earlier deals (at most %d)",
                      npast, SL_SAMPLER_DEALS_MAX);
  const uint64_t bs = c->batch_size;
  for (uint32_t l = 0; l < npast; l++) {
    uint64_t old_nb = 0;
    sl_status st = rest_batches(c, past[l].world, *limit, &old_nb, err);
    if (st == SL_OK && l == 0 && old_nb == 0)
      st = sl_err_set(err, SL_EINVAL,
                      "sampler: the saved run's %llu ranks had no whole "
                      "batch of %llu samples (drop_last)",
                      (unsigned long long)past[l].world,
                      (unsigned long long)c->count);
    if (st != SL_OK)
      return st;
    if (past[l].consumed > old_nb)
      return sl_err_set(err, SL_EINVAL,
                        "sampler: %llu batches read of a deal of %llu per "
                        "rank on %llu ranks",
                        (unsigned long long)past[l].consumed,
                        (unsigned long long)old_nb,
                        (unsigned long long)past[l].world);
    uint64_t per = old_nb * bs, skip = past[l].consumed * bs;
    *read += real_in(*limit, past[l].world, per, 0, skip);
    if (lv)
      lv[l] = (struct rest_level){per, skip, per - skip};
    *limit = real_in(*limit, past[l].world, per, skip, per);
  }
  return npast ? rest_batches(c, c->world_size, *limit, nb, err)
               : sl_sampler_batch_count(c, nb, err);
}

sl_status sl_sampler_progress_of(const sl_sampler_config *c,
                                 const sl_sampler_deal *past, uint32_t npast,
                                 uint64_t consumed, sl_sampler_progress *out,
                                 sl_err *err) {
  memset(out, 0, sizeof *out);
  uint64_t limit, nb, before;
  sl_status st = deal_chain(c, past, npast, NULL, &before, &limit, &nb, err);
  if (st != SL_OK)
    return st;
  if (consumed > nb)
    return sl_err_set(err, SL_EINVAL,
                      "sampler: %llu batches read of a deal of %llu per rank",
                      (unsigned long long)consumed, (unsigned long long)nb);
  const uint64_t bs = c->batch_size, per = nb * bs;
  out->batches = nb;
  out->read = before + real_in(limit, c->world_size, per, 0, consumed * bs);
  out->left = real_in(limit, c->world_size, per, consumed * bs, per);
  return SL_OK;
}

sl_status sl_sampler_create(sl_sampler **out, const sl_sampler_config *c,
                            sl_err *err) {
  *out = NULL;
  uint64_t nb;
  sl_status st = sl_sampler_batch_count(c, &nb, err);
  if (st != SL_OK)
    return st;
  sl_sampler *s = calloc(1, sizeof *s);
  if (!s)
    return sl_err_set(err, SL_ENOMEM, "sampler: out of memory");
  s->c = *c;
  s->c.members = NULL; /* the mix keeps what it needs */
  s->per_rank = s->whole = nb * c->batch_size;
  s->limit = c->count;
  if (c->nmembers > 0) {
    s->order = malloc(c->count * sizeof *s->order);
    st = s->order ? sl_dmix_order_create(&s->mix, c, err)
                  : sl_err_set(err, SL_ENOMEM,
                               "sampler: out of memory for the order of %llu "
                               "samples",
                               (unsigned long long)c->count);
    if (st != SL_OK) {
      sl_sampler_destroy(s);
      return st;
    }
    sl_sampler_set_epoch(s, 0);
    *out = s;
    return SL_OK;
  }
  bool files = c->order == SL_ORDER_QUASI && c->file_first && c->nfiles;
  s->nblocks =
      files ? c->nfiles : (c->count + c->quasi_block - 1) / c->quasi_block;
  s->order = malloc(c->count * sizeof *s->order);
  if (c->order == SL_ORDER_QUASI)
    s->blocks = malloc(s->nblocks * sizeof *s->blocks);
  if (files && (s->first = malloc((s->nblocks + 1) * sizeof *s->first))) {
    uint64_t prev = 0;
    for (uint64_t b = 0; b < c->nfiles; b++) { /* clamped: never decreasing */
      uint64_t f = c->file_first[b] < c->count ? c->file_first[b] : c->count;
      s->first[b] = prev = f > prev ? f : prev;
    }
    s->first[0] = 0;
    s->first[c->nfiles] = c->count;
  }
  s->c.file_first = NULL; /* not kept: the copy is */
  if (!s->order || (c->order == SL_ORDER_QUASI && !s->blocks) ||
      (files && !s->first)) {
    sl_sampler_destroy(s);
    return sl_err_set(err, SL_ENOMEM,
                      "sampler: out of memory for the order of %llu samples",
                      (unsigned long long)c->count);
  }
  sl_sampler_set_epoch(s, 0);
  *out = s;
  return SL_OK;
}

void sl_sampler_destroy(sl_sampler *s) {
  if (!s)
    return;
  free(s->order);
  free(s->blocks);
  free(s->first);
  sl_dmix_order_destroy(s->mix);
  free(s);
}

uint64_t sl_sampler_batches(const sl_sampler *s) {
  return s->per_rank / s->c.batch_size;
}

sl_status sl_sampler_set_rest(sl_sampler *s, const sl_sampler_deal *past,
                              uint32_t npast, sl_err *err) {
  struct rest_level lv[SL_SAMPLER_DEALS_MAX];
  uint64_t read, limit, nb;
  sl_status st = deal_chain(&s->c, past, npast, lv, &read, &limit, &nb, err);
  if (st != SL_OK)
    return st;
  s->per_rank = nb * s->c.batch_size;
  s->limit = limit;
  s->nlevels = npast;
  memcpy(s->lv, lv, npast * sizeof *lv);
  return SL_OK;
}

uint64_t sl_sampler_valid(const sl_sampler *s, uint64_t batch) {
  uint64_t first = s->c.rank * s->per_rank + batch * s->c.batch_size;
  if (first >= s->limit)
    return 0;
  uint64_t left = s->limit - first;
  return left < s->c.batch_size ? left : s->c.batch_size;
}

static void quasi_order(sl_sampler *s, uint64_t epoch, uint64_t seed) {
  sl_order_blocks b = {s->c.count, s->c.quasi_block, s->c.quasi_window,
                       s->nblocks, s->blocks,        s->first};
  sl_order_quasi(&b, seed, epoch, s->order);
}

void sl_sampler_set_epoch(sl_sampler *s, uint64_t epoch) {
  const uint64_t n = s->c.count;
  s->per_rank = s->whole;
  s->limit = n;
  s->nlevels = 0;
  if (s->mix) {
    sl_dmix_order_fill(s->mix, epoch, s->order);
    return;
  }
  uint64_t seed = sl_mix64(s->c.seed) ^ ORDER_SALT;
  if (s->c.order == SL_ORDER_QUASI) {
    quasi_order(s, epoch, seed);
    return;
  }
  for (uint64_t i = 0; i < n; i++)
    s->order[i] = i;
  if (s->c.order == SL_ORDER_RANDOM) {
    sl_rng r = sl_rng_for(seed, epoch, 0);
    sl_order_shuffle(s->order, n, &r);
  }
}

uint64_t sl_sampler_at(const sl_sampler *s, uint64_t pos) {
  uint64_t global = s->c.rank * s->per_rank + pos;
  if (s->nlevels) { /* a rest position: its place in each earlier deal */
    global %= s->limit;
    for (uint32_t l = s->nlevels; l-- > 0;)
      global = global / s->lv[l].left * s->lv[l].per + s->lv[l].skip +
               global % s->lv[l].left;
  }
  return s->order[global % s->c.count];
}
