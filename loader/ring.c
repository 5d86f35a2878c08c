/* The staging ring protocol, once for every backend; see ring.h.
 *
 * One mutex guards all the ring's state. Three condition variables:
 *   cv_work      workers waiting for their batch's staging buffer;
 *   cv_mover     the mover waiting for a complete batch and a free slot;
 *   cv_consumer  the consumer waiting for a ready batch, or for the mover to
 *                go idle during an abort.
 * Slot life: FREE → (mover copies) → READY → (next) HELD → (release) FREE.
 * The mover calls wait_consumed before writing a slot, so a slot the
 * consumer's stream still reads is never overwritten. Its waits on the
 * consumer (a free slot, wait_consumed, the backend's device-side wait)
 * add up in slot_wait_ns. */
#include "loader/ring.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/mem.h"
#include "common/sync.h"

enum { SLOT_FREE, SLOT_MOVING, SLOT_READY, SLOT_HELD };

/* A buffer's per-sample arrays: one struct of arrays, not an array of
 * per-sample structs, because a batch hands each array out as it is
 * (sl_batch.labels, .indices, ...) and the training loop reads them as
 * arrays. Every buffer's arrays are carved from one allocation (side_mem),
 * each buffer's as one block of side_bytes in the same layout, the widest
 * elements first so each array stays aligned: the mover copies a batch's
 * arrays from staging to its slot with one memcpy of the block. */
typedef struct side_arrays {
  void *block; /* the buffer's side_bytes: indices starts it */
  uint64_t *indices;
  int32_t *labels;
  float *targets; /* NULL when target_width is 0 */
  float *boxes;   /* the three NULL when box_capacity is 0 */
  int32_t *box_labels;
  uint32_t *box_counts;
} side_arrays;

typedef struct stage_buf {
  uint64_t batch; /* the batch this buffer holds now */
  int done;       /* samples written */
  int err_j;      /* lowest failing sample, or -1 */
  sl_status err;
  char msg[SL_ERRMSG_MAX];
  side_arrays side;
} stage_buf;

typedef struct slot {
  int state;
  uint32_t generation;
  uint64_t epoch, index;
  size_t bytes;
  sl_status err; /* a batch that failed travels as an error */
  char msg[SL_ERRMSG_MAX];
  side_arrays side;
  sl_mix_note mix;
} slot;

struct sl_ring {
  sl_ring_backend *be;
  sl_ring_config rc;
  pthread_mutex_t mu;
  pthread_cond_t cv_work, cv_mover, cv_consumer;
  pthread_t mover;
  bool sync_ok; /* mu and the condition variables exist */
  bool mover_started, shutdown, active, mover_busy;
  sl_ring_epoch ep;
  uint64_t moved;   /* next batch the mover takes */
  uint64_t deliver; /* next batch the consumer gets */
  stage_buf *stg;
  slot *slots;
  int *freeq, free_head, free_n;    /* FIFO of free slots */
  int *readyq, ready_head, ready_n; /* FIFO of ready slots, batch order */
  int held;
  int last;    /* slot sl_ring_next handed out last, -1 after a reset or
                  unget: the one sl_ring_unget may take back */
  sl_err err;  /* sticky error of the epoch (SL_OK when none) */
  sl_err dead; /* the backend failed: every later next returns this */
  uint64_t slot_wait_ns;
  unsigned char *side_mem; /* nstaging + nslots blocks of side_bytes */
  size_t side_bytes;
};

/* Bytes of one buffer's side arrays, a multiple of 8. */
static size_t side_size(size_t nb, size_t tw, size_t bc) {
  size_t n = nb * (sizeof(uint64_t) + sizeof(int32_t) + tw * sizeof(float) +
                   bc * (4 * sizeof(float) + sizeof(int32_t)) +
                   (bc ? sizeof(uint32_t) : 0));
  return (n + 7) & ~(size_t)7;
}

/* The arrays of the block at p, in side_size's layout. */
static side_arrays side_carve(unsigned char *p, size_t nb, size_t tw,
                              size_t bc) {
  side_arrays a = {0};
  a.block = p;
  a.indices = (uint64_t *)(void *)p;
  p += nb * sizeof *a.indices;
  a.labels = (int32_t *)(void *)p;
  p += nb * sizeof *a.labels;
  if (tw > 0) {
    a.targets = (float *)(void *)p;
    p += nb * tw * sizeof *a.targets;
  }
  if (bc > 0) {
    a.boxes = (float *)(void *)p;
    p += nb * bc * 4 * sizeof *a.boxes;
    a.box_labels = (int32_t *)(void *)p;
    p += nb * bc * sizeof *a.box_labels;
    a.box_counts = (uint32_t *)(void *)p;
  }
  return a;
}

static void q_push(int *q, int head, int *n, int cap, int v) {
  q[(head + *n) % cap] = v;
  (*n)++;
}

/* Puts v back at the head (the next q_pop returns it). */
static void q_unpop(int *q, int *head, int *n, int cap, int v) {
  *head = (*head + cap - 1) % cap;
  q[*head] = v;
  (*n)++;
}

static int q_pop(int *q, int *head, int *n, int cap) {
  int v = q[*head];
  *head = (*head + 1) % cap;
  (*n)--;
  return v;
}

/* ---- Mover ------------------------------------------------------------------
 */

static bool batch_complete(const sl_ring *r) {
  if (!r->active || r->dead.code != SL_OK || r->err.code != SL_OK ||
      r->moved >= r->ep.nbatches)
    return false;
  const stage_buf *b = &r->stg[r->moved % (uint64_t)r->rc.nstaging];
  return b->done == r->rc.batch_size;
}

static bool mover_can_run(const sl_ring *r) {
  return batch_complete(r) && r->free_n > 0;
}

/* A complete batch waits for the consumer to release a slot. */
static bool slot_starved(const sl_ring *r) {
  return batch_complete(r) && r->free_n == 0;
}

static void *mover_main(void *arg) {
  sl_ring *r = arg;
  sl_err err;
  sl_err_clear(&err);
  sl_status init = SL_OK;
  if (r->be->ops->thread_init)
    init = r->be->ops->thread_init(r->be, &err);
  pthread_mutex_lock(&r->mu);
  if (init != SL_OK) { /* reported by next, forever: the ring cannot move */
    r->dead = err;
    pthread_cond_broadcast(&r->cv_consumer);
  }
  for (;;) {
    while (!r->shutdown && !mover_can_run(r)) {
      bool starved = slot_starved(r);
      uint64_t t0 = sl_now_ns();
      pthread_cond_wait(&r->cv_mover, &r->mu);
      if (starved)
        r->slot_wait_ns += sl_now_ns() - t0;
    }
    if (r->shutdown)
      break;
    uint64_t k = r->moved;
    int i = (int)(k % (uint64_t)r->rc.nstaging);
    stage_buf *b = &r->stg[i];
    int s = q_pop(r->freeq, &r->free_head, &r->free_n, r->rc.nslots);
    slot *sl = &r->slots[s];
    sl->state = SLOT_MOVING;
    r->mover_busy = true;
    sl_ring_copy c = r->ep.copy;
    void *stg_data = r->be->ops->staging(r->be, i);
    c.src = stg_data;
    c.src_index = i;
    c.src_bytes = (size_t)r->rc.batch_size * r->ep.src_sample_bytes;
    c.dst_bytes = (size_t)r->rc.batch_size * r->ep.dst_sample_bytes;
    sl_status batch_err = b->err;
    uint64_t epoch = r->ep.epoch;
    pthread_mutex_unlock(&r->mu);

    sl_status st = SL_OK;
    sl_err_clear(&err);
    uint64_t waited_ns = 0; /* on the consumer, for this slot */
    memset(&sl->mix, 0, sizeof sl->mix);
    if (batch_err == SL_OK && r->rc.batch_op) {
      sl_ring_epoch_view v = {epoch,      c.n,         c.height,    c.width,
                              c.channels, c.src_dtype, c.src_layout};
      bool backend_mixes = r->be->ops->mixes && r->be->ops->mixes(r->be);
      r->rc.batch_op(r->rc.batch_user, &v, k, stg_data, !backend_mixes,
                     b->side.labels, b->side.targets, &sl->mix);
      if (backend_mixes) {
        c.mix.kind = (int)sl->mix.kind;
        c.mix.lambda = sl->mix.lambda;
        c.mix.y0 = (int)sl->mix.box[0], c.mix.y1 = (int)sl->mix.box[1];
        c.mix.x0 = (int)sl->mix.box[2], c.mix.x1 = (int)sl->mix.box[3];
      }
    }
    if (batch_err == SL_OK) {
      uint64_t t0 = sl_now_ns();
      st = r->be->ops->wait_consumed(r->be, s, &err);
      waited_ns = sl_now_ns() - t0;
      if (st == SL_OK)
        st = r->be->ops->copy_to_slot(r->be, s, &c, &err);
      if (st == SL_OK)
        st = r->be->ops->record_ready(r->be, s, &err);
      if (st == SL_OK)
        st = r->be->ops->wait_ready(r->be, s, &err);
      if (st == SL_OK && r->be->ops->consumer_wait_ns)
        waited_ns += r->be->ops->consumer_wait_ns(r->be, s);
    }
    if (st != SL_OK && r->be->ops->drain)
      r->be->ops->drain(r->be); /* before staging or s is handed out again */
    memcpy(sl->side.block, b->side.block, r->side_bytes);

    pthread_mutex_lock(&r->mu);
    r->mover_busy = false;
    r->slot_wait_ns += waited_ns;
    /* A backend failure first: an abort at the same moment (start_epoch)
     * must not hide it, or the next epoch would run on a failed device. */
    if (st != SL_OK) { /* the backend failed: the ring cannot go on */
      r->dead = err;
      sl->state = SLOT_FREE;
      q_push(r->freeq, r->free_head, &r->free_n, r->rc.nslots, s);
      pthread_cond_broadcast(&r->cv_consumer);
      continue;
    }
    if (!r->active) { /* aborted meanwhile: the reset reclaims staging */
      sl->state = SLOT_FREE;
      q_push(r->freeq, r->free_head, &r->free_n, r->rc.nslots, s);
      pthread_cond_broadcast(&r->cv_consumer);
      continue;
    }
    sl->epoch = r->ep.epoch;
    sl->index = k;
    sl->bytes = c.dst_bytes;
    sl->err = batch_err;
    if (batch_err != SL_OK)
      memcpy(sl->msg, b->msg, sizeof sl->msg);
    sl->state = SLOT_READY;
    q_push(r->readyq, r->ready_head, &r->ready_n, r->rc.nslots, s);
    r->moved = k + 1;
    b->batch = k + (uint64_t)r->rc.nstaging;
    b->done = 0;
    b->err = SL_OK;
    b->err_j = -1;
    pthread_cond_broadcast(&r->cv_work);
    pthread_cond_broadcast(&r->cv_consumer);
  }
  pthread_mutex_unlock(&r->mu);
  return NULL;
}

/* ---- Create / destroy --------------------------------------------------- */

sl_status sl_ring_create(sl_ring **out, const sl_ring_config *rc,
                         sl_ring_backend *backend, sl_err *err) {
  *out = NULL;
  if (rc->nstaging < 1 || rc->nslots < 1 || rc->batch_size < 1) {
    backend->ops->destroy(backend);
    return sl_err_set(err, SL_EINVAL, "ring: bad sizes (%d staging, %d slots)",
                      rc->nstaging, rc->nslots);
  }
  sl_ring *r = calloc(1, sizeof *r);
  if (!r) {
    backend->ops->destroy(backend);
    return sl_err_set(err, SL_ENOMEM, "ring: out of memory");
  }
  r->be = backend;
  r->rc = *rc;
  sl_status st = backend->ops->alloc(backend, rc->nstaging, rc->staging_bytes,
                                     rc->nslots, rc->slot_bytes, err);
  if (st != SL_OK) {
    backend->ops->destroy(backend);
    free(r);
    return st;
  }
  size_t nbuf = (size_t)rc->nstaging + (size_t)rc->nslots;
  size_t nb = (size_t)rc->batch_size;
  r->stg = calloc((size_t)rc->nstaging, sizeof *r->stg);
  r->slots = calloc((size_t)rc->nslots, sizeof *r->slots);
  r->freeq = calloc((size_t)rc->nslots, sizeof *r->freeq);
  r->readyq = calloc((size_t)rc->nslots, sizeof *r->readyq);
  size_t tw = rc->target_width, bc = rc->box_capacity;
  r->side_bytes = side_size(nb, tw, bc);
  r->side_mem = calloc(nbuf, r->side_bytes);
  if (!r->stg || !r->slots || !r->freeq || !r->readyq || !r->side_mem) {
    sl_ring_destroy(r);
    return sl_err_set(err, SL_ENOMEM, "ring: out of memory");
  }
  for (int i = 0; i < rc->nstaging; i++) {
    r->stg[i].side =
        side_carve(r->side_mem + (size_t)i * r->side_bytes, nb, tw, bc);
    r->stg[i].err_j = -1;
  }
  for (int s = 0; s < rc->nslots; s++) {
    size_t at = (size_t)rc->nstaging + (size_t)s;
    r->slots[s].side = side_carve(r->side_mem + at * r->side_bytes, nb, tw, bc);
    q_push(r->freeq, r->free_head, &r->free_n, rc->nslots, s);
  }
  int e = sl_sync_init(
      &r->mu, (pthread_cond_t *[]){&r->cv_work, &r->cv_mover, &r->cv_consumer},
      3);
  if (e != 0) {
    sl_ring_destroy(r);
    return sl_err_errno(err, SL_ETHREAD, e, "ring: cannot create its locks");
  }
  r->sync_ok = true;
  r->last = -1;
  e = pthread_create(&r->mover, NULL, mover_main, r);
  if (e != 0) {
    sl_err_errno(err, SL_ETHREAD, e, "ring: cannot start the mover thread");
    r->mover_started = false;
    sl_ring_destroy(r);
    return SL_ETHREAD;
  }
  r->mover_started = true;
  *out = r;
  return SL_OK;
}

void sl_ring_destroy(sl_ring *r) {
  if (!r)
    return;
  if (r->mover_started) {
    pthread_mutex_lock(&r->mu);
    r->shutdown = true;
    r->active = false;
    pthread_cond_broadcast(&r->cv_mover);
    pthread_cond_broadcast(&r->cv_work);
    pthread_mutex_unlock(&r->mu);
    pthread_join(r->mover, NULL);
  }
  if (r->sync_ok)
    sl_sync_destroy(
        &r->mu,
        (pthread_cond_t *[]){&r->cv_work, &r->cv_mover, &r->cv_consumer}, 3);
  r->be->ops->destroy(r->be);
  free(r->stg);
  free(r->slots);
  free(r->freeq);
  free(r->readyq);
  free(r->side_mem);
  free(r);
}

bool sl_ring_on_device(const sl_ring *r) {
  return r->be->ops->on_device;
}
const char *sl_ring_backend_name(const sl_ring *r) {
  return r->be->ops->name;
}

/* ---- Epoch control (consumer) ------------------------------------------- */

void sl_ring_abort(sl_ring *r) {
  pthread_mutex_lock(&r->mu);
  r->active = false;
  pthread_cond_broadcast(&r->cv_work);
  pthread_cond_broadcast(&r->cv_mover);
  while (r->mover_busy)
    pthread_cond_wait(&r->cv_consumer, &r->mu);
  pthread_mutex_unlock(&r->mu);
}

void sl_ring_reset(sl_ring *r, const sl_ring_epoch *ep) {
  pthread_mutex_lock(&r->mu);
  while (r->mover_busy) /* only if reset came without abort */
    pthread_cond_wait(&r->cv_consumer, &r->mu);
  while (r->ready_n > 0) {
    int s = q_pop(r->readyq, &r->ready_head, &r->ready_n, r->rc.nslots);
    r->slots[s].state = SLOT_FREE;
    q_push(r->freeq, r->free_head, &r->free_n, r->rc.nslots, s);
  }
  r->ep = *ep;
  r->last = -1;
  r->moved = ep->first_batch;
  r->deliver = ep->first_batch;
  for (int i = 0; i < r->rc.nstaging; i++) {
    uint64_t k = ep->first_batch + (uint64_t)i;
    stage_buf *b = &r->stg[k % (uint64_t)r->rc.nstaging];
    b->batch = k;
    b->done = 0;
    b->err = SL_OK;
    b->err_j = -1;
  }
  sl_err_clear(&r->err);
  r->active = true;
  pthread_cond_broadcast(&r->cv_mover);
  pthread_cond_broadcast(&r->cv_work);
  pthread_mutex_unlock(&r->mu);
}

/* ---- Workers ----------------------------------------------------------------
 */

sl_status sl_ring_staging_acquire(sl_ring *r, uint64_t k, sl_ring_staging *st) {
  pthread_mutex_lock(&r->mu);
  while (r->active && k >= r->moved + (uint64_t)r->rc.nstaging)
    pthread_cond_wait(&r->cv_work, &r->mu);
  if (!r->active) {
    pthread_mutex_unlock(&r->mu);
    return SL_ESTATE;
  }
  int i = (int)(k % (uint64_t)r->rc.nstaging);
  st->data = r->be->ops->staging(r->be, i);
  st->labels = r->stg[i].side.labels;
  st->indices = r->stg[i].side.indices;
  st->targets = r->stg[i].side.targets;
  st->boxes = r->stg[i].side.boxes;
  st->box_labels = r->stg[i].side.box_labels;
  st->box_counts = r->stg[i].side.box_counts;
  pthread_mutex_unlock(&r->mu);
  return SL_OK;
}

void sl_ring_staging_done(sl_ring *r, uint64_t k, int j, sl_status status,
                          const char *msg) {
  pthread_mutex_lock(&r->mu);
  stage_buf *b = &r->stg[k % (uint64_t)r->rc.nstaging];
  if (r->active && b->batch == k) {
    if (status != SL_OK && (b->err_j < 0 || j < b->err_j)) {
      b->err_j = j;
      b->err = status;
      snprintf(b->msg, sizeof b->msg, "%s", msg ? msg : "");
    }
    if (++b->done == r->rc.batch_size)
      pthread_cond_signal(&r->cv_mover);
  }
  pthread_mutex_unlock(&r->mu);
}

/* ---- Consumer -------------------------------------------------------------
 */

sl_status sl_ring_next(sl_ring *r, sl_ring_batch *out, uint64_t *wait_ns,
                       sl_err *err) {
  memset(out, 0, sizeof *out);
  out->slot = -1;
  uint64_t waited = 0;
  sl_status st;
  pthread_mutex_lock(&r->mu);
  for (;;) {
    if (r->dead.code != SL_OK) {
      st = sl_err_set(err, r->dead.code, "%s", r->dead.msg);
      break;
    }
    if (r->err.code != SL_OK) {
      st = sl_err_set(err, r->err.code, "%s", r->err.msg);
      break;
    }
    if (!r->active) {
      st = sl_err_set(err, SL_ESTATE,
                      "no epoch started: call "
                      "sl_loader_start_epoch first");
      break;
    }
    if (r->ready_n > 0) {
      int s = q_pop(r->readyq, &r->ready_head, &r->ready_n, r->rc.nslots);
      slot *sl = &r->slots[s];
      r->deliver++;
      if (sl->err != SL_OK) { /* the batch failed: the epoch stops here */
        sl_err_set(&r->err, sl->err, "%s", sl->msg);
        sl->state = SLOT_FREE;
        q_push(r->freeq, r->free_head, &r->free_n, r->rc.nslots, s);
        continue;
      }
      sl->state = SLOT_HELD;
      sl->generation++;
      r->held++;
      r->last = s;
      out->slot = s;
      out->generation = sl->generation;
      out->data = r->be->ops->slot(r->be, s);
      out->labels = sl->side.labels;
      out->indices = sl->side.indices;
      out->targets = sl->side.targets;
      out->boxes = sl->side.boxes;
      out->box_labels = sl->side.box_labels;
      out->box_counts = sl->side.box_counts;
      out->ready = r->be->ops->ready_event(r->be, s);
      out->epoch = sl->epoch;
      out->index = sl->index;
      out->bytes = sl->bytes;
      out->mix = sl->mix;
      st = SL_OK;
      break;
    }
    if (r->deliver >= r->ep.nbatches) {
      st = SL_END;
      break;
    }
    if (r->held == r->rc.nslots) {
      st = sl_err_set(err, SL_ESTATE,
                      "all %d slots are held by the caller: release a batch "
                      "(sl_batch_release) before asking for the next",
                      r->rc.nslots);
      break;
    }
    uint64_t t0 = sl_now_ns();
    pthread_cond_wait(&r->cv_consumer, &r->mu);
    waited += sl_now_ns() - t0;
  }
  pthread_mutex_unlock(&r->mu);
  if (wait_ns)
    *wait_ns = waited;
  return st;
}

sl_status sl_ring_release(sl_ring *r, int s, uint32_t generation,
                          const int32_t *labels, void *stream, sl_err *err) {
  /* A slot's labels array is fixed at create (filled by copy). */
  if (s < 0 || s >= r->rc.nslots || labels != r->slots[s].side.labels)
    return sl_err_set(err, SL_EINVAL,
                      "sl_batch_release: the batch is not from this loader "
                      "(release it into the loader whose sl_loader_next "
                      "gave it)");
  pthread_mutex_lock(&r->mu);
  bool ok =
      r->slots[s].state == SLOT_HELD && r->slots[s].generation == generation;
  pthread_mutex_unlock(&r->mu);
  if (!ok)
    return sl_err_set(err, SL_EINVAL,
                      "sl_batch_release: batch in slot %d was already "
                      "released",
                      s);
  /* Recorded before the slot is free, so the mover's wait_consumed sees it.
   * Only this (consumer) thread changes a HELD slot, so no one races. */
  sl_status st = r->be->ops->record_consumed(r->be, s, stream, err);
  pthread_mutex_lock(&r->mu);
  r->slots[s].state = SLOT_FREE;
  r->held--;
  q_push(r->freeq, r->free_head, &r->free_n, r->rc.nslots, s);
  pthread_cond_signal(&r->cv_mover);
  pthread_mutex_unlock(&r->mu);
  return st;
}

sl_status sl_ring_unget(sl_ring *r, int s, uint32_t generation,
                        const int32_t *labels, sl_err *err) {
  if (s < 0 || s >= r->rc.nslots || labels != r->slots[s].side.labels)
    return sl_err_set(err, SL_EINVAL,
                      "sl_loader_unget: the batch is not from this loader");
  sl_status st = SL_OK;
  pthread_mutex_lock(&r->mu);
  slot *sl = &r->slots[s];
  if (sl->state != SLOT_HELD || sl->generation != generation)
    st = sl_err_set(err, SL_EINVAL,
                    "sl_loader_unget: batch in slot %d was already "
                    "released or handed back",
                    s);
  else if (s != r->last)
    st = sl_err_set(err, SL_EINVAL,
                    "sl_loader_unget: batch %llu of epoch %llu is not the "
                    "last one sl_loader_next handed out (only that one can "
                    "be handed back, before the next call)",
                    (unsigned long long)sl->index,
                    (unsigned long long)sl->epoch);
  if (st == SL_OK) {
    sl->state = SLOT_READY;
    r->held--;
    r->deliver--;
    r->last = -1;
    q_unpop(r->readyq, &r->ready_head, &r->ready_n, r->rc.nslots, s);
  }
  pthread_mutex_unlock(&r->mu);
  return st;
}

uint64_t sl_ring_slot_wait_ns(sl_ring *r) {
  pthread_mutex_lock(&r->mu);
  uint64_t v = r->slot_wait_ns;
  pthread_mutex_unlock(&r->mu);
  return v;
}
