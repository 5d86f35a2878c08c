/* Allocation helpers with overflow-checked sizes. */
#ifndef SLUICE_COMMON_MEM_H
#define SLUICE_COMMON_MEM_H

#include <stdbool.h>
#include <stddef.h>

/* *out = a * b; false on overflow. */
static inline bool sl_mul_size(size_t a, size_t b, size_t *out) {
  return !__builtin_mul_overflow(a, b, out);
}

/* Page-aligned (or `align`-aligned) zeroed allocation, touched once so the
 * page faults happen at open and not on the hot path. NULL on failure. Free
 * with sl_free_aligned. */
void *sl_alloc_touched(size_t size, size_t align);
void sl_free_aligned(void *p);

#endif
