/* The worker side of HDF5 arrays of filtered or image-cutting chunks (and
 * the dispatch to RecordIO's joins of multi-part records)
 * (formats/core/source.h: sl_source_unfilter and its kin): the chunk a sample
 * lies in, its filters undone (formats/hdf5/h5filter.c) or its tiles copied
 * into place (formats/hdf5/h5tiles.c), from what formats/hdf5/source_h5array.c
 * recorded at open (sl_h5_filtered). No HDF5 call: this runs in the workers. */
#include "formats/core/source_impl.h"

#include <inttypes.h>
#include <string.h>

uint64_t sl_source_unfilter_bytes(const sl_source *src) {
  const sl_h5_filtered *f = src->h5f;
  if (!f) /* RecordIO: multi-part records are joined in the scratch */
    return src->njoins ? src->join_scratch : 0;
  if (f->tiled) /* one chunk undone, and the sample copied out */
    return sl_h5_tiles_scratch(&f->pipe) + f->sample_bytes;
  uint64_t sc = f->pipe.n ? sl_h5_filter_scratch(&f->pipe) : 0;
  return sc > f->sample_bytes ? sc : f->sample_bytes;
}

uint64_t sl_source_chunk_samples(const sl_source *src) {
  const sl_h5_filtered *f = src->h5f;
  return f && (f->pipe.n > 0 || f->tiled) ? f->per_chunk : 0;
}

bool sl_source_chunk_of(const sl_source *src, uint64_t i, uint64_t *chunk,
                        uint64_t *offset, uint64_t *chunk_bytes) {
  const sl_h5_filtered *f = src->h5f;
  if (!f || (f->pipe.n == 0 && !f->tiled))
    return false;
  uint64_t c = i / f->per_chunk;
  uint32_t all = (uint32_t)((1u << f->pipe.n) - 1);
  if (f->mask[c] == SL_H5_FILL || (!f->tiled && (f->mask[c] & all) == all))
    return false; /* nothing to undo */
  *chunk = c;
  *offset = (i % f->per_chunk) * f->sample_bytes;
  *chunk_bytes = f->group_bytes;
  return true;
}

/* Rows [r0, r1) of sample i's group, its chunks in[0..len), into dst. */
static sl_status copy_tiles(const sl_source *src, uint64_t i, const uint8_t *in,
                            size_t len, uint64_t r0, uint64_t r1,
                            uint8_t *scratch, uint8_t *dst, sl_err *err) {
  const sl_h5_filtered *f = src->h5f;
  uint64_t c = i / f->per_chunk;
  char why[300];
  const char *bad =
      sl_h5_tiles_copy(&f->tiling, &f->pipe, f->tile + c * f->tiling.tiles, in,
                       len, r0, r1, f->fill, scratch, dst, why, sizeof why);
  if (bad)
    return sl_err_set(err, SL_EFORMAT,
                      "%s: sample %" PRIu64 ": dataset %s, samples %" PRIu64
                      "..%" PRIu64 ": %s",
                      src->path, i, f->dset, c * f->per_chunk,
                      c * f->per_chunk + f->per_chunk - 1, bad);
  return SL_OK;
}

/* Sample i's chunk of whole samples, its filters undone into scratch (or
 * in itself when all were skipped): *chunk. */
static sl_status unfilter_whole(const sl_source *src, uint64_t i,
                                const uint8_t *in, size_t len, uint8_t *scratch,
                                const uint8_t **chunk, sl_err *err) {
  const sl_h5_filtered *f = src->h5f;
  uint64_t c = i / f->per_chunk;
  char why[200];
  const char *bad = sl_h5_unfilter(&f->pipe, f->mask[c], in, len, scratch,
                                   chunk, why, sizeof why);
  if (bad)
    return sl_err_set(err, SL_EFORMAT,
                      "%s: sample %" PRIu64 ": dataset %s, chunk %" PRIu64
                      " (filter mask %#" PRIx32 "): %s",
                      src->path, i, f->dset, c, f->mask[c], bad);
  return SL_OK;
}

sl_status sl_source_unfilter_chunk(const sl_source *src, uint64_t i,
                                   const uint8_t *in, size_t len,
                                   uint8_t *scratch, uint8_t *dst,
                                   sl_err *err) {
  const sl_h5_filtered *f = src->h5f;
  if (f->tiled)
    return copy_tiles(src, i, in, len, 0, f->per_chunk, scratch, dst, err);
  const uint8_t *chunk = NULL;
  sl_status st = unfilter_whole(src, i, in, len, scratch, &chunk, err);
  if (st == SL_OK)
    memcpy(dst, chunk, (size_t)f->group_bytes);
  return st;
}

sl_status sl_source_unfilter(const sl_source *src, uint64_t i,
                             const uint8_t *in, size_t len, uint8_t *scratch,
                             const uint8_t **out, size_t *out_len,
                             uint64_t *unfilters, sl_err *err) {
  const sl_h5_filtered *f = src->h5f;
  if (!f && src->njoins)
    return sl_recio_unfilter(src, i, in, len, scratch, out, out_len, err);
  if (!f) {
    *out = in;
    *out_len = len;
    return SL_OK;
  }
  uint64_t c = i / f->per_chunk, r = i % f->per_chunk;
  *out_len = (size_t)f->sample_bytes;
  if (f->mask[c] == SL_H5_FILL) {
    memset(scratch, f->fill, (size_t)f->sample_bytes);
    *out = scratch;
    return SL_OK;
  }
  if (f->tiled) { /* the group's chunks undone, this sample's rows kept */
    uint8_t *dst = scratch + sl_h5_tiles_scratch(&f->pipe);
    sl_status st = copy_tiles(src, i, in, len, r, r + 1, scratch, dst, err);
    if (st != SL_OK)
      return st;
    *out = dst;
    (*unfilters)++;
    return SL_OK;
  }
  if (f->pipe.n == 0) { /* the entry is the sample's own bytes */
    *out = in;
    return SL_OK;
  }
  uint32_t all = (uint32_t)((1u << f->pipe.n) - 1);
  const uint8_t *chunk = NULL;
  sl_status st = unfilter_whole(src, i, in, len, scratch, &chunk, err);
  if (st != SL_OK)
    return st;
  *out = chunk + r * f->sample_bytes;
  if ((f->mask[c] & all) != all)
    (*unfilters)++;
  return SL_OK;
}
