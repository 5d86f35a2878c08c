/* A synthetic JPEG for a test: tools/synth's sl_synth_jpeg with the given
 * options, which must succeed (a cmocka assertion: include after
 * <cmocka.h>). The caller frees blob.p. */
#ifndef SLUICE_TESTS_SUPPORT_SYNTH_JPEG_H
#define SLUICE_TESTS_SUPPORT_SYNTH_JPEG_H

#include <stddef.h>
#include <stdint.h>

#include "tools/synth.h"

typedef struct blob {
  uint8_t *p;
  size_t n;
} blob;

static inline blob sl_test_jpeg(uint64_t seed, int w, int h,
                                const sl_synth_jpeg_opts *o) {
  blob b;
  sl_err err;
  assert_int_equal(sl_synth_jpeg(seed, w, h, o, &b.p, &b.n, &err), SL_OK);
  return b;
}

#endif
