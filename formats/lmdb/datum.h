/* Caffe's Datum (caffe.proto) read from protobuf wire format by hand.
 *
 *   message Datum {
 *     optional int32 channels = 1; optional int32 height = 2;
 *     optional int32 width = 3;    optional bytes data = 4;
 *     optional int32 label = 5;    repeated float float_data = 6;
 *     optional bool encoded = 7; }
 *
 * Fields may come in any order; a repeated scalar may be packed (wire type
 * 2) or not (wire type 5, one field per float); unknown fields of wire types
 * 0, 1, 2 and 5 are skipped; groups (3, 4) and types 6, 7 are errors, as is
 * a known field with the wrong wire type. A negative int32 is a 10-byte
 * varint on the wire (sign-extended to 64 bits); forks with int64 fields
 * write the same varints, so values outside int32 are rejected by the
 * caller, not here. The last occurrence of a scalar field wins (protobuf's
 * merge rule); of data, too.
 *
 * The SSD fork's AnnotatedDatum (field 1: Datum, 2: type, 3: annotation
 * groups) starts with 0x0A, a tag no Datum can start with (channels is a
 * varint): sl_datum_parse unwraps it and reports annotated. Repeated
 * Datum fields in it merge as protobuf merges them (scalars and data: the
 * last wins; float_data: appended in order).
 *
 * Thread safety: pure functions of their arguments. */
#ifndef SLUICE_FORMATS_DATUM_H
#define SLUICE_FORMATS_DATUM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct sl_datum {
  int64_t channels, height, width, label;
  bool has_channels, has_height, has_width, has_label, has_data;
  bool encoded;    /* the encoded field is present and true */
  bool annotated;  /* the value was an AnnotatedDatum */
  size_t data_off; /* the data field's bytes: value[data_off, +data_len) */
  size_t data_len;
  uint64_t floats; /* float_data elements, packed and unpacked together */
} sl_datum;

/* Parses value[0, n). Returns 0, or -1 with a reason in why (cap bytes)
 * naming the field and the offset inside the value. Never reads outside
 * value[0, n). */
int sl_datum_parse(const uint8_t *value, size_t n, sl_datum *d, char *why,
                   size_t cap);

/* Writes the first `count` float_data elements (in wire order) to out,
 * little-endian IEEE 754 on the wire. value must have parsed with
 * sl_datum_parse; returns the number written. */
uint64_t sl_datum_floats(const uint8_t *value, size_t n, float *out,
                         uint64_t count);

#endif
