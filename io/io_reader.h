/* The loader's byte reader: one object behind loader.io that hands each
 * worker the payload of the sample at position seq of the epoch order.
 *
 *     sl_io *io;
 *     sl_io_open(&io, &opts, err);          // picks and opens the backend
 *     size_t cap = sl_io_buffer_bytes(io);  // each worker: a buffer of cap
 *     sl_io_start_epoch(io, sl_sampler_at-like fn, ctx, first, end, err);
 *     // a worker, for each position seq it claims (in claim order):
 *     sl_io_get(io, seq, buf, cap, &data, &len, err);
 *     ... decode data[0..len) ...
 *     sl_io_put(io, seq);                   // after every get
 *     // a sample outside the order (a replacement for a bad one):
 *     sl_io_read(io, sample, buf, cap, &data, &len, err);
 *     sl_io_close(io);
 *
 * Backends (opts.kind = loader.io; auto resolved by io_select.h):
 *   mmap   maps the file read-only with MADV_RANDOM; get copies the payload
 *          out of the map into the worker's buffer under a SIGBUS guard
 *          (common/map_guard.h: a page of a truncated file is SL_EIO, not
 * death) and gives MADV_WILLNEED to the sample readahead_batches * batch_size
 * positions ahead, so the kernel reads it before a worker faults on it. Each
 * cold page costs the worker a fault. pread  reads into the worker's buffer: no
 * map, no page-table cost, the worker waits for the disk. uring  io_uring.h: a
 * reader thread reads positions ahead, in order, into a bounded pool
 * (io.pool_size, io.queue_depth, io.direct); get blocks until its read is done.
 * A dataset of many files (opts.files) reads as one offset space: each
 * sample lies in one file; the memory is the caller's table (24 bytes per
 * file, common/file_span.h) and, with mmap, address space for them all.
 * When io_uring cannot be set up the reader falls back to pread and logs
 * why once (WARN); the backend and the reason are in sl_io_backend and
 * sl_io_why.
 *
 * Memory, allocated at open: mmap and pread: none (address space, the
 * callers' buffers); uring: see io_uring.h (about pool_bytes). A uring
 * pool larger than the available memory (sl_io_mem_budget) is refused when
 * uring was asked for, and lowered to a quarter of it when auto chose it.
 *
 * Thread safety: get, put and read from any number of workers at once;
 * open, start_epoch, stop and close from one controlling thread; all but
 * stop while no worker is inside get or read. */
#ifndef SLUICE_IO_IO_READER_H
#define SLUICE_IO_IO_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/file_span.h"
#include "io/io_select.h"
#include "io/io_uring.h"

typedef struct sl_io_opts {
  sl_io_kind kind; /* loader.io */
  int fd;          /* the dataset, open for reading; not closed */
  const char *name;
  uint64_t file_size; /* with files: files->end */
  /* NULL: one file (fd, file_size). Else the dataset's files as one offset
   * space (common/file_span.h; locate's offsets are in it), kept by the
   * caller until close; fd is then unused. mmap maps each file at its base
   * in one reservation; pread and uring read from the file holding the
   * sample. A lazy set (files opened per read) is read by pread or uring,
   * each opening a file for its read: mmap falls back to pread and says
   * why. */
  const sl_file_set *files;
  uint64_t count;
  uint32_t max_length;
  sl_io_locate_fn locate;
  const void *locate_ctx;
  /* Payloads read in part (io_uring.h; NULL head: whole): each backend
   * reads the head, then the one range rest gives, into the payload's own
   * offsets of the buffer (mmap copies just those out of the map and
   * hints only them ahead: the head page 2 x readahead positions ahead,
   * the range once the head is in). */
  sl_io_parts parts;
  unsigned batch_size;        /* loader.batch_size (mmap hint distance) */
  unsigned readahead_batches; /* io.readahead_batches (mmap) */
  unsigned queue_depth;       /* io.queue_depth */
  size_t pool_bytes;          /* io.pool_size */
  bool direct;                /* io.direct */
  double auto_share;          /* io.auto_share */
  uint64_t mem_available;     /* 0: sl_io_mem_budget (io_select.h) */
  int inject_uring_errno;     /* test hook: io_uring setup fails so */
  sl_io_fault inject;         /* test hook: a read fails (io_uring.h) */
  sl_log_fn log;              /* the one line saying which backend, why */
  void *log_user;
} sl_io_opts;

typedef struct sl_io sl_io;

/* Picks the backend (auto, fallback) and opens it. Errors: as io_uring.h's
 * open (but SL_EUNSUPPORTED becomes the pread fallback), SL_EIO (mmap
 * failed, /proc/meminfo unreadable under auto), SL_ENOMEM, SL_EINVAL. */
sl_status sl_io_open(sl_io **out, const sl_io_opts *o, sl_err *err);
void sl_io_close(sl_io *io);

/* The backend in use: SL_IO_MMAP, SL_IO_PREAD or SL_IO_URING; and the one
 * line saying why (the same text that was logged). */
sl_io_kind sl_io_backend(const sl_io *io);
const char *sl_io_why(const sl_io *io);
/* Bytes of buffer each worker passes to get and read: the largest payload
 * (pread reads into it, mmap copies into it; uring's read needs it). */
size_t sl_io_buffer_bytes(const sl_io *io);

/* Starts an epoch: positions first .. end-1, position seq being sample
 * order(order_ctx, seq) (order NULL: sample seq); the order must not change
 * until the next start, stop or close. Errors: SL_EINVAL (first > end),
 * SL_EIO (mmap: the file changed size since open). */
sl_status sl_io_start_epoch(sl_io *io, sl_io_order_fn order,
                            const void *order_ctx, uint64_t first, uint64_t end,
                            sl_err *err);
/* Ends the epoch (uring: waits for reads in flight): later gets return
 * SL_ESTATE, and workers blocked in a uring get wake with it. Unlike
 * start, stop may run while workers are inside get (the loader stops the
 * reader before it waits for its workers). */
void sl_io_stop(sl_io *io);

/* The payload of position seq: *data is valid until the matching put (it
 * is buf with pread and mmap, inside the pool with uring). Blocks (uring) until
 * read. Errors: SL_EIO (a failed or short read: the message names file,
 * sample, offset and length), SL_EINVAL (seq outside the epoch, sample out
 * of range, cap too small), SL_ESTATE (no epoch). Put seq once after its get,
 * whatever get returned. */
sl_status sl_io_get(sl_io *io, uint64_t seq, void *buf, size_t cap,
                    const uint8_t **data, size_t *len, sl_err *err);
void sl_io_put(sl_io *io, uint64_t seq);
/* mmap and pread: position seq passed over without its bytes (the caller
 * has them already: a cached chunk), with get's checks and read-ahead
 * hint; put it as after a get. Errors as get; SL_EINVAL with uring, which
 * reads every position. */
sl_status sl_io_skip(sl_io *io, uint64_t seq, sl_err *err);

/* Sample `sample`'s payload outside the epoch order (no read-ahead): copied
 * from the map into buf with mmap, else pread into buf. Valid until the next
 * read into buf. Errors as get. */
sl_status sl_io_read(sl_io *io, uint64_t sample, void *buf, size_t cap,
                     const uint8_t **data, size_t *len, sl_err *err);

/* The uring engine's counters (zeros for other backends). */
void sl_io_get_stats(sl_io *io, sl_uring_stats *out);

#endif
