/* HDF5 global heap collections ("GCOL", version 1), where h5py's vlen
 * elements keep their bytes: parsed from the file's bytes at open by
 * formats/hdf5/source_h5array.c, a few at a time, with the work bounded.
 * Thread safety: a heap is one caller's. */
#ifndef SLUICE_FORMATS_H5ARRAY_HEAP_H
#define SLUICE_FORMATS_H5ARRAY_HEAP_H

#include <stddef.h>
#include <stdint.h>

/* One global heap collection ("GCOL"), parsed: object k's data offset and
 * size in the file. */
typedef struct sl_h5_gcol {
  uint64_t at; /* the collection's file offset; 0: none parsed */
  uint64_t *off, *len;
  size_t cap;    /* entries of off/len (object indices 0..cap-1) */
  uint64_t used; /* when last used (the heap's clock) */
} sl_h5_gcol;

/* The collections the descriptors name, SL_H5_HEAP_SLOTS parsed at a time (the
 * least recently used one parsed again), and the work of parsing: h5py
 * writes descriptors in heap order, so each collection is parsed once, but
 * descriptors that cycle over more collections than the slots (or name one
 * again later) would parse a collection per sample. A collection of F/2
 * bytes holds F/48 objects: unbounded, that is F^2/4096 steps for an F-byte
 * file. The objects stepped through are bounded by 2 per 16 bytes of the
 * file (each collection parsed twice) plus 256 per sample (a 4 KiB
 * collection, h5py's, holds fewer than 171). Memory: up to 16 bytes per
 * object index per slot, 8 MiB at most. */
enum { SL_H5_HEAP_SLOTS = 8 };
typedef struct sl_h5_heap {
  sl_h5_gcol slot[SL_H5_HEAP_SLOTS];
  uint64_t clock;
  uint64_t steps, steps_max; /* heap objects stepped through, and the bound */
} sl_h5_heap;

/* Object k of the collection at file offset coll of the f-byte file at
 * map: *off and *len (its data). NULL, or why not (in why, or a constant):
 * no collection there, a malformed one, no object k, out of memory, or
 * the steps bound (h->steps_max) reached. */
const char *sl_h5_heap_object(const uint8_t *map, uint64_t f, sl_h5_heap *h,
                              uint64_t coll, uint32_t k, uint64_t *off,
                              uint64_t *len, char *why, size_t cap);
/* Frees the parsed collections (h itself is the caller's). */
void sl_h5_heap_free(sl_h5_heap *h);

#endif
