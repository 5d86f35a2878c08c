/* libFuzzer target: the HDF5 chunk index parser (formats/hdf5/h5chunk.c), which
 * reads object headers, layout messages, v1 B-trees, fixed and extensible
 * arrays from
 * untrusted file bytes at open.
 *
 * Input: a 24-byte prefix, then the file. Prefix: byte 0 the rank
 * (1 + b % 8), byte 1 the element size (1 + b % 8), byte 2 the maximum
 * shape (bit 0: the first axis unlimited; bit 1: the second axis twice as
 * long as it is; none: the shape), bytes 4..7 the object
 * header's address (u32 LE, relative to the file part), bytes 8..23 eight
 * u16 LE dimensions (the first rank used). The file part's addresses are
 * relative to the prefix's end (the parser's base address, as with a
 * userblock). Seeds in fuzz/corpus_h5chunk: h5py-written files with each
 * index kind, prefixed.
 *
 * Every parse must return; a refusal says why; an accepted index never
 * points outside the input; the B-tree entries visited never exceed what
 * the input has room for. Build and run: fuzz/run.sh. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/endian.h"
#include "formats/hdf5/h5chunk.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  enum { PREFIX = 24 };
  if (size < PREFIX)
    return 0;
  uint64_t dims[SL_H5C_MAX_RANK], maxdims[SL_H5C_MAX_RANK];
  for (int i = 0; i < SL_H5C_MAX_RANK; i++)
    maxdims[i] = dims[i] = sl_get_le16(data + 8 + 2 * i);
  if (data[2] & 1)
    maxdims[0] = UINT64_MAX;
  if (data[2] & 2)
    maxdims[1] *= 2;
  sl_h5_chunk_query q = {.file = data,
                         .file_size = size,
                         .base = PREFIX,
                         .ohdr = sl_get_le32(data + 4),
                         .rank = 1 + data[0] % SL_H5C_MAX_RANK,
                         .dims = dims,
                         .maxdims = data[2] & 3 ? maxdims : NULL,
                         .elem_size = 1u + data[1] % 8u,
                         .max_chunks = 1u << 16};
  sl_h5_chunk_index ix;
  char why[256];
  sl_h5c_result r = sl_h5_chunk_index_read(&q, &ix, why, sizeof why);
  if ((r == SL_H5C_DAMAGED || r == SL_H5C_UNSUPPORTED) &&
      (memchr(why, '\0', sizeof why) == NULL || why[0] == '\0'))
    abort(); /* a refusal always says why */
  if (r == SL_H5C_OK) {
    if (ix.nchunks > q.max_chunks)
      abort();
    for (uint64_t k = 0; k < ix.nchunks; k++) {
      const sl_h5_chunk *c = &ix.chunk[k];
      if (c->addr != SL_H5C_UNALLOCATED &&
          (c->addr < PREFIX || c->addr > size || c->size > size - c->addr))
        abort();
    }
  }
  /* The B-tree's work: no more entries than the input has room for. */
  if (ix.entries > size / (16 + 8 * ((uint64_t)q.rank + 1)))
    abort();
  free(ix.chunk);
  return 0;
}
