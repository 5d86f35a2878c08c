/* The tf.train.Example wire-format parser (formats/records/tf_example.h) on
 * hand-made bytes: unpacked lists (protobuf's Python writer always packs, so
 * the fixtures of test_records never have them), negative int64s, a key after
 * its value, a key given twice, a list's occurrences merged and replaced,
 * unknown fields, and each kind of damage rejected with the feature's key
 * and byte offset, without reading past the record. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "formats/records/tf_example.h"

/* A small protobuf encoder: bytes appended to a fixed buffer. */
typedef struct buf {
  uint8_t b[512];
  size_t n;
} buf;

static void put(buf *o, const void *p, size_t n) {
  assert_true(o->n + n <= sizeof o->b);
  memcpy(o->b + o->n, p, n);
  o->n += n;
}

static void varint(buf *o, uint64_t v) {
  do {
    uint8_t c = (uint8_t)(v & 0x7f);
    v >>= 7;
    if (v)
      c |= 0x80;
    put(o, &c, 1);
  } while (v);
}

static void tag(buf *o, unsigned field, unsigned wt) {
  varint(o, (uint64_t)field << 3 | wt);
}

/* Field `field`, length-delimited, holding sub. */
static void ld(buf *o, unsigned field, const buf *sub) {
  tag(o, field, 2);
  varint(o, sub->n);
  put(o, sub->b, sub->n);
}

static void ld_bytes(buf *o, unsigned field, const char *s) {
  tag(o, field, 2);
  varint(o, strlen(s));
  put(o, s, strlen(s));
}

/* A map entry key -> feature (value first when value_first). */
static void entry(buf *features, const char *key, const buf *feature,
                  int value_first) {
  buf e = {0};
  if (value_first)
    ld(&e, 2, feature);
  ld_bytes(&e, 1, key);
  if (!value_first)
    ld(&e, 2, feature);
  ld(features, 1, &e);
}

static void example(buf *out, const buf *features) {
  memset(out, 0, sizeof *out);
  ld(out, 1, features);
}

/* Parses a heap copy of exactly n bytes (ASan sees any overread). */
static int parse(const buf *x, const char *const *keys, size_t nk,
                 sl_feature *f, char *why) {
  uint8_t *c = malloc(x->n ? x->n : 1);
  memcpy(c, x->b, x->n);
  int rc = sl_example_parse(c, x->n, keys, nk, f, why, 200);
  free(c);
  return rc;
}

static const char *const k_keys[] = {"image/encoded", "label", "floats",
                                     "absent"};

static void test_lists(void **state) {
  (void)state;
  buf img = {0}, list = {0}, lab = {0}, fl = {0}, fs = {0}, x;
  ld_bytes(&list, 1, "\xff\xd8jpeg");
  ld_bytes(&list, 1, "second");
  ld(&img, 1, &list);
  /* Int64List, unpacked: -5 (a 10-byte varint), then 7; then packed 9. */
  buf il = {0}, packed = {0};
  tag(&il, 1, 0);
  varint(&il, (uint64_t)-5);
  tag(&il, 1, 0);
  varint(&il, 7);
  varint(&packed, 9);
  ld(&il, 1, &packed);
  ld(&lab, 3, &il);
  /* FloatList, unpacked 0.5 then packed {2, 3}; an unknown field 9. */
  buf flist = {0}, pf = {0};
  float v = 0.5f, w[2] = {2.0f, 3.0f};
  tag(&flist, 1, 5);
  put(&flist, &v, 4);
  put(&pf, w, 8);
  ld(&flist, 1, &pf);
  tag(&flist, 9, 0);
  varint(&flist, 1);
  ld(&fl, 2, &flist);
  entry(&fs, "image/encoded", &img, 1); /* the value before its key */
  entry(&fs, "label", &lab, 0);
  entry(&fs, "floats", &fl, 0);
  example(&x, &fs);
  tag(&x, 2, 1); /* an unknown fixed64 field of the Example */
  put(&x, "12345678", 8);
  sl_feature f[4];
  char why[200];
  assert_int_equal(parse(&x, k_keys, 4, f, why), 0);
  assert_int_equal(f[0].kind, SL_FEATURE_BYTES);
  assert_int_equal(f[0].count, 2);
  assert_int_equal(f[0].first_len, 6);
  assert_memory_equal(x.b + f[0].first_off, "\xff\xd8jpeg", 6);
  assert_int_equal(f[1].kind, SL_FEATURE_INT64);
  assert_int_equal(f[1].count, 3);
  assert_int_equal(f[1].first_int, -5);
  assert_int_equal(f[2].kind, SL_FEATURE_FLOAT);
  assert_int_equal(f[2].count, 3);
  assert_true(f[2].first_float == 0.5f);
  assert_int_equal(f[3].kind, SL_FEATURE_NONE);
}

/* protobuf's merge rules: a key given twice keeps the last entry; within
 * an entry, the same list again appends, another list replaces. */
static void test_merging(void **state) {
  (void)state;
  buf a = {0}, b = {0}, la = {0}, lb = {0}, fs = {0}, x;
  tag(&la, 1, 0);
  varint(&la, 1);
  ld(&a, 3, &la);
  tag(&lb, 1, 0);
  varint(&lb, 2);
  ld(&b, 3, &lb);
  entry(&fs, "label", &a, 0);
  entry(&fs, "label", &b, 0);
  /* One entry whose value is given twice: Int64List {4} then BytesList. */
  buf e = {0}, v1 = {0}, v2 = {0}, l1 = {0}, l2 = {0};
  tag(&l1, 1, 0);
  varint(&l1, 4);
  ld(&v1, 3, &l1);
  ld_bytes(&l2, 1, "img");
  ld(&v2, 1, &l2);
  ld_bytes(&e, 1, "image/encoded");
  ld(&e, 2, &v1);
  ld(&e, 2, &v2);
  ld(&fs, 1, &e);
  example(&x, &fs);
  sl_feature f[4];
  char why[200];
  assert_int_equal(parse(&x, k_keys, 4, f, why), 0);
  assert_int_equal(f[1].first_int, 2);
  assert_int_equal(f[1].count, 1);
  assert_int_equal(f[0].kind, SL_FEATURE_BYTES);
  assert_int_equal(f[0].count, 1);
  /* Features given twice: their entries add up. */
  buf fs2 = {0}, y = {0};
  entry(&fs2, "floats", &a, 0);
  ld(&y, 1, &fs);
  ld(&y, 1, &fs2);
  assert_int_equal(parse(&y, k_keys, 4, f, why), 0);
  assert_int_equal(f[1].first_int, 2);
  assert_int_equal(f[2].kind, SL_FEATURE_INT64);
  /* An empty record is an Example without features. */
  buf empty = {0};
  assert_int_equal(parse(&empty, k_keys, 4, f, why), 0);
  assert_int_equal(f[0].kind, SL_FEATURE_NONE);
}

/* Each damage: rejected, the reason naming what and where. */
static void test_damage(void **state) {
  (void)state;
  sl_feature f[4];
  char why[200];
  buf x;
  /* A packed Int64List whose last varint runs past its run. */
  {
    buf l = {0}, p = {0}, v = {0}, fs = {0};
    varint(&p, 3);
    uint8_t cont = 0x80;
    put(&p, &cont, 1);
    ld(&l, 1, &p);
    varint(&l, 0); /* (not reached) */
    ld(&v, 3, &l);
    entry(&fs, "label", &v, 0);
    example(&x, &fs);
    assert_int_equal(parse(&x, k_keys, 4, f, why), -1);
    assert_non_null(strstr(why, "feature 'label'"));
    assert_non_null(strstr(why, "packed varint runs past its run"));
    assert_non_null(strstr(why, "byte "));
  }
  /* Packed floats not a multiple of 4 bytes. */
  {
    buf l = {0}, p = {0}, v = {0}, fs = {0};
    put(&p, "abcdef", 6);
    ld(&l, 1, &p);
    ld(&v, 2, &l);
    entry(&fs, "floats", &v, 0);
    example(&x, &fs);
    assert_int_equal(parse(&x, k_keys, 4, f, why), -1);
    assert_non_null(strstr(why, "not 4-byte floats"));
  }
  /* A BytesList value that is a varint (wrong wire type). */
  {
    buf l = {0}, v = {0}, fs = {0};
    tag(&l, 1, 0);
    varint(&l, 5);
    ld(&v, 1, &l);
    entry(&fs, "image/encoded", &v, 0);
    example(&x, &fs);
    assert_int_equal(parse(&x, k_keys, 4, f, why), -1);
    assert_non_null(strstr(why, "not length-delimited"));
    assert_non_null(strstr(why, "image/encoded"));
  }
  /* A group (wire type 3), field number 0, a length past the end. */
  {
    buf fs = {0};
    tag(&fs, 7, 3);
    example(&x, &fs);
    assert_int_equal(parse(&x, k_keys, 4, f, why), -1);
    assert_non_null(strstr(why, "unknown wire type 3"));
    buf z = {0};
    tag(&z, 0, 0);
    varint(&z, 1);
    assert_int_equal(parse(&z, k_keys, 4, f, why), -1);
    assert_non_null(strstr(why, "field number 0"));
    buf t = {0};
    tag(&t, 1, 2);
    varint(&t, 100);
    put(&t, "xy", 2);
    assert_int_equal(parse(&t, k_keys, 4, f, why), -1);
    assert_non_null(strstr(why, "length runs past the end"));
  }
  /* A varint of 11 bytes; a truncated tag. */
  {
    buf t = {0};
    tag(&t, 2, 0);
    for (int q = 0; q < 10; q++)
      put(&t, "\xff", 1);
    put(&t, "\x01", 1);
    assert_int_equal(parse(&t, k_keys, 4, f, why), -1);
    buf u = {0};
    put(&u, "\x8a", 1);
    assert_int_equal(parse(&u, k_keys, 4, f, why), -1);
    assert_non_null(strstr(why, "tag runs past the end"));
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_lists),
      cmocka_unit_test(test_merging),
      cmocka_unit_test(test_damage),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
