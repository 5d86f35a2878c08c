/* A group of chunks copied into its samples' bytes (formats/hdf5/h5tiles.h). */
#include "formats/hdf5/h5tiles.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

int sl_h5_tiling_init(sl_h5_tiling *t, int rank, const uint64_t *dims,
                      const uint64_t *cdims) {
  memset(t, 0, sizeof *t);
  if (rank < 2 || rank > SL_H5T_MAX_RANK)
    return -1;
  t->rank = rank;
  t->tiles = 1;
  t->sample_bytes = 1;
  uint64_t chunk = 1;
  for (int a = 0; a < rank; a++) {
    if (dims[a] == 0 || cdims[a] == 0)
      return -1;
    t->dims[a] = dims[a];
    t->cdims[a] = cdims[a];
    t->grid[a] = dims[a] / cdims[a] + (dims[a] % cdims[a] != 0);
    if (chunk > UINT64_MAX / cdims[a])
      return -1;
    chunk *= cdims[a];
    if (a == 0)
      continue;
    if (t->tiles > UINT64_MAX / t->grid[a] ||
        t->sample_bytes > UINT64_MAX / dims[a])
      return -1;
    t->tiles *= t->grid[a];
    t->sample_bytes *= dims[a];
  }
  return 0;
}

uint64_t sl_h5_tiles_scratch(const sl_h5_pipeline *p) {
  return p->n > 0 ? sl_h5_filter_scratch(p) : 0;
}

/* Where one chunk's block lands: per axis its first element in the array
 * (axis 0: relative to the group) and its extent, cropped at the edges. */
typedef struct block {
  uint64_t start[SL_H5T_MAX_RANK], ext[SL_H5T_MAX_RANK];
  uint64_t sstr[SL_H5T_MAX_RANK], dstr[SL_H5T_MAX_RANK];
} block;

static void block_of(const sl_h5_tiling *t, uint64_t tile, uint64_t r0,
                     uint64_t r1, block *b) {
  int r = t->rank;
  b->sstr[r - 1] = b->dstr[r - 1] = 1;
  for (int a = r - 2; a >= 0; a--) {
    b->sstr[a] = b->sstr[a + 1] * t->cdims[a + 1];
    b->dstr[a] = b->dstr[a + 1] * t->dims[a + 1];
  }
  for (int a = r - 1; a >= 1; a--) {
    uint64_t at = tile % t->grid[a];
    tile /= t->grid[a];
    b->start[a] = at * t->cdims[a];
    uint64_t left = t->dims[a] - b->start[a];
    b->ext[a] = left < t->cdims[a] ? left : t->cdims[a];
  }
  b->start[0] = r0; /* rows of the chunk; written from dst's row 0 */
  b->ext[0] = r1 - r0;
}

/* Copies the block from src (a whole chunk, row-major in cdims) into dst
 * (rows of the array), or writes fill there when src is NULL. The trailing
 * axes the chunk covers whole are one run of bytes; the axis before them is
 * a strided loop (a run of 1 byte: a chunk of one channel); the rest an
 * odometer. */
static void copy_block(const sl_h5_tiling *t, const block *b,
                       const uint8_t *src, uint8_t fill, uint8_t *dst) {
  int r = t->rank, j = r - 1;
  while (j >= 2 && t->cdims[j] == t->dims[j])
    j--;
  uint64_t run = b->ext[j] * b->sstr[j]; /* = ext[j] × dstr[j] */
  int s = j - 1;                         /* the strided axis */
  uint64_t idx[SL_H5T_MAX_RANK] = {0};
  for (;;) {
    uint64_t so = 0, dof = 0;
    for (int a = 0; a < s; a++) {
      so += (a == 0 ? b->start[0] + idx[0] : idx[a]) * b->sstr[a];
      dof += (a == 0 ? idx[0] : b->start[a] + idx[a]) * b->dstr[a];
    }
    so += (s == 0 ? b->start[0] : 0) * b->sstr[s];
    dof += (s == 0 ? 0 : b->start[s]) * b->dstr[s];
    for (int a = j; a < r; a++)
      dof += b->start[a] * b->dstr[a];
    uint8_t *d = dst + dof;
    uint64_t ss = b->sstr[s], ds = b->dstr[s], n = b->ext[s];
    if (!src) {
      for (uint64_t y = 0; y < n; y++)
        memset(d + y * ds, fill, (size_t)run);
    } else if (run == 1) {
      const uint8_t *p = src + so;
      for (uint64_t y = 0; y < n; y++)
        d[y * ds] = p[y * ss];
    } else {
      const uint8_t *p = src + so;
      for (uint64_t y = 0; y < n; y++)
        memcpy(d + y * ds, p + y * ss, (size_t)run);
    }
    int a = s - 1;
    for (; a >= 0; a--) {
      if (++idx[a] < b->ext[a])
        break;
      idx[a] = 0;
    }
    if (a < 0)
      return;
  }
}

const char *sl_h5_tiles_copy(const sl_h5_tiling *t, const sl_h5_pipeline *p,
                             const sl_h5_tile *tiles, const uint8_t *span,
                             size_t len, uint64_t r0, uint64_t r1, uint8_t fill,
                             uint8_t *scratch, uint8_t *dst, char *why,
                             size_t cap) {
  if (r0 >= r1 || r1 > t->cdims[0]) {
    snprintf(why, cap, "rows %" PRIu64 "..%" PRIu64 " of a group of %" PRIu64,
             r0, r1, t->cdims[0]);
    return why;
  }
  uint64_t elems = 1;
  for (int a = 0; a < t->rank; a++)
    elems *= t->cdims[a]; /* no overflow: sl_h5_tiling_init */
  if (p->chunk_bytes != elems) {
    snprintf(why, cap,
             "chunks of %" PRIu64 " bytes for a chunk shape of %" PRIu64
             " elements",
             p->chunk_bytes, elems);
    return why;
  }
  uint32_t all = p->n > 0 ? (uint32_t)((1u << p->n) - 1) : 0;
  for (uint64_t k = 0; k < t->tiles; k++) {
    const sl_h5_tile *e = &tiles[k];
    block b;
    block_of(t, k, r0, r1, &b);
    if (e->mask == SL_H5T_FILL) {
      copy_block(t, &b, NULL, fill, dst);
      continue;
    }
    if (e->off > len || e->len > len - e->off) {
      snprintf(why, cap,
               "chunk %" PRIu64 " of the group (%" PRIu32 " bytes at %" PRIu32
               ") lies outside its %zu bytes",
               k, e->len, e->off, len);
      return why;
    }
    const uint8_t *in = span + e->off, *chunk = in;
    if (p->n > 0 && (e->mask & all) != all) {
      char fw[200];
      if (sl_h5_unfilter(p, e->mask, in, e->len, scratch, &chunk, fw,
                         sizeof fw)) {
        snprintf(why, cap, "chunk %" PRIu64 " of the group: %s", k, fw);
        return why;
      }
    } else if (e->len != p->chunk_bytes) {
      snprintf(why, cap,
               "chunk %" PRIu64 " of the group is stored unfiltered in %" PRIu32
               " bytes, %" PRIu64 " expected",
               k, e->len, p->chunk_bytes);
      return why;
    }
    copy_block(t, &b, chunk, fill, dst);
  }
  return NULL;
}
