/* TFRecord and MXNet RecordIO files read in place, through the public API.
 * The fixtures are written at test time by the real writers
 * (foreign/make_records.py, run with /usr/bin/python3): the `tfrecord`
 * package's TFRecordWriter for tf.train.Example records as TensorFlow's
 * ImageNet converter, TFDS and others name their features, and
 * foreign/mxrecordio.py, mxnet's RecordIO writer byte for byte (mxnet does
 * not install here), for im2rec's .rec + .idx, float-label records with
 * multi-part records (the magic inside the IRHeader and twice inside a
 * JPEG comment) and InsightFace's layout, from image files this test
 * encodes with TurboJPEG and libpng.
 *
 * Checks: format, layout, labels (as stored, and with
 * dataset.label_offset), targets, names, codecs and sizes; stored bytes
 * (a multi-part record's joined image equals the file the writer was
 * given); sl_dataset_decode and the loader's batches on every io backend
 * (1 and 2 workers) against the images' own pixels (PNG exact, JPEG within
 * 1 of TurboJPEG's decode); damaged files (bad CRCs, truncated, lengths
 * past the end, bad protobuf, bad magic, a bad .idx offset, bad IRHeaders)
 * SL_EFORMAT naming file, record and offset, and reported per sample in
 * verify mode; a gzip TFRecord refused by name; `sluice info`, `verify
 * --decode`, `extract` and `pack --from`. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sluice.h"
#include "tests/formats/test_images.h"
#include "tests/support/dataset_checks.h"
#include "tests/support/test_dir.h"
#include "tests/tools/cli_run.h"

#ifndef SLUICE_TEST_PYTHON
#define SLUICE_TEST_PYTHON "/usr/bin/python3"
#endif

enum { S = 32, NIMG = 6 };

static char g_dir[512];
static uint8_t g_ref[NIMG][S * S * 3]; /* RGB reference of image i */
static int g_lossy[NIMG];

static void path_in(char *buf, size_t cap, const char *name) {
  snprintf(buf, cap, "%s/%s", g_dir, name);
}

/* Image i: a texture, JPEG for even i, PNG for odd i (gray for i == 3).
 * The reference is TurboJPEG's decode, or the PNG's pixels. */
static void make_image(int i, const char *dir, FILE *list) {
  bool gray = i == 3, jpeg = i % 2 == 0;
  uint8_t src[S * S * 3];
  ti_texture(i, S, gray ? 1 : 3, src);
  char name[32], path[700];
  snprintf(name, sizeof name, "img%d.%s", i, jpeg ? "jpg" : "png");
  snprintf(path, sizeof path, "%s/%s", dir, name);
  fprintf(list, "%s\n", name);
  if (jpeg)
    assert_int_equal(ti_jpeg_of(path, src, S, 0, 85, g_ref[i]), 0);
  else
    assert_int_equal(ti_png_of(path, src, S, gray, g_ref[i]), 0);
  g_lossy[i] = jpeg;
}

static int setup(void **state) {
  (void)state;
  char img[600], lp[700], cmd[2048];
  if (sl_test_make_dir(g_dir, sizeof g_dir, "records") != 0)
    return -1;
  path_in(img, sizeof img, "img");
  if (mkdir(img, 0755) != 0)
    return -1;
  snprintf(lp, sizeof lp, "%s/list.txt", img);
  FILE *list = fopen(lp, "w");
  if (!list)
    return -1;
  for (int i = 0; i < NIMG; i++)
    make_image(i, img, list);
  fclose(list);
  snprintf(cmd, sizeof cmd, "'%s' '%s'", g_dir, img);
  return sl_test_make_fixtures(
      "test_records", SLUICE_TEST_PYTHON, SLUICE_RECORDS_PY, cmd,
      "python3-protobuf and python3-crc32c, and `tfrecord` from PyPI "
      "(scripts/test-requirements.txt),");
}

static int teardown(void **state) {
  (void)state;
  return sl_test_remove_dir(g_dir);
}

/* ---- the fixtures ---------------------------------------------------------
 */

typedef enum fixture {
  F_TF,
  F_TFDS,
  F_CUSTOM,
  F_IM,
  F_MULTI,
  F_INSIGHT
} fixture;

static const char *file_of(fixture f) {
  static const char *names[] = {
      "tf.tfrecord",     "tfds.tfrecord-00000-of-00001",
      "custom.tfrecord", "im.rec",
      "multi.rec",       "insight.rec"};
  return names[f];
}

static uint64_t count_of(fixture f) {
  return f == F_TF ? NIMG + 1 : NIMG;
}

/* The image sample i holds (make_records.py): tf.tfrecord's extra last
 * record and multi.rec's record 2 (a comment added) hold image 0. */
static int image_of(fixture f, uint64_t i) {
  if ((f == F_TF && i == NIMG) || (f == F_MULTI && i == 2))
    return 0;
  return (int)i;
}

/* The label make_records.py stored for sample i (label_offset 0). */
static int32_t label_of(fixture f, uint64_t i) {
  switch (f) {
  case F_TF:
    return i == NIMG ? -1 : (int32_t)i + 1;
  case F_TFDS:
    return (int32_t)(i % 3);
  case F_CUSTOM:
    return 100 + (int32_t)i;
  case F_INSIGHT:
    return (int32_t)(i % 2);
  default:
    return (int32_t)i;
  }
}

static sl_status try_open(sl_dataset **ds, const char *file,
                          const char *const *kv) {
  return sl_test_try_open_kv(ds, g_dir, file, kv);
}

static sl_dataset *open_with(const char *file, const char *const *kv) {
  return sl_test_open_kv(g_dir, file, kv);
}

static const char *const k_custom[] = {"dataset.image_key", "jpg",
                                       "dataset.label_key", "cls", NULL};

static sl_dataset *open_fixture(fixture f) {
  return open_with(file_of(f), f == F_CUSTOM ? k_custom : NULL);
}

/* Labels, codecs and every sample's sl_dataset_decode. */
static void check_samples(sl_dataset *ds, fixture f, int32_t offset) {
  assert_int_equal(sl_dataset_count(ds), count_of(f));
  for (uint64_t i = 0; i < sl_dataset_count(ds); i++) {
    sl_sample_meta m;
    assert_int_equal(sl_dataset_info(ds, i, &m), SL_OK);
    int32_t l = label_of(f, i);
    assert_int_equal(m.label, l < 0 ? -1 : l + offset);
    int k = image_of(f, i);
    assert_int_equal(m.codec, k % 2 ? SL_IMAGE_PNG : SL_IMAGE_JPEG);
    assert_int_equal(m.width, S);
    assert_int_equal(m.height, S);
    assert_int_equal(m.channels, k == 3 ? 1 : 3);
    sl_test_expect_decode(ds, i, g_ref[k], S, g_lossy[k], file_of(f));
  }
}

/* The bytes of file name in the fixtures' folder (malloc'd). */
static uint8_t *slurp(const char *name, size_t *n) {
  char p[700];
  path_in(p, sizeof p, name);
  FILE *fp = fopen(p, "rb");
  assert_non_null(fp);
  assert_int_equal(fseek(fp, 0, SEEK_END), 0);
  long size = ftell(fp);
  assert_true(size > 0);
  rewind(fp);
  uint8_t *b = malloc((size_t)size);
  assert_non_null(b);
  assert_int_equal(fread(b, 1, (size_t)size, fp), (size_t)size);
  fclose(fp);
  *n = (size_t)size;
  return b;
}

/* Sample i's stored bytes are the image file the writer was given. */
static void expect_stored(sl_dataset *ds, uint64_t i, const char *file) {
  size_t n, len;
  uint8_t *want = slurp(file, &n);
  sl_sample_meta m;
  assert_int_equal(sl_dataset_info(ds, i, &m), SL_OK);
  assert_int_equal(m.stored_bytes, n);
  uint8_t *got = malloc(n);
  assert_non_null(got);
  if (sl_dataset_read(ds, i, got, n, &len) != SL_OK)
    fail_msg("%s", sl_dataset_errmsg(ds));
  assert_int_equal(len, n);
  assert_memory_equal(got, want, n);
  free(got);
  free(want);
}

/* ---- TFRecord -------------------------------------------------------------
 */

static void test_tfrecord_imagenet(void **state) {
  (void)state;
  sl_dataset *ds = open_fixture(F_TF);
  assert_string_equal(sl_dataset_format(ds), "tfrecord");
  assert_string_equal(sl_dataset_entries(ds), "example");
  assert_int_equal(sl_dataset_target_width(ds), 0);
  check_samples(ds, F_TF, 0);
  char name[64];
  assert_int_equal(sl_dataset_name(ds, 3, name, sizeof name), SL_OK);
  assert_string_equal(name, "img3.png");
  expect_stored(ds, 4, "img/img4.jpg");
  sl_dataset_close(ds);
  /* The converter's 1..N as 0..N-1; no label stays -1. */
  const char *kv[] = {"dataset.label_offset", "-1", NULL};
  ds = open_with("tf.tfrecord", kv);
  check_samples(ds, F_TF, -1);
  sl_dataset_close(ds);
  /* An offset that takes a label below -1 is damage, named. */
  const char *neg[] = {"dataset.label_offset", "-3", NULL};
  assert_int_equal(try_open(&ds, "tf.tfrecord", neg), SL_EFORMAT);
  if (!strstr(sl_dataset_errmsg(ds), "record 0 at offset 0") ||
      !strstr(sl_dataset_errmsg(ds), "label 1"))
    fail_msg("%s", sl_dataset_errmsg(ds));
  sl_dataset_close(ds);
}

static void test_tfrecord_tfds_and_keys(void **state) {
  (void)state;
  sl_dataset *ds = open_fixture(F_TFDS);
  assert_string_equal(sl_dataset_entries(ds), "example");
  check_samples(ds, F_TFDS, 0);
  char name[64];
  assert_int_equal(sl_dataset_name(ds, 1, name, sizeof name), SL_OK);
  assert_string_equal(name, "img1.png");
  sl_dataset_close(ds);
  ds = open_fixture(F_CUSTOM);
  check_samples(ds, F_CUSTOM, 0);
  sl_dataset_close(ds);
  /* Without the keys: refused, naming the key looked for. */
  assert_int_equal(try_open(&ds, "custom.tfrecord", NULL), SL_EFORMAT);
  if (!strstr(sl_dataset_errmsg(ds), "no image feature 'image/encoded'") ||
      !strstr(sl_dataset_errmsg(ds), "dataset.image_key"))
    fail_msg("%s", sl_dataset_errmsg(ds));
  sl_dataset_close(ds);
  /* A key set to what the file lacks: no TFDS fallback. */
  const char *kv[] = {"dataset.image_key", "jpeg", NULL};
  assert_int_equal(try_open(&ds, "tfds.tfrecord-00000-of-00001", kv),
                   SL_EFORMAT);
  assert_non_null(strstr(sl_dataset_errmsg(ds), "no image feature 'jpeg'"));
  sl_dataset_close(ds);
  /* A label feature of another type is named. */
  const char *kl[] = {"dataset.label_key", "image/object/bbox/xmin", NULL};
  assert_int_equal(try_open(&ds, "tf.tfrecord", kl), SL_EFORMAT);
  assert_non_null(strstr(sl_dataset_errmsg(ds), "is a FloatList"));
  sl_dataset_close(ds);
}

/* ---- RecordIO -------------------------------------------------------------
 */

static void test_recordio(void **state) {
  (void)state;
  sl_dataset *ds = open_fixture(F_IM);
  assert_string_equal(sl_dataset_format(ds), "recordio");
  assert_string_equal(sl_dataset_entries(ds), "irheader");
  assert_int_equal(sl_dataset_target_width(ds), 0);
  check_samples(ds, F_IM, 0);
  expect_stored(ds, 1, "img/img1.png");
  sl_dataset_close(ds);
  const char *kv[] = {"dataset.label_offset", "10", NULL};
  ds = open_with("im.rec", kv);
  check_samples(ds, F_IM, 10);
  sl_dataset_close(ds);

  /* An .idx in another order than the file's: its order. */
  ds = open_with("reversed.rec", NULL);
  assert_int_equal(sl_dataset_count(ds), NIMG);
  for (uint64_t i = 0; i < NIMG; i++) {
    sl_sample_meta m;
    assert_int_equal(sl_dataset_info(ds, i, &m), SL_OK);
    assert_int_equal(m.label, NIMG - 1 - (int)i);
  }
  sl_dataset_close(ds);

  ds = open_fixture(F_INSIGHT);
  assert_int_equal(sl_dataset_skipped_entries(ds), 3);
  check_samples(ds, F_INSIGHT, 0);
  sl_dataset_close(ds);
}

/* Float labels as targets; records the writer split (inside the IRHeader,
 * and into an empty middle part) joined back, by sl_dataset_read too. */
static void test_recordio_multipart(void **state) {
  (void)state;
  sl_dataset *ds = open_fixture(F_MULTI);
  assert_int_equal(sl_dataset_target_width(ds), 2);
  check_samples(ds, F_MULTI, 0);
  for (uint64_t i = 0; i < NIMG; i++) {
    sl_sample_meta m;
    assert_int_equal(sl_dataset_info(ds, i, &m), SL_OK);
    assert_true(m.targets[0] == (float)i);
    assert_true(m.targets[1] == (float)i / 2);
  }
  expect_stored(ds, 1, "img/img1.png");
  expect_stored(ds, 2, "commented.jpg");
  expect_stored(ds, 3, "img/img3.png");
  sl_dataset_close(ds);
  /* Forced formats: the right one opens, the wrong one is named. */
  const char *rio[] = {"dataset.format", "recordio", NULL};
  ds = open_with("multi.rec", rio);
  sl_dataset_close(ds);
  const char *tfr[] = {"dataset.format", "tfrecord", NULL};
  assert_int_equal(try_open(&ds, "multi.rec", tfr), SL_EFORMAT);
  assert_non_null(strstr(sl_dataset_errmsg(ds), "not a TFRecord file"));
  sl_dataset_close(ds);
  assert_int_equal(try_open(&ds, "tf.tfrecord", rio), SL_EFORMAT);
  assert_non_null(strstr(sl_dataset_errmsg(ds), "not an MXNet RecordIO"));
  sl_dataset_close(ds);
  const char *lay[] = {"dataset.entries", "caffe", NULL};
  assert_int_equal(try_open(&ds, "multi.rec", lay), SL_ECONFIG);
  sl_dataset_close(ds);
}

/* ---- the loader -----------------------------------------------------------
 */

static void loader_run(fixture f, const char *workers, const char *io) {
  char p[700];
  path_in(p, sizeof p, file_of(f));
  char res[16];
  snprintf(res, sizeof res, "%d", S);
  const char *kv[] = {"dataset.path",
                      p,
                      "dataset.image_key",
                      f == F_CUSTOM ? "jpg" : "",
                      "dataset.label_key",
                      f == F_CUSTOM ? "cls" : "",
                      NULL};
  sl_config *cfg = sl_test_config_kv(kv);
  sl_test_set_native_batches(cfg, workers, "random", io, res);
  sl_loader *ld = sl_test_loader_open_or_skip(cfg, io, file_of(f));
  if (!ld) {
    sl_config_destroy(cfg);
    return;
  }
  sl_status st;
  assert_int_equal(sl_loader_start_epoch(ld, 0), SL_OK);
  sl_batch b;
  uint64_t seen = 0;
  bool hit[NIMG + 1] = {0};
  while ((st = sl_loader_next(ld, &b)) == SL_OK) {
    assert_int_equal(b.n, 1);
    assert_int_equal(b.channels, 3);
    assert_int_equal(b.width, S);
    uint64_t i = b.indices[0];
    assert_true(i < count_of(f));
    hit[i] = true;
    assert_int_equal(b.labels[0], label_of(f, i));
    int k = image_of(f, i);
    sl_test_expect_pixels(b.data, g_ref[k], (size_t)S * S * 3, g_lossy[k],
                          file_of(f), i);
    seen++;
    assert_int_equal(sl_batch_release(ld, &b, NULL), SL_OK);
  }
  if (st != SL_END)
    fail_msg("%s: %s", file_of(f), sl_loader_errmsg(ld));
  assert_int_equal(seen, count_of(f));
  for (uint64_t i = 0; i < count_of(f); i++)
    assert_true(hit[i]);
  sl_loader_close(ld);
  sl_config_destroy(cfg);
}

static void test_loader_batches(void **state) {
  (void)state;
  for (int f = F_TF; f <= F_INSIGHT; f++)
    for (int w = 1; w <= 2; w++)
      for (int q = 0; q < SL_TEST_IO_COUNT; q++)
        loader_run((fixture)f, w == 1 ? "1" : "2", sl_test_io_backends[q]);
}

/* ---- damage ---------------------------------------------------------------
 */

/* Each damaged file: SL_EFORMAT naming the file, the record and its
 * offset, with a reason; verify mode reports that record as a bad sample
 * and keeps the others (the framing's damage ends the file there). */
static void test_damaged(void **state) {
  (void)state;
  static const struct {
    const char *file, *why;
    uint64_t record; /* the bad one */
    uint64_t count;  /* samples in verify mode */
  } cases[] = {
      {"bad_datacrc.tfrecord", "data CRC mismatch", 2, NIMG + 1},
      {"bad_lencrc.tfrecord", "length CRC mismatch", 3, 4},
      {"truncated.tfrecord", "runs past the end of the file", NIMG, NIMG + 1},
      {"bad_length.tfrecord", "length 1099511627776 runs past the end", 4, 5},
      {"bad_proto.tfrecord", "Example features: length runs past the end", 1,
       NIMG + 1},
      {"bad_magic.rec", "magic ced7630a, not ced7230a", 2, 3},
      {"trunc.rec", "runs past the end of the file", NIMG - 1, NIMG},
      {"badidx.rec", "magic 00000000", 3, NIMG},
      {"badrec.rec", "IRHeader flag 1000", 1, NIMG},
      {"dupidx.rec", "offset listed twice in the index", 2, NIMG},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    char p[700], rec[64];
    path_in(p, sizeof p, cases[c].file);
    snprintf(rec, sizeof rec, "record %llu at offset ",
             (unsigned long long)cases[c].record);
    sl_dataset *ds;
    if (strcmp(cases[c].file, "bad_datacrc.tfrecord") == 0) {
      /* dataset.record_crc = length: opens, the damage unseen (the
       * flipped byte lies in the image's entropy-coded data) */
      const char *kv[] = {"dataset.record_crc", "length", NULL};
      ds = open_with(cases[c].file, kv);
      assert_int_equal(sl_dataset_count(ds), NIMG + 1);
      sl_dataset_close(ds);
    }
    const char *want[] = {p, rec, cases[c].why, NULL};
    sl_test_expect_open_refused(p, SL_EFORMAT, cases[c].file, want);
    sl_test_bad_seen b = {0};
    ds = sl_test_open_verify(p, cases[c].file, &b);
    if (strcmp(cases[c].file, "badrec.rec") == 0) {
      /* also record 4 (not an image) and 5 (label 2.5): the last seen */
      assert_int_equal(b.calls, 3);
      assert_int_equal(b.index, 5);
      assert_non_null(strstr(b.reason, "label 2.5 is not a class index"));
    } else if (strcmp(cases[c].file, "dupidx.rec") == 0) {
      assert_int_equal(b.calls, 2); /* both lines of the offset */
      assert_int_equal(b.index, 4);
      assert_non_null(strstr(b.reason, cases[c].why));
    } else {
      assert_int_equal(b.calls, 1);
      assert_int_equal(b.index, cases[c].record);
      assert_non_null(strstr(b.reason, rec));
      assert_non_null(strstr(b.reason, cases[c].why));
    }
    sl_test_expect_skipped(ds, cases[c].count, cases[c].record, 0);
    uint8_t px[S * S * 3];
    size_t len;
    assert_int_equal(sl_dataset_decode(ds, 0, px, sizeof px, &len), SL_OK);
    sl_dataset_close(ds);
  }
}

static void test_gzip_refused(void **state) {
  (void)state;
  sl_dataset *ds;
  char p[700];
  path_in(p, sizeof p, "gzip.tfrecord");
  assert_int_equal(sl_dataset_open_file(&ds, p), SL_EUNSUPPORTED);
  const char *msg = sl_dataset_errmsg(ds);
  if (!strstr(msg, p) || !strstr(msg, "gzip-compressed") ||
      !strstr(msg, "gunzip"))
    fail_msg("%s", msg);
  sl_dataset_close(ds);
}

/* ---- the command ----------------------------------------------------------
 */

static void test_cli(void **state) {
  (void)state;
  static char out[1 << 16];
  char args[2048];
  static const struct {
    const char *file, *want;
  } info[] = {{"tf.tfrecord", "format:      tfrecord, entries example"},
              {"tfds.tfrecord-00000-of-00001", "e.g. sample 0: img0.jpg"},
              {"im.rec", "format:      recordio, entries irheader"},
              {"multi.rec", "targets:     2 floats per sample"},
              {"insight.rec", "skipped:     3 records without image bytes"}};
  for (size_t c = 0; c < sizeof info / sizeof info[0]; c++)
    sl_test_expect_cli_info(g_dir, info[c].file, info[c].want);
  snprintf(args, sizeof args, "verify '%s/bad_datacrc.tfrecord'", g_dir);
  assert_int_equal(cli_run(args, out, sizeof out), 1);
  assert_non_null(strstr(out, "sample 2: record 2 at offset"));
  assert_non_null(strstr(out, "data CRC mismatch"));
  /* extract writes a multi-part record's image as the writer was given. */
  char dir[700];
  path_in(dir, sizeof dir, "ex");
  snprintf(args, sizeof args, "extract '%s/multi.rec' 2 --out '%s'", g_dir,
           dir);
  if (cli_run(args, out, sizeof out) != 0)
    fail_msg("extract:\n%s", out);
  size_t n1, n2;
  uint8_t *a = slurp("ex/2.jpg", &n1), *b = slurp("commented.jpg", &n2);
  assert_int_equal(n1, n2);
  assert_memory_equal(a, b, n1);
  free(a);
  free(b);
}

/* pack --from rewrites them in sluice's layout: same labels, targets and
 * pixels. */
static void test_pack_from(void **state) {
  (void)state;
  static char out[1 << 16];
  char args[2048];
  static const struct {
    fixture f;
    const char *set;
  } cases[] = {{F_TF, "--set dataset.label_offset=-1"},
               {F_MULTI, ""},
               {F_CUSTOM, "--set dataset.image_key=jpg "
                          "--set dataset.label_key=cls"}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    fixture f = cases[c].f;
    snprintf(args, sizeof args, "pack --from '%s/%s' '%s/packed%zu.lmdb' %s",
             g_dir, file_of(f), g_dir, c, cases[c].set);
    if (cli_run(args, out, sizeof out) != 0)
      fail_msg("%s:\n%s", args, out);
    char p[64];
    snprintf(p, sizeof p, "packed%zu.lmdb", c);
    sl_dataset *ds = open_with(p, NULL);
    assert_string_equal(sl_dataset_entries(ds), "sluice");
    check_samples(ds, f, f == F_TF ? -1 : 0);
    if (f == F_MULTI) {
      sl_sample_meta m;
      assert_int_equal(sl_dataset_info(ds, 3, &m), SL_OK);
      assert_int_equal(sl_dataset_target_width(ds), 2);
      assert_true(m.targets[1] == 1.5f);
    }
    sl_dataset_close(ds);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tfrecord_imagenet),
      cmocka_unit_test(test_tfrecord_tfds_and_keys),
      cmocka_unit_test(test_recordio),
      cmocka_unit_test(test_recordio_multipart),
      cmocka_unit_test(test_loader_batches),
      cmocka_unit_test(test_damaged),
      cmocka_unit_test(test_gzip_refused),
      cmocka_unit_test(test_cli),
      cmocka_unit_test(test_pack_from),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
