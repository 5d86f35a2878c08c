/* sl_value_sniff: see value_sniff.h. */
#include "formats/value_sniff.h"

#include <stdbool.h>
#include <stdio.h>

enum { MP_MAX_DEPTH = 32 };

/* The k-byte big-endian number at p[*at], advancing *at. */
static bool read_be(const uint8_t *p, size_t n, size_t *at, int k,
                    uint64_t *v) {
  if ((size_t)k > n - *at)
    return false;
  *v = 0;
  for (int i = 0; i < k; i++)
    *v = *v << 8 | p[(*at)++];
  return true;
}

/* Steps *at over one msgpack object; false when p[*at..n) does not start
 * with a well-formed one. */
static bool mp_skip(const uint8_t *p, size_t n, size_t *at, int depth) {
  if (depth > MP_MAX_DEPTH || *at >= n)
    return false;
  uint8_t b = p[(*at)++];
  uint64_t len = 0, items = 0;
  if (b <= 0x7f || b >= 0xe0) /* fixints */
    return true;
  if (b <= 0x8f)
    items = 2 * (uint64_t)(b & 0x0f);
  else if (b <= 0x9f)
    items = b & 0x0f;
  else if (b <= 0xbf)
    len = b & 0x1f;
  else {
    /* Length bytes and fixed payloads of the other first bytes. */
    static const struct {
      uint8_t first;
      uint8_t len_bytes; /* a length of this many bytes follows */
      uint8_t fixed;     /* then this many bytes (ext: the type byte) */
      uint8_t kind;      /* 0 bytes, 1 array items, 2 map pairs */
    } k_forms[] = {
        {0xc4, 1, 0, 0},  {0xc5, 2, 0, 0}, {0xc6, 4, 0, 0}, {0xc7, 1, 1, 0},
        {0xc8, 2, 1, 0},  {0xc9, 4, 1, 0}, {0xca, 0, 4, 0}, {0xcb, 0, 8, 0},
        {0xcc, 0, 1, 0},  {0xcd, 0, 2, 0}, {0xce, 0, 4, 0}, {0xcf, 0, 8, 0},
        {0xd0, 0, 1, 0},  {0xd1, 0, 2, 0}, {0xd2, 0, 4, 0}, {0xd3, 0, 8, 0},
        {0xd4, 0, 2, 0},  {0xd5, 0, 3, 0}, {0xd6, 0, 5, 0}, {0xd7, 0, 9, 0},
        {0xd8, 0, 17, 0}, {0xd9, 1, 0, 0}, {0xda, 2, 0, 0}, {0xdb, 4, 0, 0},
        {0xdc, 2, 0, 1},  {0xdd, 4, 0, 1}, {0xde, 2, 0, 2}, {0xdf, 4, 0, 2},
    };
    if (b == 0xc0 || b == 0xc2 || b == 0xc3) /* nil, false, true */
      return true;
    size_t f = 0;
    while (f < sizeof k_forms / sizeof k_forms[0] && k_forms[f].first != b)
      f++;
    if (f == sizeof k_forms / sizeof k_forms[0]) /* 0xc1: never used */
      return false;
    uint64_t count = 0;
    if (k_forms[f].len_bytes &&
        !read_be(p, n, at, k_forms[f].len_bytes, &count))
      return false;
    if (k_forms[f].kind == 1)
      items = count;
    else if (k_forms[f].kind == 2)
      items = 2 * count;
    else
      len = count + k_forms[f].fixed;
  }
  if (len > n - *at)
    return false;
  *at += (size_t)len;
  if (items > n - *at) /* each item takes a byte at least */
    return false;
  for (uint64_t i = 0; i < items; i++)
    if (!mp_skip(p, n, at, depth + 1))
      return false;
  return true;
}

int sl_value_sniff(const uint8_t *p, size_t n, char *buf, size_t cap) {
  if (n >= 3 && p[0] == 0x80 && p[1] >= 2 && p[1] <= 5 && p[n - 1] == '.') {
    snprintf(buf, cap, "Python pickles (protocol %d)", p[1]);
    return 1;
  }
  bool map = (p[0] >= 0x80 && p[0] <= 0x8f) || p[0] == 0xde || p[0] == 0xdf;
  bool array = (p[0] >= 0x90 && p[0] <= 0x9f) || p[0] == 0xdc || p[0] == 0xdd;
  size_t at = 0;
  if (n >= 1 && (map || array) && mp_skip(p, n, &at, 0) && at == n) {
    snprintf(buf, cap, "msgpack %s", map ? "maps" : "arrays");
    return 1;
  }
  return 0;
}
