/* The shared decompressed-chunk cache (loader/chunk_cache.h). */
#include "loader/chunk_cache.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define EMPTY UINT64_MAX

typedef struct slot {
  uint64_t chunk; /* EMPTY: holds nothing */
  uint64_t tick;  /* last acquired */
  int refs;       /* workers using it */
  bool filling;   /* a worker is writing it */
} slot;

struct sl_chunk_cache {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  uint64_t chunk_bytes, tick;
  int n;
  slot *s;
  uint8_t *data; /* n × chunk_bytes */
};

sl_status sl_chunk_cache_create(sl_chunk_cache **out, uint64_t budget,
                                uint64_t chunk_bytes, uint64_t nchunks,
                                sl_err *err) {
  *out = NULL;
  uint64_t n = chunk_bytes ? budget / chunk_bytes : 0;
  if (n > nchunks)
    n = nchunks;
  if (n > 1u << 20)
    n = 1u << 20;
  if (n == 0)
    return SL_OK;
  sl_chunk_cache *c = calloc(1, sizeof *c);
  if (!c)
    return sl_err_set(err, SL_ENOMEM, "chunk cache: out of memory");
  c->chunk_bytes = chunk_bytes;
  c->n = (int)n;
  c->s = calloc(n, sizeof *c->s);
  c->data = malloc((size_t)(n * chunk_bytes));
  if (!c->s || !c->data || pthread_mutex_init(&c->mu, NULL) != 0) {
    free(c->s);
    free(c->data);
    free(c);
    return sl_err_set(err, SL_ENOMEM,
                      "dataset.chunk_cache: no memory for %llu chunks of "
                      "%llu bytes",
                      (unsigned long long)n, (unsigned long long)chunk_bytes);
  }
  if (pthread_cond_init(&c->cv, NULL) != 0) {
    pthread_mutex_destroy(&c->mu);
    free(c->s);
    free(c->data);
    free(c);
    return sl_err_set(err, SL_ENOMEM, "chunk cache: no condition variable");
  }
  memset(c->data, 0, (size_t)(n * chunk_bytes)); /* touched once, here */
  for (int i = 0; i < c->n; i++)
    c->s[i].chunk = EMPTY;
  *out = c;
  return SL_OK;
}

void sl_chunk_cache_destroy(sl_chunk_cache *c) {
  if (!c)
    return;
  pthread_cond_destroy(&c->cv);
  pthread_mutex_destroy(&c->mu);
  free(c->s);
  free(c->data);
  free(c);
}

int sl_chunk_cache_acquire(sl_chunk_cache *c, uint64_t chunk, uint8_t **data,
                           bool *fill) {
  pthread_mutex_lock(&c->mu);
  for (;;) {
    int hit = -1, victim = -1;
    for (int i = 0; i < c->n; i++) {
      if (c->s[i].chunk == chunk) {
        hit = i;
        break;
      }
      if (c->s[i].refs == 0 &&
          (victim < 0 || c->s[i].chunk == EMPTY ||
           (c->s[victim].chunk != EMPTY && c->s[i].tick < c->s[victim].tick)))
        victim = i;
    }
    if (hit >= 0 && c->s[hit].filling) {
      pthread_cond_wait(&c->cv, &c->mu); /* another worker fills it */
      continue;
    }
    int k = hit >= 0 ? hit : victim;
    if (k < 0) {
      pthread_mutex_unlock(&c->mu);
      return -1;
    }
    slot *s = &c->s[k];
    *fill = hit < 0;
    if (*fill) {
      s->chunk = chunk;
      s->filling = true;
    }
    s->refs++;
    s->tick = ++c->tick;
    *data = c->data + (uint64_t)k * c->chunk_bytes;
    pthread_mutex_unlock(&c->mu);
    return k;
  }
}

void sl_chunk_cache_filled(sl_chunk_cache *c, int k, bool ok) {
  pthread_mutex_lock(&c->mu);
  c->s[k].filling = false;
  if (!ok)
    c->s[k].chunk = EMPTY;
  pthread_cond_broadcast(&c->cv);
  pthread_mutex_unlock(&c->mu);
}

void sl_chunk_cache_release(sl_chunk_cache *c, int k) {
  pthread_mutex_lock(&c->mu);
  c->s[k].refs--;
  pthread_mutex_unlock(&c->mu);
}
