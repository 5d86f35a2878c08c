/* Fetch-ahead of a remote dataset's shards in the epoch's order
 * (loader/fetch_ahead.h): the plan made at epoch start, the threads that
 * fetch by it, and the workers' progress that moves it. */
#include "loader/fetch_ahead.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "loader/sampler.h"
#include "remote/cache.h"

#define NONE UINT64_MAX
#define FREE_SLOT UINT64_MAX
#define MAX_THREADS 64

enum { PENDING, IN_FLIGHT, FETCHED };

/* A shard read this epoch, by its first position. */
typedef struct fa_use {
  uint64_t first;
  size_t k;
} fa_use;

typedef struct fa_slot {
  _Atomic uint64_t pos; /* a worker's position being read, FREE_SLOT */
} fa_slot;

struct sl_fetch_ahead {
  const sl_source *src;
  sl_cache *cache;
  const uint64_t *file_first;
  size_t nfiles;
  unsigned depth, nthreads, nslots;
  /* The epoch's plan, per shard: its first and last position (NONE: not
   * read by this rank), its state, whether its last position has ended;
   * order: the shards read, by first position (nused of them). */
  uint64_t *first, *last;
  uint8_t *state;
  bool *done;
  fa_use *order;
  size_t nused;
  fa_slot *slots;      /* positions being read (nslots) */
  _Atomic uint64_t hi; /* the latest position begun + 1; 0: none */
  /* The threads' cursors (under mu): order[0, begun) have been begun by
   * the workers; order[0, settled) are all fetched or done; order[0,
   * done_lo) all done. */
  size_t begun, settled, done_lo;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  bool stopping;
  pthread_t threads[MAX_THREADS];
  unsigned started;
};

sl_status sl_fetch_ahead_open(sl_fetch_ahead **out,
                              const sl_fetch_ahead_opts *o,
                              const sl_source *src, const uint64_t *file_first,
                              size_t nfiles, unsigned workers, sl_err *err) {
  *out = NULL;
  sl_cache *cache = sl_source_cache(src);
  if (!cache || !file_first || nfiles == 0 || o->shards == 0 || o->threads == 0)
    return SL_OK;
  uint64_t largest = 0, size;
  size_t big = 0;
  const char *url;
  uint32_t crc;
  for (size_t k = 0; k < nfiles; k++)
    if (sl_source_remote_file(src, k, &url, &size, &crc) && size > largest) {
      largest = size;
      big = k;
    }
  uint64_t bound = sl_cache_bound(cache), n = (uint64_t)o->shards + workers;
  if (largest > 0 && bound / largest < n) {
    sl_source_remote_file(src, big, &url, &size, &crc);
    return sl_err_set(err, SL_ECONFIG,
                      "io.cache_bytes = %" PRIu64
                      " holds fewer than io.prefetch_shards + "
                      "loader.workers = %u + %u shards of up to %" PRIu64
                      " bytes (%s): raise io.cache_bytes to %" PRIu64
                      " or lower io.prefetch_shards",
                      bound, o->shards, workers, largest, url, n * largest);
  }
  sl_fetch_ahead *fa = calloc(1, sizeof *fa);
  if (!fa)
    return sl_err_set(err, SL_ENOMEM, "fetch-ahead: no memory");
  fa->src = src;
  fa->cache = cache;
  fa->file_first = file_first;
  fa->nfiles = nfiles;
  fa->depth = o->shards;
  fa->nthreads = o->threads < MAX_THREADS ? o->threads : MAX_THREADS;
  fa->nslots = workers ? workers : 1;
  fa->first = malloc(nfiles * sizeof *fa->first);
  fa->last = malloc(nfiles * sizeof *fa->last);
  fa->state = malloc(nfiles);
  fa->done = malloc(nfiles * sizeof *fa->done);
  fa->order = malloc(nfiles * sizeof *fa->order);
  fa->slots = malloc(fa->nslots * sizeof *fa->slots);
  sl_status st = SL_OK;
  if (!fa->first || !fa->last || !fa->state || !fa->done || !fa->order ||
      !fa->slots)
    st = sl_err_set(err, SL_ENOMEM, "fetch-ahead: no memory for %zu shards",
                    nfiles);
  if (st == SL_OK)
    st = sl_cache_plan_open(cache, nfiles, err);
  if (st == SL_OK && pthread_mutex_init(&fa->mu, NULL) != 0)
    st = sl_err_set(err, SL_ETHREAD, "fetch-ahead: pthread_mutex_init");
  else if (st == SL_OK && pthread_cond_init(&fa->cv, NULL) != 0) {
    pthread_mutex_destroy(&fa->mu);
    st = sl_err_set(err, SL_ETHREAD, "fetch-ahead: pthread_cond_init");
  }
  if (st != SL_OK) {
    free(fa->first), free(fa->last), free(fa->state), free(fa->done);
    free(fa->order), free(fa->slots), free(fa);
    return st;
  }
  for (size_t k = 0; k < nfiles; k++)
    if (sl_source_remote_file(src, k, &url, &size, &crc))
      sl_cache_plan_object(cache, k, url, size, crc);
  sl_cache_plan_sort(cache);
  for (unsigned i = 0; i < fa->nslots; i++)
    atomic_init(&fa->slots[i].pos, FREE_SLOT);
  atomic_init(&fa->hi, 0);
  *out = fa;
  return SL_OK;
}

void sl_fetch_ahead_close(sl_fetch_ahead *fa) {
  if (!fa)
    return;
  sl_fetch_ahead_stop(fa);
  pthread_cond_destroy(&fa->cv);
  pthread_mutex_destroy(&fa->mu);
  free(fa->first), free(fa->last), free(fa->state), free(fa->done);
  free(fa->order), free(fa->slots), free(fa);
}

/* The shard holding sample s: the last k with file_first[k] <= s. */
static size_t shard_of(const sl_fetch_ahead *fa, uint64_t s) {
  size_t lo = 0, hi = fa->nfiles;
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (fa->file_first[mid] <= s)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

static int by_first(const void *a, const void *b) {
  const fa_use *x = a, *y = b;
  return x->first < y->first ? -1 : x->first > y->first;
}

/* The lowest position being read, else hi: positions below it have ended
 * (but one claimed and not yet begun, which may then find its shard
 * evicted and fetch it again). */
static uint64_t low_water(sl_fetch_ahead *fa, uint64_t hi) {
  uint64_t lo = hi;
  for (unsigned i = 0; i < fa->nslots; i++) {
    uint64_t p = atomic_load(&fa->slots[i].pos);
    if (p != FREE_SLOT && p < lo)
      lo = p;
  }
  return lo;
}

/* Under mu: the plan moved to the workers' progress: shards begun, shards
 * whose last position has ended told to the cache as done. */
static void refresh(sl_fetch_ahead *fa) {
  uint64_t hi = atomic_load(&fa->hi), lo = low_water(fa, hi);
  while (fa->begun < fa->nused && fa->order[fa->begun].first < hi)
    fa->begun++;
  for (size_t i = fa->done_lo; i < fa->begun; i++) {
    size_t k = fa->order[i].k;
    if (!fa->done[k] && fa->last[k] < lo) {
      fa->done[k] = true;
      sl_cache_plan_next(fa->cache, k, SL_CACHE_DONE);
    }
  }
  while (fa->done_lo < fa->begun && fa->done[fa->order[fa->done_lo].k])
    fa->done_lo++;
  while (fa->settled < fa->nused) {
    size_t k = fa->order[fa->settled].k;
    if (!fa->done[k] && fa->state[k] != FETCHED)
      break;
    fa->settled++;
  }
}

/* Under mu: waits ms milliseconds or until stop. */
static void nap(sl_fetch_ahead *fa, long ms) {
  struct timespec t;
  if (clock_gettime(CLOCK_REALTIME, &t) != 0)
    return;
  t.tv_nsec += ms * 1000000;
  t.tv_sec += t.tv_nsec / 1000000000;
  t.tv_nsec %= 1000000000;
  (void)pthread_cond_timedwait(&fa->cv, &fa->mu, &t); /* timeout or wake */
}

/* A fetch thread: the next pending shard within the depth, fetched ahead;
 * when there is none, or no room for it yet, a nap. */
static void *fetcher(void *arg) {
  sl_fetch_ahead *fa = arg;
  pthread_mutex_lock(&fa->mu);
  while (!fa->stopping) {
    refresh(fa);
    size_t lim =
        fa->begun + fa->depth < fa->nused ? fa->begun + fa->depth : fa->nused;
    size_t k = fa->nfiles;
    for (size_t i = fa->settled; i < lim && k == fa->nfiles; i++)
      if (fa->state[fa->order[i].k] == PENDING && !fa->done[fa->order[i].k])
        k = fa->order[i].k;
    if (k == fa->nfiles) {
      nap(fa, 2);
      continue;
    }
    fa->state[k] = IN_FLIGHT;
    pthread_mutex_unlock(&fa->mu);
    const char *url;
    uint64_t size;
    uint32_t crc;
    bool no_room = false;
    sl_err e = {0};
    sl_status st = SL_OK;
    if (sl_source_remote_file(fa->src, k, &url, &size, &crc))
      st =
          sl_cache_ahead(fa->cache, url, size, crc, fa->first[k], &no_room, &e);
    pthread_mutex_lock(&fa->mu);
    /* A failure is left to the worker that needs the shard: its own fetch
     * reports it, naming the sample. */
    fa->state[k] = st == SL_OK && no_room ? PENDING : FETCHED;
    if (no_room)
      nap(fa, 5);
  }
  pthread_mutex_unlock(&fa->mu);
  return NULL;
}

void sl_fetch_ahead_start(sl_fetch_ahead *fa, sl_order_at_fn at,
                          const void *order, uint64_t first, uint64_t end) {
  if (!fa)
    return;
  sl_fetch_ahead_stop(fa);
  for (size_t k = 0; k < fa->nfiles; k++) {
    fa->first[k] = fa->last[k] = NONE;
    fa->state[k] = PENDING;
    fa->done[k] = false;
  }
  for (uint64_t p = first; p < end; p++) {
    size_t k = shard_of(fa, at(order, p));
    if (fa->first[k] == NONE)
      fa->first[k] = p;
    fa->last[k] = p;
  }
  fa->nused = 0;
  for (size_t k = 0; k < fa->nfiles; k++) {
    sl_cache_plan_next(fa->cache, k, fa->first[k]); /* NONE: done */
    if (fa->first[k] != NONE)
      fa->order[fa->nused++] = (fa_use){fa->first[k], k};
  }
  qsort(fa->order, fa->nused, sizeof *fa->order, by_first);
  for (unsigned i = 0; i < fa->nslots; i++)
    atomic_store(&fa->slots[i].pos, FREE_SLOT);
  atomic_store(&fa->hi, 0);
  sl_cache_plan_now(fa->cache, first);
  fa->begun = fa->settled = fa->done_lo = 0;
  fa->stopping = false;
  for (fa->started = 0; fa->started < fa->nthreads; fa->started++)
    if (pthread_create(&fa->threads[fa->started], NULL, fetcher, fa) != 0)
      break;
}

void sl_fetch_ahead_stop(sl_fetch_ahead *fa) {
  if (!fa || fa->started == 0)
    return;
  pthread_mutex_lock(&fa->mu);
  fa->stopping = true;
  pthread_cond_broadcast(&fa->cv);
  pthread_mutex_unlock(&fa->mu);
  for (unsigned i = 0; i < fa->started; i++)
    pthread_join(fa->threads[i], NULL);
  fa->started = 0;
}

int sl_fetch_ahead_begin(sl_fetch_ahead *fa, uint64_t pos) {
  if (!fa)
    return -1;
  uint64_t hi = atomic_load(&fa->hi);
  while (pos + 1 > hi && !atomic_compare_exchange_weak(&fa->hi, &hi, pos + 1))
    ;
  uint64_t now = atomic_load(&fa->hi) - 1;
  sl_cache_plan_now(fa->cache, now);
  for (unsigned i = 0; i < fa->nslots; i++) {
    uint64_t free_slot = FREE_SLOT;
    if (atomic_compare_exchange_strong(&fa->slots[i].pos, &free_slot, pos))
      return (int)i;
  }
  return -1; /* more readers than slots: not tracked (never: one a worker) */
}

void sl_fetch_ahead_end(sl_fetch_ahead *fa, int token) {
  if (fa && token >= 0 && (unsigned)token < fa->nslots)
    atomic_store(&fa->slots[token].pos, FREE_SLOT);
}
