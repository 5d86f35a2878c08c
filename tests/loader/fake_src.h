/* A synthetic sample source for the loader tests: sample i at (epoch, res)
 * is a pure function of (seed, i, epoch, res), so any batch can be checked
 * byte for byte. Optional per-sample delay (shuffles worker completion),
 * and a set of "corrupt" indices that fail to load. Header-only: each test
 * executable includes it once. */
#ifndef SLUICE_TESTS_LOADER_FAKE_SRC_H
#define SLUICE_TESTS_LOADER_FAKE_SRC_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/rng.h"
#include "loader/loader_internal.h"

typedef struct fake_ctx {
  uint64_t seed;
  sl_dtype dtype;
  int channels;
  int delay_us;       /* up to this many microseconds per sample */
  const uint8_t *bad; /* count entries: nonzero = corrupt; may be NULL */
} fake_ctx;

static inline uint8_t fake_byte(uint64_t seed, uint64_t index, uint64_t epoch,
                                int res, size_t off) {
  uint64_t w = sl_mix64(seed * 0x9e37 ^ index * 1000003 ^ epoch * 7919 ^
                        (uint64_t)res * 31 ^ (off >> 3) * 0x51ed27);
  return (uint8_t)(w >> ((off & 7) * 8));
}

static inline int32_t fake_label(uint64_t index) {
  return (int32_t)(index % 1000);
}

static sl_status fake_worker_open(void *ctx, int max_res, void **ws,
                                  sl_err *err) {
  *ws = malloc(16); /* a worker state like the real one */
  return *ws ? SL_OK : sl_err_set(err, SL_ENOMEM, "fake");
}

static void fake_worker_close(void *ctx, void *ws) {
  free(ws);
}

static sl_status fake_load(void *vctx, void *ws, uint64_t index, uint64_t epoch,
                           int res, void *dst, int32_t *label,
                           sl_box_dst *boxes, sl_sample_times *t, sl_err *err) {
  (void)boxes;
  fake_ctx *c = vctx;
  if (c->bad && c->bad[index])
    return sl_err_set(err, SL_EDECODE, "fake.lmdb: sample %llu: corrupt JPEG",
                      (unsigned long long)index);
  if (c->delay_us > 0) {
    sl_rng r = sl_rng_for(index, epoch, 99);
    struct timespec ts = {0,
                          (long)sl_rng_below(&r, (uint64_t)c->delay_us) * 1000};
    nanosleep(&ts, NULL);
  }
  size_t n = sl_loader_sample_bytes(c->dtype, c->channels, res);
  uint8_t *d = dst;
  for (size_t i = 0; i < n; i++)
    d[i] = fake_byte(c->seed, index, epoch, res, i);
  *label = fake_label(index);
  t->bytes_read += n;
  return SL_OK;
}

static void fake_close(void *vctx) {
  free(vctx);
}

/* A source of count samples; ctx settings copied. */
static inline sl_sample_src fake_src(uint64_t count, const fake_ctx *settings) {
  fake_ctx *c = malloc(sizeof *c);
  *c = *settings;
  sl_sample_src s = {.ctx = c,
                     .count = count,
                     .channels = settings->channels,
                     .worker_open = fake_worker_open,
                     .worker_close = fake_worker_close,
                     .load = fake_load,
                     .close = fake_close};
  return s;
}

/* Checks a delivered batch's bytes against the pattern; 1 if all match. */
static inline int fake_batch_ok(const sl_batch *b, uint64_t seed,
                                sl_dtype dtype) {
  size_t sb = sl_loader_sample_bytes(dtype, (int)b->channels, (int)b->height);
  if (b->bytes != sb * b->n)
    return 0;
  const uint8_t *d = b->data;
  for (uint32_t j = 0; j < b->n; j++) {
    if (b->labels[j] != fake_label(b->indices[j]))
      return 0;
    for (size_t i = 0; i < sb; i++)
      if (d[j * sb + i] !=
          fake_byte(seed, b->indices[j], b->epoch, (int)b->height, i))
        return 0;
  }
  return 1;
}

/* FNV-1a over a batch's indices, labels and bytes, chained into h. */
static inline uint64_t hash_batch(uint64_t h, const sl_batch *b) {
  const uint8_t *parts[3] = {(const uint8_t *)b->indices,
                             (const uint8_t *)b->labels, b->data};
  size_t lens[3] = {b->n * sizeof *b->indices, b->n * sizeof *b->labels,
                    b->bytes};
  for (int p = 0; p < 3; p++)
    for (size_t i = 0; i < lens[p]; i++) {
      h ^= parts[p][i];
      h *= 0x100000001b3ULL;
    }
  return h;
}

/* A config from "key=value" pairs (NULL-terminated), host backend. */
static inline sl_config *make_cfg(const char *const *kv) {
  sl_config *cfg;
  if (sl_config_create(&cfg) != SL_OK)
    return NULL;
  if (sl_config_set(cfg, "device.backend", "host") != SL_OK)
    return NULL;
  for (int i = 0; kv && kv[i]; i += 2)
    if (sl_config_set(cfg, kv[i], kv[i + 1]) != SL_OK) {
      fprintf(stderr, "config: %s\n", sl_config_errmsg(cfg));
      sl_config_destroy(cfg);
      return NULL;
    }
  return cfg;
}

#endif
