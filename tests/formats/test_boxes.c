/* Per-sample boxes in sluice's own files (LMDB layout 5, HDF5 layout 4):
 * round trips bit for bit, 0 and 65,535 boxes a sample, chunking, files
 * without boxes keeping the older layouts, boxes the writer refuses, and
 * damaged box records (SL_EFORMAT naming the sample; verify mode reports
 * and goes on). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "formats/core/boxes.h"
#include "formats/core/layout.h"
#include "formats/core/source.h"
#include "formats/core/writer.h"
#include "tests/support/bad_seen.h"
#include "tests/support/test_dir.h"

static char g_dir[512];

static void path_in(char *buf, size_t cap, const char *name) {
  snprintf(buf, cap, "%s/%s", g_dir, name);
}

static int setup_dir(void **state) {
  (void)state;
  (void)sl_test_make_dir(g_dir, sizeof g_dir, "formats-boxes");
  return 0;
}

static int teardown_dir(void **state) {
  (void)state;
  return sl_test_remove_dir(g_dir);
}

static const char *const k_classes[] = {"person", "car", "dog", "cat"};
#define NCLASSES 4u

/* Sample i's box count: 0 for every third sample, else 1..7. */
static uint32_t box_count(uint64_t i) {
  return i % 3 == 0 ? 0 : (uint32_t)(1 + (i * 7) % 7);
}

/* Box k of sample i: fractional, some past the image's edge (negative x0),
 * every label and flag combination. Sample 7's box 0 has x0 = 1234.5, a
 * value the damage tests find in the file. */
static sl_box make_box(uint64_t i, uint32_t k) {
  sl_box b;
  b.x0 = (float)((double)(i % 50) - 3.25 + 0.125 * k);
  b.y0 = (float)(0.5 * k + (double)(i % 11) / 3.0);
  b.x1 = b.x0 + 1.0f + (float)k / 7.0f;
  b.y1 = b.y0 + (float)(i % 5);
  b.label = (int32_t)((i + k) % NCLASSES);
  b.flags = (uint32_t)((i + k) % 4);
  if (i == 7 && k == 0) {
    b.x0 = 1234.5f;
    b.x1 = 1240.0f;
  }
  return b;
}

static void fill_boxes(uint64_t i, sl_box *out, uint32_t n) {
  for (uint32_t k = 0; k < n; k++)
    out[k] = make_box(i, k);
}

static sl_sample_info meta_of(uint64_t i) {
  sl_sample_info m = {0};
  m.label = i % 5 == 4 ? -1 : (int32_t)(i % NCLASSES);
  m.codec = SL_IMAGE_JPEG;
  m.channels = 3;
  m.height = (uint16_t)(30 + i % 9);
  m.width = (uint16_t)(40 + i % 13);
  return m;
}

/* n samples of a few payload bytes, box_count(i) boxes each (none at all
 * when with_boxes is false). */
static void write_file(const char *path, uint64_t n, bool with_boxes) {
  sl_err err = {0};
  sl_fwriter *w = NULL;
  assert_int_equal(sl_fwriter_open(&w, path, SL_FORMAT_AUTO, &err), SL_OK);
  sl_box boxes[8];
  for (uint64_t i = 0; i < n; i++) {
    uint8_t payload[16];
    memset(payload, (int)i, sizeof payload);
    sl_sample_info m = meta_of(i);
    uint32_t nb = with_boxes ? box_count(i) : 0;
    fill_boxes(i, boxes, nb);
    char name[32];
    snprintf(name, sizeof name, "img/%05u.jpg", (unsigned)i);
    if (sl_fwriter_add_annotated(w, payload, 1 + i % 16, &m, name, NULL,
                                 nb ? boxes : NULL, nb, &err) != SL_OK)
      fail_msg("%s", err.msg);
  }
  if (sl_fwriter_commit(w, NCLASSES, k_classes, "test=boxes", false, &err) !=
      SL_OK)
    fail_msg("%s", err.msg);
}

static sl_source *open_ok(const char *path, sl_source_mode mode) {
  sl_err err = {0};
  sl_source *src = NULL;
  if (sl_source_open(&src, path, SL_FORMAT_AUTO, mode, &err) != SL_OK)
    fail_msg("%s", err.msg);
  return src;
}

static void check_boxes(const sl_source *src, uint64_t n) {
  sl_box want[8];
  uint32_t max = 0;
  uint64_t total = 0;
  for (uint64_t i = 0; i < n; i++) {
    uint32_t got_n = 99;
    const sl_box *got = sl_source_boxes(src, i, &got_n);
    uint32_t nb = box_count(i);
    assert_int_equal(got_n, nb);
    if (nb == 0) {
      assert_null(got);
      continue;
    }
    fill_boxes(i, want, nb);
    assert_memory_equal(got, want, nb * sizeof *want); /* bit for bit */
    if (nb > max)
      max = nb;
    total += nb;
    assert_int_equal(sl_source_info(src, i)->label, meta_of(i).label);
  }
  assert_int_equal(sl_source_max_boxes(src), max);
  assert_int_equal(sl_source_box_total(src), total);
}

static void test_round_trip(void **state) {
  (void)state;
  const char *names[] = {"rt.lmdb", "rt.h5"};
  for (size_t f = 0; f < sizeof names / sizeof *names; f++) {
    char p[600];
    path_in(p, sizeof p, names[f]);
    write_file(p, 300, true);
    for (int mode = 0; mode < 2; mode++) {
      sl_source *src = open_ok(p, mode ? SL_SOURCE_PREAD : SL_SOURCE_MMAP);
      assert_int_equal(sl_source_layout_version(src),
                       f ? SL_HDF5_LAYOUT_BOXES : SL_LMDB_LAYOUT_BOXES);
      assert_int_equal(sl_source_count(src), 300);
      check_boxes(src, 300);
      char name[32];
      sl_err err = {0};
      assert_int_equal(sl_source_name(src, 17, name, sizeof name, &err), SL_OK);
      assert_string_equal(name, "img/00017.jpg");
      assert_string_equal(sl_source_writer_settings(src), "test=boxes");
      /* Out of range: no boxes, no crash. */
      uint32_t n = 5;
      assert_null(sl_source_boxes(src, 300, &n));
      assert_int_equal(n, 0);
      sl_source_close(src);
    }
  }
}

/* Opens p in verify mode (mmap), failing unless no sample is bad. */
static sl_source *open_verify_clean(const char *p) {
  sl_test_bad_seen bad = {0};
  sl_err err = {0};
  sl_source *src = NULL;
  if (sl_source_open_verify_opts(&src, p, NULL, SL_SOURCE_MMAP, sl_test_on_bad,
                                 &bad, &err) != SL_OK)
    fail_msg("%s", err.msg);
  if (bad.calls != 0)
    fail_msg("%s: %d bad samples, the first %llu: %s", p, bad.calls,
             (unsigned long long)bad.first, bad.first_reason);
  return src;
}

/* Verify mode reads every record header: layout 5's carry 3 (or 4 with
 * levels), which it must accept. */
static void test_verify_accepts(void **state) {
  (void)state;
  for (int f = 0; f < 2; f++) {
    char p[600];
    path_in(p, sizeof p, f ? "verify.h5" : "verify.lmdb");
    write_file(p, 40, true);
    sl_source *src = open_verify_clean(p);
    check_boxes(src, 40);
    sl_source_close(src);
  }
}

/* A file whose samples have no box keeps layout 3: older builds open it. */
static void test_no_boxes_keeps_layout(void **state) {
  (void)state;
  for (int f = 0; f < 2; f++) {
    char p[600];
    path_in(p, sizeof p, f ? "none.h5" : "none.lmdb");
    write_file(p, 30, false);
    sl_source *src = open_ok(p, SL_SOURCE_MMAP);
    assert_int_equal(sl_source_layout_version(src),
                     f ? SL_HDF5_LAYOUT_VERSION : SL_LMDB_LAYOUT_VERSION);
    assert_int_equal(sl_source_max_boxes(src), 0);
    assert_int_equal(sl_source_box_total(src), 0);
    for (uint64_t i = 0; i < 30; i++) {
      uint32_t n = 9;
      assert_null(sl_source_boxes(src, i, &n));
      assert_int_equal(n, 0);
    }
    sl_source_close(src);
  }
}

/* A minimal level record (formats/core/levels.h) for a w x h sample. */
static size_t level_record(uint8_t *out, uint16_t w, uint16_t h) {
  memcpy(out, SL_LEVELS_MAGIC, 4);
  out[4] = 1;
  out[5] = out[6] = out[7] = 0;
  sl_put_le32(out + 8, 4);
  sl_put_le16(out + 12, h);
  sl_put_le16(out + 14, w);
  memcpy(out + 16, "\xff\xd8\xff\xd9", 4);
  return 20;
}

/* Levels and boxes together: layout 5 with a "levels" line; verify accepts
 * records of layout 4, and codec 7 is allowed. */
static void test_levels_and_boxes(void **state) {
  (void)state;
  for (int f = 0; f < 2; f++) {
    char p[600];
    path_in(p, sizeof p, f ? "levels.h5" : "levels.lmdb");
    sl_err err = {0};
    sl_fwriter *w = NULL;
    assert_int_equal(sl_fwriter_open(&w, p, SL_FORMAT_AUTO, &err), SL_OK);
    assert_int_equal(sl_fwriter_set_levels(w, &err), SL_OK);
    sl_box boxes[8];
    for (uint64_t i = 0; i < 10; i++) {
      uint8_t rec[32];
      sl_sample_info m = meta_of(i);
      m.codec = SL_IMAGE_JPEG_LEVELS;
      size_t len = level_record(rec, m.width, m.height);
      uint32_t nb = box_count(i);
      fill_boxes(i, boxes, nb);
      if (sl_fwriter_add_annotated(w, rec, len, &m, NULL, NULL, boxes, nb,
                                   &err) != SL_OK)
        fail_msg("%s", err.msg);
    }
    if (sl_fwriter_commit(w, NCLASSES, k_classes, "", false, &err) != SL_OK)
      fail_msg("%s", err.msg);
    sl_source *src = open_verify_clean(p);
    assert_int_equal(sl_source_layout_version(src),
                     f ? SL_HDF5_LAYOUT_BOXES : SL_LMDB_LAYOUT_BOXES);
    uint64_t images[SL_LEVELS_MAX], bytes[SL_LEVELS_MAX];
    assert_int_equal(sl_source_levels(src, images, bytes), 1);
    assert_int_equal(images[0], 10);
    check_boxes(src, 10);
    sl_source_close(src);
  }
}

/* 65,535 boxes in one sample (the most), 0 in the next, across more than
 * one box chunk (each chunk is at most 16 MiB: 11 such samples); 65,536
 * is refused. */
static void test_max_boxes(void **state) {
  (void)state;
  for (int f = 0; f < 2; f++) {
    char p[600];
    path_in(p, sizeof p, f ? "max.h5" : "max.lmdb");
    sl_err err = {0};
    sl_fwriter *w = NULL;
    assert_int_equal(sl_fwriter_open(&w, p, SL_FORMAT_AUTO, &err), SL_OK);
    sl_box *boxes = malloc((SL_BOXES_MAX + 1) * sizeof *boxes);
    assert_non_null(boxes);
    for (uint32_t k = 0; k <= SL_BOXES_MAX; k++)
      boxes[k] = (sl_box){
          (float)k, 0.0f, (float)k + 0.5f, 1.0f, (int32_t)(k % NCLASSES),
          k % 2};
    uint8_t payload[4] = {1, 2, 3, 4};
    sl_sample_info m = meta_of(0);
    assert_int_equal(sl_fwriter_add_annotated(w, payload, 4, &m, NULL, NULL,
                                              boxes, SL_BOXES_MAX + 1, &err),
                     SL_EINVAL);
    assert_non_null(strstr(err.msg, "sample 0"));
    const uint64_t n = 26;
    for (uint64_t i = 0; i < n; i++)
      if (sl_fwriter_add_annotated(w, payload, 4, &m, NULL, NULL, boxes,
                                   i % 2 ? 0 : SL_BOXES_MAX, &err) != SL_OK)
        fail_msg("%s", err.msg);
    if (sl_fwriter_commit(w, NCLASSES, k_classes, "", false, &err) != SL_OK)
      fail_msg("%s", err.msg);
    for (int mode = 0; mode < 2; mode++) {
      sl_source *src = open_ok(p, mode ? SL_SOURCE_PREAD : SL_SOURCE_MMAP);
      assert_int_equal(sl_source_max_boxes(src), SL_BOXES_MAX);
      assert_int_equal(sl_source_box_total(src), 13ull * SL_BOXES_MAX);
      for (uint64_t i = 0; i < n; i++) {
        uint32_t got_n;
        const sl_box *got = sl_source_boxes(src, i, &got_n);
        assert_int_equal(got_n, i % 2 ? 0 : SL_BOXES_MAX);
        if (got_n)
          assert_memory_equal(got, boxes, SL_BOXES_MAX * sizeof *boxes);
      }
      sl_source_close(src);
    }
    free(boxes);
    unlink(p);
  }
}

/* More samples than one chunk holds (65,536): boxes of the samples of the
 * second chunk are where they belong. */
static void test_many_samples(void **state) {
  (void)state;
  char p[600];
  path_in(p, sizeof p, "many.lmdb");
  const uint64_t n = 70000;
  sl_err err = {0};
  sl_fwriter *w = NULL;
  assert_int_equal(sl_fwriter_open(&w, p, SL_FORMAT_AUTO, &err), SL_OK);
  uint8_t payload[1] = {7};
  sl_sample_info m = meta_of(1);
  for (uint64_t i = 0; i < n; i++) {
    sl_box b = {(float)i, 1, (float)i + 2, 3, (int32_t)(i % NCLASSES), 0};
    if (sl_fwriter_add_annotated(w, payload, 1, &m, NULL, NULL, &b,
                                 i % 1000 == 999 ? 1 : 0, &err) != SL_OK)
      fail_msg("%s", err.msg);
  }
  if (sl_fwriter_commit(w, NCLASSES, k_classes, "", false, &err) != SL_OK)
    fail_msg("%s", err.msg);
  sl_source *src = open_ok(p, SL_SOURCE_MMAP);
  assert_int_equal(sl_source_box_total(src), 70);
  for (uint64_t i = 0; i < n; i++) {
    uint32_t got_n;
    const sl_box *got = sl_source_boxes(src, i, &got_n);
    if (i % 1000 != 999) {
      assert_int_equal(got_n, 0);
      continue;
    }
    assert_int_equal(got_n, 1);
    assert_true(got->x0 == (float)i && got->label == (int32_t)(i % NCLASSES));
  }
  sl_source_close(src);
}

/* Boxes a reader would refuse are refused by the writer, naming the sample
 * and the box; nothing is added and the writer goes on. A box label not
 * below the class count fails the commit. */
static void test_writer_refuses(void **state) {
  (void)state;
  for (int f = 0; f < 2; f++) {
    char p[600];
    path_in(p, sizeof p, f ? "refuse.h5" : "refuse.lmdb");
    sl_err err = {0};
    sl_fwriter *w = NULL;
    assert_int_equal(sl_fwriter_open(&w, p, SL_FORMAT_AUTO, &err), SL_OK);
    uint8_t payload[2] = {1, 2};
    sl_sample_info m = meta_of(0);
    const sl_box good = {1, 2, 3, 4, 0, SL_BOX_CROWD | SL_BOX_DIFFICULT};
    struct {
      sl_box b;
      const char *why;
    } bad[] = {
        {{NAN, 2, 3, 4, 0, 0}, "not finite"},
        {{1, INFINITY, 3, 4, 0, 0}, "not finite"},
        {{1, 2, 3, -INFINITY, 0, 0}, "not finite"},
        {{5, 2, 3, 4, 0, 0}, "x0 > x1"},
        {{1, 5, 3, 4, 0, 0}, "y0 > y1"},
        {{1, 2, 3, 4, -1, 0}, "label"},
        {{1, 2, 3, 4, (int32_t)SL_CLASSES_MAX, 0}, "label"},
        {{1, 2, 3, 4, 0, 4}, "flag"},
    };
    for (size_t c = 0; c < sizeof bad / sizeof *bad; c++) {
      sl_box two[2] = {good, bad[c].b};
      assert_int_equal(
          sl_fwriter_add_annotated(w, payload, 2, &m, NULL, NULL, two, 2, &err),
          SL_EINVAL);
      if (!strstr(err.msg, "sample 0") || !strstr(err.msg, "box 1") ||
          !strstr(err.msg, bad[c].why))
        fail_msg("case %zu: %s", c, err.msg);
      assert_int_equal(sl_fwriter_count(w), 0);
    }
    assert_int_equal(
        sl_fwriter_add_annotated(w, payload, 2, &m, NULL, NULL, NULL, 3, &err),
        SL_EINVAL);
    /* Inverted but equal edges are a point, not an error. */
    sl_box point = {2, 2, 2, 2, 3, 0};
    assert_int_equal(sl_fwriter_add_annotated(w, payload, 2, &m, NULL, NULL,
                                              &point, 1, &err),
                     SL_OK);
    assert_int_equal(sl_fwriter_count(w), 1);
    /* Label 3 needs 4 classes. */
    assert_int_equal(sl_fwriter_commit(w, 3, k_classes, "", false, &err),
                     SL_EINVAL);
    assert_non_null(strstr(err.msg, "label 3"));
    assert_int_not_equal(access(p, F_OK), 0);
  }
}

/* ---- damage ---------------------------------------------------------------
 * The file's bytes patched in place (LMDB has no checksums; the lengths
 * stay), then opened. */

static uint8_t *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  fseek(f, 0, SEEK_END);
  *len = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *b = malloc(*len);
  assert_non_null(b);
  assert_int_equal(fread(b, 1, *len, f), *len);
  fclose(f);
  return b;
}

static void spit(const char *path, const uint8_t *b, size_t len) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(b, 1, len, f), len);
  fclose(f);
}

/* Offset of the only occurrence of needle in b (fails if not one). */
static size_t find_once(const uint8_t *b, size_t len, const void *needle,
                        size_t nlen) {
  size_t at = SIZE_MAX;
  for (size_t i = 0; i + nlen <= len; i++)
    if (memcmp(b + i, needle, nlen) == 0) {
      assert_int_equal(at, SIZE_MAX);
      at = i;
    }
  assert_int_not_equal(at, SIZE_MAX);
  return at;
}

/* A fresh 40-sample file patched by patch(), opened normally. Returns the
 * status and leaves the message in err. */
typedef void (*patch_fn)(uint8_t *b, size_t len);
static sl_status open_patched(const char *name, patch_fn patch, sl_err *err) {
  char p[600];
  path_in(p, sizeof p, name);
  write_file(p, 40, true);
  size_t len;
  uint8_t *b = slurp(p, &len);
  patch(b, len);
  spit(p, b, len);
  free(b);
  sl_source *src = NULL;
  sl_status st = sl_source_open(&src, p, SL_FORMAT_AUTO, SL_SOURCE_MMAP, err);
  sl_source_close(src);
  return st;
}

/* Sample 7's box 0 starts with x0 = 1234.5f. */
static size_t box7(uint8_t *b, size_t len) {
  uint8_t x[4];
  sl_put_lef32(x, 1234.5f);
  return find_once(b, len, x, 4);
}
static void patch_nan(uint8_t *b, size_t len) {
  sl_put_lef32(b + box7(b, len), NAN);
}
static void patch_inverted(uint8_t *b, size_t len) {
  sl_put_lef32(b + box7(b, len), 5000.0f); /* x1 is 1240 */
}
static void patch_label(uint8_t *b, size_t len) {
  sl_put_le32(b + box7(b, len) + 16, 99);
}
static void patch_magic(uint8_t *b, size_t len) {
  b[find_once(b, len, SL_BOX_CHUNK_MAGIC, 4) + 3] = '9';
}
static void patch_count(uint8_t *b, size_t len) {
  /* Sample 1's count (2 bytes after sample 0's, at the chunk's 16). */
  size_t c = find_once(b, len, SL_BOX_CHUNK_MAGIC, 4);
  sl_put_le16(b + c + 18, (uint16_t)(sl_get_le16(b + c + 18) + 1));
}
static void patch_meta_total(uint8_t *b, size_t len) {
  size_t at = find_once(b, len, "\nboxes ", 7) + 7;
  b[at] = b[at] == '9' ? '1' : (uint8_t)(b[at] + 1);
}
static void patch_meta_line(uint8_t *b, size_t len) {
  memcpy(b + find_once(b, len, "\nboxes ", 7) + 1, "boxen", 5);
}

static void test_damage(void **state) {
  (void)state;
  struct {
    const char *name;
    patch_fn patch;
    const char *want[3];
  } cases[] = {
      {"nan.lmdb", patch_nan, {"sample 7", "box 0", "not finite"}},
      {"inv.lmdb", patch_inverted, {"sample 7", "box 0", "x0 > x1"}},
      {"label.lmdb", patch_label, {"sample 7", "box 0", "label"}},
      {"magic.lmdb", patch_magic, {"box chunk 0", "magic", "sluice pack"}},
      {"count.lmdb", patch_count, {"box chunk 0", "do not match", NULL}},
      {"total.lmdb", patch_meta_total, {"box", NULL, NULL}},
      {"line.lmdb", patch_meta_line, {"metadata", NULL, NULL}},
      {"nan.h5", patch_nan, {"sample 7", "box 0", "not finite"}},
      {"inv.h5", patch_inverted, {"sample 7", "box 0", "x0 > x1"}},
  };
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    sl_err err = {0};
    assert_int_equal(open_patched(cases[c].name, cases[c].patch, &err),
                     SL_EFORMAT);
    for (int k = 0; k < 3; k++)
      if (cases[c].want[k] && !strstr(err.msg, cases[c].want[k]))
        fail_msg("%s: no '%s' in: %s", cases[c].name, cases[c].want[k],
                 err.msg);
  }
}

/* Verify mode: a sample with a damaged box is reported and unusable (no
 * boxes), the others keep theirs. */
static void test_verify_damage(void **state) {
  (void)state;
  for (int f = 0; f < 2; f++) {
    char p[600];
    path_in(p, sizeof p, f ? "verify-nan.h5" : "verify-nan.lmdb");
    write_file(p, 40, true);
    size_t len;
    uint8_t *b = slurp(p, &len);
    patch_nan(b, len);
    spit(p, b, len);
    free(b);
    sl_test_bad_seen log = {0};
    sl_err err = {0};
    sl_source *src = NULL;
    if (sl_source_open_verify_opts(&src, p, NULL, SL_SOURCE_MMAP,
                                   sl_test_on_bad, &log, &err) != SL_OK)
      fail_msg("%s", err.msg);
    assert_int_equal(log.calls, 1);
    assert_int_equal(log.index, 7);
    assert_non_null(strstr(log.reason, "not finite"));
    uint32_t n = 9;
    assert_null(sl_source_boxes(src, 7, &n));
    assert_int_equal(n, 0);
    assert_non_null(sl_source_boxes(src, 8, &n));
    assert_int_equal(n, box_count(8));
    sl_source_close(src);
  }
}

/* Bytes of a file with boxes overwritten at ~500 points across it (each
 * point once with 0xFF..., once with 0x00...): every open ends in SL_OK or
 * an error with a message, never a crash (ASan runs this too), and an
 * open that succeeds hands out only boxes that pass the checks. */
static void test_damage_sweep(void **state) {
  (void)state;
  for (int f = 0; f < 2; f++) {
    char p[600], q[600];
    path_in(p, sizeof p, f ? "sweep.h5" : "sweep.lmdb");
    path_in(q, sizeof q, f ? "sweep-bad.h5" : "sweep-bad.lmdb");
    write_file(p, 40, true);
    size_t len;
    uint8_t *orig = slurp(p, &len);
    uint8_t *b = malloc(len);
    assert_non_null(b);
    size_t step = len / 500 ? len / 500 : 1;
    for (size_t at = 0; at < len; at += step)
      for (int v = 0; v < 2; v++) {
        memcpy(b, orig, len);
        memset(b + at, v ? 0x00 : 0xFF, len - at < 4 ? len - at : 4);
        spit(q, b, len);
        sl_err err = {0};
        sl_source *src = NULL;
        sl_status st =
            sl_source_open(&src, q, SL_FORMAT_AUTO, SL_SOURCE_MMAP, &err);
        if (st != SL_OK) {
          assert_true(err.msg[0] != '\0');
          continue;
        }
        for (uint64_t i = 0; i < sl_source_count(src); i++) {
          uint32_t n;
          const sl_box *bx = sl_source_boxes(src, i, &n);
          for (uint32_t k = 0; k < n; k++)
            assert_null(sl_box_check(&bx[k], sl_source_class_count(src)));
        }
        sl_source_close(src);
      }
    free(b);
    free(orig);
  }
}

/* Files of the previous layouts still open, with no boxes. */
static void test_old_layouts(void **state) {
  (void)state;
  const char *dir = getenv("SLUICE_FIXTURES");
  if (!dir)
    fail_msg("SLUICE_FIXTURES is not set");
  const char *names[] = {"layout2.lmdb", "layout1.h5"};
  for (int f = 0; f < 2; f++) {
    char p[600];
    snprintf(p, sizeof p, "%s/%s", dir, names[f]);
    sl_source *src = open_ok(p, SL_SOURCE_MMAP);
    assert_int_equal(sl_source_count(src), 6);
    assert_int_equal(sl_source_max_boxes(src), 0);
    for (uint64_t i = 0; i < 6; i++) {
      uint32_t n = 3;
      assert_null(sl_source_boxes(src, i, &n));
      assert_int_equal(n, 0);
    }
    sl_source_close(src);
  }
}

/* The first files with boxes (tests/fixtures/README.md), as that sluice
 * wrote them: every box, name and class read back. */
static void test_box_fixtures(void **state) {
  (void)state;
  const char *dir = getenv("SLUICE_FIXTURES");
  if (!dir)
    fail_msg("SLUICE_FIXTURES is not set");
  const char *names[] = {"layout5.lmdb", "layout4.h5"};
  const uint32_t versions[] = {5, 4};
  const uint32_t counts[] = {3, 1, 0, 1};
  const sl_box want[] = {{10.5f, 12.25f, 20.0f, 30.0f, 0, 0},
                         {40.0f, 20.0f, 65.5f, 30.0f, 2, SL_BOX_CROWD},
                         {0.0f, 0.0f, 1.0f, 1.0f, 1, 0},
                         {1.0f, 2.0f, 4.0f, 2.0f, 1, 0},
                         {50.0f, 5.0f, 58.0f, 35.0f, 1, 0}};
  const char *samples[] = {"val/000000000042.jpg", "val/000000000007.jpg",
                           "val/000000001000.jpg", "val/rotated.jpg"};
  for (int f = 0; f < 2; f++) {
    char p[600];
    snprintf(p, sizeof p, "%s/%s", dir, names[f]);
    sl_source *src = open_ok(p, SL_SOURCE_MMAP);
    assert_int_equal(sl_source_layout_version(src), versions[f]);
    assert_int_equal(sl_source_count(src), 4);
    assert_int_equal(sl_source_class_count(src), 3);
    assert_string_equal(sl_source_class_name(src, 2), "toothbrush");
    assert_int_equal(sl_source_max_boxes(src), 3);
    assert_int_equal(sl_source_box_total(src), 5);
    size_t k = 0;
    for (uint64_t i = 0; i < 4; i++) {
      uint32_t n;
      const sl_box *b = sl_source_boxes(src, i, &n);
      assert_int_equal(n, counts[i]);
      if (n)
        assert_memory_equal(b, &want[k], n * sizeof *b);
      k += n;
      char name[64];
      sl_err err = {0};
      assert_int_equal(sl_source_name(src, i, name, sizeof name, &err), SL_OK);
      assert_string_equal(name, samples[i]);
      assert_int_equal(sl_source_info(src, i)->label, -1);
    }
    sl_source_close(src);
  }
}

/* The chunk parser on hand-made bytes: what it accepts and refuses. */
static void test_chunk_parse(void **state) {
  (void)state;
  uint8_t c[SL_BOX_CHUNK_HDR + 4 + 2 * SL_BOX_BYTES];
  sl_box_chunk_head(c, 2, 5);
  sl_put_le16(c + 16, 0);
  sl_put_le16(c + 18, 2);
  sl_box b = {1, 2, 3, 4, 1, 0};
  sl_box_encode(c + 20, &b);
  sl_box_encode(c + 44, &b);
  sl_box_chunk bc;
  assert_null(sl_box_chunk_parse(c, sizeof c, &bc));
  assert_int_equal(bc.n, 2);
  assert_int_equal(bc.first, 5);
  assert_int_equal(bc.total, 2);
  assert_int_equal(bc.max_count, 2);
  sl_box d;
  sl_box_decode(bc.boxes + SL_BOX_BYTES, &d);
  assert_memory_equal(&d, &b, sizeof b);
  assert_non_null(sl_box_chunk_parse(c, sizeof c - 1, &bc));
  assert_non_null(sl_box_chunk_parse(c, 10, &bc));
  sl_put_le32(c + 4, 0);
  assert_non_null(sl_box_chunk_parse(c, sizeof c, &bc));
  sl_put_le32(c + 4, 1u << 30); /* counts past the end */
  assert_non_null(sl_box_chunk_parse(c, sizeof c, &bc));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_chunk_parse),
      cmocka_unit_test(test_round_trip),
      cmocka_unit_test(test_verify_accepts),
      cmocka_unit_test(test_no_boxes_keeps_layout),
      cmocka_unit_test(test_levels_and_boxes),
      cmocka_unit_test(test_max_boxes),
      cmocka_unit_test(test_many_samples),
      cmocka_unit_test(test_writer_refuses),
      cmocka_unit_test(test_damage),
      cmocka_unit_test(test_verify_damage),
      cmocka_unit_test(test_damage_sweep),
      cmocka_unit_test(test_old_layouts),
      cmocka_unit_test(test_box_fixtures),
  };
  return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
