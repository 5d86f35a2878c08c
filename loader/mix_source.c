/* A mixed loader's sample source (dataset.mix): each dataset is a sample
 * source of its own (sample_source.c: any format, local or at a URL), and
 * this one reads them as one, member k's sample i being index first_k + i
 * (the sampler deals the members by weight: dmix_order.h).
 *
 * Read-ahead: each epoch's positions are split by member, so each
 * member's reader (mmap hints, io_uring, remote fetches) sees its own
 * share of the order, in order, as it would alone.
 *
 * Labels: shared keeps each member's labels; offset (dataset.mix_labels)
 * adds the classes of the members before it (sl_sample_src.classes).
 * Augmentation: member 0 draws as it would alone; member k > 0 from a
 * seed of its own, so sample i of two members gets different crops.
 *
 * Memory: each member's own (sample_source.c's bounds, per member: its
 * index, reader and chunk cache, and per worker a pipeline and read
 * buffer; the readers split io.pool_size and the memory budget evenly),
 * plus 16 bytes a position of a rank's epoch for the split order, all at
 * open. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/rng.h"
#include "io/io_select.h"
#include "loader/loader_internal.h"

/* Keeps members' augmentation seeds apart from member 0's, the loader's. */
#define MEMBER_SALT 0x6d656d6265722d31ULL /* "member-1" */
#define PLACE_BITS 56
#define PLACE_MASK ((1ULL << PLACE_BITS) - 1)

typedef struct dm_ctx {
  uint32_t n;
  sl_sample_src sub[SL_DMIX_MAX];
  sl_dmix_member members[SL_DMIX_MAX];
  uint64_t first[SL_DMIX_MAX + 1]; /* first[n]: the count */
  uint32_t label_off[SL_DMIX_MAX];
  uint64_t mem_available; /* for the readers' budget; 0: each measures */
  /* The epoch's positions [pos0, pos0 + npos): position p's member and its
   * place in that member's share (member << PLACE_BITS | place), and the
   * shares' member indices, member k's from share[k]. cap entries each: a
   * rank's positions in a whole epoch. */
  uint64_t *packed, *list, cap;
  uint64_t pos0, npos;
  const uint64_t *share[SL_DMIX_MAX];
  char left_names[512];
} dm_ctx;

typedef struct dm_worker {
  void *ws[SL_DMIX_MAX];
  uint64_t pending; /* the next load's packed position, when has_pending */
  bool has_pending;
} dm_worker;

static uint32_t member_of(const dm_ctx *c, uint64_t index) {
  uint32_t k = 0;
  while (k + 1 < c->n && index >= c->first[k + 1])
    k++;
  return k;
}

static sl_status dm_worker_open(void *ctx, int max_res, void **ws,
                                sl_err *err) {
  dm_ctx *c = ctx;
  dm_worker *w = calloc(1, sizeof *w);
  *ws = NULL;
  if (!w)
    return sl_err_set(err, SL_ENOMEM, "worker: out of memory");
  for (uint32_t k = 0; k < c->n; k++) {
    sl_status st =
        c->sub[k].worker_open(c->sub[k].ctx, max_res, &w->ws[k], err);
    if (st != SL_OK) {
      while (k-- > 0)
        c->sub[k].worker_close(c->sub[k].ctx, w->ws[k]);
      free(w);
      return st;
    }
  }
  *ws = w;
  return SL_OK;
}

static void dm_worker_close(void *ctx, void *ws) {
  dm_ctx *c = ctx;
  dm_worker *w = ws;
  if (!w)
    return;
  for (uint32_t k = 0; k < c->n; k++)
    c->sub[k].worker_close(c->sub[k].ctx, w->ws[k]);
  free(w);
}

static sl_status dm_load(void *ctx, void *ws, uint64_t index, uint64_t epoch,
                         int res, void *dst, int32_t *label, sl_box_dst *bx,
                         sl_sample_times *t, sl_err *err) {
  dm_ctx *c = ctx;
  dm_worker *w = ws;
  uint32_t k = member_of(c, index);
  /* The position goes to the member only with its own sample's load: a
   * replacement for a bad sample (no position) reads by index. */
  if (w->has_pending && (uint32_t)(w->pending >> PLACE_BITS) == k &&
      c->sub[k].position)
    c->sub[k].position(c->sub[k].ctx, w->ws[k], w->pending & PLACE_MASK);
  w->has_pending = false;
  sl_status st = c->sub[k].load(c->sub[k].ctx, w->ws[k], index - c->first[k],
                                epoch, res, dst, label, bx, t, err);
  if (st == SL_OK && c->label_off[k]) { /* classes past earlier datasets' */
    if (*label >= 0)
      *label += (int32_t)c->label_off[k];
    for (uint32_t j = 0; bx && j < *bx->count; j++)
      if (bx->labels[j] >= 0)
        bx->labels[j] += (int32_t)c->label_off[k];
  }
  return st;
}

static void dm_targets(void *ctx, uint64_t index, float *out) {
  dm_ctx *c = ctx;
  uint32_t k = member_of(c, index);
  c->sub[k].targets(c->sub[k].ctx, index - c->first[k], out);
}

static uint64_t share_at(const void *share, uint64_t pos) {
  return ((const uint64_t *)share)[pos];
}

static void dm_epoch_start(void *ctx, sl_order_at_fn at, const void *order,
                           uint64_t epoch, int res, uint64_t first,
                           uint64_t end) {
  dm_ctx *c = ctx;
  uint64_t cnt[SL_DMIX_MAX] = {0}, start[SL_DMIX_MAX];
  c->pos0 = first;
  c->npos = end > first && end - first <= c->cap ? end - first : 0;
  for (uint64_t p = 0; p < c->npos; p++)
    cnt[member_of(c, at(order, first + p))]++;
  for (uint32_t k = 0; k < c->n; k++) {
    start[k] = k ? start[k - 1] + cnt[k - 1] : 0;
    c->share[k] = c->list + start[k];
  }
  uint64_t fill[SL_DMIX_MAX] = {0};
  for (uint64_t p = 0; p < c->npos; p++) {
    uint64_t idx = at(order, first + p);
    uint32_t k = member_of(c, idx);
    uint64_t place = fill[k]++;
    c->list[start[k] + place] = idx - c->first[k];
    c->packed[p] = (uint64_t)k << PLACE_BITS | place;
  }
  for (uint32_t k = 0; k < c->n; k++)
    if (c->sub[k].epoch_start)
      c->sub[k].epoch_start(c->sub[k].ctx, share_at, c->share[k], epoch, res, 0,
                            cnt[k]);
}

static void dm_epoch_stop(void *ctx) {
  dm_ctx *c = ctx;
  for (uint32_t k = 0; k < c->n; k++)
    if (c->sub[k].epoch_stop)
      c->sub[k].epoch_stop(c->sub[k].ctx);
}

static void dm_position(void *ctx, void *ws, uint64_t pos) {
  dm_ctx *c = ctx;
  dm_worker *w = ws;
  w->has_pending = pos >= c->pos0 && pos - c->pos0 < c->npos;
  if (w->has_pending)
    w->pending = c->packed[pos - c->pos0];
}

/* The remote datasets' counters, summed (a dataset's cache may be another
 * dataset's too: then its objects count once per dataset reading them). */
static void dm_net_stats(void *ctx, sl_sample_net *out) {
  dm_ctx *c = ctx;
  memset(out, 0, sizeof *out);
  for (uint32_t k = 0; k < c->n; k++) {
    if (!c->sub[k].net_stats)
      continue;
    sl_sample_net one;
    c->sub[k].net_stats(c->sub[k].ctx, &one);
    out->fetches += one.fetches;
    out->bytes_fetched += one.bytes_fetched;
    out->hits += one.hits;
    out->misses += one.misses;
    out->wait_ns += one.wait_ns;
  }
}

static void dm_batch_mix(void *ctx, const sl_mix_batch *b, sl_mix_note *note) {
  dm_ctx *c = ctx; /* every member mixes batches alike: member 0 does */
  c->sub[0].batch_mix(c->sub[0].ctx, b, note);
}

static void dm_close(void *ctx) {
  dm_ctx *c = ctx;
  if (!c)
    return;
  for (uint32_t k = 0; k < c->n; k++)
    if (c->sub[k].close)
      c->sub[k].close(c->sub[k].ctx);
  free(c->packed);
  free(c->list);
  free(c);
}

/* Member k (path) opened as a dataset of its own. */
static sl_status open_member(dm_ctx *c, uint32_t k, const sl_settings *s,
                             sl_logger *log, sl_err *err) {
  sl_settings *sk = malloc(sizeof *sk);
  if (!sk)
    return sl_err_set(err, SL_ENOMEM, "dataset.mix: out of memory");
  *sk = *s;
  sk->dataset_path = sl_dmix_spec_path(&s->dmix, k);
  sk->dmix.n = 0;
  sk->dmix_member = true;
  /* The datasets share what one reader would have: io.pool_size and the
   * memory io.auto_share weighs, split evenly. */
  sk->io.pool_bytes = s->io.pool_bytes / c->n;
  sk->io.mem_available = c->mem_available / c->n;
  if (k > 0)
    sk->sampler.seed = sl_mix64(s->sampler.seed ^ MEMBER_SALT) ^ sl_mix64(k);
  sl_status st = sl_sample_source_open(&c->sub[k], sk, log, err);
  free(sk);
  if (st != SL_OK)
    sl_err_prefix(err, "dataset.mix: dataset %u of %u: ", k + 1, c->n);
  return st;
}

/* What the members must agree on to share one batch. */
static sl_status check_members(const dm_ctx *c, const sl_settings *s,
                               sl_err *err) {
  const sl_dmix_spec *sp = &s->dmix;
  for (uint32_t k = 1; k < c->n; k++) {
    const sl_sample_src *a = &c->sub[0], *b = &c->sub[k];
    const char *pa = sl_dmix_spec_path(sp, 0), *pb = sl_dmix_spec_path(sp, k);
    if (a->channels != b->channels || a->target_width != b->target_width)
      return sl_err_set(err, SL_ECONFIG,
                        "dataset.mix: %s gives %d channels and %u float "
                        "targets a sample, %s %d and %u: mixed datasets "
                        "must agree",
                        pa, a->channels, a->target_width, pb, b->channels,
                        b->target_width);
    if ((a->batch_mix != NULL) != (b->batch_mix != NULL) ||
        a->soft_width != b->soft_width)
      return sl_err_set(err, SL_ECONFIG,
                        "augment.num_classes: %s has %u classes, %s %u; "
                        "with dataset.mix, set augment.num_classes to the "
                        "classes of all of them for Mixup/CutMix",
                        pa, a->soft_width, pb, b->soft_width);
    if (a->box_capacity && b->box_capacity &&
        a->box_capacity != b->box_capacity)
      return sl_err_set(err, SL_ECONFIG,
                        "loader.max_boxes: %s holds up to %u boxes a sample, "
                        "%s %u; with dataset.mix, set loader.max_boxes",
                        pa, a->box_capacity, pb, b->box_capacity);
  }
  if (c->sub[0].batch_mix && s->mix.classes == 0 && c->n > 1)
    return sl_err_set(err, SL_ECONFIG,
                      "augment.num_classes: with dataset.mix and "
                      "Mixup/CutMix/label smoothing, set it to the classes "
                      "of all the datasets together");
  return SL_OK;
}

sl_status sl_dmix_source_open(sl_sample_src *out, const sl_settings *s,
                              sl_logger *log, sl_err *err) {
  dm_ctx *c = calloc(1, sizeof *c);
  if (!c)
    return sl_err_set(err, SL_ENOMEM, "dataset.mix: out of memory");
  c->n = s->dmix.n;
  sl_status st = SL_OK;
  if (s->io.kind == SL_IO_AUTO || s->io.kind == SL_IO_URING)
    st = s->io.mem_available ? (c->mem_available = s->io.mem_available, SL_OK)
                             : sl_io_mem_budget(&c->mem_available, err);
  if (st != SL_OK) {
    free(c);
    return st;
  }
  for (uint32_t k = 0; k < c->n && st == SL_OK; k++)
    if ((st = open_member(c, k, s, log, err)) != SL_OK)
      c->n = k; /* close only those opened */
  if (st == SL_OK)
    st = check_members(c, s, err);
  uint64_t total = 0;
  uint32_t classes = 0, box_cap = 0;
  for (uint32_t k = 0; k < c->n && st == SL_OK; k++) {
    const sl_sample_src *m = &c->sub[k];
    c->first[k] = total;
    total += m->count;
    c->label_off[k] = s->dmix_offset_labels ? classes : 0;
    if (s->dmix_offset_labels && m->classes > (uint32_t)INT32_MAX - classes)
      st = sl_err_set(err, SL_ECONFIG,
                      "dataset.mix_labels = offset: the datasets' classes "
                      "together pass %d",
                      INT32_MAX);
    classes = s->dmix_offset_labels  ? classes + m->classes
              : m->classes > classes ? m->classes
                                     : classes;
    box_cap = m->box_capacity > box_cap ? m->box_capacity : box_cap;
    c->members[k] =
        (sl_dmix_member){m->count, s->dmix.weight[k], m->block_samples,
                         m->file_first, m->nfiles};
  }
  c->first[c->n] = total;
  if (st == SL_OK && c->n > 0 && c->sub[0].batch_mix && s->mix.classes > 0 &&
      s->mix.classes < classes)
    st = sl_err_set(err, SL_ECONFIG,
                    "augment.num_classes = %u, but the mixed datasets' labels "
                    "run to %u classes%s: soft targets need a column for "
                    "each",
                    s->mix.classes, classes,
                    s->dmix_offset_labels ? " (dataset.mix_labels = offset)"
                                          : "");
  /* A rank's positions in a whole epoch, as the sampler will deal them. */
  sl_sampler_config sc = s->sampler;
  sc.count = total;
  uint64_t nb = 0;
  if (st == SL_OK && (st = sl_sampler_batch_count(&sc, &nb, err)) == SL_OK) {
    c->cap = nb * sc.batch_size;
    c->packed = malloc(c->cap * sizeof *c->packed);
    c->list = malloc(c->cap * sizeof *c->list);
    if (!c->packed || !c->list)
      st = sl_err_set(err, SL_ENOMEM,
                      "dataset.mix: out of memory for an epoch's %llu "
                      "positions",
                      (unsigned long long)c->cap);
  }
  if (st != SL_OK) {
    dm_close(c);
    return st;
  }
  memset(out, 0, sizeof *out);
  out->ctx = c;
  out->count = total;
  out->channels = c->sub[0].channels;
  out->target_width = c->sub[0].target_width;
  out->classes = classes;
  out->box_capacity = box_cap;
  /* The shares, not the weights: 3, 1 and 6, 2 are one mix. */
  double top = 0;
  for (uint32_t k = 0; k < c->n; k++)
    top = s->dmix.weight[k] > top ? s->dmix.weight[k] : top;
  uint64_t fp = sl_mix64(0x736c2d6d69786564ULL ^ c->n); /* "sl-mixed" */
  for (uint32_t k = 0; k < c->n; k++) {
    uint64_t wbits;
    double share = s->dmix.weight[k] / top;
    memcpy(&wbits, &share, sizeof wbits);
    fp = sl_mix64(fp ^ c->sub[k].fingerprint);
    fp = sl_mix64(fp ^ wbits);
  }
  out->fingerprint = sl_mix64(fp ^ (uint64_t)s->dmix_offset_labels);
  size_t used = 0;
  for (uint32_t k = 0; k < c->n; k++) {
    out->left_out += c->sub[k].left_out;
    if (c->sub[k].left_out_names && c->sub[k].left_out_names[0] &&
        used < sizeof c->left_names) {
      int w = snprintf(c->left_names + used, sizeof c->left_names - used,
                       "%s%s", used ? "; " : "", c->sub[k].left_out_names);
      used += w > 0 ? (size_t)w : 0;
    }
  }
  out->left_out_names = c->left_names;
  out->nmembers = c->n;
  out->members = c->members;
  out->targets = c->sub[0].targets ? dm_targets : NULL;
  out->worker_open = dm_worker_open;
  out->worker_close = dm_worker_close;
  out->load = dm_load;
  out->close = dm_close;
  out->epoch_start = dm_epoch_start;
  out->epoch_stop = dm_epoch_stop;
  out->position = dm_position;
  for (uint32_t k = 0; k < c->n; k++)
    if (c->sub[k].net_stats)
      out->net_stats = dm_net_stats;
  if (c->sub[0].batch_mix) {
    out->soft_width = c->sub[0].soft_width;
    out->batch_mix = dm_batch_mix;
  }
  return SL_OK;
}
