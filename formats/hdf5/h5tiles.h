/* Samples that span several chunks of an HDF5 pixel array: what h5py's
 * auto-chunking makes of an (N, H, W, C) array (Galaxy10's (17736, 256,
 * 256, 3) becomes chunks of (555, 16, 16, 1): every image is 768 chunks),
 * or any chunk shape that cuts the image axes.
 *
 * The chunks that share a row of the first axis form a *group*: together
 * they hold samples [j·k, (j+1)·k), k = the chunk's first axis. A group's
 * chunks are read as one span of the file (h5py writes them back to back),
 * each chunk's filters undone into a scratch and its block copied to its
 * place in the samples' row-major bytes, cropped at the array's edges.
 * Chunks never written are the fill value.
 *
 * Pure: no I/O, no allocation (the caller gives the scratch:
 * sl_h5_tiles_scratch bytes). Thread-safe: the tiling is only read. Fuzzed
 * by fuzz/fuzz_h5tiles.c. */
#ifndef SLUICE_FORMATS_H5TILES_H
#define SLUICE_FORMATS_H5TILES_H

#include <stddef.h>
#include <stdint.h>

#include "formats/hdf5/h5filter.h"

enum { SL_H5T_MAX_RANK = 8 };

#define SL_H5T_FILL 0x80000000u /* a tile's mask: never written */

/* One chunk of a group: 12 bytes. */
typedef struct sl_h5_tile {
  uint32_t off;  /* from the start of the group's span */
  uint32_t len;  /* stored bytes */
  uint32_t mask; /* filter mask (bit f: filter f skipped), or SL_H5T_FILL */
} sl_h5_tile;

typedef struct sl_h5_tiling {
  int rank;                        /* 2..SL_H5T_MAX_RANK */
  uint64_t dims[SL_H5T_MAX_RANK];  /* the array's shape */
  uint64_t cdims[SL_H5T_MAX_RANK]; /* the chunk's shape; cdims[0] = k */
  uint64_t grid[SL_H5T_MAX_RANK];  /* chunks along each axis */
  uint64_t tiles;                  /* chunks in a group: prod(grid[1..]) */
  uint64_t sample_bytes;           /* prod(dims[1..]), elements of 1 byte */
} sl_h5_tiling;

/* Fills t from the shapes (uint8 elements). 0, or -1 when a shape is 0 or
 * a product overflows. */
int sl_h5_tiling_init(sl_h5_tiling *t, int rank, const uint64_t *dims,
                      const uint64_t *cdims);

/* Scratch bytes sl_h5_tiles_copy needs for pipeline p (p->chunk_bytes: one
 * chunk's unfiltered size): one chunk unfiltered. */
uint64_t sl_h5_tiles_scratch(const sl_h5_pipeline *p);

/* Rows [r0, r1) of a group (sample indexes within it, r1 <= k) into dst,
 * p->chunk_bytes being prod(t->cdims) (else an error),
 * (r1 - r0) × sample_bytes bytes: each of the group's t->tiles chunks
 * (tiles[]) found in span[0..len), its filters undone (p; p->n may be 0)
 * and its block copied; chunks never written give fill. Returns NULL, or
 * what is wrong (a chunk outside the span, corrupt compressed data, a
 * checksum mismatch) in why (cap bytes), naming the chunk. */
const char *sl_h5_tiles_copy(const sl_h5_tiling *t, const sl_h5_pipeline *p,
                             const sl_h5_tile *tiles, const uint8_t *span,
                             size_t len, uint64_t r0, uint64_t r1, uint8_t fill,
                             uint8_t *scratch, uint8_t *dst, char *why,
                             size_t cap);

#endif
