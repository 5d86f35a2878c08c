#include "common/mem.h"

#include <stdlib.h>
#include <string.h>

void *sl_alloc_touched(size_t size, size_t align) {
  if (align < sizeof(void *))
    align = sizeof(void *);
  if (size == 0)
    size = 1;
  void *p = NULL;
  if (posix_memalign(&p, align, size) != 0)
    return NULL;
  memset(p, 0, size); /* touch every page now */
  return p;
}

void sl_free_aligned(void *p) {
  free(p);
}
