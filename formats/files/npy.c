/* A float32 1-D .npy array (npy.h). */
#include "formats/files/npy.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "common/endian.h"

typedef struct cur {
  const char *s, *end;
} cur;

static void skip_ws(cur *c) {
  while (c->s < c->end && (*c->s == ' ' || *c->s == '\t'))
    c->s++;
}

static bool lit(cur *c, const char *t) {
  skip_ws(c);
  size_t l = strlen(t);
  if ((size_t)(c->end - c->s) < l || memcmp(c->s, t, l) != 0)
    return false;
  c->s += l;
  return true;
}

/* A quoted key or string ('...' or "...") into out (cap bytes). */
static bool str(cur *c, char *out, size_t cap) {
  skip_ws(c);
  if (c->s >= c->end || (*c->s != '\'' && *c->s != '"'))
    return false;
  char q = *c->s++;
  size_t n = 0;
  while (c->s < c->end && *c->s != q) {
    if (n + 1 >= cap)
      return false;
    out[n++] = *c->s++;
  }
  if (c->s >= c->end)
    return false;
  c->s++;
  out[n] = '\0';
  return true;
}

int sl_npy_f32_vector(const uint8_t *p, uint64_t len, uint64_t *k,
                      uint64_t *data, char *why, size_t cap) {
  static const uint8_t magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
  if (len < 10 || memcmp(p, magic, 6) != 0) {
    snprintf(why, cap, ".npy member: no NumPy magic");
    return -1;
  }
  uint8_t major = p[6], minor = p[7];
  uint64_t hl, start;
  if (major == 1 && minor == 0) {
    hl = sl_get_le16(p + 8);
    start = 10;
  } else if ((major == 2 || major == 3) && minor == 0 && len >= 12) {
    hl = sl_get_le32(p + 8);
    start = 12;
  } else {
    snprintf(why, cap, ".npy member: version %u.%u (1.0, 2.0, 3.0 read)", major,
             minor);
    return -1;
  }
  if (hl > len - start || hl == 0 || p[start + hl - 1] != '\n') {
    snprintf(why, cap, ".npy member: header of %" PRIu64 " bytes cut short",
             hl);
    return -1;
  }
  cur c = {(const char *)p + start, (const char *)p + start + hl - 1};
  bool descr = false, order = false, shape = false;
  uint64_t n = 0;
  if (!lit(&c, "{"))
    goto bad;
  for (;;) {
    char key[32], val[16];
    skip_ws(&c);
    if (lit(&c, "}"))
      break;
    if (!str(&c, key, sizeof key) || !lit(&c, ":"))
      goto bad;
    if (!strcmp(key, "descr") && !descr) {
      if (!str(&c, val, sizeof val))
        goto bad;
      if (strcmp(val, "<f4") != 0) {
        snprintf(why, cap, ".npy member: dtype %s (float32 '<f4' read)", val);
        return -1;
      }
      descr = true;
    } else if (!strcmp(key, "fortran_order") && !order) {
      if (!lit(&c, "False") && !lit(&c, "True"))
        goto bad;
      order = true;
    } else if (!strcmp(key, "shape") && !shape) {
      if (!lit(&c, "("))
        goto bad;
      skip_ws(&c);
      size_t d = 0;
      while (c.s < c.end && *c.s >= '0' && *c.s <= '9' && d < 12) {
        n = n * 10 + (uint64_t)(*c.s++ - '0');
        d++;
      }
      if (d == 0 || !lit(&c, ",") || !lit(&c, ")")) {
        snprintf(why, cap, ".npy member: shape is not (K,): a 1-D array");
        return -1;
      }
      shape = true;
    } else {
      goto bad;
    }
    skip_ws(&c);
    if (lit(&c, ","))
      continue;
    if (lit(&c, "}"))
      break;
    goto bad;
  }
  skip_ws(&c);
  if (c.s != c.end || !descr || !order || !shape)
    goto bad;
  uint64_t at = start + hl;
  if (n == 0 || len - at != n * 4) {
    snprintf(why, cap,
             ".npy member: %" PRIu64 " floats need %" PRIu64 " bytes, it "
             "holds %" PRIu64,
             n, n * 4, len - at);
    return -1;
  }
  *k = n;
  *data = at;
  return 0;
bad:
  snprintf(why, cap, ".npy member: malformed header dict");
  return -1;
}
