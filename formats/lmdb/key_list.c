/* Walking a `__keys__` list (formats/lmdb/key_list.h): a pickled list of byte
 * strings, opcode by opcode, or a msgpack array of bin or str. */
#include "formats/lmdb/key_list.h"

#include <stdbool.h>
#include <stdio.h>

/* A little-endian (pickle) or big-endian (msgpack) length of k bytes at
 * p[*at]; false past the end. */
static bool len_at(const uint8_t *p, size_t n, size_t *at, int k, bool big,
                   uint64_t *v) {
  if (n - *at < (size_t)k)
    return false;
  uint64_t x = 0;
  for (int i = 0; i < k; i++)
    x |= (uint64_t)p[*at + (size_t)i] << (8 * (big ? k - 1 - i : i));
  *at += (size_t)k;
  *v = x;
  return true;
}

static int pickle_walk(const uint8_t *p, size_t n, sl_key_fn each, void *ctx,
                       uint64_t *count, char *why, size_t cap) {
  size_t at = 0;
  bool list = false; /* EMPTY_LIST seen: keys may follow */
  while (at < n) {
    size_t op_at = at;
    uint8_t op = p[at++];
    uint64_t len = 0;
    int k = 0; /* bytes of a string's length; 0: not a string */
    switch (op) {
    case 0x80: /* PROTO */
      at += at < n ? 1 : 0;
      continue;
    case 0x95: /* FRAME: an 8-byte size, then the frame's opcodes */
      if (!len_at(p, n, &at, 8, false, &len))
        break;
      continue;
    case ']': /* EMPTY_LIST */
      if (list)
        break;
      list = true;
      continue;
    case '(':  /* MARK */
    case 'a':  /* APPEND */
    case 'e':  /* APPENDS */
    case 0x94: /* MEMOIZE */
      if (!list)
        break;
      continue;
    case 'q': /* BINPUT */
      at += at < n ? 1 : 0;
      continue;
    case 'r': /* LONG_BINPUT */
      if (!len_at(p, n, &at, 4, false, &len))
        break;
      continue;
    case '.': /* STOP */
      if (!list || at != n)
        break;
      return 0;
    case 'C':  /* SHORT_BINBYTES */
    case 'U':  /* SHORT_BINSTRING */
    case 0x8c: /* SHORT_BINUNICODE */
      k = 1;
      break;
    case 'B': /* BINBYTES */
    case 'T': /* BINSTRING */
    case 'X': /* BINUNICODE */
      k = 4;
      break;
    case 0x8e: /* BINBYTES8 */
    case 0x8d: /* BINUNICODE8 */
      k = 8;
      break;
    default:
      break;
    }
    if (k == 0 || !list || !len_at(p, n, &at, k, false, &len) || len > n - at) {
      snprintf(why, cap,
               "opcode 0x%02x at offset %zu is not part of a pickled list of "
               "keys",
               op, op_at);
      return -1;
    }
    int rc = each(ctx, p + at, (size_t)len);
    if (rc != 0)
      return rc;
    (*count)++;
    at += (size_t)len;
  }
  snprintf(why, cap, "pickled list of keys ends at offset %zu without STOP", n);
  return -1;
}

static int msgpack_walk(const uint8_t *p, size_t n, sl_key_fn each, void *ctx,
                        uint64_t *count, char *why, size_t cap) {
  size_t at = 0;
  uint64_t items = 0;
  uint8_t h = p[at++];
  if (h >= 0x90 && h <= 0x9f)
    items = h & 0x0f;
  else if (!((h == 0xdc && len_at(p, n, &at, 2, true, &items)) ||
             (h == 0xdd && len_at(p, n, &at, 4, true, &items)))) {
    snprintf(why, cap, "msgpack value is not an array (first byte 0x%02x)", h);
    return -1;
  }
  for (uint64_t i = 0; i < items; i++) {
    size_t item_at = at;
    uint64_t len = 0;
    bool ok = at < n;
    uint8_t t = ok ? p[at++] : 0;
    if (ok && t >= 0xa0 && t <= 0xbf)
      len = t & 0x1f;
    else if (ok && (t == 0xc4 || t == 0xd9))
      ok = len_at(p, n, &at, 1, true, &len);
    else if (ok && (t == 0xc5 || t == 0xda))
      ok = len_at(p, n, &at, 2, true, &len);
    else if (ok && (t == 0xc6 || t == 0xdb))
      ok = len_at(p, n, &at, 4, true, &len);
    else
      ok = false;
    if (!ok || len > n - at) {
      snprintf(why, cap,
               "msgpack array item %llu at offset %zu is not a bin or str "
               "key",
               (unsigned long long)i, item_at);
      return -1;
    }
    int rc = each(ctx, p + at, (size_t)len);
    if (rc != 0)
      return rc;
    (*count)++;
    at += (size_t)len;
  }
  if (at != n) {
    snprintf(why, cap, "%zu bytes after the msgpack array of keys", n - at);
    return -1;
  }
  return 0;
}

int sl_key_list_walk(const uint8_t *value, size_t n, sl_key_fn each, void *ctx,
                     uint64_t *count, char *why, size_t cap) {
  *count = 0;
  if (n == 0) {
    snprintf(why, cap, "empty value");
    return -1;
  }
  return value[0] == 0x80 ? pickle_walk(value, n, each, ctx, count, why, cap)
                          : msgpack_walk(value, n, each, ctx, count, why, cap);
}
