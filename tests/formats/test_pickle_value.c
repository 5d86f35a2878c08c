/* The pickle and msgpack value readers (formats/lmdb/pickle_value.c,
 * formats/lmdb/msgpack_value.c) on hand-made bytes: the opcodes real writers
 * rarely emit (MARK + TUPLE/LIST, APPEND, LONG_BINPUT, BINGET, LONG1's
 * sign, BININT's), every bound (stack, objects, memo, msgpack nesting) and
 * each refusal's reason. test_pickle has what pickle.dumps, msgpack and
 * msgpack_numpy write. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "formats/lmdb/key_list.h"
#include "formats/lmdb/msgpack_value.h"
#include "formats/lmdb/pickle_value.h"

#define PK(s) (const uint8_t *)(s), sizeof(s) - 1

/* sl_pickle_parse or sl_msgpack_parse. */
typedef int (*value_parser)(const uint8_t *value, size_t n, sl_value_record *r,
                            char *why, size_t cap);

/* parse (named what) reads v's n bytes as an image of len bytes at off,
 * with label when has_label. */
static void expect_read(value_parser parse, const char *what, const uint8_t *v,
                        size_t n, size_t off, size_t len, int has_label,
                        int64_t label) {
  sl_value_record r;
  char why[256];
  if (parse(v, n, &r, why, sizeof why) != 0)
    fail_msg("%s refused: %s", what, why);
  assert_int_equal(r.image_off, off);
  assert_int_equal(r.image_len, len);
  assert_int_equal(r.has_label, has_label);
  if (has_label)
    assert_int_equal(r.label, label);
}

/* parse (named what) refuses v's n bytes with a reason holding want. */
static void expect_refused(value_parser parse, const char *what,
                           const uint8_t *v, size_t n, const char *want) {
  sl_value_record r;
  char why[256];
  assert_int_equal(parse(v, n, &r, why, sizeof why), -1);
  if (!strstr(why, want))
    fail_msg("%s: reason '%s' lacks '%s'", what, why, want);
}

static void pk_ok(const uint8_t *v, size_t n, size_t off, size_t len,
                  int has_label, int64_t label) {
  expect_read(sl_pickle_parse, "pickle", v, n, off, len, has_label, label);
}

static void pk_bad(const uint8_t *v, size_t n, const char *want) {
  expect_refused(sl_pickle_parse, "pickle", v, n, want);
}

static void test_pickle_opcodes(void **state) {
  (void)state;
  /* Python 2's cPickle.dumps(('ab', 3), 2). */
  pk_ok(PK("\x80\x02U\x02"
           "abq\x00K\x03\x86q\x01."),
        4, 2, 1, 3);
  /* MARK + TUPLE, BINSTRING, BININT -5, extra items ignored. */
  pk_ok(PK("\x80\x02(T\x03\x00\x00\x00xyzJ\xfb\xff\xff\xffN)t."), 8, 3, 1, -5);
  /* MARK + LIST; LONG1 of -256; BINBYTES8. */
  pk_ok(PK("\x80\x04(\x8e\x01\x00\x00\x00\x00\x00\x00\x00z\x8a\x02\x00\xffl."),
        12, 1, 1, -256);
  /* EMPTY_LIST, APPEND twice; BININT2; None label. */
  pk_ok(PK("\x80\x03]C\x01qaNa."), 5, 1, 0, 0);
  pk_ok(PK("\x80\x03]C\x01qaM\x10\x27"
           "a."),
        5, 1, 1, 10000);
  /* The memo: LONG_BINPUT then LONG_BINGET / MEMOIZE then BINGET hand the
   * same bytes out twice; the record's item 0 is the second reference. */
  pk_ok(PK("\x80\x03"
           "C\x02hir\x07\x00\x00\x00j\x07\x00\x00\x00\x85."),
        4, 2, 0, 0);
  pk_ok(PK("\x80\x04"
           "C\x02hi\x94h\x00K\x01\x86."),
        4, 2, 1, 1);
  /* Bytes alone: an unlabelled image. FRAME read through. */
  pk_ok(PK("\x80\x04\x95\x05\x00\x00\x00\x00\x00\x00\x00"
           "C\x02ok."),
        13, 2, 0, 0);
  /* bytearray (protocol 5), NEWFALSE among the ignored items. */
  pk_ok(PK("\x80\x05\x96\x01\x00\x00\x00\x00\x00\x00\x00"
           "bK\x09\x89\x87."),
        11, 1, 1, 9);
  /* A MARK left open is harmless; the stack top is the result. */
  pk_ok(PK("\x80\x04(C\x01"
           "a."),
        5, 1, 0, 0);
}

static void test_pickle_refusals(void **state) {
  (void)state;
  pk_bad(PK("\x80\x02"
            "cos\nsystem\nq\x00."),
         "GLOBAL (0x63) at offset 2 of the value: it loads or calls Python "
         "code ('os.system')");
  pk_bad(PK("\x80\x04\x8c\x02os\x8c\x06system\x93."),
         "STACK_GLOBAL (0x93) at offset 14 of the value: it loads or calls "
         "Python code ('os.system')");
  pk_bad(PK("\x80\x02"
            "c_codecs\nencode\nq\x00."),
         "protocol 3 or more");
  pk_bad(PK("\x80\x04)R."), "REDUCE (0x52) at offset 3");
  pk_bad(PK("\x80\x04)b."), "BUILD (0x62)");
  pk_bad(PK("\x80\x04)\x81."), "NEWOBJ (0x81)");
  pk_bad(PK("\x80\x04)\x92."), "NEWOBJ_EX (0x92)");
  pk_bad(PK("\x80\x04\x82\x01."), "EXT1 (0x82)");
  pk_bad(PK("\x80\x04)Q."), "BINPERSID (0x51)");
  pk_bad(PK("\x80\x02(i\n."), "INST (0x69)");
  /* INST names what it would import as GLOBAL does (module, name lines) */
  pk_bad(PK("\x80\x02(ios\nsystem\n."),
         "INST (0x69) at offset 3 of the value: it loads or calls Python "
         "code ('os.system')");
  pk_bad(PK("\x80\x02(o."), "OBJ (0x6f)");
  pk_bad(PK("\x80\x04}."), "EMPTY_DICT (0x7d) at offset 2 of the value: not "
                           "in the data subset");
  pk_bad(PK("\x80\x04G\x00\x00\x00\x00\x00\x00\x00\x00."), "BINFLOAT");
  pk_bad(PK("\x80\x04\xff."), "pickle opcode ? (0xff) at offset 2");
  pk_bad(PK("\x80\x06."), "protocol above 5");
  pk_bad(PK("\x02\x80."), "no PROTO opcode");
  pk_bad(PK("\x80\x04"
            "C\x05"
            "ab"),
         "5 bytes from offset 4, past the end");
  pk_bad(PK("\x80\x04J\x01\x02"), "argument runs past the end");
  pk_bad(PK("\x80\x04T\xff\xff\xff\xff"
            "ab."),
         "BINSTRING (0x54) at offset 2 of "
         "the value: a negative length");
  pk_bad(PK("\x80\x04\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x00\x00."),
         "more than 8 bytes");
  pk_bad(PK("\x80\x04"
            "C\x01"
            "a"),
         "ends at offset 5 without STOP");
  pk_bad(PK("\x80\x04"
            "C\x01"
            "a.x"),
         "1 bytes after the pickle's STOP");
  pk_bad(PK("\x80\x04."), "STOP (0x2e) at offset 2 of the value: an empty "
                          "stack");
  pk_bad(PK("\x80\x04t."), "no MARK before it");
  pk_bad(PK("\x80\x04\x86."), "more items taken than the stack holds");
  pk_bad(PK("\x80\x04)K\x01"
            "a."),
         "no list to append to");
  pk_bad(PK("\x80\x04(K\x01"
            "e."),
         "no list to append to");
  pk_bad(PK("\x80\x04h\x03."), "a memo entry that was never set");
  pk_bad(PK("\x80\x04)r\x00\x01\x00\x00."), "memo index beyond 255");
  pk_bad(PK("\x80\x04K\x01."), "the pickle holds a int");
  pk_bad(PK("\x80\x04)."), "an empty tuple");
  pk_bad(PK("\x80\x04K\x01\x85."), "item 0 is a int, not the image bytes");
  pk_bad(PK("\x80\x04"
            "C\x01"
            "a\x88\x86."),
         "item 1 is a bool");
  pk_bad(PK("\x80\x04"
            "C\x01"
            "a\x8c\x01s\x86."),
         "item 1 is a str");
}

/* The bounds: a stack of 64, 256 objects, 256 items. */
static void test_pickle_bounds(void **state) {
  (void)state;
  uint8_t v[2048];
  size_t n = 0;
  v[n++] = 0x80, v[n++] = 4;
  for (int i = 0; i < 65; i++)
    v[n++] = ')';
  v[n++] = '.';
  pk_bad(v, n, "deeper than 64");
  /* 64 deep is fine: tuples of tuples, the top a 1-tuple of bytes. */
  n = 2;
  for (int i = 0; i < 63; i++)
    v[n++] = ')';
  v[n++] = 'C', v[n++] = 1, v[n++] = 'z';
  v[n++] = 0x85, v[n++] = '.';
  pk_ok(v, n, 2 + 63 + 2, 1, 0, 0);
  /* 300 objects through a list kept at depth 2. */
  n = 2;
  v[n++] = ']';
  for (int i = 0; i < 300; i++)
    v[n++] = 'K', v[n++] = 1, v[n++] = 'a';
  v[n++] = '.';
  pk_bad(v, n, "more than 256");
  /* A list holding itself (BINGET + APPEND) has a cycle: still linear. */
  pk_bad(PK("\x80\x04]q\x00h\x00"
            "a."),
         "item 0 is a list");
}

static void mp_ok(const uint8_t *v, size_t n, size_t off, size_t len,
                  int has_label, int64_t label) {
  expect_read(sl_msgpack_parse, "msgpack", v, n, off, len, has_label, label);
}

static void mp_bad(const uint8_t *v, size_t n, const char *want) {
  expect_refused(sl_msgpack_parse, "msgpack", v, n, want);
}

static void test_msgpack(void **state) {
  (void)state;
  mp_ok(PK("\x92\xc4\x02"
           "ab\xff"),
        3, 2, 1, -1);
  mp_ok(PK("\x92\xa2"
           "ab\xc0"),
        2, 2, 0, 0); /* raw str, nil */
  mp_ok(PK("\xc5\x00\x02"
           "ab"),
        3, 2, 0, 0); /* bin 16 alone */
  mp_ok(PK("\x93\xc4\x01x\xd2\xff\xff\xfe\x00\x01"), 3, 1, 1, -512);
  mp_ok(PK("\x92\xc4\x01x\xcf\xff\xff\xff\xff\xff\xff\xff\xff"), 3, 1, 1,
        INT64_MAX); /* uint64 beyond int64: out of int32 for the caller */
  mp_ok(PK("\x91\xc4\x01x"), 3, 1, 0, 0);
  /* msgpack_numpy's map, keys in another order, an unknown key. */
  mp_ok(PK("\x92\x86\xc4\x04"
           "data\xc4\x02hi\xc4\x05shape\x91\x02\xc4\x04type"
           "\xa3|u1\xc4\x02nd\xc3\xc4\x04kind\xc4\x00\xa1z\x90\x07"),
        10, 2, 1, 7);
  mp_bad(PK("\x92\xc4\x02"
            "ab"),
         "not one well-formed msgpack object");
  mp_bad(PK("\x92\xc4\x01"
            "a\x01\x02"),
         "1 bytes after the msgpack object");
  mp_bad(PK("\xc1"), "not one well-formed");
  mp_bad(PK("\x01"), "a int, not [image bytes, label]");
  mp_bad(PK("\x90"), "an empty array");
  mp_bad(PK("\x92\x01\x02"), "item 0 (offset 1) is a msgpack int");
  mp_bad(PK("\x92\xc4\x01"
            "a\xcb\x00\x00\x00\x00\x00\x00\x00\x00"),
         "item 1 (offset 4) is a msgpack float or ext");
  mp_bad(PK("\x92\x81\xa1"
            "a\x01\x01"),
         "neither image bytes nor a "
         "msgpack_numpy array");
  mp_bad(PK("\x92\x84\xa2nd\xc3\xa4type\xa3<i4\xa5shape\x91\x01\xa4"
            "data"
            "\xc4\x04"
            "abcd\x01"),
         "numpy array of type '<i4' and rank 1");
  mp_bad(PK("\x92\x84\xa2nd\xc3\xa4type\xa3|u1\xa5shape\x91\x05\xa4"
            "data"
            "\xc4\x04"
            "abcd\x01"),
         "of shape (5,) holds 4 data bytes");
  mp_bad(PK("\x92\x84\xa2nd\xc3\xa4type\xa3|u1\xa5shape\x91\xa1x\xa4"
            "data"
            "\xc4\x04"
            "abcd\x01"),
         "numpy shape at offset");
  /* Nesting: 33 arrays deep is refused, 32 read through. */
  uint8_t v[64];
  size_t n = 0;
  v[n++] = 0x92, v[n++] = 0xc4, v[n++] = 1, v[n++] = 'x';
  for (int i = 0; i < 32; i++)
    v[n++] = 0x91;
  v[n++] = 0x01;
  mp_bad(v, n, "not one well-formed");
  size_t at = 0;
  assert_false(sl_msgpack_skip(v, n, &at));
  at = 0;
  assert_true(sl_msgpack_skip(v + 5, n - 5, &at)); /* 31 deep + the int */
  assert_int_equal(at, n - 5);
}

/* `__keys__` lists (formats/lmdb/key_list.h), as pickle.dumps(keys) and
 * msgpack.dumps(keys, use_bin_type=True) write them (bytes from those
 * calls): the keys in order; anything but a flat list of strings refused,
 * naming the offset. */
typedef struct keys_seen {
  char text[64];
  size_t len;
} keys_seen;

static int collect_key(void *ctx, const uint8_t *key, size_t len) {
  keys_seen *k = ctx;
  int w = snprintf(k->text + k->len, sizeof k->text - k->len, "%.*s,", (int)len,
                   (const char *)key);
  k->len += w > 0 ? (size_t)w : 0;
  return 0;
}

static void expect_keys(const char *v, size_t n, const char *want) {
  keys_seen k = {{0}, 0};
  uint64_t count = 0;
  char why[160];
  if (sl_key_list_walk((const uint8_t *)v, n, collect_key, &k, &count, why,
                       sizeof why) != 0)
    fail_msg("%s", why);
  assert_string_equal(k.text, want);
}

static void test_key_lists(void **state) {
  (void)state;
  /* Python 3, protocol 4 (framed, memoized), and Python 2's cPickle at 2 */
  static const char p4[] = "\x80\x04\x95\x12\x00\x00\x00\x00\x00\x00\x00]"
                           "\x94(C\x01"
                           "0\x94"
                           "C\x01"
                           "1\x94"
                           "C\x02"
                           "10\x94"
                           "e.";
  expect_keys(p4, sizeof p4 - 1, "0,1,10,");
  static const char p2[] = "\x80\x02]q\x00(U\x01"
                           "0q\x01U\x01"
                           "1q\x02U\x02"
                           "10q\x03"
                           "e.";
  expect_keys(p2, sizeof p2 - 1, "0,1,10,");
  static const char one[] = "\x80\x04\x95\x08\x00\x00\x00\x00\x00\x00\x00]"
                            "\x94\x8c\x01"
                            "a\x94"
                            "a.";
  expect_keys(one, sizeof one - 1, "a,");
  static const char mp[] = "\x93\xc4\x01"
                           "0\xc4\x01"
                           "1\xc4\x02"
                           "10";
  expect_keys(mp, sizeof mp - 1, "0,1,10,");
  /* An int among the keys, a truncated list, a msgpack map. */
  static const char bad_int[] = "\x80\x04\x95\x0b\x00\x00\x00\x00\x00\x00\x00]"
                                "\x94(C\x01"
                                "0\x94K\x03"
                                "e.";
  static const char cut[] = "\x80\x04\x95\x12\x00\x00\x00\x00\x00\x00\x00]"
                            "\x94(C\x01"
                            "0\x94"
                            "C\x05"
                            "1";
  static const char map[] = "\x81\xc4\x01"
                            "0\x01";
  const struct {
    const char *v;
    size_t n;
    const char *why;
  } bad[] = {{bad_int, sizeof bad_int - 1, "opcode 0x4b at offset 18"},
             {cut, sizeof cut - 1, "opcode 0x43 at offset 18"},
             {map, sizeof map - 1, "not an array"}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    keys_seen k = {{0}, 0};
    uint64_t count = 0;
    char why[160] = "";
    assert_int_equal(sl_key_list_walk((const uint8_t *)bad[i].v, bad[i].n,
                                      collect_key, &k, &count, why, sizeof why),
                     -1);
    if (!strstr(why, bad[i].why))
      fail_msg("case %zu: %s", i, why);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pickle_opcodes),
      cmocka_unit_test(test_pickle_refusals),
      cmocka_unit_test(test_pickle_bounds),
      cmocka_unit_test(test_msgpack),
      cmocka_unit_test(test_key_lists),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
