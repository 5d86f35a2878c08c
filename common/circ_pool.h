/* A circular pool of bytes for read-ahead in an order: buffers are carved
 * at the head in the order they are read and handed back oldest first (the
 * owner moves the tail to its oldest held buffer), so a pool of cap bytes
 * holds as many samples as fit, whatever their sizes, with no per-buffer
 * bookkeeping. Used by io/'s io_uring engine and remote/'s range reads.
 *
 * Thread safety: none; the owner's lock guards it. Memory: none (the
 * owner's pool of cap bytes). */
#ifndef SLUICE_COMMON_CIRC_POOL_H
#define SLUICE_COMMON_CIRC_POOL_H

#include <stdbool.h>
#include <stddef.h>

typedef struct sl_circ_pool {
  size_t cap;  /* bytes */
  size_t head; /* where the next buffer starts */
  size_t tail; /* where the oldest held buffer starts */
} sl_circ_pool;

/* Carves n bytes into *at. empty: no buffer is held (the pool restarts at
 * 0). A buffer never wraps: when the end's rest is too small it starts at
 * 0, and that rest stays unused until the head passes it again. */
static inline bool sl_circ_pool_alloc(sl_circ_pool *p, bool empty, size_t n,
                                      size_t *at) {
  if (empty)
    p->head = p->tail = 0;
  if (empty || p->head > p->tail) {
    if (p->cap - p->head >= n) {
      *at = p->head;
      p->head += n;
      return true;
    }
    if (!empty && p->tail >= n) {
      *at = 0;
      p->head = n;
      return true;
    }
    return false;
  }
  if (p->head < p->tail && p->tail - p->head >= n) {
    *at = p->head;
    p->head += n;
    return true;
  }
  return false; /* head == tail and not empty: full */
}

#endif
