/* Kernel hints for the out-of-core readers: madvise on a file map and
 * posix_fadvise on a file descriptor.
 *
 * Hints never change what is read, only when the kernel reads it, so every
 * function here is advisory: a failure is reported (the caller may ignore
 * it) and never leaves state behind. No memory is allocated.
 *
 * Thread safety: all functions may be called from any thread. */
#ifndef SLUICE_IO_IO_HINTS_H
#define SLUICE_IO_IO_HINTS_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

/* The system page size (sysconf), 4096 when it cannot be read. */
size_t sl_page_size(void);

/* madvise over the pages covering [p, p + len) of a file map: p need not be
 * page aligned, the range is widened to whole pages. len 0 is a no-op.
 * sl_hint_willneed asks the kernel to read the pages now (the samples of the
 * next batches); sl_hint_random turns off the map's read-around (a random
 * order would otherwise read 128 KiB around each fault). Errors: SL_EIO with
 * the errno text. */
sl_status sl_hint_willneed(const void *p, size_t len, sl_err *err);
sl_status sl_hint_random(const void *p, size_t len, sl_err *err);

/* posix_fadvise on [offset, offset + len) of fd (len 0: to the end).
 * dontneed drops the clean cached pages (a cold cache for benches and
 * tests; dirty pages are written back first with fdatasync), random turns
 * off read-ahead for the descriptor's file. Errors: SL_EIO with the errno
 * text. */
sl_status sl_fadvise_dontneed(int fd, uint64_t offset, uint64_t len,
                              sl_err *err);
sl_status sl_fadvise_random(int fd, sl_err *err);

/* Bytes of fd's file [offset, offset + len) resident in the page cache,
 * measured with mincore over a temporary map (for tests and benches: it
 * maps, never reads). Errors: SL_EIO. */
sl_status sl_cached_bytes(int fd, uint64_t offset, uint64_t len, uint64_t *out,
                          sl_err *err);

#endif
