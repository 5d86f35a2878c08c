/* Undoing an HDF5 chunk's filter pipeline: deflate (zlib), shuffle, LZF
 * (h5py's filter 32000, liblzf), Blosc (filter 32001, as PyTables and
 * hdf5plugin write it: one Blosc 1 buffer a chunk, any of its codecs, with
 * Blosc's own shuffle; libblosc) and fletcher32 (checked, then stripped),
 * applied in reverse order of the pipeline, each skipped when the chunk's
 * filter mask says it was skipped when written. Pure: no I/O, no
 * allocation; the caller gives the scratch (sl_h5_filter_scratch bytes).
 * Used by the workers (loader/sample_source.c, through sl_source_unfilter), so
 * a filtered chunk costs no HDF5 call. Thread-safe: the pipeline is only read.
 */
#ifndef SLUICE_FORMATS_H5FILTER_H
#define SLUICE_FORMATS_H5FILTER_H

#include <stddef.h>
#include <stdint.h>

enum {
  SL_H5F_MAX = 8, /* filters in a pipeline */
  SL_H5F_DEFLATE = 1,
  SL_H5F_SHUFFLE = 2,
  SL_H5F_FLETCHER32 = 3,
  SL_H5F_LZF = 32000,
  SL_H5F_BLOSC = 32001,
};

typedef struct sl_h5_pipeline {
  int n;                     /* filters, in the order they were applied */
  uint32_t id[SL_H5F_MAX];   /* SL_H5F_* */
  uint32_t elem[SL_H5F_MAX]; /* shuffle: the element size */
  uint64_t chunk_bytes;      /* a chunk's unfiltered size */
  uint64_t max_stored;       /* the largest stored chunk */
} sl_h5_pipeline;

/* The name of filter id (its HDF5 or h5py name), or NULL when it is not
 * one sl_h5_unfilter undoes. */
const char *sl_h5_filter_name(uint32_t id);

/* Scratch bytes sl_h5_unfilter needs: two buffers of the largest stage. */
uint64_t sl_h5_filter_scratch(const sl_h5_pipeline *p);

/* Undoes the filters of p not skipped in mask on in[0..len) into scratch;
 * *out points at the chunk's chunk_bytes unfiltered bytes (in scratch, or
 * in itself when every filter was skipped). Returns NULL, or what is wrong
 * (a checksum mismatch, corrupt compressed data, a wrong size), written in
 * why (cap bytes). */
const char *sl_h5_unfilter(const sl_h5_pipeline *p, uint32_t mask,
                           const uint8_t *in, size_t len, uint8_t *scratch,
                           const uint8_t **out, char *why, size_t cap);

#endif
