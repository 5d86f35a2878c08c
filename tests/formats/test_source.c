/* Readers and writers of both formats: round trips, and damaged files
 * (truncated, corrupted at many points, wrong HDF5 layouts) that must give
 * a clear SL_EFORMAT/SL_EIO and never a crash. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <fcntl.h>
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codecs/codec.h"
#include "formats/core/layout.h"
#include "formats/core/source.h"
#include "formats/core/writer.h"
#include "tests/support/bad_seen.h"
#include "tests/support/test_dir.h"

static char g_dir[512];

static uint8_t *slurp(const char *path, size_t *len);
static void spit(const char *path, const uint8_t *b, size_t len);

static void path_in(char *buf, size_t cap, const char *name) {
  snprintf(buf, cap, "%s/%s", g_dir, name);
}

static int setup_dir(void **state) {
  (void)sl_test_make_dir(g_dir, sizeof g_dir, "formats-src");
  return 0;
}

static int teardown_dir(void **state) {
  (void)state;
  return sl_test_remove_dir(g_dir);
}

/* Sample i: length 1 + (i * 37) % 5000 bytes of a pattern, label i % 3. */
static size_t sample_len(uint64_t i) {
  return 1 + (size_t)((i * 37) % 5000);
}
static uint8_t sample_byte(uint64_t i, size_t j) {
  return (uint8_t)(i * 131 + j * 7);
}

static const char *const k_classes[] = {"cat", "dog", "zebra fish"};

/* Sample i's name ("" for every fourth: names are optional) and its two
 * targets. */
static void sample_name(uint64_t i, char *buf, size_t cap) {
  if (i % 4 == 0)
    buf[0] = '\0';
  else
    snprintf(buf, cap, "class %llu/photo_%llu.jpg", (unsigned long long)(i % 3),
             (unsigned long long)i);
}
static void sample_targets(uint64_t i, float t[2]) {
  t[0] = (float)i * 0.5f;
  t[1] = -(float)i;
}

static void write_file(const char *path, sl_format_kind fmt, uint64_t n) {
  sl_err err = {0};
  sl_fwriter *w = NULL;
  assert_int_equal(sl_fwriter_open(&w, path, fmt, &err), SL_OK);
  assert_int_equal(sl_fwriter_set_target_width(w, 2, &err), SL_OK);
  uint8_t *buf = malloc(6000);
  for (uint64_t i = 0; i < n; i++) {
    size_t len = sample_len(i);
    for (size_t j = 0; j < len; j++)
      buf[j] = sample_byte(i, j);
    sl_sample_info m = {0};
    m.label = (int32_t)(i % 3);
    m.codec = SL_IMAGE_JPEG;
    m.channels = i % 2 ? 3 : 1;
    m.height = (uint16_t)(10 + i);
    m.width = (uint16_t)(20 + i);
    char name[64];
    float t[2];
    sample_name(i, name, sizeof name);
    sample_targets(i, t);
    assert_int_equal(sl_fwriter_add_named(w, buf, len, &m, name, t, &err),
                     SL_OK);
  }
  free(buf);
  if (sl_fwriter_commit(w, 3, k_classes, "test=1", false, &err) != SL_OK)
    fail_msg("%s", err.msg);
}

static void check_file(const char *path, uint64_t n, sl_source_mode io) {
  sl_err err = {0};
  sl_source *src = NULL;
  sl_status st = sl_source_open(&src, path, SL_FORMAT_AUTO, io, &err);
  if (st != SL_OK)
    fail_msg("%s", err.msg);
  assert_int_equal(sl_source_count(src), n);
  assert_int_equal(sl_source_class_count(src), 3);
  assert_string_equal(sl_source_class_name(src, 2), "zebra fish");
  assert_null(sl_source_class_name(src, 3));
  assert_string_equal(sl_source_writer_settings(src), "test=1");
  assert_int_equal(sl_source_layout_version(src),
                   strcmp(sl_source_format_name(src), "lmdb") == 0 ? 3 : 2);
  uint8_t *buf = malloc(sl_source_max_length(src) + 1);
  assert_int_equal(sl_source_target_width(src), 2);
  for (uint64_t i = 0; i < n; i++) {
    char want[64], got[64];
    float t[2];
    sample_name(i, want, sizeof want);
    sample_targets(i, t);
    if (sl_source_name(src, i, got, sizeof got, &err) != SL_OK)
      fail_msg("%s", err.msg);
    assert_string_equal(got, want);
    assert_memory_equal(sl_source_targets(src, i), t, sizeof t);
    const sl_sample_info *e = sl_source_info(src, i);
    assert_int_equal(e->label, (int32_t)(i % 3));
    assert_int_equal(e->height, 10 + i);
    assert_int_equal(e->width, 20 + i);
    assert_int_equal(e->channels, i % 2 ? 3 : 1);
    assert_int_equal(e->codec, SL_IMAGE_JPEG);
    const uint8_t *d;
    size_t len;
    assert_int_equal(
        sl_source_read(src, i, buf, sl_source_max_length(src), &d, &len, &err),
        SL_OK);
    assert_int_equal(len, sample_len(i));
    for (size_t j = 0; j < len; j++)
      if (d[j] != sample_byte(i, j))
        fail_msg("sample %llu byte %zu differs", (unsigned long long)i, j);
  }
  const uint8_t *d;
  size_t len;
  assert_int_equal(sl_source_read(src, n, buf, 1 << 20, &d, &len, &err),
                   SL_EINVAL);
  free(buf);
  sl_source_close(src);
}

/* n samples written to path (its format from the name) and read back with
 * both source backends. */
static void write_and_read_back(const char *path, uint64_t n) {
  write_file(path, SL_FORMAT_AUTO, n);
  check_file(path, n, SL_SOURCE_MMAP);
  check_file(path, n, SL_SOURCE_PREAD);
}

static void test_round_trip_lmdb(void **state) {
  char p[600];
  path_in(p, sizeof p, "rt.lmdb");
  write_and_read_back(p, 500);
  /* No replace without asking. */
  sl_err err = {0};
  sl_fwriter *w;
  assert_int_equal(sl_fwriter_open(&w, p, SL_FORMAT_LMDB, &err), SL_OK);
  assert_int_equal(sl_fwriter_commit(w, 0, NULL, "", false, &err), SL_EIO);
  assert_non_null(strstr(err.msg, "exists"));
  check_file(p, 500, SL_SOURCE_MMAP);
}

/* Metadata that the text layout could not hold back is refused at commit,
 * naming the class, and nothing is left at the destination. */
static void test_writer_bad_meta(void **state) {
  (void)state;
  char longname[SL_CLASS_NAME_MAX + 2];
  memset(longname, 'a', sizeof longname - 1);
  longname[sizeof longname - 1] = '\0';
  const char *const broken[] = {"cat", "two\nlines"};
  const char *const carriage[] = {"cat", "dog", "x\ry"};
  const char *const too_long[] = {longname};
  const char *const missing[] = {"cat", NULL};
  struct {
    uint32_t n;
    const char *const *names;
    const char *settings, *want;
  } cases[] = {{2, broken, "", "class 1 name"},
               {3, carriage, "", "class 2 name"},
               {1, too_long, "", "class 0 name (256 bytes)"},
               {2, missing, "", "class 1 has no name"},
               {2, NULL, "", "2 classes but no names"},
               {3, k_classes, "a=1\nb=2", "settings string"}};
  static const sl_format_kind kinds[] = {SL_FORMAT_LMDB, SL_FORMAT_HDF5};
  for (int k = 0; k < 2; k++)
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
      char p[600];
      path_in(p, sizeof p, k ? "meta.h5" : "meta.lmdb");
      sl_err err = {0};
      sl_fwriter *w;
      assert_int_equal(sl_fwriter_open(&w, p, kinds[k], &err), SL_OK);
      sl_sample_info m = {
          .label = 0, .codec = 1, .channels = 3, .height = 2, .width = 2};
      assert_int_equal(sl_fwriter_add(w, "abc", 3, &m, &err), SL_OK);
      assert_int_equal(sl_fwriter_commit(w, cases[i].n, cases[i].names,
                                         cases[i].settings, false, &err),
                       SL_EINVAL);
      if (!strstr(err.msg, cases[i].want))
        fail_msg("case %zu: \"%s\" lacks \"%s\"", i, err.msg, cases[i].want);
      struct stat sb;
      assert_int_equal(stat(p, &sb), -1);
    }
}

static void test_round_trip_hdf5(void **state) {
  char p[600];
  path_in(p, sizeof p, "rt.h5");
  write_and_read_back(p, 500);
  /* Replacing works. */
  sl_err err = {0};
  sl_fwriter *w;
  assert_int_equal(sl_fwriter_open(&w, p, SL_FORMAT_HDF5, &err), SL_OK);
  sl_sample_info m = {
      .label = 1, .codec = 1, .channels = 3, .height = 2, .width = 2};
  assert_int_equal(sl_fwriter_add(w, "abc", 3, &m, &err), SL_OK);
  assert_int_equal(sl_fwriter_commit(w, 3, k_classes, "x", true, &err), SL_OK);
  sl_source *src;
  assert_int_equal(
      sl_source_open(&src, p, SL_FORMAT_HDF5, SL_SOURCE_PREAD, &err), SL_OK);
  assert_int_equal(sl_source_count(src), 1);
  sl_source_close(src);
  /* No temporary file is left in the directory. */
  char cmd[700];
  snprintf(cmd, sizeof cmd, "ls -a '%s' | grep -q sluice-tmp", g_dir);
  assert_int_not_equal(system(cmd), 0);
}

/* Names and targets the layout cannot hold are refused, naming the sample;
 * the target width is fixed before the first sample. */
static void test_writer_bad_sample(void **state) {
  char p[600];
  path_in(p, sizeof p, "badsample.lmdb");
  sl_err err = {0};
  sl_fwriter *w;
  assert_int_equal(sl_fwriter_open(&w, p, SL_FORMAT_LMDB, &err), SL_OK);
  assert_int_equal(sl_fwriter_set_target_width(w, SL_TARGETS_MAX + 1, &err),
                   SL_EINVAL);
  assert_int_equal(sl_fwriter_set_target_width(w, 1, &err), SL_OK);
  sl_sample_info m = {0};
  m.codec = SL_IMAGE_JPEG;
  m.channels = 3;
  m.height = m.width = 1;
  m.label = -1;
  float t[1] = {1.0f};
  assert_int_equal(sl_fwriter_add_named(w, "abc", 3, &m, "a", NULL, &err),
                   SL_EINVAL);
  assert_non_null(strstr(err.msg, "sample 0: no targets"));
  float nan[1] = {NAN};
  assert_int_equal(sl_fwriter_add_named(w, "abc", 3, &m, "a", nan, &err),
                   SL_EINVAL);
  assert_non_null(strstr(err.msg, "target 0 is nan"));
  char *long_name = malloc(SL_NAME_MAX + 2);
  memset(long_name, 'x', SL_NAME_MAX + 1);
  long_name[SL_NAME_MAX + 1] = '\0';
  assert_int_equal(sl_fwriter_add_named(w, "abc", 3, &m, long_name, t, &err),
                   SL_EINVAL);
  long_name[SL_NAME_MAX] = '\0'; /* the longest allowed */
  assert_int_equal(sl_fwriter_add_named(w, "abc", 3, &m, long_name, t, &err),
                   SL_OK);
  assert_int_equal(sl_fwriter_set_target_width(w, 2, &err), SL_ESTATE);
  assert_int_equal(sl_fwriter_commit(w, 0, NULL, "", false, &err), SL_OK);
  sl_source *src;
  assert_int_equal(
      sl_source_open(&src, p, SL_FORMAT_AUTO, SL_SOURCE_PREAD, &err), SL_OK);
  char small[8];
  assert_int_equal(sl_source_name(src, 0, small, sizeof small, &err),
                   SL_EINVAL);
  assert_int_equal(sl_source_name(src, 1, small, sizeof small, &err),
                   SL_EINVAL);
  char *got = malloc(SL_NAME_MAX + 1);
  assert_int_equal(sl_source_name(src, 0, got, SL_NAME_MAX + 1, &err), SL_OK);
  assert_string_equal(got, long_name);
  free(got);
  free(long_name);
  sl_source_close(src);
}

/* Files of the previous layouts (made by the sluice of that layout: see
 * tests/fixtures/README.md) still open, with no names and no targets, and
 * hold the same samples. */
static void test_old_layouts_open(void **state) {
  const char *dir = getenv("SLUICE_FIXTURES");
  if (!dir)
    fail_msg("SLUICE_FIXTURES is not set");
  const char *names[] = {"layout2.lmdb", "layout1.h5"};
  const uint32_t versions[] = {2, 1};
  sl_source *src[2];
  sl_err err = {0};
  for (int f = 0; f < 2; f++) {
    char p[600];
    snprintf(p, sizeof p, "%s/%s", dir, names[f]);
    if (sl_source_open(&src[f], p, SL_FORMAT_AUTO, SL_SOURCE_MMAP, &err) !=
        SL_OK)
      fail_msg("%s", err.msg);
    assert_int_equal(sl_source_layout_version(src[f]), versions[f]);
    assert_int_equal(sl_source_count(src[f]), 6);
    assert_int_equal(sl_source_class_count(src[f]), 2);
    assert_string_equal(sl_source_class_name(src[f], 1), "class_001");
    assert_int_equal(sl_source_target_width(src[f]), 0);
    assert_null(sl_source_targets(src[f], 0));
  }
  for (uint64_t i = 0; i < 6; i++) {
    const uint8_t *d[2];
    size_t len[2];
    for (int f = 0; f < 2; f++) {
      char name[8] = "x";
      assert_int_equal(sl_source_name(src[f], i, name, sizeof name, &err),
                       SL_OK);
      assert_string_equal(name, "");
      assert_int_equal(sl_source_read(src[f], i, NULL, 0, &d[f], &len[f], &err),
                       SL_OK);
    }
    assert_int_equal(len[0], len[1]);
    assert_memory_equal(d[0], d[1], len[0]);
    assert_memory_equal(d[0], "\xff\xd8", 2);
    assert_int_equal(sl_source_info(src[0], i)->label,
                     sl_source_info(src[1], i)->label);
  }
  sl_source_close(src[0]);
  sl_source_close(src[1]);
}

/* A file of another layout version is refused, saying which. */
static void test_lmdb_old_version(void **state) {
  char p[600];
  path_in(p, sizeof p, "old.lmdb");
  write_file(p, SL_FORMAT_LMDB, 5);
  size_t len;
  uint8_t *b = slurp(p, &len);
  int seen = 0;
  for (size_t at = 0; at + 13 < len; at++)
    if (memcmp(b + at, "sluice-lmdb 3\n", 13) == 0) {
      b[at + 12] = '1';
      seen = 1;
    }
  assert_true(seen);
  spit(p, b, len);
  free(b);
  sl_err err = {0};
  sl_source *src;
  assert_int_equal(
      sl_source_open(&src, p, SL_FORMAT_AUTO, SL_SOURCE_MMAP, &err),
      SL_EFORMAT);
  if (!strstr(err.msg, "LMDB layout version 1 (this sluice reads 2 to 5)") ||
      !strstr(err.msg, "sluice pack"))
    fail_msg("%s", err.msg);
}

/* An LMDB environment directory (data.mdb inside) is read too. */
static void test_lmdb_directory(void **state) {
  char p[600], d[600], q[700];
  path_in(p, sizeof p, "dir-src.lmdb");
  write_file(p, SL_FORMAT_LMDB, 20);
  path_in(d, sizeof d, "envdir");
  mkdir(d, 0755);
  snprintf(q, sizeof q, "%s/data.mdb", d);
  assert_int_equal(rename(p, q), 0);
  check_file(d, 20, SL_SOURCE_PREAD);
  /* A directory without data.mdb is an I/O error that says it is a
   * folder and how to make a dataset of it. */
  path_in(d, sizeof d, "emptydir");
  mkdir(d, 0755);
  sl_err err = {0};
  sl_source *src;
  assert_int_equal(
      sl_source_open(&src, d, SL_FORMAT_AUTO, SL_SOURCE_MMAP, &err), SL_EIO);
  assert_non_null(strstr(err.msg, "no data.mdb"));
  assert_non_null(strstr(err.msg, "a folder, not a dataset"));
  /* Read as an image folder (dataset.format = folder), the same folder
   * has no class subfolders: said, with no sort of an empty list (a
   * qsort of NULL, UBSan's finding in fuzz_folder). */
  assert_int_equal(
      sl_source_open(&src, d, SL_FORMAT_FOLDER, SL_SOURCE_MMAP, &err), SL_EIO);
  assert_null(src);
  assert_non_null(strstr(err.msg, "no class subfolders"));
}

static void test_empty_files(void **state) {
  char p[600];
  sl_err err = {0};
  sl_source *src;
  for (int f = 0; f < 2; f++) {
    path_in(p, sizeof p, f ? "empty.h5" : "empty.lmdb");
    sl_fwriter *w;
    assert_int_equal(sl_fwriter_open(&w, p, SL_FORMAT_AUTO, &err), SL_OK);
    assert_int_equal(sl_fwriter_commit(w, 0, NULL, "", false, &err), SL_OK);
    if (sl_source_open(&src, p, SL_FORMAT_AUTO, SL_SOURCE_MMAP, &err) != SL_OK)
      fail_msg("%s", err.msg);
    assert_int_equal(sl_source_count(src), 0);
    assert_int_equal(sl_source_class_count(src), 0);
    sl_source_close(src);
  }
  /* Not a dataset file at all. */
  path_in(p, sizeof p, "junk.bin");
  FILE *fp = fopen(p, "wb");
  fputs("hello, not a dataset", fp);
  fclose(fp);
  assert_int_equal(
      sl_source_open(&src, p, SL_FORMAT_AUTO, SL_SOURCE_MMAP, &err),
      SL_EFORMAT);
  assert_non_null(strstr(err.msg, "not an LMDB, HDF5, TFRecord or RecordIO"));
  assert_int_equal(
      sl_source_open(&src, p, SL_FORMAT_HDF5, SL_SOURCE_MMAP, &err),
      SL_EFORMAT);
  path_in(p, sizeof p, "missing.lmdb");
  assert_int_equal(
      sl_source_open(&src, p, SL_FORMAT_AUTO, SL_SOURCE_MMAP, &err), SL_EIO);
}

static uint8_t *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  fseek(f, 0, SEEK_END);
  *len = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *b = malloc(*len);
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

/* Opens the damaged file both ways; it must either open (damage in a
 * payload or unused bytes) and read every sample within bounds, or fail
 * with a message naming the file. Returns 1 when it failed. */
static void ignore_bad(void *user, uint64_t i, const char *reason) {
  (void)user;
  (void)i;
  (void)reason;
}

static int probe(const char *path) {
  int failed = 0;
  for (int io = 0; io < 3; io++) { /* mmap, pread, verify mode */
    sl_err err = {0};
    sl_source *src = NULL;
    sl_status st =
        io == 2 ? sl_source_open_verify_opts(&src, path, NULL, SL_SOURCE_PREAD,
                                             ignore_bad, NULL, &err)
                : sl_source_open(&src, path, SL_FORMAT_AUTO,
                                 io ? SL_SOURCE_PREAD : SL_SOURCE_MMAP, &err);
    if (st != SL_OK) {
      if (st != SL_EFORMAT && st != SL_EIO)
        fail_msg("unexpected status %d: %s", st, err.msg);
      if (!strstr(err.msg, path))
        fail_msg("message does not name the file: %s", err.msg);
      failed |= io < 2;
      continue;
    }
    uint8_t *buf = malloc(sl_source_max_length(src) + 1);
    uint64_t sum = 0;
    for (uint64_t i = 0; i < sl_source_count(src); i++) {
      const uint8_t *d;
      size_t len;
      if (sl_source_read(src, i, buf, sl_source_max_length(src), &d, &len,
                         &err) == SL_OK)
        for (size_t j = 0; j < len; j++)
          sum += d[j];
    }
    (void)sum;
    free(buf);
    sl_source_close(src);
  }
  return failed;
}

static void damage(const char *name, sl_format_kind fmt) {
  char p[600], q[700];
  path_in(p, sizeof p, name);
  snprintf(q, sizeof q, "%s.bad", p);
  write_file(p, fmt, 300);
  size_t len;
  uint8_t *orig = slurp(p, &len);
  /* Truncations: every prefix at a coarse step plus the last bytes. */
  int failures = 0, tries = 0;
  for (size_t cut = 0; cut < len; cut += len / 97 + 1, tries++) {
    spit(q, orig, cut);
    failures += probe(q);
  }
  for (size_t cut = len - 8; cut < len; cut++, tries++) {
    spit(q, orig, cut);
    failures += probe(q);
  }
  assert_true(failures == tries); /* a truncated file never opens */
  /* Corruptions: overwrite 8 bytes at many points with a few patterns. */
  uint8_t *b = malloc(len);
  static const uint8_t pats[3][8] = {
      {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
      {0, 0, 0, 0, 0, 0, 0, 0},
      {0x13, 0x9a, 0x77, 0x01, 0xe4, 0x55, 0x80, 0x2c}};
  failures = 0;
  for (size_t at = 0; at + 8 <= len; at += len / 331 + 1) {
    for (int k = 0; k < 3; k++) {
      memcpy(b, orig, len);
      memcpy(b + at, pats[k], 8);
      spit(q, b, len);
      failures += probe(q);
    }
  }
  assert_true(failures > 0);
  free(b);
  free(orig);
  unlink(q);
}

static void test_damaged_lmdb(void **state) {
  damage("dmg.lmdb", SL_FORMAT_LMDB);
}

static void test_damaged_hdf5(void **state) {
  damage("dmg.h5", SL_FORMAT_HDF5);
}

/* HDF5: a damaged offsets[i + 1] is the end of sample i and the start of
 * sample i + 1: verify reports both, and the samples after them read as
 * they were written. */
static void test_verify_mode_hdf5(void **state) {
  char p[600];
  path_in(p, sizeof p, "vm.h5");
  write_file(p, SL_FORMAT_HDF5, 20);
  hid_t f = H5Fopen(p, H5F_ACC_RDWR, H5P_DEFAULT);
  assert_true(f >= 0);
  hid_t d = H5Dopen2(f, "/samples/offsets", H5P_DEFAULT);
  assert_true(d >= 0);
  hid_t fs = H5Dget_space(d);
  hsize_t at[1] = {6}, one[1] = {1};
  assert_true(H5Sselect_hyperslab(fs, H5S_SELECT_SET, at, NULL, one, NULL) >=
              0);
  hid_t ms = H5Screate_simple(1, one, NULL);
  uint64_t huge = 1ull << 40;
  assert_true(H5Dwrite(d, H5T_NATIVE_UINT64, ms, fs, H5P_DEFAULT, &huge) >= 0);
  H5Sclose(ms);
  H5Sclose(fs);
  H5Dclose(d);
  H5Fclose(f);
  sl_test_bad_seen log = {0};
  sl_err err = {0};
  sl_source *src;
  assert_int_equal(sl_source_open_verify_opts(&src, p, NULL, SL_SOURCE_PREAD,
                                              sl_test_on_bad, &log, &err),
                   SL_OK);
  assert_int_equal(log.calls, 2);
  assert_int_equal(log.first, 5);
  assert_int_equal(sl_source_info(src, 5)->codec, 0);
  assert_int_equal(sl_source_info(src, 6)->codec, 0);
  uint8_t buf[6000];
  const uint8_t *data;
  size_t len;
  for (uint64_t i = 7; i < 20; i++) {
    assert_int_equal(sl_source_read(src, i, buf, sizeof buf, &data, &len, &err),
                     SL_OK);
    assert_int_equal(len, sample_len(i));
    assert_int_equal(data[len - 1], sample_byte(i, len - 1));
  }
  sl_source_close(src);
}

static void test_verify_mode_lmdb(void **state) {
  char p[600];
  path_in(p, sizeof p, "vm.lmdb");
  write_file(p, SL_FORMAT_LMDB, 50);
  size_t len;
  uint8_t *b = slurp(p, &len);
  /* Sample 7's label in the index chunk becomes 99; sample 9's own record
   * header gets label 2 (the index says 0). */
  int seen = 0;
  size_t entry = sl_lmdb_ix_entry_bytes(2); /* write_file's two targets */
  for (size_t at = 0; at + 8 + entry * 50 <= len; at++)
    if (memcmp(b + at, "SLI1", 4) == 0 && b[at + 4] == 50) {
      b[at + 8 + entry * 7 + 4] = 99;
      seen |= 1;
      break;
    }
  uint8_t want[] = {'S', 'L', 'R', '1', 3, 0};
  for (size_t at = 0; at + 24 < len; at++)
    if (memcmp(b + at, want, sizeof want) == 0 && b[at + 8] == 19) {
      b[at + 12] = 2;
      seen |= 2;
      break;
    }
  assert_int_equal(seen, 3);
  spit(p, b, len);
  free(b);
  sl_err err = {0};
  sl_source *src;
  assert_int_equal(
      sl_source_open(&src, p, SL_FORMAT_AUTO, SL_SOURCE_MMAP, &err),
      SL_EFORMAT);
  assert_non_null(strstr(err.msg, "sample 7"));
  assert_non_null(strstr(err.msg, "label 99"));
  sl_test_bad_seen log = {0};
  assert_int_equal(sl_source_open_verify_opts(&src, p, NULL, SL_SOURCE_MMAP,
                                              sl_test_on_bad, &log, &err),
                   SL_OK);
  assert_int_equal(log.calls, 2);
  assert_int_equal(log.first, 7);
  assert_non_null(strstr(log.first_reason, "key 0000000000000007"));
  const uint8_t *d;
  size_t dl;
  assert_int_equal(sl_source_read(src, 7, NULL, 0, &d, &dl, &err), SL_EFORMAT);
  /* A damaged sample keeps no label and no targets. */
  assert_int_equal(sl_source_info(src, 7)->label, -1);
  assert_true(sl_source_targets(src, 7)[0] == 0.0f &&
              sl_source_targets(src, 7)[1] == 0.0f);
  assert_int_equal(sl_source_read(src, 8, NULL, 0, &d, &dl, &err), SL_OK);
  assert_int_equal(sl_source_read(src, 9, NULL, 0, &d, &dl, &err), SL_EFORMAT);
  sl_source_close(src);
}

/* HDF5 files laid out other than sluice's layout. */
static void make_h5(const char *path, const char *variant) {
  hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  hid_t g = H5Gcreate2(f, "/samples", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  hid_t s = H5Screate(H5S_SCALAR);
  uint32_t one = 1, k = 0;
  uint64_t n = 2;
  hid_t a = H5Acreate2(g, "sluice_layout", H5T_STD_U32LE, s, H5P_DEFAULT,
                       H5P_DEFAULT);
  uint32_t ver = strcmp(variant, "version") == 0 ? 7 : one;
  H5Awrite(a, H5T_NATIVE_UINT32, &ver);
  H5Aclose(a);
  a = H5Acreate2(g, "count", H5T_STD_U64LE, s, H5P_DEFAULT, H5P_DEFAULT);
  H5Awrite(a, H5T_NATIVE_UINT64, &n);
  H5Aclose(a);
  a = H5Acreate2(g, "num_classes", H5T_STD_U32LE, s, H5P_DEFAULT, H5P_DEFAULT);
  H5Awrite(a, H5T_NATIVE_UINT32, &k);
  H5Aclose(a);
  H5Sclose(s);
  uint8_t data[6] = {1, 2, 3, 4, 5, 6};
  uint64_t off[3] = {0, 3, 6};
  int64_t label[2] = {-1, -1};
  uint32_t shape[6] = {1, 1, 3, 1, 1, 3};
  uint8_t codec[2] = {3, 3};
  struct {
    const char *name;
    hid_t type, mtype;
    int rank;
    hsize_t dims[2];
    const void *buf;
  } ds[] = {{"data", H5T_STD_U8LE, H5T_NATIVE_UINT8, 1, {6, 0}, data},
            {"offsets", H5T_STD_U64LE, H5T_NATIVE_UINT64, 1, {3, 0}, off},
            {"label", H5T_STD_I64LE, H5T_NATIVE_INT64, 1, {2, 0}, label},
            {"shape", H5T_STD_U32LE, H5T_NATIVE_UINT32, 2, {2, 3}, shape},
            {"codec", H5T_STD_U8LE, H5T_NATIVE_UINT8, 1, {2, 0}, codec}};
  for (int i = 0; i < 5; i++) {
    if (strcmp(variant, "missing") == 0 && strcmp(ds[i].name, "label") == 0)
      continue;
    hid_t type = ds[i].type;
    if (strcmp(variant, "float") == 0 && strcmp(ds[i].name, "data") == 0)
      type = H5T_IEEE_F32LE;
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    if (strcmp(variant, "chunked") == 0 && i == 0) {
      hsize_t c[1] = {3};
      H5Pset_chunk(dcpl, 1, c);
    }
    if (strcmp(variant, "gzip") == 0 && i == 0) {
      hsize_t c[1] = {6};
      H5Pset_chunk(dcpl, 1, c);
      H5Pset_deflate(dcpl, 6);
    }
    hid_t sp = H5Screate_simple(ds[i].rank, ds[i].dims, NULL);
    hid_t d =
        H5Dcreate2(g, ds[i].name, type, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    H5Dwrite(d, ds[i].mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, ds[i].buf);
    H5Dclose(d);
    H5Sclose(sp);
    H5Pclose(dcpl);
  }
  H5Gclose(g);
  H5Fclose(f);
}

static void test_hdf5_layouts(void **state) {
  static const struct {
    const char *variant, *expect;
  } cases[] = {{"ok", NULL},
               {"chunked", "chunked"},
               {"gzip", "chunked"},
               {"float", "wrong type"},
               {"missing", "samples/label is missing"},
               {"version", "layout version 7"}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char p[600];
    path_in(p, sizeof p, "layout.h5");
    make_h5(p, cases[i].variant);
    sl_err err = {0};
    sl_source *src = NULL;
    sl_status st =
        sl_source_open(&src, p, SL_FORMAT_AUTO, SL_SOURCE_MMAP, &err);
    if (!cases[i].expect) {
      if (st != SL_OK)
        fail_msg("%s", err.msg);
      const uint8_t *d;
      size_t len;
      assert_int_equal(sl_source_read(src, 1, NULL, 0, &d, &len, &err), SL_OK);
      assert_int_equal(len, 3);
      assert_int_equal(d[0], 4);
      sl_source_close(src);
      continue;
    }
    assert_int_equal(st, SL_EFORMAT);
    if (!strstr(err.msg, cases[i].expect) || !strstr(err.msg, "sluice pack"))
      fail_msg("%s: %s", cases[i].variant, err.msg);
  }
}

/* An option for another format is refused at open, naming the key, the
 * formats it is for (built from the format table) and what the file is. */
static void test_option_refusals(void **state) {
  (void)state;
  char lmdb[600], h5[600];
  path_in(lmdb, sizeof lmdb, "opts.lmdb");
  path_in(h5, sizeof h5, "opts.h5");
  write_file(lmdb, SL_FORMAT_LMDB, 4);
  write_file(h5, SL_FORMAT_HDF5, 4);
  static const struct {
    bool on_h5;
    const char *key;
    sl_source_opts opts;
    const char *for_, *is;
  } cases[] = {
      {true, "dataset.lmdb_db", {.lmdb_db = "x"}, "LMDB", "HDF5"},
      {false, "dataset.images", {.images = "/x"}, "HDF5", "LMDB"},
      {false, "dataset.label_from", {.label_argmax = true}, "HDF5", "LMDB"},
      {false, "dataset.label_key", {.label_key = "cls"}, "WebDataset", "LMDB"},
      {true,
       "dataset.targets_ext",
       {.targets_ext = "npy"},
       "WebDataset",
       "HDF5"},
      {false,
       "dataset.entries = array",
       {.entries = SL_ENTRIES_ARRAY},
       "HDF5",
       "LMDB"},
      {true,
       "dataset.entries = caffe",
       {.entries = SL_ENTRIES_CAFFE},
       "LMDB",
       "HDF5"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    sl_err err = {0};
    sl_source *src = NULL;
    const char *path = cases[i].on_h5 ? h5 : lmdb;
    assert_int_equal(
        sl_source_open_opts(&src, path, &cases[i].opts, SL_SOURCE_MMAP, &err),
        SL_ECONFIG);
    assert_null(src);
    const char *is = strstr(err.msg, "; this is ");
    if (!strstr(err.msg, path) || !strstr(err.msg, cases[i].key) ||
        !strstr(err.msg, cases[i].for_) || !is || !strstr(is, cases[i].is) ||
        strstr(err.msg, cases[i].is) < is)
      fail_msg("%s: %s", cases[i].key, err.msg);
  }
  /* The same keys on their own format open. */
  sl_source_opts ok = {.label_file = NULL};
  sl_source *src = NULL;
  sl_err err = {0};
  if (sl_source_open_opts(&src, lmdb, &ok, SL_SOURCE_MMAP, &err) != SL_OK)
    fail_msg("%s", err.msg);
  sl_source_close(src);
}

int main(void) {
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_round_trip_lmdb),
      cmocka_unit_test(test_round_trip_hdf5),
      cmocka_unit_test(test_writer_bad_meta),
      cmocka_unit_test(test_writer_bad_sample),
      cmocka_unit_test(test_old_layouts_open),
      cmocka_unit_test(test_empty_files),
      cmocka_unit_test(test_lmdb_directory),
      cmocka_unit_test(test_lmdb_old_version),
      cmocka_unit_test(test_verify_mode_lmdb),
      cmocka_unit_test(test_verify_mode_hdf5),
      cmocka_unit_test(test_hdf5_layouts),
      cmocka_unit_test(test_option_refusals),
      cmocka_unit_test(test_damaged_lmdb),
      cmocka_unit_test(test_damaged_hdf5),
  };
  return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
