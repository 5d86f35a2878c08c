/* sl_value_sniff: see value_sniff.h. */
#include "formats/lmdb/value_sniff.h"

#include <stdbool.h>
#include <stdio.h>

#include "formats/lmdb/msgpack_value.h"

int sl_value_sniff(const uint8_t *p, size_t n, char *buf, size_t cap) {
  if (n >= 3 && p[0] == 0x80 && p[1] >= 2 && p[1] <= 5 && p[n - 1] == '.') {
    snprintf(buf, cap, "Python pickles (protocol %d)", p[1]);
    return 1;
  }
  bool map = (p[0] >= 0x80 && p[0] <= 0x8f) || p[0] == 0xde || p[0] == 0xdf;
  bool array = (p[0] >= 0x90 && p[0] <= 0x9f) || p[0] == 0xdc || p[0] == 0xdd;
  size_t at = 0;
  if (n >= 1 && (map || array) && sl_msgpack_skip(p, n, &at) && at == n) {
    snprintf(buf, cap, "msgpack %s", map ? "maps" : "arrays");
    return 1;
  }
  return 0;
}
