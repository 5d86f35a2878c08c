/* Comma-separated lists ("cpu,memory", "mmap,pread"), as kernels and
 * command lines write them. Pure functions; thread safe. */
#ifndef SLUICE_COMMON_STRLIST_H
#define SLUICE_COMMON_STRLIST_H

#include <stdbool.h>
#include <string.h>

/* Whether item is one of the comma-separated entries of list (whole
 * entries: "mem" is not in "memory"). */
static inline bool sl_list_has(const char *list, const char *item) {
  size_t len = strlen(item);
  for (const char *c = list; *c;) {
    size_t n = strcspn(c, ",");
    if (n == len && strncmp(c, item, n) == 0)
      return true;
    c += n + (c[n] == ',');
  }
  return false;
}

#endif
