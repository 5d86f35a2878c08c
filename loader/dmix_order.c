/* The order of an epoch over datasets mixed by weight; see dmix_order.h. */
#include "loader/dmix_order.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/rng.h"
#include "loader/order.h"

/* Keep the members' passes and the epoch's arrangement on streams of their
 * own, apart from the single-dataset orders' and augmentation's. */
#define PASS_SALT 0x6d69782d70617373ULL    /* "mix-pass" */
#define ARRANGE_SALT 0x6d69782d61727261ULL /* "mix-arra" */

typedef struct member {
  uint64_t count, take, first; /* samples, n_k, first global index */
  uint64_t *pass;              /* count entries: the order of pass_no */
  uint64_t pass_no;            /* UINT64_MAX: none computed yet */
  uint64_t stream;             /* next stream position to hand out */
  sl_order_blocks blocks;      /* quasi_random */
  uint64_t *first_copy;        /* nfiles + 1 file starts, or NULL */
  int64_t current;             /* smooth weighted round robin */
} member;

struct sl_dmix_order {
  sl_order order;
  uint64_t seed, count;
  uint32_t n;
  member m[SL_DMIX_MAX];
};

void sl_dmix_order_destroy(sl_dmix_order *mo) {
  if (!mo)
    return;
  for (uint32_t k = 0; k < mo->n; k++) {
    free(mo->m[k].pass);
    free(mo->m[k].blocks.blocks);
    free(mo->m[k].first_copy);
  }
  free(mo);
}

/* n_k by largest remainder of N × w_k / sum(w). */
static void takes(sl_dmix_order *mo, const sl_sampler_config *c) {
  double top = 0, sum = 0, w[SL_DMIX_MAX], frac[SL_DMIX_MAX];
  for (uint32_t k = 0; k < mo->n; k++) {
    top = c->members[k].weight > top ? c->members[k].weight : top;
    sum += w[k] = c->members[k].weight;
  }
  if (!isfinite(sum)) { /* weights near 1e308: each over the largest */
    sum = 0;
    for (uint32_t k = 0; k < mo->n; k++)
      sum += w[k] = c->members[k].weight / top;
  }
  uint64_t given = 0;
  for (uint32_t k = 0; k < mo->n; k++) {
    double exact = (double)mo->count * (w[k] / sum);
    double whole = floor(exact);
    mo->m[k].take = whole >= (double)mo->count ? mo->count : (uint64_t)whole;
    frac[k] = exact - whole;
    given += mo->m[k].take;
  }
  while (given < mo->count) { /* at most n rounds: each fraction < 1 */
    uint32_t best = 0;
    for (uint32_t k = 1; k < mo->n; k++)
      if (frac[k] > frac[best])
        best = k;
    mo->m[best].take++;
    frac[best] = -1;
    given++;
  }
  while (given > mo->count) /* rounding of a huge N: take back from the top */
    for (uint32_t k = 0; k < mo->n && given > mo->count; k++)
      if (mo->m[k].take > 1) {
        mo->m[k].take--;
        given--;
      }
}

static sl_status member_init(member *m, const sl_dmix_member *src,
                             const sl_sampler_config *c, uint32_t k,
                             sl_err *err) {
  m->pass_no = UINT64_MAX;
  if (!(m->pass = malloc(m->count * sizeof *m->pass)))
    return sl_err_set(err, SL_ENOMEM,
                      "sampler: out of memory for dataset %u's order (%llu "
                      "samples)",
                      k + 1, (unsigned long long)m->count);
  if (c->order != SL_ORDER_QUASI)
    return SL_OK;
  uint64_t q = c->quasi_block, bs = src->block_samples;
  if (bs > 1 && q % bs != 0 && q <= UINT64_MAX - bs)
    q = (q + bs - 1) / bs * bs; /* whole chunks, as for one dataset */
  bool files = src->file_first && src->nfiles > 0;
  m->blocks = (sl_order_blocks){.n = m->count,
                                .q = q,
                                .w = c->quasi_window,
                                .nblocks = files ? src->nfiles
                                                 : (m->count + q - 1) / q};
  m->blocks.blocks = malloc(m->blocks.nblocks * sizeof *m->blocks.blocks);
  if (files &&
      (m->first_copy = malloc((src->nfiles + 1) * sizeof *m->first_copy))) {
    uint64_t prev = 0;
    for (uint64_t b = 0; b < src->nfiles; b++) { /* clamped, never falling */
      uint64_t f =
          src->file_first[b] < m->count ? src->file_first[b] : m->count;
      m->first_copy[b] = prev = f > prev ? f : prev;
    }
    m->first_copy[0] = 0;
    m->first_copy[src->nfiles] = m->count;
    m->blocks.first = m->first_copy;
  }
  if (!m->blocks.blocks || (files && !m->first_copy))
    return sl_err_set(err, SL_ENOMEM,
                      "sampler: out of memory for dataset %u's blocks", k + 1);
  return SL_OK;
}

sl_status sl_dmix_order_create(sl_dmix_order **out, const sl_sampler_config *c,
                               sl_err *err) {
  *out = NULL;
  if (c->nmembers == 0 || c->nmembers > SL_DMIX_MAX || !c->members)
    return sl_err_set(err, SL_EINVAL, "sampler: %u datasets to mix (1..%d)",
                      c->nmembers, SL_DMIX_MAX);
  uint64_t sum = 0;
  for (uint32_t k = 0; k < c->nmembers; k++) {
    double w = c->members[k].weight;
    if (c->members[k].count == 0 || !(w > 0) || !isfinite(w) ||
        __builtin_add_overflow(sum, c->members[k].count, &sum))
      return sl_err_set(err, SL_EINVAL,
                        "sampler: dataset %u of the mix has %llu samples "
                        "and weight %g",
                        k + 1, (unsigned long long)c->members[k].count, w);
  }
  if (sum != c->count)
    return sl_err_set(err, SL_EINVAL,
                      "sampler: the mixed datasets hold %llu samples, not "
                      "%llu",
                      (unsigned long long)sum, (unsigned long long)c->count);
  sl_dmix_order *mo = calloc(1, sizeof *mo);
  if (!mo)
    return sl_err_set(err, SL_ENOMEM, "sampler: out of memory");
  mo->order = c->order;
  mo->seed = c->seed;
  mo->count = sum;
  mo->n = c->nmembers;
  uint64_t first = 0;
  for (uint32_t k = 0; k < mo->n; k++) {
    mo->m[k].count = c->members[k].count;
    mo->m[k].first = first;
    first += mo->m[k].count;
  }
  if (c->each_once)
    for (uint32_t k = 0; k < mo->n; k++)
      mo->m[k].take = mo->m[k].count;
  else
    takes(mo, c);
  sl_status st = SL_OK;
  for (uint32_t k = 0; k < mo->n && st == SL_OK; k++) {
    if (mo->m[k].take == 0)
      st = sl_err_set(err, SL_ECONFIG,
                      "dataset.weights: dataset %u's weight %g is so small "
                      "against the others' that it gets none of an epoch's "
                      "%llu samples; raise it or leave the dataset out",
                      k + 1, c->members[k].weight, (unsigned long long)sum);
    else
      st = member_init(&mo->m[k], &c->members[k], c, k, err);
  }
  if (st != SL_OK) {
    sl_dmix_order_destroy(mo);
    return st;
  }
  *out = mo;
  return SL_OK;
}

uint64_t sl_dmix_order_take(const sl_dmix_order *mo, uint32_t k) {
  return k < mo->n ? mo->m[k].take : 0;
}

/* The order of member k's pass p (its own sample indices). */
static void make_pass(sl_dmix_order *mo, uint32_t k, uint64_t p) {
  member *m = &mo->m[k];
  uint64_t seed = sl_mix64(mo->seed ^ PASS_SALT) ^ sl_mix64(k + 1);
  if (mo->order == SL_ORDER_QUASI) {
    sl_order_quasi(&m->blocks, seed, p, m->pass);
  } else {
    for (uint64_t i = 0; i < m->count; i++)
      m->pass[i] = i;
    if (mo->order == SL_ORDER_RANDOM) {
      sl_rng r = sl_rng_for(seed, p, 0);
      sl_order_shuffle(m->pass, m->count, &r);
    }
  }
  m->pass_no = p;
}

/* Member k's next pick: the global index at its stream position. */
static uint64_t next_of(sl_dmix_order *mo, uint32_t k) {
  member *m = &mo->m[k];
  uint64_t p = m->stream / m->count, j = m->stream % m->count;
  if (m->pass_no != p)
    make_pass(mo, k, p);
  m->stream++;
  return m->first + m->pass[j];
}

void sl_dmix_order_fill(sl_dmix_order *mo, uint64_t epoch, uint64_t *order) {
  for (uint32_t k = 0; k < mo->n; k++) {
    mo->m[k].stream = epoch * mo->m[k].take;
    mo->m[k].current = 0;
  }
  if (mo->order == SL_ORDER_RANDOM) {
    uint64_t pos = 0;
    for (uint32_t k = 0; k < mo->n; k++)
      for (uint64_t i = 0; i < mo->m[k].take; i++)
        order[pos++] = next_of(mo, k);
    sl_rng r = sl_rng_for(sl_mix64(mo->seed) ^ ARRANGE_SALT, epoch, 0);
    sl_order_shuffle(order, mo->count, &r);
    return;
  }
  /* Smooth weighted round robin (nginx's): each step every member gains
   * its take, the one furthest ahead is picked and pays the total back.
   * Over the epoch member k is picked exactly take_k times, spread evenly;
   * the counters stay within ±count. */
  const int64_t total = (int64_t)mo->count;
  for (uint64_t pos = 0; pos < mo->count; pos++) {
    uint32_t best = 0;
    for (uint32_t k = 0; k < mo->n; k++) {
      mo->m[k].current += (int64_t)mo->m[k].take;
      if (mo->m[k].current > mo->m[best].current)
        best = k;
    }
    mo->m[best].current -= total;
    order[pos] = next_of(mo, best);
  }
}
