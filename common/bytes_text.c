/* sl_format_bytes (sluice.h): sizes as the library's messages and the
 * `sluice` command print them. */
#include <inttypes.h>
#include <stdio.h>

#include "sluice.h"

const char *sl_format_bytes(uint64_t bytes, char *buf, size_t cap) {
  static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = (double)bytes;
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    u++;
  }
  if (u == 0)
    snprintf(buf, cap, "%" PRIu64 " B", bytes);
  else
    snprintf(buf, cap, "%.1f %s", v, unit[u]);
  return buf;
}
