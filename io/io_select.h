/* The `loader.io = auto` policy and the io_uring fallback.
 *
 * auto reads bytes through io_uring when the dataset is larger than
 * io.auto_share of the available memory (MemAvailable in /proc/meminfo, or
 * the process's memory cgroup limit when lower): such a dataset cannot stay in
 * the page cache, every sample is a disk read, and reads submitted ahead keep
 * the workers decoding. A dataset that fits is mapped: after the first epoch
 * every read is a page cache hit and the map copies nothing.
 *
 * Where io_uring cannot be set up (containers often forbid it: EPERM,
 * ENOSYS), the reader falls back to pread and says why once (io_reader.h).
 *
 * No memory is allocated; every function may be called from any thread. */
#ifndef SLUICE_IO_IO_SELECT_H
#define SLUICE_IO_IO_SELECT_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

/* How sample bytes are read (loader.io; io_reader.h describes each). */
typedef enum sl_io_kind {
  SL_IO_MMAP,
  SL_IO_PREAD,
  SL_IO_URING,
  SL_IO_AUTO
} sl_io_kind;

/* "mmap", "pread", "uring" or "auto". */
const char *sl_io_kind_name(sl_io_kind kind);

/* MemAvailable from a meminfo file (path NULL: /proc/meminfo), in bytes.
 * Errors: SL_EIO (cannot open/read it), SL_EFORMAT (no MemAvailable line:
 * the message names the file). */
sl_status sl_io_mem_available(const char *path, uint64_t *bytes, sl_err *err);

/* What auto compares against: MemAvailable, or the memory cgroup's limit
 * (io_cgroup.h) when it is lower. Errors: as sl_io_mem_available. */
sl_status sl_io_mem_budget(uint64_t *bytes, sl_err *err);

/* Resolves `requested` to the backend to try: auto becomes SL_IO_URING when
 * dataset_bytes > share * mem_available, else SL_IO_MMAP; other kinds are
 * returned as they are. Writes a one-line reason into why (why_cap bytes,
 * may be 0), e.g. "auto: dataset 1.2 GiB > 0.50 x available memory 1.9 GiB:
 * uring". */
sl_io_kind sl_io_pick(sl_io_kind requested, uint64_t dataset_bytes,
                      uint64_t mem_available, double share, char *why,
                      size_t why_cap);

#endif
