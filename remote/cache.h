/* The local cache of remote objects (remote/cache.c): a folder shared by
 * every process of a node, holding whole objects under names made from a
 * hash of their URL, size and checksum (so no URL can name a path outside
 * it, and a changed object is another name), with a hard byte bound. */
#ifndef SLUICE_REMOTE_CACHE_H
#define SLUICE_REMOTE_CACHE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "remote/fetch.h"

typedef struct sl_cache sl_cache;

/* The checksum objects are checked with, computed as they arrive:
 * crc32c(a + b) = fn(crc32c(a), b), fn(0, x) = crc32c(x) (formats/'s
 * sl_crc32c_update; the cache knows no format). */
typedef uint32_t (*sl_cache_crc_fn)(uint32_t crc, const uint8_t *p, size_t n);

typedef struct sl_cache_stats {
  uint64_t hits;   /* sl_cache_get found the object cached */
  uint64_t misses; /* sl_cache_get waited for it: fetched it, or waited for
                      another thread's or process's fetch of it */
  uint64_t fetches, bytes_fetched, evictions, retries; /* sl_cache_get's and
                                                          sl_cache_ahead's */
  uint64_t ahead;   /* objects sl_cache_ahead fetched */
  uint64_t wait_ns; /* sl_cache_get's misses: time until the object was
                       there */
} sl_cache_stats;

/* A next use (sl_cache_plan_next): not used again (or unknown). */
#define SL_CACHE_DONE UINT64_MAX

/* Opens (making it, 0700, if missing) the cache folder dir, whose files
 * may hold at most bound bytes. The folder must be a real directory (not
 * a link) owned by this user. Errors: SL_EIO naming it, SL_ENOMEM. */
sl_status sl_cache_open(sl_cache **out, const char *dir, uint64_t bound,
                        const sl_fetch_conf *conf, sl_cache_crc_fn crc,
                        sl_err *err);
void sl_cache_close(sl_cache *c);

/* An open read-only descriptor of url's object, size bytes whose crc32c is
 * crc: the cached copy, or fetched first (to a temporary file, fsynced, its
 * size and checksum checked, then renamed: a partial download is never
 * taken for the object). Room is made by evicting the least recently used
 * objects (or by the plan, below); an object larger than the bound is
 * SL_ETOOBIG naming both.
 * Thread- and process-safe: concurrent opens of one object fetch it once.
 * Errors: as sl_fetch; SL_EFORMAT when the object's checksum differs
 * (changed on the server since it was indexed). */
sl_status sl_cache_get(sl_cache *c, const char *url, uint64_t size,
                       uint32_t crc, int *fd, sl_err *err);

/* As sl_cache_get for an object no index gives a checksum of (a single
 * LMDB or HDF5 file at a URL): known by its URL, size and ETag (etag ""
 * when the server gives none: then a change that keeps the size is not
 * seen), its download checked for its size only. */
sl_status sl_cache_get_tagged(sl_cache *c, const char *url, uint64_t size,
                              const char *etag, int *fd, sl_err *err);

void sl_cache_stats_get(sl_cache *c, sl_cache_stats *out);
uint64_t sl_cache_bound(const sl_cache *c);
const char *sl_cache_dir(const sl_cache *c);

/* Eviction by a reader's future. A reader that knows its order names the
 * objects it will read (plan_open, then plan_object for k < n, then
 * plan_sort; before any other call uses the plan) and, as it reads, each
 * one's next use (plan_next: a position in its order, smaller is sooner;
 * SL_CACHE_DONE: not again) and the last position it has begun (plan_now).
 * Room is then made by evicting, first, objects outside the plan or done
 * (the least recently used first), then those used furthest ahead; never
 * one used at or before the position the new object is wanted for
 * (sl_cache_get's: plan_now; sl_cache_ahead's: its `when`), save that a
 * sl_cache_get that finds no other room takes the least recently used of
 * those rather than fail (a descriptor open on an evicted object still
 * reads it). The plan describes this process's reader only: another
 * process's objects are outside it. Memory: 112 bytes an object, at
 * plan_open. plan_next and plan_now may be called from any thread.
 * Errors: SL_ENOMEM. */
sl_status sl_cache_plan_open(sl_cache *c, size_t n, sl_err *err);
void sl_cache_plan_object(sl_cache *c, size_t k, const char *url, uint64_t size,
                          uint32_t crc);
void sl_cache_plan_sort(sl_cache *c);
void sl_cache_plan_next(sl_cache *c, size_t k, uint64_t when);
void sl_cache_plan_now(sl_cache *c, uint64_t now);

/* Fetches url's object (as sl_cache_get) into the cache ahead of its use
 * at position `when` of the plan, unless it is there already or another
 * thread or process is fetching it (then SL_OK at once). Makes room only
 * from objects done or used after `when`: when there is none, *no_room is
 * set and nothing is fetched (SL_OK; try again once the reader has moved
 * on). Errors: as sl_cache_get. */
sl_status sl_cache_ahead(sl_cache *c, const char *url, uint64_t size,
                         uint32_t crc, uint64_t when, bool *no_room,
                         sl_err *err);

/* on: every fetch of this cache object in flight or to come (sl_cache_get's
 * and sl_cache_ahead's) ends within about 100 ms with SL_ESTATE, its
 * partial download removed, until called again with off: what lets a
 * loader stop mid-epoch without waiting for downloads. Any thread. */
void sl_cache_cancel(sl_cache *c, bool on);

/* Whether url's object (size bytes, crc32c crc) is cached now. */
bool sl_cache_has(sl_cache *c, const char *url, uint64_t size, uint32_t crc);

/* The bytes the folder's objects and downloads in progress hold, and the
 * objects. Errors: SL_EIO naming the folder. */
sl_status sl_cache_usage(sl_cache *c, uint64_t *bytes, uint64_t *objects,
                         sl_err *err);

#endif
