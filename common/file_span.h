/* A dataset made of several files read as one offset space: file k occupies
 * [base_k, base_k + size_k), each base a multiple of the page size and the
 * bases rising, so that the per-sample index keeps one 64-bit offset and
 * a reader turns it into (file, local offset) by a binary search.
 *
 * A one-file source is the table {fd, 0, size}. Files may have fd < 0:
 * they are opened on demand by the table's open callback (a folder of
 * a million images cannot keep them all open) for each read (pread, or
 * io_uring's reader thread), never mapped.
 *
 * Shared by formats/ (sl_source_read) and io/ (the loader's backends): both
 * get a table built by the source, and neither layer learns the other's
 * layout. The table is immutable once built and read by any thread.
 *
 * Memory: 24 bytes per file (sl_file_span) plus, for a mapped set, one
 * reservation of `end` bytes of address space (not memory). */
#ifndef SLUICE_COMMON_FILE_SPAN_H
#define SLUICE_COMMON_FILE_SPAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

typedef struct sl_file_span {
  int fd;        /* open O_RDONLY, or -1: opened on demand */
  uint64_t base; /* first byte's offset in the set; page-aligned */
  uint64_t size; /* the file's bytes at open */
} sl_file_span;

/* Opens file k for reading (an fd the caller closes), or -1 with errno set.
 * Called from any thread. */
typedef int (*sl_file_open_fn)(const void *ctx, size_t k);
/* File k's name for messages into buf (cap bytes, NUL-terminated). */
typedef void (*sl_file_name_fn)(const void *ctx, size_t k, char *buf,
                                size_t cap);

typedef struct sl_file_set {
  const sl_file_span *f; /* n spans, bases rising */
  size_t n;
  uint64_t end; /* the set's size: last base + last size */
  bool lazy;    /* some fd is -1: opened per read by open */
  sl_file_open_fn open;
  sl_file_name_fn name;
  const void *ctx;
} sl_file_set;

/* The page size bases are aligned to: the largest the mapped backends may
 * meet (64 KiB covers 4 KiB, 16 KiB and 64 KiB pages). */
#define SL_FILE_SPAN_ALIGN 65536u

/* The file holding [off, off + len) whole, or -1 when no file does (past
 * the end, in the gap between two files, or straddling them). len 0 is
 * inside the file holding off (or its end). O(log n). */
long sl_file_set_find(const sl_file_set *s, uint64_t off, uint64_t len);

/* As sl_file_set_find, trying file *hint first (then setting it to the
 * file found): O(1) for ranges met in file order, as an index check walks
 * them. */
long sl_file_set_find_near(const sl_file_set *s, uint64_t off, uint64_t len,
                           size_t *hint);

/* Reads len bytes at set offset off into buf. The bytes must lie in one
 * file. Returns 0 when all were read, -1 on an error (errno set; EINVAL
 * when no single file holds the range), 1 when the file ends first; *got
 * is the bytes read. A lazy file is opened, read and closed. *file, when
 * not NULL, gets the file's number (-1 if none). */
int sl_file_set_pread(const sl_file_set *s, void *buf, size_t len, uint64_t off,
                      size_t *got, long *file);

/* Maps every file at its base inside one reservation of s->end bytes
 * (PROT_NONE; each file MAP_FIXED over it, PROT_READ, MAP_SHARED), so that
 * map + off is the set's byte off and the gaps between files stay
 * inaccessible. Not for lazy sets. Errors: SL_EIO naming the file
 * (name(ctx, k)), SL_ETOOBIG (larger than the address space). *map_len
 * gets the reservation's length (for munmap). */
sl_status sl_file_set_map(const sl_file_set *s, uint8_t **map, size_t *map_len,
                          sl_err *err);

/* The file's name for messages ("file k" when s->name is NULL). */
void sl_file_set_name(const sl_file_set *s, size_t k, char *buf, size_t cap);

/* Makes room for `need` more open descriptors: raises RLIMIT_NOFILE's soft
 * limit to the hard one when need (plus a margin of 64 for the rest of the
 * process) would not fit under the soft limit; never lowers anything.
 * Errors: SL_EIO naming what (the dataset), need and the hard limit when
 * even that is too few. */
sl_status sl_file_set_reserve_fds(uint64_t need, const char *what, sl_err *err);

#endif
