/* The msgpack value reader (formats/lmdb/msgpack_value.h). */
#include "formats/lmdb/msgpack_value.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* The kinds a header announces. */
typedef enum mkind {
  M_INT,
  M_NIL,
  M_BOOL,
  M_BIN,
  M_STR,
  M_ARRAY,
  M_MAP,
  M_OTHER
} mkind;

typedef struct mhead {
  mkind kind;
  int64_t i;      /* M_INT (a uint64 above INT64_MAX: i = INT64_MAX), M_BOOL */
  uint64_t count; /* M_BIN, M_STR, M_OTHER: payload bytes; M_ARRAY items;
                     M_MAP pairs */
} mhead;

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

/* Reads the header of the object at p[*at] (for bin, str and M_OTHER the
 * payload follows at the new *at). False when it runs past n or the first
 * byte is 0xc1 (never used). */
static bool head(const uint8_t *p, size_t n, size_t *at, mhead *h) {
  if (*at >= n)
    return false;
  uint8_t b = p[(*at)++];
  uint64_t v = 0;
  h->i = 0;
  h->count = 0;
  if (b <= 0x7f || b >= 0xe0) { /* fixints */
    h->kind = M_INT;
    h->i = (int8_t)b;
    return true;
  }
  if (b <= 0x8f || b == 0xde || b == 0xdf) {
    h->kind = M_MAP;
    if (b <= 0x8f)
      h->count = b & 0x0f;
    else if (!read_be(p, n, at, b == 0xde ? 2 : 4, &h->count))
      return false;
    return true;
  }
  if (b <= 0x9f || b == 0xdc || b == 0xdd) {
    h->kind = M_ARRAY;
    if (b <= 0x9f)
      h->count = b & 0x0f;
    else if (!read_be(p, n, at, b == 0xdc ? 2 : 4, &h->count))
      return false;
    return true;
  }
  if (b <= 0xbf || (b >= 0xd9 && b <= 0xdb)) {
    h->kind = M_STR;
    if (b <= 0xbf)
      h->count = b & 0x1f;
    else if (!read_be(p, n, at, 1 << (b - 0xd9), &h->count))
      return false;
    return true;
  }
  switch (b) {
  case 0xc0:
    h->kind = M_NIL;
    return true;
  case 0xc2:
  case 0xc3:
    h->kind = M_BOOL;
    h->i = b == 0xc3;
    return true;
  case 0xc4:
  case 0xc5:
  case 0xc6:
    h->kind = M_BIN;
    return read_be(p, n, at, 1 << (b - 0xc4), &h->count);
  case 0xcc:
  case 0xcd:
  case 0xce:
  case 0xcf:
    h->kind = M_INT;
    if (!read_be(p, n, at, 1 << (b - 0xcc), &v))
      return false;
    h->i = v > INT64_MAX ? INT64_MAX : (int64_t)v;
    return true;
  case 0xd0:
  case 0xd1:
  case 0xd2:
  case 0xd3: {
    int k = 1 << (b - 0xd0);
    h->kind = M_INT;
    if (!read_be(p, n, at, k, &v))
      return false;
    if (k < 8 && (v >> (8 * k - 1)) & 1)
      v |= ~(uint64_t)0 << (8 * k); /* sign-extend */
    h->i = (int64_t)v;
    return true;
  }
  case 0xca: /* float32, float64: payload only */
  case 0xcb:
    h->kind = M_OTHER;
    h->count = b == 0xca ? 4 : 8;
    return true;
  case 0xd4: /* fixext 1..16: type byte + payload */
  case 0xd5:
  case 0xd6:
  case 0xd7:
  case 0xd8:
    h->kind = M_OTHER;
    h->count = 1 + (1u << (b - 0xd4));
    return true;
  case 0xc7: /* ext 8/16/32: length, type byte, payload */
  case 0xc8:
  case 0xc9:
    h->kind = M_OTHER;
    if (!read_be(p, n, at, 1 << (b - 0xc7), &v))
      return false;
    h->count = v + 1;
    return true;
  default: /* 0xc1 */
    return false;
  }
}

static bool skip_depth(const uint8_t *p, size_t n, size_t *at, int depth) {
  mhead h;
  if (depth > SL_MSGPACK_MAX_DEPTH || !head(p, n, at, &h))
    return false;
  if (h.kind == M_BIN || h.kind == M_STR || h.kind == M_OTHER) {
    if (h.count > n - *at)
      return false;
    *at += (size_t)h.count;
    return true;
  }
  if (h.kind != M_ARRAY && h.kind != M_MAP)
    return true;
  uint64_t items = h.kind == M_MAP ? 2 * h.count : h.count;
  if (items > n - *at) /* each item takes a byte at least */
    return false;
  for (uint64_t i = 0; i < items; i++)
    if (!skip_depth(p, n, at, depth + 1))
      return false;
  return true;
}

bool sl_msgpack_skip(const uint8_t *p, size_t n, size_t *at) {
  return skip_depth(p, n, at, 0);
}

static const char *kind_name(mkind k) {
  static const char *const k_kinds[] = {"int", "nil",   "bool", "bin",
                                        "str", "array", "map",  "float or ext"};
  return k_kinds[k];
}

static bool key_is(const uint8_t *p, const mhead *h, size_t at, const char *s) {
  size_t n = strlen(s);
  return (h->kind == M_BIN || h->kind == M_STR) && h->count == n &&
         memcmp(p + at, s, n) == 0;
}

/* msgpack_numpy's map of a numpy array, whose header is at *at: the data
 * bytes when it is 1-D uint8. */
static int numpy_map(const uint8_t *p, size_t n, size_t *at, uint64_t pairs,
                     sl_value_record *r, char *why, size_t cap) {
  size_t start = *at;
  bool nd = false, u8 = false, have_data = false;
  int rank = -1;
  int64_t dim0 = -1;
  char type[16] = "?";
  for (uint64_t q = 0; q < pairs; q++) {
    mhead k, v;
    size_t kat = *at;
    if (!head(p, n, at, &k) || (k.kind != M_BIN && k.kind != M_STR) ||
        k.count > n - *at) {
      snprintf(why, cap,
               "msgpack map key at offset %zu is damaged or not "
               "a name",
               kat);
      return -1;
    }
    size_t name = *at;
    *at += (size_t)k.count;
    size_t vat = *at;
    if (!head(p, n, at, &v)) {
      snprintf(why, cap, "msgpack value at offset %zu runs past the end", vat);
      return -1;
    }
    if (key_is(p, &k, name, "nd") && v.kind == M_BOOL) {
      nd = v.i != 0;
    } else if (key_is(p, &k, name, "type") &&
               (v.kind == M_STR || v.kind == M_BIN) && v.count <= n - *at) {
      snprintf(type, sizeof type, "%.*s", (int)(v.count < 15 ? v.count : 15),
               (const char *)p + *at);
      u8 = v.count == 3 && memcmp(p + *at, "|u1", 3) == 0;
    } else if (key_is(p, &k, name, "shape") && v.kind == M_ARRAY) {
      rank = v.count > 64 ? 64 : (int)v.count;
      if (v.count == 1) {
        mhead d;
        size_t dat = *at;
        if (!head(p, n, at, &d) || d.kind != M_INT) {
          snprintf(why, cap, "numpy shape at offset %zu is not an int", dat);
          return -1;
        }
        dim0 = d.i;
        continue; /* the array's one item is read */
      }
    } else if (key_is(p, &k, name, "data") && v.kind == M_BIN &&
               v.count <= n - *at) {
      r->image_off = *at;
      r->image_len = (size_t)v.count;
      have_data = true;
    }
    *at = vat;
    if (!sl_msgpack_skip(p, n, at)) {
      snprintf(why, cap,
               "msgpack value at offset %zu is damaged or runs "
               "past the end",
               vat);
      return -1;
    }
  }
  if (!nd) {
    snprintf(why, cap,
             "item 0 is a msgpack map (offset %zu), neither "
             "image bytes nor a msgpack_numpy array",
             start);
    return -1;
  }
  if (!u8 || rank != 1) {
    snprintf(why, cap,
             "item 0 is a numpy array of type '%s' and rank %d "
             "(offset %zu): only a 1-D uint8 array of the image "
             "file's bytes is read",
             type, rank, start);
    return -1;
  }
  if (!have_data || dim0 < 0 || (uint64_t)dim0 != r->image_len) {
    snprintf(why, cap,
             "numpy array (offset %zu) of shape (%" PRId64 ",) "
             "holds %zu data bytes",
             start, dim0, have_data ? r->image_len : 0);
    return -1;
  }
  return 0;
}

int sl_msgpack_parse(const uint8_t *value, size_t n, sl_value_record *r,
                     char *why, size_t cap) {
  memset(r, 0, sizeof *r);
  size_t end = 0;
  if (!sl_msgpack_skip(value, n, &end)) {
    snprintf(why, cap,
             "not one well-formed msgpack object (damaged or "
             "truncated value of %zu bytes)",
             n);
    return -1;
  }
  if (end != n) {
    snprintf(why, cap,
             "%zu bytes after the msgpack object ending at offset "
             "%zu",
             n - end, end);
    return -1;
  }
  /* Well-formed from here: heads and lengths are inside the value. */
  size_t at = 0;
  mhead h;
  head(value, n, &at, &h);
  if (h.kind == M_BIN || h.kind == M_STR) {
    r->image_off = at;
    r->image_len = (size_t)h.count;
    return 0;
  }
  if (h.kind != M_ARRAY || h.count == 0) {
    snprintf(why, cap, "the msgpack value is %s %s, not [image bytes, label]",
             h.kind == M_ARRAY ? "an empty" : "a", kind_name(h.kind));
    return -1;
  }
  uint64_t items = h.count;
  size_t iat = at;
  head(value, n, &at, &h);
  if (h.kind == M_BIN || h.kind == M_STR) {
    r->image_off = at;
    r->image_len = (size_t)h.count;
    at += (size_t)h.count;
  } else if (h.kind == M_MAP) {
    if (numpy_map(value, n, &at, h.count, r, why, cap) != 0)
      return -1;
  } else {
    snprintf(why, cap,
             "item 0 (offset %zu) is a msgpack %s, not the image "
             "bytes",
             iat, kind_name(h.kind));
    return -1;
  }
  if (items >= 2) {
    size_t lat = at;
    head(value, n, &at, &h);
    if (h.kind == M_INT) {
      r->has_label = true;
      r->label = h.i;
    } else if (h.kind != M_NIL) {
      snprintf(why, cap,
               "item 1 (offset %zu) is a msgpack %s, not an int "
               "label or nil",
               lat, kind_name(h.kind));
      return -1;
    }
  }
  return 0;
}
