/* libFuzzer target: the HDF5 chunk filters the workers undo
 * (formats/hdf5/h5filter.c: fletcher32, deflate, LZF, shuffle) on untrusted
 * chunk bytes.
 *
 * Input: an 8-byte prefix, then the chunk's stored bytes. Prefix: byte 0
 * the pipeline's length (b % 5), bytes 1..4 its filters in the order
 * applied (b % 4: gzip, shuffle, fletcher32, lzf), byte 5 the shuffle
 * element size (1 + b % 8), byte 6 the filter mask, byte 7 the chunk's
 * unfiltered size (64 × (1 + b)). Seeds in fuzz/corpus_h5filter: chunks
 * h5py wrote (gzip+shuffle, gzip+fletcher32, lzf).
 *
 * Every call must return; a failure says why; a success points at exactly
 * chunk_bytes bytes inside the scratch or the input. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/hdf5/h5filter.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  enum { PREFIX = 8 };
  static const uint32_t ids[4] = {SL_H5F_DEFLATE, SL_H5F_SHUFFLE,
                                  SL_H5F_FLETCHER32, SL_H5F_LZF};
  if (size < PREFIX)
    return 0;
  sl_h5_pipeline p = {.n = data[0] % 5};
  for (int i = 0; i < p.n; i++) {
    p.id[i] = ids[data[1 + i] % 4];
    p.elem[i] = p.id[i] == SL_H5F_SHUFFLE ? 1u + data[5] % 8u : 1u;
  }
  p.chunk_bytes = 64u * (1u + data[7]);
  const uint8_t *in = data + PREFIX;
  size_t len = size - PREFIX;
  p.max_stored = len;
  uint64_t sc = sl_h5_filter_scratch(&p);
  uint8_t *scratch = malloc(sc);
  if (!scratch)
    return 0;
  const uint8_t *out = NULL;
  char why[200];
  const char *bad =
      sl_h5_unfilter(&p, data[6], in, len, scratch, &out, why, sizeof why);
  if (bad) {
    if (!bad[0] || memchr(why, '\0', sizeof why) == NULL)
      abort(); /* a failure always says why */
  } else {
    bool in_scratch = out >= scratch && out + p.chunk_bytes <= scratch + sc;
    bool in_input = out >= in && out + p.chunk_bytes <= in + len;
    if (!in_scratch && !in_input)
      abort();
    volatile uint8_t sum = 0;
    for (uint64_t i = 0; i < p.chunk_bytes; i++)
      sum ^= out[i]; /* ASan: every byte readable */
  }
  free(scratch);
  return 0;
}
