/* The loader's byte reader: one object behind loader.io that hands each
 * worker the payload of the sample at position seq of the epoch order.
 *
 *     sl_io *io;
 *     sl_io_open(&io, &opts, err);            // picks and opens the backend
 *     sl_io_start_epoch(io, order, n, err);   // the epoch's sample order
 *     // worker w, for each seq it claims (batch order):
 *     sl_io_get(io, w, seq, &data, &len, err);
 *     ... decode data[0..len) ...
 *     sl_io_put(io, w, seq);                  // always, after every get
 *     sl_io_close(io);
 *
 * Backends (opts.kind = loader.io; auto resolved by io_select.h):
 *   mmap   maps the file read-only with MADV_RANDOM; get returns a pointer
 *          into the map and gives MADV_WILLNEED to the sample
 *          readahead_batches * batch_size positions ahead, so the kernel
 *          reads it before a worker faults on it. Zero-copy, but each cold
 *          4 KiB page costs the worker a fault.
 *   pread  reads into the worker's own buffer (max_length bytes each): no
 *          map, no page-table cost, the worker waits for the disk.
 *   uring  io_uring.h: a reader thread reads ahead in epoch order into a
 *          bounded pool (io.pool_size, io.queue_depth, io.direct).
 * When io_uring cannot be set up the reader falls back to pread and logs
 * why once (WARN); the chosen backend and the reason are also in
 * sl_io_backend / sl_io_why.
 *
 * Memory, allocated at open: mmap: none (address space only); pread:
 * workers * max_length; uring: see io_uring.h (about pool_bytes).
 *
 * Thread safety: get/put from any number of workers at once (worker ids
 * distinct, < opts.workers); open, start_epoch, stop and close from one
 * controlling thread while no worker is inside get. */
#ifndef SLUICE_FORMATS_IO_READER_H
#define SLUICE_FORMATS_IO_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "formats/io_uring.h"
#include "formats/source.h"
#include "loader/config.h"

typedef struct sl_io_opts {
  sl_io_kind kind; /* loader.io */
  int fd;          /* the dataset, open for reading; not closed */
  const char *name;
  uint64_t file_size;
  uint64_t count;
  uint32_t max_length;
  sl_io_locate_fn locate;
  const void *locate_ctx;
  unsigned workers;           /* loader.workers (resolved, >= 1) */
  unsigned batch_size;        /* loader.batch_size */
  unsigned readahead_batches; /* io.readahead_batches (mmap) */
  unsigned queue_depth;       /* io.queue_depth */
  size_t pool_bytes;          /* io.pool_size */
  bool direct;                /* io.direct */
  double auto_share;          /* io.auto_share */
  uint64_t mem_available;     /* 0: sl_io_mem_budget (io_select.h) */
  int inject_uring_errno;     /* test hook: io_uring setup fails so */
  sl_log_fn log;              /* the one line saying which backend, why */
  void *log_user;
} sl_io_opts;

typedef struct sl_io sl_io;

/* Fills the file part of o (fd, name, file_size, count, max_length,
 * locate) from an open source; name is the path for messages. */
void sl_io_opts_from_source(sl_io_opts *o, const sl_source *src,
                            const char *name);

/* Fills the configured part of o from the loader's options (inline so this
 * stage does not link the loader's config code); workers and batch_size
 * are the loader's resolved values. */
static inline void sl_io_opts_from_config(sl_io_opts *o, const sl_config *cfg,
                                          unsigned workers,
                                          unsigned batch_size) {
  o->kind = (sl_io_kind)sl_cfg_enum(cfg, SL_OPT_LOADER_IO);
  o->workers = workers;
  o->batch_size = batch_size;
  o->readahead_batches = (unsigned)sl_cfg_int(cfg, SL_OPT_IO_READAHEAD_BATCHES);
  o->queue_depth = (unsigned)sl_cfg_int(cfg, SL_OPT_IO_QUEUE_DEPTH);
  o->pool_bytes = (size_t)sl_cfg_size(cfg, SL_OPT_IO_POOL_SIZE);
  o->direct = sl_cfg_bool(cfg, SL_OPT_IO_DIRECT);
  o->auto_share = sl_cfg_float(cfg, SL_OPT_IO_AUTO_SHARE);
  sl_cfg_log(cfg, &o->log, &o->log_user);
}

/* Picks the backend (auto, fallback) and opens it. Errors: as io_uring.h's
 * open (but SL_EUNSUPPORTED becomes the pread fallback), SL_EIO (mmap
 * failed, /proc/meminfo unreadable under auto), SL_ENOMEM, SL_EINVAL. */
sl_status sl_io_open(sl_io **out, const sl_io_opts *o, sl_err *err);
void sl_io_close(sl_io *io);

/* The backend in use: SL_IO_MMAP, SL_IO_PREAD or SL_IO_URING; and the one
 * line saying why (the same text that was logged). */
sl_io_kind sl_io_backend(const sl_io *io);
const char *sl_io_why(const sl_io *io);

/* Starts an epoch: seq s reads sample order[s] (order NULL: s); order must
 * stay valid until the next start, stop or close. Errors: SL_EINVAL (a
 * sample out of range), SL_EIO (mmap: the file changed size since open). */
sl_status sl_io_start_epoch(sl_io *io, const uint64_t *order, uint64_t n,
                            sl_err *err);
/* Ends the epoch early (uring: waits for reads in flight). */
void sl_io_stop(sl_io *io);

/* Sample order[seq]'s payload for worker `worker`: *data is valid until
 * the matching put. Blocks (uring) until read. Errors: SL_EIO (a failed or
 * short read: the message names file, sample, offset and length), SL_EINVAL
 * (seq or worker out of range), SL_ESTATE (no epoch). Put after every get
 * but SL_EINVAL/SL_ESTATE. */
sl_status sl_io_get(sl_io *io, unsigned worker, uint64_t seq,
                    const uint8_t **data, size_t *len, sl_err *err);
void sl_io_put(sl_io *io, unsigned worker, uint64_t seq);

/* The uring engine's counters (zeros for other backends). */
void sl_io_get_stats(sl_io *io, sl_uring_stats *out);

#endif
