/* The worker pool: `workers` threads, started at open and joined at close,
 * claim sample positions of the epoch in order from one counter and write
 * each sample straight into its batch's staging buffer in the ring.
 *
 * Claims go in batch order, so the oldest batch completes first; a worker
 * whose batch has no staging buffer yet (the ring is `staging` batches
 * ahead) sleeps on a condition variable. No thread is made and nothing is
 * allocated per batch or per epoch.
 *
 * Bad samples: with on_error = skip a failing sample is replaced by
 * another, drawn from (seed, epoch, index, attempt) so the replacement does
 * not depend on threads; up to SL_POOL_SKIP_TRIES draws. With fail the
 * batch carries the error to the consumer.
 *
 * Thread safety: start/stop/stats from the consumer thread only.
 * Memory: the worker states (sl_sample_src.worker_open) and W thread stacks,
 * at create. */
#ifndef SLUICE_LOADER_POOL_H
#define SLUICE_LOADER_POOL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "sluice.h"

#include "loader/ring.h"
#include "loader/sample.h"
#include "loader/sampler.h"

#define SL_POOL_SKIP_TRIES 8
#define SL_POOL_BAD_KEEP 16

/* The loader's log sink, shared with the workers (serialised by mu). */
typedef struct sl_logger {
  sl_log_fn fn;
  void *user;
  pthread_mutex_t mu;
} sl_logger;
void sl_logf(sl_logger *lg, sl_log_level level, const char *fmt, ...)
    SL_PRINTF(3, 4);

typedef struct sl_pool_config {
  int workers;
  int max_res;
  int batch_size;
  uint64_t seed;
  bool skip_bad;
  const sl_sample_src *src;
  const sl_sampler *sampler;
  sl_ring *ring;
  sl_logger *log;
} sl_pool_config;

/* The workers' counters, kept in the public struct so that
 * sl_loader_stats_get hands them on whole: the pool fills the per-sample
 * TOTAL fields and the bad list (SL_LOADER_STATS_FIELDS), the loader the
 * rest. */
typedef sl_loader_stats sl_pool_stats;

typedef struct sl_pool sl_pool;

sl_status sl_pool_create(sl_pool **out, const sl_pool_config *pc, sl_err *err);
/* Stops and joins the workers, frees their states. Accepts NULL. */
void sl_pool_destroy(sl_pool *p);
/* Positions [first, end) of an epoch at resolution res; sample_bytes each. */
void sl_pool_start(sl_pool *p, uint64_t epoch, uint64_t first, uint64_t end,
                   int res, size_t sample_bytes);
/* Stops claiming and waits until no worker is inside a sample. Call
 * sl_ring_abort first so workers waiting for staging wake up. */
void sl_pool_stop(sl_pool *p);
void sl_pool_stats_get(sl_pool *p, sl_pool_stats *out);

#endif
