/* A synthetic dataset for the out-of-core test and bench: n samples of
 * ImageNet-like JPEG sizes (avg bytes on average, avg/2..3avg/2), whose
 * payload bytes are a function of (sample, position), so any reader can
 * check what it got without a table. The plain layout puts them back to
 * back from byte 0; the index is recomputed from n and avg.
 *
 * Also the epoch orders the bench needs, from the loader's own sampler:
 * random (a permutation) and quasi-random (blocks of `block` file-order
 * neighbours, `window` blocks mixed together), so the working set stays
 * bounded. Header-only, for the test program and the bench; synth_order
 * needs sluice_loader (the sampler). */
#ifndef SLUICE_TESTS_IO_SYNTH_H
#define SLUICE_TESTS_IO_SYNTH_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loader/sampler.h"

static inline uint32_t synth_len(uint64_t i, uint32_t avg) {
  return avg / 2 + (uint32_t)((i * 7919u) % avg);
}

static inline uint8_t synth_byte(uint64_t i, uint64_t k) {
  uint64_t x = (i << 32 | k) * 0x9E3779B97F4A7C15ull;
  return (uint8_t)(x >> 56 ^ x >> 23);
}

/* Sample i's payload bytes k0..k0+n into p. */
static inline void synth_fill(uint64_t i, uint64_t k0, uint8_t *p, size_t n) {
  for (size_t k = 0; k < n; k++)
    p[k] = synth_byte(i, k0 + k);
}

/* Index of first wrong byte, or -1 when data is sample i's payload. */
static inline long synth_check(uint64_t i, const uint8_t *p, size_t n) {
  for (size_t k = 0; k < n; k++)
    if (p[k] != synth_byte(i, k))
      return (long)k;
  return -1;
}

typedef struct synth_index {
  uint64_t n;
  uint64_t *off;
  uint32_t *len;
  uint32_t max;
  uint64_t size;
} synth_index;

/* The plain layout of n samples of average `avg` bytes. 0, or -1 (ENOMEM). */
static inline int synth_index_build(synth_index *x, uint64_t n, uint32_t avg) {
  memset(x, 0, sizeof *x);
  x->off = malloc((n ? n : 1) * sizeof *x->off);
  x->len = malloc((n ? n : 1) * sizeof *x->len);
  if (!x->off || !x->len)
    return -1;
  x->n = n;
  for (uint64_t i = 0; i < n; i++) {
    x->off[i] = x->size;
    x->len[i] = synth_len(i, avg);
    x->size += x->len[i];
    if (x->len[i] > x->max)
      x->max = x->len[i];
  }
  return 0;
}

static inline void synth_index_free(synth_index *x) {
  free(x->off);
  free(x->len);
  memset(x, 0, sizeof *x);
}

static inline void synth_locate(const void *ctx, uint64_t i, uint64_t *offset,
                                uint32_t *length) {
  const synth_index *x = ctx;
  *offset = x->off[i];
  *length = x->len[i];
}

/* Writes the plain file (skipped when it exists with the right size).
 * 0 on success, -1 with errno. */
static inline int synth_write_plain(const char *path, const synth_index *x) {
  FILE *f = fopen(path, "rb");
  if (f) {
    int same = fseeko(f, 0, SEEK_END) == 0 && ftello(f) == (off_t)x->size;
    fclose(f);
    if (same)
      return 0;
  }
  f = fopen(path, "wb");
  if (!f)
    return -1;
  uint8_t *buf = malloc(x->max ? x->max : 1);
  int rc = buf ? 0 : -1;
  for (uint64_t i = 0; rc == 0 && i < x->n; i++) {
    synth_fill(i, 0, buf, x->len[i]);
    if (fwrite(buf, 1, x->len[i], f) != x->len[i])
      rc = -1;
  }
  free(buf);
  if (fclose(f) != 0)
    rc = -1;
  return rc;
}

/* An sl_io_order_fn over an array: ctx is a const uint64_t *. */
static inline uint64_t synth_order_array(const void *ctx, uint64_t seq) {
  return ((const uint64_t *)ctx)[seq];
}

/* order[0..n): the loader's own epoch order (loader/sampler.h) for one
 * rank, `epoch` of `seed`: random (block 0: a permutation) or quasi-random
 * (blocks of `block` neighbours, `window` blocks mixed together), so the
 * I/O measures the order the loader reads in. 0, or -1 (the sampler's
 * error, printed). */
static inline int synth_order(uint64_t *order, uint64_t n, uint64_t seed,
                              uint64_t epoch, uint64_t block, uint64_t window) {
  sl_sampler_config c = {.count = n,
                         .batch_size = 1,
                         .rank = 0,
                         .world_size = 1,
                         .order = block ? SL_ORDER_QUASI : SL_ORDER_RANDOM,
                         .seed = seed,
                         .drop_last = false,
                         .quasi_block = block ? block : 1,
                         .quasi_window = window ? window : 1};
  sl_sampler *s;
  sl_err e = {0};
  if (sl_sampler_create(&s, &c, &e) != SL_OK) {
    fprintf(stderr, "synth_order: %s\n", e.msg);
    return -1;
  }
  sl_sampler_set_epoch(s, epoch);
  for (uint64_t i = 0; i < n; i++)
    order[i] = sl_sampler_at(s, i);
  sl_sampler_destroy(s);
  return 0;
}

#endif
