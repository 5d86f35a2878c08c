/* The orders' building blocks; see order.h. */
#include "loader/order.h"

/* Keeps each run's shuffle apart from the block permutation's stream. */
#define WINDOW_SALT 0x77696e646f772d31ULL /* "window-1" */

void sl_order_shuffle(uint64_t *v, uint64_t n, sl_rng *r) {
  for (uint64_t i = n; i > 1; i--) {
    uint64_t j = sl_rng_below(r, i);
    uint64_t t = v[i - 1];
    v[i - 1] = v[j];
    v[j] = t;
  }
}

void sl_order_quasi(const sl_order_blocks *b, uint64_t seed, uint64_t epoch,
                    uint64_t *out) {
  const uint64_t n = b->n, q = b->q, w = b->w;
  for (uint64_t k = 0; k < b->nblocks; k++)
    b->blocks[k] = k;
  sl_rng r = sl_rng_for(seed, epoch, 0);
  sl_order_shuffle(b->blocks, b->nblocks, &r);
  uint64_t pos = 0;
  for (uint64_t g = 0; g * w < b->nblocks; g++) {
    uint64_t start = pos;
    uint64_t gend = (g + 1) * w < b->nblocks ? (g + 1) * w : b->nblocks;
    for (uint64_t k = g * w; k < gend; k++) {
      uint64_t first = b->blocks[k] * q;
      uint64_t last = first + q < n ? first + q : n;
      if (b->first) { /* a file's samples */
        first = b->first[b->blocks[k]];
        last = b->first[b->blocks[k] + 1];
      }
      for (uint64_t i = first; i < last; i++)
        out[pos++] = i;
    }
    sl_rng rw = sl_rng_for(seed ^ WINDOW_SALT, epoch, g);
    sl_order_shuffle(out + start, pos - start, &rw);
  }
}
