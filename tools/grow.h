/* One growable-array step for the command's lists and buffers. */
#ifndef SLUICE_TOOLS_GROW_H
#define SLUICE_TOOLS_GROW_H

#include <stdint.h>
#include <stdlib.h>

/* Returns items with room for `need` elements of elem bytes: items itself
 * when *cap already holds them, else a realloc'd array whose capacity
 * (first, then doubled) is stored in *cap. NULL when memory runs out or the
 * size overflows; items and *cap are then unchanged. */
static inline void *sl_cli_grow(void *items, size_t *cap, size_t need,
                                size_t elem, size_t first) {
  if (need <= *cap)
    return items;
  size_t c = *cap ? *cap : first;
  while (c < need) {
    if (c > SIZE_MAX / 2)
      return NULL;
    c *= 2;
  }
  if (c > SIZE_MAX / elem)
    return NULL;
  void *p = realloc(items, c * elem);
  if (p)
    *cap = c;
  return p;
}

#endif
