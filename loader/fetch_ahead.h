/* Fetch-ahead (loader/fetch_ahead.c): for a dataset whose shards live at a
 * URL, a few threads fetch into the cache (remote/cache.h) the shards this
 * rank's epoch order reads next, before the workers ask for them, and keep
 * the cache's plan (eviction by the future order) up to date.
 *
 * At epoch start one pass over the rank's positions [first, end) finds each
 * shard's first and last position (O(positions x log shards), no memory
 * per position). Shards are fetched in the order of their first position,
 * at most `shards` beyond those the workers have begun to read; the cache
 * is told each shard's next use: its first position while it lies ahead,
 * "now" while it is read, done after its last position ended. A fetch
 * ahead never evicts a shard wanted sooner than the one it fetches: it
 * waits for the workers to move on instead. A shard the workers want first
 * is theirs to fetch (sl_cache_get); a failed fetch ahead is left to them
 * too, so errors are reported by the sample that needed the shard.
 *
 * Memory, at open: about 40 bytes a shard here and 112 in the cache's
 * plan, and a word a worker; the threads (and their libcurl handles) exist
 * from epoch start to epoch stop. Stop cancels
 * fetches in flight (their partial downloads removed) and joins the
 * threads.
 *
 * Thread safety: open, start, stop and close from the loader's controlling
 * thread, start while no worker runs; begin and end from the workers, any
 * number at once. */
#ifndef SLUICE_LOADER_FETCH_AHEAD_H
#define SLUICE_LOADER_FETCH_AHEAD_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "formats/core/source.h"

#include "loader/sample.h"

typedef struct sl_fetch_ahead_opts {
  unsigned shards;  /* io.prefetch_shards: 0 turns fetch-ahead off */
  unsigned threads; /* io.fetch_threads: 0 turns it off */
} sl_fetch_ahead_opts;

typedef struct sl_fetch_ahead sl_fetch_ahead;

/* For src's remote shards (file k's first sample file_first[k], nfiles of
 * them, as the sampler blocks them), read by `workers` workers. *out is
 * NULL (SL_OK) when fetch-ahead is off or src is not remote. Checks that
 * io.cache_bytes holds the largest shard times (shards + workers): else
 * SL_ECONFIG naming both numbers. Errors: also SL_ENOMEM. */
sl_status sl_fetch_ahead_open(sl_fetch_ahead **out,
                              const sl_fetch_ahead_opts *o,
                              const sl_source *src, const uint64_t *file_first,
                              size_t nfiles, unsigned workers, sl_err *err);
void sl_fetch_ahead_close(sl_fetch_ahead *fa);

/* The epoch's positions [first, end), position p reading sample
 * at(order, p) (the sampler's, or a mix's share of it): plans them and
 * starts the threads (when a thread cannot start, fewer fetch ahead: the
 * workers fetch the rest). */
void sl_fetch_ahead_start(sl_fetch_ahead *fa, sl_order_at_fn at,
                          const void *order, uint64_t first, uint64_t end);
/* Cancels fetches in flight and joins the threads; then start may run
 * again. */
void sl_fetch_ahead_stop(sl_fetch_ahead *fa);

/* A worker begins reading position pos (returns a token for end) and ends
 * it: what tells the threads how far the workers are. */
int sl_fetch_ahead_begin(sl_fetch_ahead *fa, uint64_t pos);
void sl_fetch_ahead_end(sl_fetch_ahead *fa, int token);

#endif
