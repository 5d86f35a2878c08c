/* Range reads: each sample's bytes fetched by an HTTP range request
 * ("Range: bytes=a-b") from its object, many requests in flight on one
 * libcurl multi handle, ahead of the workers in the epoch's order, into a
 * bounded pool. Nothing is written to disk. For datasets read in a fully
 * random order, where whole shards in a cache would be fetched again and
 * again (docs/REMOTE.md, "Random order without a local copy").
 *
 *     sl_ranges *r;
 *     sl_ranges_open(&r, &opts, err);          // pool, thread, multi handle
 *     sl_ranges_start(r, order, ctx, first, end, err);
 *     // a worker, for the position seq it claimed (in roughly rising order):
 *     sl_ranges_get(r, seq, &data, &len, err); // blocks until it arrived
 *     ... decode data[0..len) ...
 *     sl_ranges_put(r, seq);                   // its buffer back to the pool
 *     sl_ranges_close(r);
 *
 * One thread owns the multi handle. It walks seq = first, first + 1, ...
 * and keeps up to `requests` requests in flight, each into a buffer carved
 * from a circular pool (common/circ_pool.h); a buffer returns to the pool
 * once it and every older seq have been put, so the thread runs at most the
 * pool (or nslots samples) ahead of the oldest sample a worker holds. The
 * connections stay open from request to request (curl's connection cache
 * on the multi handle).
 *
 * Each answer must be 206 with exactly the bytes asked for, and its
 * Content-Range must give the object's size as the caller's index has it:
 * an object replaced since it was indexed is an error naming it, never
 * other bytes. A 200 (a server that ignores Range) is an error saying so,
 * unless the range is the whole object. 429, 5xx, resets and timeouts are
 * retried with backoff and jitter (remote/request.h), a cut body resumed
 * from where it stopped, within the fetch configuration's retry count and
 * deadline (per sample); 403 and 404 are reported at once. Messages name
 * the object's URL (without user:password or query), the sample and the
 * range, never a credential.
 *
 * Memory, all at open, none later: pool_bytes (rounded down to 64) for the
 * buffers; nslots * ~100 B, nslots = clamp(pool_bytes / 4096, 2 *
 * requests, 65536); requests * ~600 B and a libcurl easy handle each. The
 * pool must hold the largest sample.
 *
 * Thread safety: get and put from any number of threads at once; open,
 * start, stop and close from one controlling thread, start and close
 * while no worker is inside get (stop wakes those in get); read from any
 * thread. */
#ifndef SLUICE_REMOTE_RANGES_H
#define SLUICE_REMOTE_RANGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "remote/fetch.h"

typedef struct sl_ranges sl_ranges;

/* Sample i's bytes: [*off, *off + *len) of object *obj. false: the sample
 * lies in no single object. Called from the engine's thread while workers
 * run. */
typedef bool (*sl_ranges_locate_fn)(const void *ctx, uint64_t sample,
                                    size_t *obj, uint64_t *off, uint32_t *len);
/* Object k's URL (valid until close) and size. */
typedef void (*sl_ranges_object_fn)(const void *ctx, size_t k, const char **url,
                                    uint64_t *size);
/* The epoch's order: the sample read at position seq. */
typedef uint64_t (*sl_ranges_order_fn)(const void *ctx, uint64_t seq);

typedef struct sl_ranges_opts {
  const sl_fetch_conf *conf; /* kept by the caller until close */
  const char *name;          /* the dataset, for messages */
  unsigned requests;         /* in flight at once: 1..1024 */
  size_t pool_bytes;         /* the buffers */
  uint32_t max_length;       /* the largest sample */
  sl_ranges_locate_fn locate;
  sl_ranges_object_fn object;
  const void *ctx; /* of locate and object */
} sl_ranges_opts;

typedef struct sl_ranges_stats {
  uint64_t requests; /* answered with the bytes asked for */
  uint64_t bytes;    /* body bytes received, retries included */
  uint64_t retries;
  uint64_t waits;   /* gets that waited for their bytes */
  uint64_t wait_ns; /* their time waiting */
} sl_ranges_stats;

/* Errors: SL_ECONFIG (requests out of range; a pool smaller than the
 * largest sample, naming both), SL_ENOMEM, SL_ETHREAD, SL_EIO (libcurl's
 * multi handle). */
sl_status sl_ranges_open(sl_ranges **out, const sl_ranges_opts *o, sl_err *err);
void sl_ranges_close(sl_ranges *r);

/* Positions first .. end-1, position seq reading sample order(ctx, seq);
 * the order must not change until the next start, stop or close. Errors:
 * SL_EINVAL (first > end). */
sl_status sl_ranges_start(sl_ranges *r, sl_ranges_order_fn order,
                          const void *ctx, uint64_t first, uint64_t end,
                          sl_err *err);
/* Ends the epoch: requests in flight are dropped (within a poll of about
 * 50 ms), workers in get wake with SL_ESTATE. */
void sl_ranges_stop(sl_ranges *r);

/* Position seq's bytes: *data valid until the matching put. Blocks until
 * they arrived or failed. Errors: SL_EIO (the request failed: the message
 * names the URL, the sample and the range, and why), SL_EINVAL (seq
 * outside the epoch, a sample in no single object), SL_ESTATE (no epoch,
 * stopped). Put seq once after its get, whatever get returned. */
sl_status sl_ranges_get(sl_ranges *r, uint64_t seq, const uint8_t **data,
                        size_t *len, sl_err *err);
void sl_ranges_put(sl_ranges *r, uint64_t seq);

/* Sample `sample`'s bytes outside the order (no read-ahead), fetched on
 * the calling thread into buf (cap bytes): *data = buf. Errors as get;
 * SL_ETOOBIG when cap is too small. */
sl_status sl_ranges_read(sl_ranges *r, uint64_t sample, void *buf, size_t cap,
                         const uint8_t **data, size_t *len, sl_err *err);

void sl_ranges_stats_get(sl_ranges *r, sl_ranges_stats *out);

#endif
