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
  /* The rest being dealt (set_rest), or rest_per 0: the whole epoch. Rest
   * position j is old global position (j / rest_left) * rest_per +
   * rest_skip + j % rest_left. */
  uint64_t rest_per, rest_skip, rest_left;
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
  uint64_t nb = c->drop_last ? c->count / wb : (c->count + wb - 1) / wb;
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
 * r < world: what a deal's ranks read between two offsets. */
static uint64_t real_in(uint64_t limit, uint64_t world, uint64_t per,
                        uint64_t lo, uint64_t hi) {
  uint64_t n = 0;
  for (uint64_t r = 0; r < world; r++) {
    uint64_t a = r * per + lo, b = r * per + hi;
    if (b > limit)
      b = limit;
    if (b > a)
      n += b - a;
  }
  return n;
}

/* The rest old_world ranks of c's count, batch and drop_last left after
 * `consumed` batches each: their per-rank samples *per, the real samples
 * they read *read and left *left (M), and the batches per rank *nb of its
 * deal on c->world_size ranks. */
static sl_status rest_of(const sl_sampler_config *c, uint64_t old_world,
                         uint64_t consumed, uint64_t *per, uint64_t *read,
                         uint64_t *left, uint64_t *nb, sl_err *err) {
  sl_sampler_config old = *c;
  old.world_size = old_world;
  old.rank = 0;
  uint64_t old_nb, wb;
  sl_status st = sl_sampler_batch_count(&old, &old_nb, err);
  if (st != SL_OK)
    return st;
  if (consumed > old_nb)
    return sl_err_set(err, SL_EINVAL,
                      "sampler: %llu batches read of an epoch of %llu per "
                      "rank on %llu ranks",
                      (unsigned long long)consumed, (unsigned long long)old_nb,
                      (unsigned long long)old_world);
  const uint64_t bs = c->batch_size;
  *per = old_nb * bs;
  *read = real_in(c->count, old_world, *per, 0, consumed * bs);
  *left = real_in(c->count, old_world, *per, consumed * bs, *per);
  if (c->world_size == 0 ||
      __builtin_mul_overflow(c->world_size, c->batch_size, &wb))
    return sl_err_set(err, SL_EINVAL, "sampler: bad world size %llu",
                      (unsigned long long)c->world_size);
  *nb = c->drop_last ? *left / wb : (*left + wb - 1) / wb;
  return SL_OK;
}

sl_status sl_sampler_progress_of(const sl_sampler_config *c, uint64_t old_world,
                                 uint64_t old_consumed, uint64_t consumed,
                                 sl_sampler_progress *out, sl_err *err) {
  memset(out, 0, sizeof *out);
  uint64_t limit = c->count, nb, before = 0, per_old;
  sl_status st = old_world ? rest_of(c, old_world, old_consumed, &per_old,
                                     &before, &limit, &nb, err)
                           : sl_sampler_batch_count(c, &nb, err);
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

sl_status sl_sampler_set_rest(sl_sampler *s, uint64_t old_world,
                              uint64_t consumed, sl_err *err) {
  uint64_t per, read, left, nb;
  sl_status st =
      rest_of(&s->c, old_world, consumed, &per, &read, &left, &nb, err);
  if (st != SL_OK)
    return st;
  s->per_rank = nb * s->c.batch_size;
  s->limit = left;
  s->rest_per = per;
  s->rest_skip = consumed * s->c.batch_size;
  s->rest_left = per - s->rest_skip;
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
  s->rest_per = 0;
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
  if (s->rest_per) { /* a rest position: its place in the old deal */
    uint64_t j = global % s->limit;
    global = j / s->rest_left * s->rest_per + s->rest_skip + j % s->rest_left;
  }
  return s->order[global % s->c.count];
}
