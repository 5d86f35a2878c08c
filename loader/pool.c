/* The worker pool; see pool.h. */
#include "loader/pool.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/rng.h"
#include "common/sync.h"
#include "common/url_shown.h"

#define SKIP_SALT 0x736b69702d2d2d31ULL /* "skip---1" */

typedef struct worker {
  sl_pool *pool;
  pthread_t thread;
  void *ws;
  bool started;
} worker;

struct sl_pool {
  sl_pool_config c;
  pthread_mutex_t mu;
  pthread_cond_t cv_work, cv_idle;
  bool shutdown, running;
  uint64_t epoch, next, end;
  int res;
  size_t sample_bytes;
  int busy;
  sl_pool_stats st;
  worker *w;
};

void sl_logf(sl_logger *lg, sl_log_level level, const char *fmt, ...) {
  if (!lg || !lg->fn)
    return;
  char msg[SL_ERRMSG_MAX + 128];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  sl_text_hide_credentials(msg); /* a dataset's URL, shown */
  pthread_mutex_lock(&lg->mu);
  lg->fn(lg->user, level, msg);
  pthread_mutex_unlock(&lg->mu);
}

/* What one sample did, folded into the pool's stats under the lock. */
typedef struct outcome {
  sl_sample_times t;
  uint32_t boxes_over; /* kept boxes past the capacity */
  uint64_t staging_wait_ns;
  uint64_t bad[SL_POOL_SKIP_TRIES + 1];
  int nbad;
  bool skipped, failed;
} outcome;

/* Loads position `pos`'s sample, replacing it when skip_bad allows. */
static sl_status load_sample(sl_pool *p, void *ws, uint64_t epoch, int res,
                             uint64_t index, uint8_t *dst, int32_t *label,
                             sl_box_dst *bx, uint64_t *used, outcome *o,
                             sl_err *err) {
  const sl_sample_src *src = p->c.src;
  sl_status st =
      src->load(src->ctx, ws, index, epoch, res, dst, label, bx, &o->t, err);
  *used = index;
  if (st == SL_OK)
    return SL_OK;
  o->bad[o->nbad++] = index;
  if (!p->c.skip_bad)
    return st;
  sl_logf(p->c.log, SL_LOG_WARN, "skipping sample %llu: %s",
          (unsigned long long)index, err->msg);
  sl_rng r = sl_rng_for(p->c.seed ^ SKIP_SALT, epoch, index);
  sl_err e2; /* the last replacement's error (not err: sl_err_set would
                format err->msg into itself) */
  for (int a = 0; a < SL_POOL_SKIP_TRIES; a++) {
    uint64_t alt = sl_rng_below(&r, src->count);
    sl_err_clear(&e2);
    st = src->load(src->ctx, ws, alt, epoch, res, dst, label, bx, &o->t, &e2);
    if (st == SL_OK) {
      *used = alt;
      o->skipped = true;
      return SL_OK;
    }
    o->bad[o->nbad++] = alt;
  }
  return sl_err_set(err, SL_ESAMPLE,
                    "sample %llu and %d replacements failed; last: %s",
                    (unsigned long long)index, SL_POOL_SKIP_TRIES, e2.msg);
}

static void fold(sl_pool *p, const outcome *o) {
  sl_pool_stats *s = &p->st;
  s->samples++;
  s->read_ns += o->t.read_ns;
  s->decode_ns += o->t.decode_ns;
  s->augment_ns += o->t.augment_ns;
  s->jpeg_samples += o->t.jpeg_samples;
  s->jpeg_windowed += o->t.jpeg_windowed;
  s->chunk_unfilters += o->t.chunk_unfilters;
  s->boxes_over += o->boxes_over;
  s->box_samples_over += o->boxes_over > 0;
  for (int k = 0; k < 4; k++)
    s->level_decodes[k] += o->t.level_decodes[k];
  s->bytes_read += o->t.bytes_read;
  s->staging_wait_ns += o->staging_wait_ns;
  s->skipped += o->skipped;
  s->failed += o->failed;
  for (int i = 0; i < o->nbad; i++) {
    memmove(s->bad + 1, s->bad, (SL_POOL_BAD_KEEP - 1) * sizeof s->bad[0]);
    s->bad[0] = o->bad[i];
    if (s->nbad < SL_POOL_BAD_KEEP)
      s->nbad++;
  }
}

static void *worker_main(void *arg) {
  worker *w = arg;
  sl_pool *p = w->pool;
  const uint64_t bs = (uint64_t)p->c.batch_size;
  pthread_mutex_lock(&p->mu);
  for (;;) {
    while (!p->shutdown && !(p->running && p->next < p->end))
      pthread_cond_wait(&p->cv_work, &p->mu);
    if (p->shutdown)
      break;
    uint64_t pos = p->next++;
    uint64_t epoch = p->epoch;
    int res = p->res;
    size_t sb = p->sample_bytes;
    p->busy++;
    pthread_mutex_unlock(&p->mu);

    outcome o;
    memset(&o, 0, sizeof o);
    uint64_t k = pos / bs;
    int j = (int)(pos % bs);
    sl_ring_staging stg;
    uint64_t t0 = sl_now_ns();
    if (p->c.src->position) /* read-ahead: which epoch position this is */
      p->c.src->position(p->c.src->ctx, w->ws, pos);
    sl_status st = sl_ring_staging_acquire(p->c.ring, k, &stg);
    o.staging_wait_ns = sl_now_ns() - t0;
    if (st == SL_OK) {
      sl_err err;
      sl_err_clear(&err);
      uint64_t index = sl_sampler_at(p->c.sampler, pos), used = index;
      int32_t label = -1;
      uint32_t cap = p->c.src->box_capacity;
      sl_box_dst bx = {NULL, NULL, NULL, cap, 0}, *bxp = NULL;
      if (cap > 0) { /* sample j's part of the batch's box arrays */
        bx.xyxy = stg.boxes + (size_t)j * cap * 4;
        bx.labels = stg.box_labels + (size_t)j * cap;
        bx.count = stg.box_counts + j;
        bxp = &bx;
      }
      st = load_sample(p, w->ws, epoch, res, index, stg.data + (size_t)j * sb,
                       &label, bxp, &used, &o, &err);
      if (bxp && st != SL_OK) { /* a failed sample has no boxes */
        memset(bx.xyxy, 0, (size_t)cap * 4 * sizeof *bx.xyxy);
        memset(bx.labels, 0xff, (size_t)cap * sizeof *bx.labels);
        *bx.count = 0;
      }
      o.boxes_over = bxp && st == SL_OK ? bx.over : 0;
      stg.labels[j] = label;
      stg.indices[j] = used;
      uint32_t tw = p->c.src->target_width;
      if (tw > 0) { /* a failed sample's targets are never delivered */
        float *t = stg.targets + (size_t)j * tw;
        if (st == SL_OK)
          p->c.src->targets(p->c.src->ctx, used, t);
        else
          memset(t, 0, tw * sizeof *t);
      }
      o.failed = st != SL_OK;
      /* Stats first: once staging_done completes the batch, the consumer
       * may read them, and they must already count this sample. */
      pthread_mutex_lock(&p->mu);
      fold(p, &o);
      pthread_mutex_unlock(&p->mu);
      sl_ring_staging_done(p->c.ring, k, j, st, err.msg);
    }
    pthread_mutex_lock(&p->mu);
    if (--p->busy == 0)
      pthread_cond_broadcast(&p->cv_idle);
  }
  pthread_mutex_unlock(&p->mu);
  return NULL;
}

sl_status sl_pool_create(sl_pool **out, const sl_pool_config *pc, sl_err *err) {
  *out = NULL;
  sl_pool *p = calloc(1, sizeof *p);
  if (!p)
    return sl_err_set(err, SL_ENOMEM, "pool: out of memory");
  p->c = *pc;
  p->w = calloc((size_t)pc->workers, sizeof *p->w);
  if (!p->w) {
    free(p);
    return sl_err_set(err, SL_ENOMEM, "pool: out of memory");
  }
  int e =
      sl_sync_init(&p->mu, (pthread_cond_t *[]){&p->cv_work, &p->cv_idle}, 2);
  if (e != 0) {
    free(p->w);
    free(p);
    return sl_err_errno(err, SL_ETHREAD, e, "pool: cannot create its locks");
  }
  for (int i = 0; i < pc->workers; i++) {
    p->w[i].pool = p;
    sl_status st =
        pc->src->worker_open(pc->src->ctx, pc->max_res, &p->w[i].ws, err);
    if (st != SL_OK) {
      sl_pool_destroy(p);
      return st;
    }
  }
  for (int i = 0; i < pc->workers; i++) {
    e = pthread_create(&p->w[i].thread, NULL, worker_main, &p->w[i]);
    if (e != 0) {
      sl_err_errno(err, SL_ETHREAD, e, "pool: cannot start worker %d of %d", i,
                   pc->workers);
      sl_pool_destroy(p);
      return SL_ETHREAD;
    }
    p->w[i].started = true;
  }
  *out = p;
  return SL_OK;
}

void sl_pool_destroy(sl_pool *p) {
  if (!p)
    return;
  if (p->c.src->epoch_stop) /* wakes workers blocked on a read-ahead */
    p->c.src->epoch_stop(p->c.src->ctx);
  pthread_mutex_lock(&p->mu);
  p->shutdown = true;
  pthread_cond_broadcast(&p->cv_work);
  pthread_mutex_unlock(&p->mu);
  for (int i = 0; i < p->c.workers; i++)
    if (p->w[i].started)
      pthread_join(p->w[i].thread, NULL);
  for (int i = 0; i < p->c.workers; i++)
    if (p->w[i].ws)
      p->c.src->worker_close(p->c.src->ctx, p->w[i].ws);
  sl_sync_destroy(&p->mu, (pthread_cond_t *[]){&p->cv_work, &p->cv_idle}, 2);
  free(p->w);
  free(p);
}

static uint64_t sampler_at(const void *sampler, uint64_t pos) {
  return sl_sampler_at(sampler, pos);
}

void sl_pool_start(sl_pool *p, uint64_t epoch, uint64_t first, uint64_t end,
                   int res, size_t sample_bytes) {
  if (p->c.src->epoch_start) /* the source may read ahead in this order */
    p->c.src->epoch_start(p->c.src->ctx, sampler_at, p->c.sampler, epoch, res,
                          first, end);
  pthread_mutex_lock(&p->mu);
  p->epoch = epoch;
  p->next = first;
  p->end = end;
  p->res = res;
  p->sample_bytes = sample_bytes;
  p->running = true;
  pthread_cond_broadcast(&p->cv_work);
  pthread_mutex_unlock(&p->mu);
}

void sl_pool_stop(sl_pool *p) {
  if (p->c.src->epoch_stop) /* wakes workers blocked on a read-ahead */
    p->c.src->epoch_stop(p->c.src->ctx);
  pthread_mutex_lock(&p->mu);
  p->running = false;
  while (p->busy > 0)
    pthread_cond_wait(&p->cv_idle, &p->mu);
  pthread_mutex_unlock(&p->mu);
}

void sl_pool_stats_get(sl_pool *p, sl_pool_stats *out) {
  pthread_mutex_lock(&p->mu);
  *out = p->st;
  pthread_mutex_unlock(&p->mu);
}
