/* Text taken from a file, made safe to print: a tar member's name, an LMDB
 * key, a path from an image list or a folder, a pickle's module name. Such
 * bytes may hold control characters (a newline that forges a line of
 * output, an escape sequence a terminal obeys), so every message the
 * library makes (common/error.c), every reason verify reports and every
 * name the commands print passes through sl_safe_text.
 *
 * Header-only (the commands in tools/ use it too). Thread-safe: pure. */
#ifndef SLUICE_COMMON_SAFE_TEXT_H
#define SLUICE_COMMON_SAFE_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Whether p[0, n) is printable ASCII (0x20..0x7e) throughout: what a name
 * must be to be kept as a sample's name (TFRecord's file name feature, an
 * LMDB key). */
static inline bool sl_text_printable(const uint8_t *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (p[i] < 0x20 || p[i] > 0x7e)
      return false;
  return true;
}

/* The length of the UTF-8 sequence at p[0, n) when it is a valid one of a
 * character that is not a control (C1, U+0080..U+009F), else 0. */
static inline size_t sl_text_utf8_len(const uint8_t *p, size_t n) {
  uint32_t c;
  size_t len;
  if (p[0] >= 0xc2 && p[0] <= 0xdf)
    c = p[0] & 0x1fu, len = 2;
  else if (p[0] >= 0xe0 && p[0] <= 0xef)
    c = p[0] & 0x0fu, len = 3;
  else if (p[0] >= 0xf0 && p[0] <= 0xf4)
    c = p[0] & 0x07u, len = 4;
  else
    return 0;
  if (len > n)
    return 0;
  for (size_t i = 1; i < len; i++) {
    if ((p[i] & 0xc0) != 0x80)
      return 0;
    c = c << 6 | (p[i] & 0x3fu);
  }
  bool overlong = (len == 3 && c < 0x800) || (len == 4 && c < 0x10000);
  if (overlong || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff) || c < 0xa0)
    return 0;
  return len;
}

/* s[0, n) into out (cap > 0 bytes, NUL-terminated, cut to fit) with each
 * control character (below 0x20, 0x7f, C1) and each byte that is not part
 * of valid UTF-8 written as \xNN. Returns out. */
static inline char *sl_safe_text(char *out, size_t cap, const char *s,
                                 size_t n) {
  static const char hex[] = "0123456789abcdef";
  const uint8_t *p = (const uint8_t *)s;
  size_t o = 0;
  for (size_t i = 0; i < n;) {
    size_t len =
        p[i] >= 0x20 && p[i] < 0x7f ? 1 : sl_text_utf8_len(p + i, n - i);
    if (len) {
      if (o + len >= cap)
        break;
      for (size_t q = 0; q < len; q++)
        out[o++] = (char)p[i + q];
      i += len;
      continue;
    }
    if (o + 4 >= cap)
      break;
    out[o++] = '\\';
    out[o++] = 'x';
    out[o++] = hex[p[i] >> 4];
    out[o++] = hex[p[i] & 15];
    i++;
  }
  out[o] = '\0';
  return out;
}

#endif
