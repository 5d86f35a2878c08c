/* libFuzzer target: a row of HDF5 chunks copied into its samples' bytes
 * (formats/hdf5/h5tiles.c), for images that span chunks, on an untrusted chunk
 * table and span.
 *
 * Input: a 16-byte prefix, then 5 bytes per chunk of the row (offset and
 * stored length, 16-bit little-endian each, and the filter mask: 0xff is a
 * chunk never written), then the span. Prefix: byte 0 the rank (2 + b % 3),
 * bytes 1..4 the array's shape (1 + b % 9 each axis), bytes 5..8 the
 * chunk's (1 + b % 9), bytes 9 and 10 the rows r0 and r1 (b % (k + 1)),
 * byte 11 the pipeline's length (b % 3), bytes 12 and 13 its filters
 * (b % 4: gzip, shuffle, fletcher32, lzf), byte 14 the fill value, byte 15
 * the shuffle element size (1 + b % 4). Seeds in fuzz/corpus_h5tiles:
 * rows of chunks h5py wrote (raw, gzip+shuffle, lzf).
 *
 * Every call must return, a failure must say why, and a success must have
 * written every byte of the rows (two runs into buffers filled differently
 * agree): with no filters, exactly the bytes a per-element reference copy
 * gives. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/hdf5/h5tiles.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The element of rows [r0, ...) at dst offset q, by per-element
 * arithmetic: its chunk in the row, and its place in that chunk. */
static uint8_t reference(const sl_h5_tiling *t, const sl_h5_tile *tiles,
                         const uint8_t *span, uint64_t r0, uint64_t q,
                         uint8_t fill) {
  uint64_t pos[SL_H5T_MAX_RANK];
  for (int a = t->rank - 1; a >= 1; a--) {
    pos[a] = q % t->dims[a];
    q /= t->dims[a];
  }
  pos[0] = r0 + q;
  uint64_t tile = 0, inner = 0;
  for (int a = 0; a < t->rank; a++) {
    if (a > 0)
      tile = tile * t->grid[a] + pos[a] / t->cdims[a];
    inner = inner * t->cdims[a] + (a == 0 ? pos[0] : pos[a] % t->cdims[a]);
  }
  const sl_h5_tile *e = &tiles[tile];
  return e->mask == SL_H5T_FILL ? fill : span[e->off + inner];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  enum { PREFIX = 16 };
  static const uint32_t ids[4] = {SL_H5F_DEFLATE, SL_H5F_SHUFFLE,
                                  SL_H5F_FLETCHER32, SL_H5F_LZF};
  if (size < PREFIX)
    return 0;
  int rank = 2 + data[0] % 3;
  uint64_t dims[SL_H5T_MAX_RANK], cdims[SL_H5T_MAX_RANK];
  for (int a = 0; a < rank; a++) {
    dims[a] = 1u + data[1 + a] % 9u;
    cdims[a] = 1u + data[5 + a] % 9u;
  }
  sl_h5_tiling t;
  if (sl_h5_tiling_init(&t, rank, dims, cdims) != 0)
    abort(); /* small shapes never overflow */
  uint64_t k = cdims[0], r0 = data[9] % (k + 1), r1 = data[10] % (k + 1);
  sl_h5_pipeline p = {.n = data[11] % 3};
  for (int i = 0; i < p.n; i++) {
    p.id[i] = ids[data[12 + i] % 4];
    p.elem[i] = p.id[i] == SL_H5F_SHUFFLE ? 1u + data[15] % 4u : 1u;
  }
  p.chunk_bytes = 1;
  for (int a = 0; a < rank; a++)
    p.chunk_bytes *= cdims[a];
  uint8_t fill = data[14];
  size_t need = PREFIX + 5 * (size_t)t.tiles;
  if (size < need)
    return 0;
  sl_h5_tile tiles[9 * 9 * 9];
  const uint8_t *span = data + need;
  size_t len = size - need;
  for (uint64_t i = 0; i < t.tiles; i++) {
    const uint8_t *b = data + PREFIX + 5 * i;
    tiles[i].off = (uint32_t)(b[0] | b[1] << 8);
    tiles[i].len = (uint32_t)(b[2] | b[3] << 8);
    tiles[i].mask = b[4] == 0xff ? SL_H5T_FILL : b[4];
    if (tiles[i].len > p.max_stored)
      p.max_stored = tiles[i].len;
  }
  uint64_t sc = sl_h5_tiles_scratch(&p);
  uint64_t out_bytes = (r1 > r0 ? r1 - r0 : 1) * t.sample_bytes;
  uint8_t *scratch = malloc(sc ? sc : 1), *dst = malloc(out_bytes),
          *dst2 = malloc(out_bytes);
  if (!scratch || !dst || !dst2) {
    free(scratch);
    free(dst);
    free(dst2);
    return 0;
  }
  /* Two runs into buffers filled differently: every byte of the rows is
   * written when they agree. */
  memset(dst, 0x00, out_bytes);
  memset(dst2, 0xff, out_bytes);
  char why[300], why2[300];
  const char *bad = sl_h5_tiles_copy(&t, &p, tiles, span, len, r0, r1, fill,
                                     scratch, dst, why, sizeof why);
  const char *bad2 = sl_h5_tiles_copy(&t, &p, tiles, span, len, r0, r1, fill,
                                      scratch, dst2, why2, sizeof why2);
  if (!bad != !bad2)
    abort(); /* the same input, the same outcome */
  if (bad) {
    if (!bad[0] || memchr(why, '\0', sizeof why) == NULL)
      abort(); /* a failure always says why */
  } else {
    if (r1 <= r0 || memcmp(dst, dst2, out_bytes) != 0)
      abort(); /* no rows is an error; every byte is written */
    for (uint64_t q = 0; p.n == 0 && q < out_bytes; q++)
      if (dst[q] != reference(&t, tiles, span, r0, q, fill))
        abort();
  }
  free(scratch);
  free(dst);
  free(dst2);
  return 0;
}
