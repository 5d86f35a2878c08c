/* The Datum wire-format parser (formats/lmdb/datum.h). */
#include "formats/lmdb/datum.h"

#include <stdio.h>
#include <string.h>

#include "formats/core/protowire.h"

typedef sl_pw rd;

static int fail(char *why, size_t cap, const char *what, int field, size_t at) {
  snprintf(why, cap, "Datum %s (field %d, byte %zu of the value)", what, field,
           at);
  return -1;
}

static int parse_datum(const uint8_t *base, size_t pos, size_t end, sl_datum *d,
                       char *why, size_t cap) {
  rd r = {base, pos, end};
  while (r.pos < r.end) {
    size_t at = r.pos;
    uint64_t tag, v;
    if (sl_pw_varint(&r, &tag) != 0)
      return fail(why, cap, "tag runs past the end", 0, at);
    unsigned wt = (unsigned)(tag & 7);
    uint64_t field = tag >> 3;
    int f = field > 1000000 ? -1 : (int)field;
    if (wt == 3 || wt == 4 || wt == 6 || wt == 7)
      return fail(why, cap, "has an unknown wire type", f, at);
    if (field == 0)
      return fail(why, cap, "has field number 0", f, at);
    bool scalar =
        field == 1 || field == 2 || field == 3 || field == 5 || field == 7;
    if (scalar) {
      if (wt != SL_WT_VARINT)
        return fail(why, cap, "scalar field is not a varint", f, at);
      if (sl_pw_varint(&r, &v) != 0)
        return fail(why, cap, "varint runs past the end", f, at);
      int64_t s = (int64_t)v;
      switch (field) {
      case 1:
        d->channels = s, d->has_channels = true;
        break;
      case 2:
        d->height = s, d->has_height = true;
        break;
      case 3:
        d->width = s, d->has_width = true;
        break;
      case 5:
        d->label = s, d->has_label = true;
        break;
      default:
        d->encoded = v != 0;
        break;
      }
    } else if (field == 4) {
      size_t len = 0;
      if (wt != SL_WT_LEN)
        return fail(why, cap, "data is not length-delimited", f, at);
      if (sl_pw_skip(&r, SL_WT_LEN, &len) != 0)
        return fail(why, cap, "data length runs past the end", f, at);
      d->has_data = true;
      d->data_off = r.pos - len;
      d->data_len = len;
    } else if (field == 6) {
      size_t len = 0;
      if (wt == SL_WT_I32) {
        if (sl_pw_skip(&r, wt, NULL) != 0)
          return fail(why, cap, "float runs past the end", f, at);
        d->floats++;
      } else if (wt == SL_WT_LEN) {
        if (sl_pw_skip(&r, wt, &len) != 0)
          return fail(why, cap, "packed floats run past the end", f, at);
        if (len % 4)
          return fail(why, cap, "packed floats are not 4-byte aligned", f, at);
        d->floats += len / 4;
      } else {
        return fail(why, cap, "float_data has a bad wire type", f, at);
      }
    } else if (sl_pw_skip(&r, wt, NULL) != 0) {
      return fail(why, cap, "unknown field runs past the end", f, at);
    }
  }
  return 0;
}

int sl_datum_parse(const uint8_t *value, size_t n, sl_datum *d, char *why,
                   size_t cap) {
  memset(d, 0, sizeof *d);
  if (n == 0) {
    snprintf(why, cap, "empty value (zero bytes)");
    return -1;
  }
  if (value[0] != 0x0A)
    return parse_datum(value, 0, n, d, why, cap);
  /* AnnotatedDatum: field 1 is the Datum; occurrences of it merge, as
   * protobuf merges a repeated embedded message (scalars and data: the
   * last wins; float_data: appended). */
  rd r = {value, 0, n};
  bool found = false;
  while (r.pos < r.end) {
    size_t at = r.pos;
    uint64_t tag;
    if (sl_pw_varint(&r, &tag) != 0)
      return fail(why, cap, "(annotated) tag runs past the end", 0, at);
    unsigned wt = (unsigned)(tag & 7);
    int f = (tag >> 3) > 1000000 ? -1 : (int)(tag >> 3);
    size_t l = 0;
    if (sl_pw_skip(&r, wt, &l) != 0)
      return fail(why, cap, "(annotated) field is malformed", f, at);
    if ((tag >> 3) == 1) {
      if (wt != SL_WT_LEN)
        return fail(why, cap, "(annotated) datum is not a message", f, at);
      if (parse_datum(value, r.pos - l, r.pos, d, why, cap) != 0)
        return -1;
      found = true;
    }
  }
  if (!found)
    return fail(why, cap, "(annotated) holds no Datum", 1, 0);
  d->annotated = true;
  return 0;
}

static uint64_t floats_in(const uint8_t *base, size_t pos, size_t end,
                          float *out, uint64_t count) {
  rd r = {base, pos, end};
  uint64_t got = 0;
  while (r.pos < r.end && got < count) {
    uint64_t tag;
    if (sl_pw_varint(&r, &tag) != 0)
      break;
    unsigned wt = (unsigned)(tag & 7);
    size_t start = r.pos, len = 0;
    if (sl_pw_skip(&r, wt, &len) != 0)
      break;
    if ((tag >> 3) != 6)
      continue;
    if (wt == SL_WT_I32)
      out[got++] = sl_pw_float(base + start);
    else if (wt == SL_WT_LEN)
      for (size_t q = r.pos - len; q + 4 <= r.pos && got < count; q += 4)
        out[got++] = sl_pw_float(base + q);
  }
  return got;
}

uint64_t sl_datum_floats(const uint8_t *value, size_t n, float *out,
                         uint64_t count) {
  if (n == 0)
    return 0;
  if (value[0] != 0x0A)
    return floats_in(value, 0, n, out, count);
  rd r = {value, 0, n};
  uint64_t got = 0;
  while (r.pos < r.end && got < count) {
    uint64_t tag;
    size_t l = 0;
    if (sl_pw_varint(&r, &tag) != 0 ||
        sl_pw_skip(&r, (unsigned)(tag & 7), &l) != 0)
      break;
    if ((tag >> 3) == 1 && (tag & 7) == SL_WT_LEN) /* each Datum, in order */
      got += floats_in(value, r.pos - l, r.pos, out + got, count - got);
  }
  return got;
}
