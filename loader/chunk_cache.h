/* The decompressed-chunk cache the workers share, for HDF5 arrays whose
 * filtered chunks hold many samples (BigGAN's 500): a chunk's filters are
 * undone once and its samples sliced from the cached copy by any worker.
 *
 * nslots = min(dataset.chunk_cache / chunk_bytes, chunks) slots of
 * chunk_bytes each, all allocated (and touched) at open, never grown; with
 * fewer than one slot there is no cache. A slot in use (acquired, not yet
 * released) is never evicted; the least recently used free slot is.
 *
 * Thread safety: acquire, filled and release may be called from any worker
 * at once (one mutex and one condition variable). */
#ifndef SLUICE_LOADER_CHUNK_CACHE_H
#define SLUICE_LOADER_CHUNK_CACHE_H

#include <stdbool.h>
#include <stdint.h>

#include "common/error.h"

typedef struct sl_chunk_cache sl_chunk_cache;

/* *out = NULL (no cache, SL_OK) when budget holds no whole chunk. */
sl_status sl_chunk_cache_create(sl_chunk_cache **out, uint64_t budget,
                                uint64_t chunk_bytes, uint64_t nchunks,
                                sl_err *err);
void sl_chunk_cache_destroy(sl_chunk_cache *c);

/* Chunk `chunk`'s slot: returns its index and *data, and *fill true when
 * the caller must write the chunk's chunk_bytes there and call
 * sl_chunk_cache_filled (another worker filling the same chunk is waited
 * for). Returns -1 when every slot is in use: the caller decompresses on
 * its own. */
int sl_chunk_cache_acquire(sl_chunk_cache *c, uint64_t chunk, uint8_t **data,
                           bool *fill);
/* The slot's fill is done; ok false: it failed (the slot is emptied and
 * waiters retry). */
void sl_chunk_cache_filled(sl_chunk_cache *c, int slot, bool ok);
void sl_chunk_cache_release(sl_chunk_cache *c, int slot);

#endif
