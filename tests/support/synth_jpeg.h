/* A synthetic JPEG for a test: tools/synth's sl_synth_jpeg with the given
 * options, which must succeed (a cmocka assertion: include after
 * <cmocka.h>). The caller frees blob.p. */
#ifndef SLUICE_TESTS_SUPPORT_SYNTH_JPEG_H
#define SLUICE_TESTS_SUPPORT_SYNTH_JPEG_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tools/synth.h"

typedef struct blob {
  uint8_t *p;
  size_t n;
} blob;

static inline blob sl_test_jpeg(uint64_t seed, int w, int h,
                                const sl_synth_jpeg_opts *o) {
  blob b;
  sl_synth_err err;
  assert_int_equal(sl_synth_jpeg(seed, w, h, o, &b.p, &b.n, &err), SL_OK);
  return b;
}

/* b without its header segments of marker 0xFF<marker> (0xDB: the
 * quantization tables, 0xC4: the Huffman tables), the rest byte for byte:
 * an abbreviated image that a fresh decoder must refuse. */
static inline blob sl_test_jpeg_without(const blob *b, uint8_t marker) {
  blob o = {malloc(b->n), 0};
  assert_non_null(o.p);
  size_t i = 2;
  memcpy(o.p, b->p, 2); /* SOI */
  o.n = 2;
  while (i + 4 <= b->n && b->p[i] == 0xFF && b->p[i + 1] != 0xDA) {
    size_t seg = 2 + ((size_t)b->p[i + 2] << 8 | b->p[i + 3]);
    assert_true(i + seg <= b->n);
    if (b->p[i + 1] != marker) {
      memcpy(o.p + o.n, b->p + i, seg);
      o.n += seg;
    }
    i += seg;
  }
  memcpy(o.p + o.n, b->p + i, b->n - i); /* SOS, the scan, EOI */
  o.n += b->n - i;
  return o;
}

#endif
