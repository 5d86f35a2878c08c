/* Walking a tar archive's members (tar.h). */
#include "formats/files/tar.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* An octal field (NUL- or space-terminated, leading spaces allowed), or a
 * GNU base-256 number (first byte 0x80, positive only). */
static bool field_number(const uint8_t *f, size_t len, uint64_t *out) {
  uint64_t v = 0;
  if (f[0] == 0x80) {
    for (size_t i = 1; i < len; i++) {
      if (v >> 56)
        return false;
      v = v << 8 | f[i];
    }
    *out = v;
    return true;
  }
  size_t i = 0;
  while (i < len && f[i] == ' ')
    i++;
  size_t digits = 0;
  for (; i < len && f[i] >= '0' && f[i] <= '7'; i++, digits++) {
    if (v >> 61)
      return false;
    v = v << 3 | (uint64_t)(f[i] - '0');
  }
  for (; i < len; i++)
    if (f[i] != ' ' && f[i] != '\0')
      return false;
  *out = v;
  return digits > 0;
}

static bool zero_block(const uint8_t *b) {
  for (unsigned i = 0; i < SL_TAR_BLOCK; i++)
    if (b[i])
      return false;
  return true;
}

/* The checksum: the header's bytes summed with its own field as spaces
 * (unsigned; some old writers summed signed bytes: accepted too). */
static bool checksum_ok(const uint8_t *h, uint64_t *stored, uint64_t *sum) {
  uint64_t u = 0;
  int64_t s = 0;
  for (unsigned i = 0; i < SL_TAR_BLOCK; i++) {
    uint8_t c = i >= 148 && i < 156 ? ' ' : h[i];
    u += c;
    s += (int8_t)c;
  }
  *sum = u;
  if (!field_number(h + 148, 8, stored))
    return false;
  return *stored == u || (int64_t)*stored == s;
}

/* A pax header's records "LEN key=value\n": path and size for the next
 * member. */
static int pax_parse(const uint8_t *p, uint64_t len, uint64_t at,
                     sl_tar_member *m, bool *has_path, bool *has_size,
                     uint64_t *size, char *why, size_t cap) {
  uint64_t i = 0;
  while (i < len) {
    if (p[i] == '\0') /* padding after the last record */
      break;
    uint64_t rl = 0, j = i;
    while (j < len && p[j] >= '0' && p[j] <= '9' && j - i < 12)
      rl = rl * 10 + (uint64_t)(p[j++] - '0');
    if (j == i || j >= len || p[j] != ' ' || rl <= j - i + 1 || rl > len - i ||
        p[i + rl - 1] != '\n') {
      snprintf(why, cap,
               "pax header at offset %" PRIu64 ": malformed record at byte "
               "%" PRIu64,
               at, i);
      return -1;
    }
    const uint8_t *kv = p + j + 1, *end = p + i + rl - 1;
    const uint8_t *eq = memchr(kv, '=', (size_t)(end - kv));
    if (!eq) {
      snprintf(why, cap,
               "pax header at offset %" PRIu64 ": record without '=' at byte "
               "%" PRIu64,
               at, i);
      return -1;
    }
    size_t kl = (size_t)(eq - kv), vl = (size_t)(end - eq - 1);
    if (kl == 4 && memcmp(kv, "path", 4) == 0) {
      if (vl >= SL_TAR_NAME_MAX || memchr(eq + 1, '\0', vl)) {
        snprintf(why, cap,
                 "pax header at offset %" PRIu64 ": path of %zu bytes "
                 "(at most %u, no NUL)",
                 at, vl, SL_TAR_NAME_MAX - 1);
        return -1;
      }
      memcpy(m->name, eq + 1, vl);
      m->name[vl] = '\0';
      *has_path = true;
    } else if (kl == 4 && memcmp(kv, "size", 4) == 0) {
      uint64_t v = 0;
      size_t d = 0;
      for (; d < vl && eq[1 + d] >= '0' && eq[1 + d] <= '9' && d < 19; d++)
        v = v * 10 + (uint64_t)(eq[1 + d] - '0');
      if (d == 0 || d != vl) {
        snprintf(why, cap,
                 "pax header at offset %" PRIu64 ": size is not a number", at);
        return -1;
      }
      *size = v;
      *has_size = true;
    }
    i += rl;
  }
  return 0;
}

int sl_tar_next(const uint8_t *p, uint64_t n, uint64_t *pos, sl_tar_member *m,
                char *why, size_t why_cap) {
  bool has_path = false, has_size = false, pending = false;
  uint64_t pax_size = 0;
  m->header = *pos;
  m->name[0] = '\0';
  for (;;) {
    uint64_t at = *pos;
    if (at == n || (at < n && n - at >= SL_TAR_BLOCK && zero_block(p + at))) {
      if (!pending)
        return 0;
      snprintf(why, why_cap,
               "the archive ends at offset %" PRIu64 " after an extension "
               "header (at %" PRIu64 ") without its member",
               at, m->header);
      return -1;
    }
    if (at > n || n - at < SL_TAR_BLOCK) {
      snprintf(why, why_cap,
               "header at offset %" PRIu64 " cut short: the shard ends at "
               "%" PRIu64 " (truncated?)",
               at, n);
      return -1;
    }
    const uint8_t *h = p + at;
    uint64_t stored = 0, sum = 0, size = 0;
    if (!checksum_ok(h, &stored, &sum)) {
      snprintf(why, why_cap,
               "header at offset %" PRIu64 ": bad checksum (stored %" PRIu64
               ", computed %" PRIu64 "): not a tar archive, or damaged",
               at, stored, sum);
      return -1;
    }
    if (!field_number(h + 124, 12, &size)) {
      snprintf(why, why_cap,
               "header at offset %" PRIu64 ": size field is not a number", at);
      return -1;
    }
    char type = (char)h[156];
    if (has_size && type != 'x' && type != 'g' && type != 'L' && type != 'K')
      size = pax_size;
    uint64_t data = at + SL_TAR_BLOCK;
    if (size > n - data) {
      snprintf(why, why_cap,
               "member at offset %" PRIu64 ": %" PRIu64 " bytes of data, but "
               "the shard ends %" PRIu64 " bytes after its header "
               "(truncated?)",
               at, size, n - data);
      return -1;
    }
    uint64_t padded = (size + SL_TAR_BLOCK - 1) / SL_TAR_BLOCK * SL_TAR_BLOCK;
    if (padded > n - data) {
      snprintf(why, why_cap,
               "member at offset %" PRIu64 ": its data's padding to %u bytes "
               "is cut short by the end of the shard at %" PRIu64
               " (truncated?)",
               at, SL_TAR_BLOCK, n);
      return -1;
    }
    *pos = data + padded;
    if (type == 'L') { /* GNU long name: the next member's */
      if (size == 0 || size > SL_TAR_NAME_MAX) {
        snprintf(why, why_cap,
                 "GNU long name at offset %" PRIu64 ": %" PRIu64 " bytes "
                 "(1 to %u)",
                 at, size, SL_TAR_NAME_MAX);
        return -1;
      }
      size_t l = (size_t)size;
      const uint8_t *z = memchr(p + data, '\0', l);
      if (z)
        l = (size_t)(z - (p + data));
      if (l >= SL_TAR_NAME_MAX)
        l = SL_TAR_NAME_MAX - 1;
      if (!has_path) {
        memcpy(m->name, p + data, l);
        m->name[l] = '\0';
        has_path = true; /* a pax path after it would override it */
      }
      pending = true;
      continue;
    }
    if (type == 'x') {
      if (size > SL_TAR_PAX_MAX) {
        snprintf(why, why_cap,
                 "pax header at offset %" PRIu64 ": %" PRIu64 " bytes (at "
                 "most %u)",
                 at, size, SL_TAR_PAX_MAX);
        return -1;
      }
      has_path = false; /* pax wins over an earlier GNU long name */
      if (pax_parse(p + data, size, at, m, &has_path, &has_size, &pax_size, why,
                    why_cap) != 0)
        return -1;
      if (!has_path)
        m->name[0] = '\0';
      pending = true;
      continue;
    }
    if (type == 'g' || type == 'K') { /* global pax, long link name */
      pending = pending || type == 'K';
      continue;
    }
    if (!has_path) { /* ustar: prefix "/" name */
      size_t nl = strnlen((const char *)h, 100), l = 0;
      if (memcmp(h + 257, "ustar\0", 6) == 0 && h[345]) {
        size_t pl = strnlen((const char *)h + 345, 155);
        memcpy(m->name, h + 345, pl);
        m->name[pl] = '/';
        l = pl + 1;
      }
      memcpy(m->name + l, h, nl);
      m->name[l + nl] = '\0';
    }
    m->type = type;
    m->data = data;
    m->size = size;
    return 1;
  }
}
