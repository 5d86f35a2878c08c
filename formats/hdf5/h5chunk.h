/* The chunk index of a chunked HDF5 dataset, read straight from the file's
 * bytes (no HDF5 call): the dataset's object header (v1, or v2 "OHDR" with
 * "OCHK" continuations), its data layout message, and the index it names:
 *
 *   layout v3 (h5py's default libver): a v1 B-tree ("TREE", node type 1)
 *     whose leaf keys hold each chunk's stored size, filter mask and
 *     element offsets;
 *   layout v4 (libver='latest'): a fixed array ("FAHD" header, "FADB" data
 *     block, paged or not, filtered entries or not), a single chunk, the
 *     implicit index (chunks back to back), or an extensible array (one
 *     unlimited axis, the first: "EAHD" header, "EAIB" index block, "EASB"
 *     super blocks, "EADB" data blocks, paged or not). v2 B-trees (more
 *     than one unlimited axis) and extensible arrays over another axis are
 *     SL_H5C_UNSUPPORTED.
 *
 * Why: HDF5 1.10.8 (Debian 12) has no H5Dchunk_iter, and its
 * H5Dget_chunk_info / H5Dget_chunk_info_by_coord walk the whole index on
 * every call, so asking for every chunk is quadratic (415 s for 100,000
 * chunks). This walk visits each node once.
 *
 * The bytes are untrusted: every read is bounds-checked against the file's
 * size, B-tree levels must fall by one per step (no cycles) and the nodes
 * visited are bounded by the chunks, the entries visited by the room the
 * file has for them (nodes sharing a subtree would multiply the work), each
 * chunk may be listed once, and a chunk's bytes must lie inside the file.
 * Checksums (v2 headers, fixed arrays) are not verified; the data they cover is
 * checked instead.
 *
 * Pure (no I/O, no allocation but the table): fuzzed by fuzz/fuzz_h5chunk.c. */
#ifndef SLUICE_FORMATS_H5CHUNK_H
#define SLUICE_FORMATS_H5CHUNK_H

#include <stddef.h>
#include <stdint.h>

enum { SL_H5C_MAX_RANK = 8 };

#define SL_H5C_UNALLOCATED UINT64_MAX /* a chunk never written */

/* One chunk: 16 bytes. */
typedef struct sl_h5_chunk {
  uint64_t addr; /* absolute file offset, or SL_H5C_UNALLOCATED */
  uint32_t size; /* stored (after filters) bytes */
  uint32_t mask; /* filter mask: bit i set = filter i of the pipeline skipped */
} sl_h5_chunk;

typedef struct sl_h5_chunk_query {
  const uint8_t *file; /* the whole file */
  uint64_t file_size;
  uint64_t base;           /* base address: the userblock's size */
  uint64_t ohdr;           /* the dataset's object header, relative to base */
  int rank;                /* 1..SL_H5C_MAX_RANK */
  const uint64_t *dims;    /* the dataset's shape (rank values) */
  const uint64_t *maxdims; /* its maximum shape (UINT64_MAX: unlimited), or
                              NULL: the shape */
  uint32_t elem_size;      /* bytes per element */
  uint64_t max_chunks;     /* a larger chunk grid is refused */
} sl_h5_chunk_query;

typedef struct sl_h5_chunk_index {
  uint64_t cdims[SL_H5C_MAX_RANK]; /* the chunk shape, from the layout */
  uint64_t grid[SL_H5C_MAX_RANK];  /* chunks along each axis */
  uint64_t nchunks;                /* product of grid */
  uint64_t chunk_bytes;            /* prod(cdims) × elem_size */
  const char *kind;                /* "v1 B-tree", "fixed array", ... */
  int layout_version;              /* 3 or 4 */
  unsigned layout_flags; /* v4: bit 0, partial edge chunks left unfiltered */
  sl_h5_chunk *chunk;    /* nchunks, row-major over grid (malloc'd: free it) */
  uint64_t entries;      /* v1 B-tree entries visited (the work done), at
                            most file_size / (16 + 8 × (rank + 1)) */
} sl_h5_chunk_index;

typedef enum sl_h5c_result {
  SL_H5C_OK = 0,
  SL_H5C_UNSUPPORTED = 1, /* a valid index of a kind not read (kind set) */
  SL_H5C_DAMAGED = 2,     /* why says what is wrong */
  SL_H5C_NOMEM = 3,
} sl_h5c_result;

/* Reads q's dataset's chunk index into *out (out->chunk allocated here:
 * 16 bytes × nchunks, at most q->max_chunks; free it, also after an
 * error). why (cap bytes) says what is wrong on SL_H5C_DAMAGED and what
 * was found on SL_H5C_UNSUPPORTED. */
sl_h5c_result sl_h5_chunk_index_read(const sl_h5_chunk_query *q,
                                     sl_h5_chunk_index *out, char *why,
                                     size_t cap);

#endif
