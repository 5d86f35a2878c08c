/* The Caffe Datum wire-format parser (formats/lmdb/datum.h) on hand-made bytes:
 * 10-byte negative varints, fields in any order, packed and unpacked
 * float_data, unknown fields of every wire type, AnnotatedDatum, and each
 * kind of damage rejected without reading past the value. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "formats/lmdb/datum.h"

/* Parses a copy of exactly n bytes on the heap (ASan sees any overread). */
static int parse(const uint8_t *b, size_t n, sl_datum *d, char *why) {
  uint8_t *c = malloc(n ? n : 1);
  memcpy(c, b, n);
  int rc = sl_datum_parse(c, n, d, why, 200);
  free(c);
  return rc;
}

static void test_fields(void **state) {
  (void)state;
  /* label -3 (10 bytes) first, then width, data, height, channels,
   * packed floats {1, 2}, one unpacked float 3, encoded=false, unknown
   * fields of wire types 0, 1, 2, 5. */
  const uint8_t v[] = {
      0x28, 0xFD, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01, /**/
      0x18, 0x02,                                                       /**/
      0x22, 0x04, 1,    2,    3,    4,                                  /**/
      0x10, 0x02,                                                       /**/
      0x08, 0x01,                                                       /**/
      0x32, 0x08, 0,    0,    0x80, 0x3F, 0,    0,    0,    0x40,       /**/
      0x35, 0,    0,    0x40, 0x40,                                     /**/
      0x38, 0x00,                                                       /**/
      0x78, 0x96, 0x01,                                                 /**/
      0x81, 0x01, 1,    2,    3,    4,    5,    6,    7,    8,          /**/
      0x8A, 0x01, 0x02, 9,    9,                                        /**/
      0x95, 0x01, 1,    2,    3,    4};
  sl_datum d;
  char why[200];
  assert_int_equal(parse(v, sizeof v, &d, why), 0);
  assert_int_equal(d.label, -3);
  assert_int_equal(d.channels, 1);
  assert_int_equal(d.height, 2);
  assert_int_equal(d.width, 2);
  assert_true(d.has_data && d.data_len == 4 && v[d.data_off] == 1);
  assert_false(d.encoded);
  assert_false(d.annotated);
  assert_int_equal(d.floats, 3);
  float f[3];
  assert_int_equal(sl_datum_floats(v, sizeof v, f, 3), 3);
  assert_true(f[0] == 1.0f && f[1] == 2.0f && f[2] == 3.0f);
}

static void test_annotated(void **state) {
  (void)state;
  /* AnnotatedDatum{datum{channels 3, label 7, encoded true, data "ab"},
   * type 0, annotation_group {..}}. */
  const uint8_t v[] = {0x0A, 0x0A, 0x08, 0x03, 0x28, 0x07, 0x38, 0x01, 0x22,
                       0x02, 'a',  'b',  0x10, 0x00, 0x1A, 0x02, 0x08, 0x01};
  sl_datum d;
  char why[200];
  assert_int_equal(parse(v, sizeof v, &d, why), 0);
  assert_true(d.annotated && d.encoded);
  assert_int_equal(d.label, 7);
  assert_int_equal(d.channels, 3);
  assert_true(d.data_len == 2 && v[d.data_off] == 'a');
}

/* Issue 25: an AnnotatedDatum holding its Datum in two field-1 occurrences
 * (a writer that set the datum twice, protobuf's merge): {channels 3,
 * label 7, float_data 1.0} then {data "ab", encoded true, label 9,
 * float_data 2.0}. Merged: channels 3, label 9, data "ab", floats 1, 2.
 * Before, the last occurrence alone: no channels, one float. */
static void test_annotated_repeated_datum(void **state) {
  (void)state;
  const uint8_t v[] = {0x0A, 0x09, 0x08, 0x03, 0x28, 0x07, 0x35,
                       0x00, 0x00, 0x80, 0x3F, 0x0A, 0x0D, 0x22,
                       0x02, 'a',  'b',  0x38, 0x01, 0x28, 0x09,
                       0x35, 0x00, 0x00, 0x00, 0x40, 0x10, 0x00};
  sl_datum d;
  char why[200];
  assert_int_equal(parse(v, sizeof v, &d, why), 0);
  assert_true(d.annotated && d.encoded);
  assert_true(d.has_channels);
  assert_int_equal(d.channels, 3);
  assert_int_equal(d.label, 9);
  assert_true(d.data_len == 2 && v[d.data_off] == 'a');
  assert_int_equal(d.floats, 2);
  float f[2] = {0, 0};
  assert_int_equal(sl_datum_floats(v, sizeof v, f, 2), 2);
  assert_true(f[0] == 1.0f && f[1] == 2.0f);
}

static void test_damage(void **state) {
  (void)state;
  static const struct {
    uint8_t b[16];
    size_t n;
    const char *why;
  } cases[] = {
      {{0}, 0, "zero bytes"},
      {{0x08}, 1, "varint runs past"},
      {{0x08, 0x80, 0x80}, 3, "varint runs past"},
      {{0x08, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F},
       11,
       "varint"},
      {{0x22, 0x05, 1, 2}, 4, "data length runs past"},
      {{0x22, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F}, 6, "data length runs past"},
      {{0x0B, 0x0C}, 2, "unknown wire type"},
      {{0x0E}, 1, "unknown wire type"},
      {{0x22, 0x01}, 2, "data length"},
      {{0x20, 0x01}, 2, "not length-delimited"},
      {{0x0A + 0x10, 0x01, 0x00}, 3, "not a varint"},
      {{0x32, 0x03, 1, 2, 3}, 5, "not 4-byte aligned"},
      {{0x35, 1, 2}, 3, "float runs past"},
      {{0x79, 1, 2, 3}, 4, "unknown field runs past"},
      {{0x0A, 0x05, 0x08}, 3, "(annotated)"},
      {{0x0A, 0x02, 0x08, 0x80}, 4, "varint runs past"},
      {{0x00, 0x01}, 2, "field number 0"},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    sl_datum d;
    char why[200] = "";
    if (parse(cases[c].b, cases[c].n, &d, why) != -1 ||
        !strstr(why, cases[c].why))
      fail_msg("case %zu: '%s' (want '%s')", c, why, cases[c].why);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fields),
      cmocka_unit_test(test_annotated),
      cmocka_unit_test(test_annotated_repeated_datum),
      cmocka_unit_test(test_damage),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
