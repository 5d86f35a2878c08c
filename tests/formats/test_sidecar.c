/* The sidecar index of foreign shards at URLs (formats/files/shard_sidecar.c)
 * on hand-made input: a round trip of every field (and of TFRecord's names
 * section, and of RecordIO's joins), version 1's header still read, then
 * the parser's
 * refusals of damaged bytes (checksum, version, counts that do not add up,
 * names without their NUL, first samples out of order), each with the
 * checksum made to hold so that the check behind it is the one hit; and
 * every truncation and every single-byte change of a valid sidecar
 * refused without a fault. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/endian.h"
#include "formats/core/crc32c.h"
#include "formats/files/shard_sidecar.h"

#define N 5

/* Two shards, five samples (3 + 2), two targets each. */
static void encode(uint8_t **buf, size_t *len) {
  static sl_sidecar_shard sh[2] = {
      {.name = "s3://b/train-000000.tar",
       .etag = "\"abc\"",
       .size = 10240,
       .first = 0,
       .crc = 0x11223344},
      {.name = "s3://b/train-000001.tar",
       .etag = "",
       .size = 4096,
       .first = 3,
       .crc = 0x55667788},
  };
  static sl_sample_info ix[N];
  static float t[N * 2];
  for (int i = 0; i < N; i++) {
    ix[i] = (sl_sample_info){.offset = 512u + 1024u * (unsigned)i,
                             .length = 100u + (unsigned)i,
                             .label = i == 4 ? -1 : i,
                             .height = (uint16_t)(10 + i),
                             .width = (uint16_t)(20 + i),
                             .codec = 1,
                             .channels = 3};
    t[2 * i] = (float)i / 3;
    t[2 * i + 1] = -(float)i;
  }
  sl_sidecar s = {.format = SL_FORMAT_WEBDATASET,
                  .target_width = 2,
                  .opts = "label_key=;targets_ext=npy",
                  .nshards = 2,
                  .count = N,
                  .skipped = 7,
                  .shards = sh,
                  .index = ix,
                  .targets = t};
  sl_err err = {0};
  assert_int_equal(sl_sidecar_encode(&s, buf, len, &err), SL_OK);
}

static void test_round_trip(void **state) {
  (void)state;
  uint8_t *buf;
  size_t len;
  encode(&buf, &len);
  /* 72 + 27 (opts) + 24 + 6 + 24 + 1 (names) + 48 + 120 + 40 + 4 */
  assert_int_equal(len, 72 + 27 + 55 + 48 + 120 + 40 + 4);
  sl_sidecar s;
  sl_err err = {0};
  assert_int_equal(sl_sidecar_parse(&s, buf, len, "x", &err), SL_OK);
  assert_int_equal(s.format, SL_FORMAT_WEBDATASET);
  assert_int_equal(s.target_width, 2);
  assert_string_equal(s.opts, "label_key=;targets_ext=npy");
  assert_int_equal(s.nshards, 2);
  assert_int_equal(s.count, N);
  assert_int_equal(s.skipped, 7);
  assert_int_equal(s.njoins, 0);
  assert_string_equal(s.shards[0].name, "s3://b/train-000000.tar");
  assert_string_equal(s.shards[0].etag, "\"abc\"");
  assert_string_equal(s.shards[1].etag, "");
  assert_int_equal(s.shards[1].size, 4096);
  assert_int_equal(s.shards[1].first, 3);
  assert_int_equal(s.shards[1].crc, 0x55667788);
  for (int i = 0; i < N; i++) {
    sl_sample_info e;
    float t[2];
    sl_sidecar_sample(&s, (uint64_t)i, &e, t, NULL);
    assert_int_equal(e.offset, 512u + 1024u * (unsigned)i);
    assert_int_equal(e.length, 100u + (unsigned)i);
    assert_int_equal(e.label, i == 4 ? -1 : i);
    assert_int_equal(e.height, 10 + i);
    assert_int_equal(e.width, 20 + i);
    assert_int_equal(e.codec, 1);
    assert_int_equal(e.channels, 3);
    assert_true(t[0] == (float)i / 3 && t[1] == -(float)i);
  }
  sl_sidecar_free(&s);
  free(buf);
}

/* TFRecord's names: the section and each entry's name length kept. */
static void test_names(void **state) {
  (void)state;
  sl_sidecar_shard sh = {
      .name = "https://h/rec-0.tfrecord", .etag = "", .size = 9000};
  sl_sample_info ix[2] = {{.offset = 100,
                           .length = 50,
                           .label = 1,
                           .height = 8,
                           .width = 8,
                           .codec = 1,
                           .channels = 3,
                           .name_len = 9},
                          {.offset = 300,
                           .length = 60,
                           .label = -1,
                           .height = 4,
                           .width = 4,
                           .codec = 2,
                           .channels = 1,
                           .name_len = 0}};
  uint64_t names[2] = {80, 0};
  sl_sidecar s = {.format = SL_FORMAT_TFRECORD,
                  .opts = "o",
                  .nshards = 1,
                  .count = 2,
                  .shards = &sh,
                  .index = ix,
                  .flags = SL_SIDECAR_NAMES,
                  .name_off = names};
  uint8_t *buf;
  size_t len;
  sl_err err = {0};
  assert_int_equal(sl_sidecar_encode(&s, &buf, &len, &err), SL_OK);
  assert_int_equal(len, 72 + 2 + 25 + 1 + 24 + 48 + 16 + 4);
  sl_sidecar p;
  assert_int_equal(sl_sidecar_parse(&p, buf, len, "x", &err), SL_OK);
  assert_int_equal(p.flags, SL_SIDECAR_NAMES);
  sl_sample_info e;
  uint64_t at;
  sl_sidecar_sample(&p, 0, &e, NULL, &at);
  assert_int_equal(e.name_len, 9);
  assert_int_equal(at, 80);
  sl_sidecar_sample(&p, 1, &e, NULL, &at);
  assert_int_equal(e.name_len, 0);
  assert_int_equal(e.codec, 2);
  sl_sidecar_free(&p);
  /* Without the flag, a length in the entry is not taken. */
  s.flags = 0;
  free(buf);
  assert_int_equal(sl_sidecar_encode(&s, &buf, &len, &err), SL_OK);
  assert_int_equal(sl_sidecar_parse(&p, buf, len, "x", &err), SL_OK);
  assert_null(p.names_raw);
  sl_sidecar_sample(&p, 0, &e, NULL, &at);
  assert_int_equal(e.name_len, 0);
  assert_int_equal(at, 0);
  sl_sidecar_free(&p);
  free(buf);
}

/* The checksum made to hold again after a change. */
static void reseal(uint8_t *buf, size_t len) {
  sl_put_le32(buf + len - 4, sl_crc32c(buf, len - 4));
}

static void refused(uint8_t *buf, size_t len, const char *why) {
  sl_sidecar s;
  sl_err err = {0};
  assert_int_equal(sl_sidecar_parse(&s, buf, len, "side.idx", &err),
                   SL_EFORMAT);
  if (!strstr(err.msg, "side.idx") || !strstr(err.msg, why))
    fail_msg("expected '%s' in: %s", why, err.msg);
}

static void test_refusals(void **state) {
  (void)state;
  uint8_t *buf, *c;
  size_t len;
  encode(&buf, &len);
  c = malloc(len);
  memcpy(c, buf, len);
  c[100] ^= 1; /* checksum not resealed */
  refused(c, len, "checksum");
  memcpy(c, buf, len);
  sl_put_le32(c + 8, 3);
  reseal(c, len);
  refused(c, len, "version 3");
  memcpy(c, buf, len);
  c[0] = 'X';
  refused(c, len, "not a sidecar");
  memcpy(c, buf, len);
  sl_put_le64(c + 32, N + 1); /* one sample more than the bytes hold */
  reseal(c, len);
  refused(c, len, "adds up");
  memcpy(c, buf, len);
  sl_put_le64(c + 24, 0); /* no shards */
  reseal(c, len);
  refused(c, len, "out of bounds");
  memcpy(c, buf, len);
  sl_put_le32(c + 16, 70000); /* targets a sample */
  reseal(c, len);
  refused(c, len, "out of bounds");
  memcpy(c, buf, len);
  sl_put_le64(c + 56, 2); /* a flag this version does not know */
  reseal(c, len);
  refused(c, len, "out of bounds");
  memcpy(c, buf, len);
  c[72 + 26] = 'x'; /* the options' NUL */
  reseal(c, len);
  refused(c, len, "options");
  /* The names: the first URL's NUL gone, so the names run one short. */
  memcpy(c, buf, len);
  c[72 + 27 + 23] = 'x';
  reseal(c, len);
  refused(c, len, "name");
  /* Shard 1's first sample after the last, and before shard 0's. */
  size_t recs = 72 + 27 + 55;
  memcpy(c, buf, len);
  sl_put_le64(c + recs + 24 + 8, N + 1);
  reseal(c, len);
  refused(c, len, "out of order");
  memcpy(c, buf, len);
  sl_put_le64(c + recs + 8, 1);
  reseal(c, len);
  refused(c, len, "out of order");
  free(c);
  free(buf);
}

/* Every prefix and every single-byte change (resealed or not): refused or
 * parsed, never a fault (ASan/valgrind runs see the reads). */
static void test_every_damage(void **state) {
  (void)state;
  uint8_t *buf;
  size_t len;
  encode(&buf, &len);
  uint8_t *c = malloc(len);
  sl_err err = {0};
  sl_sidecar s;
  for (size_t n = 0; n < len; n++) {
    memcpy(c, buf, n);
    assert_int_equal(sl_sidecar_parse(&s, c, n, "x", &err), SL_EFORMAT);
  }
  for (size_t at = 0; at < len - 4; at++) {
    for (int seal = 0; seal < 2; seal++) {
      memcpy(c, buf, len);
      c[at] ^= 0xa5;
      if (seal)
        reseal(c, len);
      if (sl_sidecar_parse(&s, c, len, "x", &err) == SL_OK) {
        for (uint64_t i = 0; i < s.count; i++) {
          sl_sample_info e;
          float t[2];
          if (s.target_width <= 2)
            sl_sidecar_sample(&s, i, &e, t, NULL);
        }
        sl_sidecar_free(&s);
      }
    }
  }
  free(c);
  free(buf);
}

/* RecordIO's multi-part records: kept in order, refused out of order or
 * past the samples. */
static void test_joins(void **state) {
  (void)state;
  sl_sidecar_shard sh = {
      .name = "https://h/img-0.rec", .etag = "", .size = 9000};
  sl_sample_info ix[3] = {{.offset = 8, .length = 40, .codec = 1},
                          {.offset = 100, .length = 90, .codec = 1},
                          {.offset = 300, .length = 70, .codec = 1}};
  sl_sidecar_join joins[2] = {{0, 24, 12}, {2, 32, 30}};
  sl_sidecar s = {.format = SL_FORMAT_RECORDIO,
                  .opts = "label_offset=0",
                  .nshards = 1,
                  .count = 3,
                  .shards = &sh,
                  .index = ix,
                  .njoins = 2,
                  .joins = joins};
  uint8_t *buf;
  size_t len;
  sl_err err = {0};
  assert_int_equal(sl_sidecar_encode(&s, &buf, &len, &err), SL_OK);
  assert_int_equal(len, 72 + 15 + 20 + 1 + 24 + 72 + 32 + 4);
  sl_sidecar p;
  assert_int_equal(sl_sidecar_parse(&p, buf, len, "x", &err), SL_OK);
  assert_int_equal(p.njoins, 2);
  sl_sidecar_join j = sl_sidecar_join_at(&p, 1);
  assert_int_equal(j.sample, 2);
  assert_int_equal(j.skip, 32);
  assert_int_equal(j.bytes, 30);
  sl_sidecar_free(&p);
  uint8_t *c = malloc(len);
  size_t at = len - 4 - 32; /* the joins */
  memcpy(c, buf, len);
  sl_put_le64(c + at + 16, 0); /* join 1 before join 0's sample */
  reseal(c, len);
  refused(c, len, "out of order");
  memcpy(c, buf, len);
  sl_put_le64(c + at + 16, 3); /* past the samples */
  reseal(c, len);
  refused(c, len, "out of order");
  memcpy(c, buf, len);
  sl_put_le64(c + 64, 3); /* one join more than the bytes hold */
  reseal(c, len);
  refused(c, len, "adds up");
  free(c);
  free(buf);
}

/* A version 1 sidecar (64-byte header, no joins) is still read. */
static void test_version_1(void **state) {
  (void)state;
  uint8_t *buf;
  size_t len;
  encode(&buf, &len);
  uint8_t *c = malloc(len - 8);
  memcpy(c, buf, 64);
  memcpy(c + 64, buf + 72, len - 72);
  sl_put_le32(c + 8, 1);
  reseal(c, len - 8);
  sl_sidecar s;
  sl_err err = {0};
  assert_int_equal(sl_sidecar_parse(&s, c, len - 8, "x", &err), SL_OK);
  assert_int_equal(s.count, N);
  assert_int_equal(s.njoins, 0);
  assert_string_equal(s.shards[1].name, "s3://b/train-000001.tar");
  sl_sample_info e;
  float t[2];
  sl_sidecar_sample(&s, 4, &e, t, NULL);
  assert_int_equal(e.offset, 512u + 1024u * 4);
  sl_sidecar_free(&s);
  free(c);
  free(buf);
}

static void test_encode_bounds(void **state) {
  (void)state;
  char longname[SL_SIDECAR_NAME_MAX + 8];
  memset(longname, 'a', sizeof longname - 1);
  longname[sizeof longname - 1] = '\0';
  sl_sidecar_shard sh = {.name = longname, .etag = "", .size = 1};
  sl_sidecar s = {
      .format = SL_FORMAT_WEBDATASET, .opts = "", .nshards = 1, .shards = &sh};
  uint8_t *buf;
  size_t len;
  sl_err err = {0};
  assert_int_equal(sl_sidecar_encode(&s, &buf, &len, &err), SL_ETOOBIG);
  assert_null(buf);
  s.nshards = 0;
  assert_int_equal(sl_sidecar_encode(&s, &buf, &len, &err), SL_ETOOBIG);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_round_trip),    cmocka_unit_test(test_names),
      cmocka_unit_test(test_refusals),      cmocka_unit_test(test_every_damage),
      cmocka_unit_test(test_encode_bounds), cmocka_unit_test(test_joins),
      cmocka_unit_test(test_version_1),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
