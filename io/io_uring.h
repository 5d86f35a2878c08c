/* io_uring read-ahead engine: reads the samples of an epoch, in the epoch's
 * order, ahead of the workers, into a bounded pool of buffers.
 *
 *     sl_uring *u;
 *     sl_uring_open(&u, &opts, err);          // ring, pool, reader thread
 *     sl_uring_start(u, at, ctx, first, end, err); // seq s reads at(ctx, s)
 *     // in each worker, for the seq it claimed (in roughly rising order):
 *     sl_uring_get(u, seq, &data, &len, err); // blocks until read
 *     ... decode data[0..len) ...
 *     sl_uring_put(u, seq);                   // buffer back to the pool
 *     sl_uring_close(u);
 *
 * One reader thread owns the ring. It walks seq = 0, 1, ... of the epoch and
 * keeps up to queue_depth reads in flight, each into a buffer carved from a
 * circular pool; a buffer returns to the pool once it and every older seq
 * have been put. The reader so runs at most pool_bytes (or nslots samples)
 * ahead of the oldest sample a worker still holds: workers that claim
 * samples in batch order never wait for space held by a later sample.
 *
 * With direct, the file is reopened with O_DIRECT (through /proc/self/fd)
 * and each read covers [offset, offset + length) widened to SL_URING_ALIGN
 * boundaries, into a buffer aligned to SL_URING_ALIGN; the payload pointer
 * lies inside it. The dataset then never enters the page cache.
 *
 * Memory, all allocated (and touched) at open, none later:
 *   pool_bytes (the buffers)
 *   + nslots * ~80 B, nslots = clamp(pool_bytes / 4096, 2 * queue_depth, 65536)
 *   + the ring: queue_depth SQEs (64 B) and 2 * queue_depth CQEs (16 B).
 *
 * Thread safety: get and put may be called from any number of threads at
 * once; open, start, stop and close from one controlling thread, start and
 * close while no worker is inside get (stop wakes those in get). */
#ifndef SLUICE_IO_IO_URING_H
#define SLUICE_IO_IO_URING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/file_span.h"

#define SL_URING_ALIGN 4096u

/* Where sample i's payload lies in the file. Must be safe to call from the
 * reader thread while workers run (sl_source_info is). */
typedef void (*sl_io_locate_fn)(const void *ctx, uint64_t sample,
                                uint64_t *offset, uint32_t *length);

/* The epoch's order: the sample read at position seq (the loader's
 * sl_sampler_at). Called from the reader thread during the epoch. */
typedef uint64_t (*sl_io_order_fn)(const void *ctx, uint64_t seq);

/* Optional: payloads read in part (NULL head: every payload whole). For
 * sample i, head(ctx, i) is how many bytes at the payload's start to read
 * first (0: the payload is read whole; at most its length); rest(ctx, i,
 * bytes, n) then gives, from those n bytes, the one range of the payload
 * still to read, [*off, *off + *len) with n <= *off and *off + *len within
 * the payload (false: the rest of the payload, [n, length)). A get then
 * hands out the payload's length with each part at its own offset: bytes
 * outside [0, n) and the range were not read (their contents are
 * undefined). Both must be safe to call from the reader thread while
 * workers run. Not with direct (O_DIRECT reads whole blocks: whole
 * payloads). */
typedef struct sl_io_parts {
  uint32_t (*head)(const void *ctx, uint64_t sample);
  bool (*rest)(const void *ctx, uint64_t sample, const uint8_t *bytes, size_t n,
               uint32_t *off, uint32_t *len);
  const void *ctx;
} sl_io_parts;

/* Test hook (tests/io): the nth read of a reader (1-based, counted from
 * open over every epoch: pread calls, mmap copies, io_uring completions)
 * fails, with errno err, or as a short read (end of file) when err is 0.
 * nth 0: off. One branch on a zero field outside tests. */
typedef struct sl_io_fault {
  uint64_t nth;
  int err;
} sl_io_fault;

typedef struct sl_uring_opts {
  int fd; /* the dataset, open for reading; not closed */
  /* NULL: the one file fd. Else several files as one offset space
   * (common/file_span.h): each read goes to the file holding its sample,
   * with that file's fd (no reopen, no O_DIRECT: direct needs one file);
   * a lazy set's file (fd -1) is opened by the reader thread just before
   * its read is queued and closed when the read ends: at most queue_depth
   * such files are open at once. */
  const sl_file_set *files;
  const char *name;       /* file name for messages (copied) */
  uint64_t count;         /* samples in the dataset */
  uint32_t max_length;    /* largest payload */
  sl_io_locate_fn locate; /* sample → (offset, length) */
  const void *locate_ctx;
  sl_io_parts parts;     /* ignored with direct */
  unsigned queue_depth;  /* reads in flight, 1..4096 (io.queue_depth) */
  size_t pool_bytes;     /* buffer pool (io.pool_size) */
  bool direct;           /* O_DIRECT (io.direct) */
  int inject_init_errno; /* test hook: ring setup fails with it (0: off) */
  sl_io_fault inject;    /* test hook: a read that fails */
} sl_uring_opts;

typedef struct sl_uring_stats {
  uint64_t reads;     /* read requests submitted (short reads resubmit) */
  uint64_t bytes;     /* bytes read from the file (parts: only those) */
  uint64_t waits;     /* gets that had to block for their read */
  uint64_t pool_full; /* times the reader stopped for want of pool space */
} sl_uring_stats;

typedef struct sl_uring sl_uring;

/* Sets up the ring, the pool and the reader thread. Errors: SL_EUNSUPPORTED
 * when io_uring cannot be set up (EPERM, ENOSYS, ... : the message says
 * which, so the caller can fall back to pread and say why), SL_ECONFIG
 * (pool too small for the largest sample, queue depth out of range),
 * SL_EIO (cannot reopen with O_DIRECT), SL_ENOMEM, SL_ETHREAD. */
sl_status sl_uring_open(sl_uring **out, const sl_uring_opts *opts, sl_err *err);
/* Stops any epoch, waits for the reads in flight, frees all. NULL is ok. */
void sl_uring_close(sl_uring *u);

/* Starts an epoch: positions seq = first .. end-1 are read in that order,
 * seq reading sample order(order_ctx, seq) (order NULL: sample seq). The
 * order must not change until the next start, stop or close. Stops the
 * previous epoch first. A sample >= count fails that seq's get with
 * SL_EINVAL. Errors: SL_EINVAL (first > end), SL_ESTATE (the engine failed
 * earlier). */
sl_status sl_uring_start(sl_uring *u, sl_io_order_fn order,
                         const void *order_ctx, uint64_t first, uint64_t end,
                         sl_err *err);
/* Ends the epoch: no new reads, waits for those in flight, forgets every
 * buffer (pointers from get become invalid). Workers blocked in get return
 * SL_ESTATE. */
void sl_uring_stop(sl_uring *u);

/* Blocks until seq's read completes, then hands out its payload: *data
 * (valid until put) and *len. Errors: SL_EINVAL (seq outside [first, end),
 * or the order gave a sample out of range), SL_EIO (the read
 * failed or the file is shorter than the index says: the message names the
 * file, sample, offset and length), SL_ESTATE (no epoch, or stopped). Put
 * seq once after its get, whatever get returned (a put of a seq that was
 * not handed out does nothing). */
sl_status sl_uring_get(sl_uring *u, uint64_t seq, const uint8_t **data,
                       size_t *len, sl_err *err);
/* Returns seq's buffer to the pool. Each seq is put once, after its get. */
void sl_uring_put(sl_uring *u, uint64_t seq);

/* Counters since open. */
void sl_uring_get_stats(sl_uring *u, sl_uring_stats *out);

#endif
