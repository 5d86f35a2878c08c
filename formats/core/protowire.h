/* The protobuf wire format's primitives, shared by the two parsers of
 * published .proto messages: Caffe's Datum (formats/lmdb/datum.c) and
 * TensorFlow's Example (formats/records/tf_example.c). A reader is a window
 * [pos, end) of a buffer; every read checks it and fails (-1) rather than
 * run past end. No state beyond the window. */
#ifndef SLUICE_FORMATS_PROTOWIRE_H
#define SLUICE_FORMATS_PROTOWIRE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/endian.h"

enum { SL_WT_VARINT = 0, SL_WT_I64 = 1, SL_WT_LEN = 2, SL_WT_I32 = 5 };

typedef struct sl_pw {
  const uint8_t *b;
  size_t pos, end;
} sl_pw;

/* A varint of at most 10 bytes (64 bits) inside the window. */
static inline int sl_pw_varint(sl_pw *r, uint64_t *v) {
  uint64_t x = 0;
  for (int i = 0; i < 10; i++) {
    if (r->pos >= r->end)
      return -1;
    uint8_t c = r->b[r->pos++];
    if (i == 9 && c > 1)
      return -1; /* more than 64 bits */
    x |= (uint64_t)(c & 0x7f) << (7 * i);
    if (!(c & 0x80)) {
      *v = x;
      return 0;
    }
  }
  return -1;
}

/* Skips a value of wire type wt (0, 1, 2 or 5; groups are refused); a
 * length-delimited one's length is checked against the window and, when
 * len_out is not NULL, stored there. */
static inline int sl_pw_skip(sl_pw *r, unsigned wt, size_t *len_out) {
  uint64_t v;
  switch (wt) {
  case SL_WT_VARINT:
    return sl_pw_varint(r, &v);
  case SL_WT_I64:
    if (r->end - r->pos < 8)
      return -1;
    r->pos += 8;
    return 0;
  case SL_WT_I32:
    if (r->end - r->pos < 4)
      return -1;
    r->pos += 4;
    return 0;
  case SL_WT_LEN:
    if (sl_pw_varint(r, &v) != 0 || v > r->end - r->pos)
      return -1;
    if (len_out)
      *len_out = (size_t)v;
    r->pos += (size_t)v;
    return 0;
  default:
    return -1;
  }
}

/* A little-endian IEEE float (fixed32) at p. */
static inline float sl_pw_float(const uint8_t *p) {
  uint32_t u = sl_get_le32(p);
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

#endif
