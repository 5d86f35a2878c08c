/* The local cache of remote objects (remote/cache.c): a folder shared by
 * every process of a node, holding whole objects under names made from a
 * hash of their URL, size and checksum (so no URL can name a path outside
 * it, and a changed object is another name), with a hard byte bound. */
#ifndef SLUICE_REMOTE_CACHE_H
#define SLUICE_REMOTE_CACHE_H

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
  uint64_t hits, fetches, bytes_fetched, evictions, retries;
  uint64_t wait_ns; /* time spent fetching (or waiting for another
                       process's fetch of the same object) */
} sl_cache_stats;

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
 * objects; an object larger than the bound is SL_ETOOBIG naming both.
 * Thread- and process-safe: concurrent opens of one object fetch it once.
 * Errors: as sl_fetch; SL_EFORMAT when the object's checksum differs
 * (changed on the server since it was indexed). */
sl_status sl_cache_get(sl_cache *c, const char *url, uint64_t size,
                       uint32_t crc, int *fd, sl_err *err);

void sl_cache_stats_get(sl_cache *c, sl_cache_stats *out);
uint64_t sl_cache_bound(const sl_cache *c);

#endif
