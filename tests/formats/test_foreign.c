/* LMDB files that other tools wrote, through the public API: Caffe Datums
 * (raw CHW BGR colour, MNIST-like gray in a directory LMDB, SSD
 * AnnotatedDatums, encoded JPEG/PNG, negative and int32-extreme labels,
 * float_data packed and not, unknown fields, fields out of order), LSUN-like
 * image values under hex keys with a label file, and a folder2lmdb-like set
 * with `__keys__`/`__len__` entries. The fixtures are written by py-lmdb
 * (foreign/make_foreign.py, run with /usr/bin/python3) from image files this
 * test encodes with TurboJPEG and libpng.
 *
 * Checks: the layout each is recognised as, labels, targets, codecs and
 * sizes; sl_dataset_decode and the loader's batches (crop none at the native
 * size, u8, 1 and 2 workers, each io backend) against a reference computed
 * here: raw planes and PNG bit-exact, JPEG within 1 of TurboJPEG's own
 * decode; damaged Datums and values are SL_EFORMAT naming the key (and
 * reported per sample in verify mode); and, through wrappers of liblmdb's
 * functions, that no LMDB call is made after open. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dlfcn.h>
#include <lmdb.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <webp/decode.h>
#include <webp/encode.h>

#include "sluice.h"
#include "tests/formats/test_images.h"
#include "tests/support/dataset_checks.h"
#include "tests/support/test_dir.h"
#include "tests/tools/cli_run.h"

#ifndef SLUICE_TEST_PYTHON
#define SLUICE_TEST_PYTHON "/usr/bin/python3"
#endif

enum { S = 32, M = 28, NIMG = 8, NRAW = 6, NMN = 5 };

static char g_dir[512];
static uint8_t g_ref[NIMG][S * S * 3]; /* RGB reference of image i */
static int g_lossy[NIMG];
static const int32_t k_raw_labels[NRAW] = {
    0, 5, -3, 2147483647, (-2147483647 - 1), 7};

static int pix(int i, int c, int y, int x) {
  return (i * 37 + c * 89 + y * 11 + x * 5 + (x * y) % 7) & 255;
}

static void path_in(char *buf, size_t cap, const char *name) {
  snprintf(buf, cap, "%s/%s", g_dir, name);
}

/* Image i: a texture, JPEG for even i < 6 (gray for i == 2), PNG for odd
 * i < 6 (gray for i == 3), lossy WebP for 6, lossless WebP with alpha for
 * 7. The reference is TurboJPEG's or libwebp's decode, or the PNG's
 * pixels. */
static void make_image(int i, const char *dir, FILE *list) {
  bool gray = i == 2 || i == 3, jpeg = i % 2 == 0 && i < 6, webp = i >= 6;
  int ch = gray ? 1 : 3;
  uint8_t src[S * S * 3];
  ti_texture(i, S, ch, src);
  char name[32], path[700];
  snprintf(name, sizeof name, "img%d.%s", i,
           webp   ? "webp"
           : jpeg ? "jpg"
                  : "png");
  snprintf(path, sizeof path, "%s/%s", dir, name);
  fprintf(list, "%s\n", name);
  if (webp) {
    uint8_t rgba[S * S * 4];
    for (int p = 0; p < S * S; p++) {
      memcpy(rgba + p * 4, src + p * 3, 3);
      rgba[p * 4 + 3] = (uint8_t)(p % 5 == 0 ? 128 : 255);
    }
    uint8_t *out = NULL;
    size_t len = i == 6 ? WebPEncodeRGB(src, S, S, S * 3, 80.0f, &out)
                        : WebPEncodeLosslessRGBA(rgba, S, S, S * 4, &out);
    assert_true(len > 0);
    assert_int_equal(ti_write(path, out, len), 0);
    uint8_t dec[S * S * 4];
    assert_non_null(WebPDecodeRGBAInto(out, len, dec, sizeof dec, S * 4));
    for (int p = 0; p < S * S; p++)
      memcpy(g_ref[i] + p * 3, dec + p * 4, 3);
    if (i == 7) /* lossless: the source's own colours */
      assert_memory_equal(g_ref[i], src, sizeof g_ref[i]);
    WebPFree(out);
    g_lossy[i] = i == 6;
    return;
  }
  if (jpeg)
    assert_int_equal(ti_jpeg_of(path, src, S, gray, i == 4 ? 95 : 85, g_ref[i]),
                     0);
  else
    assert_int_equal(ti_png_of(path, src, S, gray, g_ref[i]), 0);
  g_lossy[i] = jpeg;
}

static int setup(void **state) {
  (void)state;
  char img[600], cmd[2048];
  if (sl_test_make_dir(g_dir, sizeof g_dir, "foreign") != 0)
    return -1;
  path_in(img, sizeof img, "img");
  if (mkdir(img, 0755) != 0)
    return -1;
  char lp[700];
  snprintf(lp, sizeof lp, "%s/list.txt", img);
  FILE *list = fopen(lp, "w");
  if (!list)
    return -1;
  for (int i = 0; i < NIMG; i++)
    make_image(i, img, list);
  fclose(list);
  snprintf(cmd, sizeof cmd, "'%s' '%s'", g_dir, img);
  return sl_test_make_fixtures("test_foreign", SLUICE_TEST_PYTHON,
                               SLUICE_FOREIGN_PY, cmd, "python3-lmdb");
}

static int teardown(void **state) {
  (void)state;
  return sl_test_remove_dir(g_dir);
}

/* ---- references ---------------------------------------------------------- */

typedef enum fixture {
  F_RAW,
  F_RAW_RGB,
  F_MNIST,
  F_ENC,
  F_LSUN,
  F_FOLDER
} fixture;

/* Which image file sample i of an image fixture holds, from its label. */
static int image_of(fixture f, uint64_t i, int32_t label) {
  if (f == F_LSUN)
    return label - 10; /* make_foreign.py: label 10 + i */
  return (int)i;       /* keys in the files' order */
}

/* Sample i's RGB pixels at its native side (S, or M for MNIST). */
static void reference(fixture f, uint64_t i, int32_t label, uint8_t *rgb,
                      int *lossy) {
  *lossy = 0;
  int side = f == F_MNIST ? M : S;
  for (int y = 0; y < side; y++)
    for (int x = 0; x < side; x++) {
      uint8_t *o = rgb + ((size_t)y * side + x) * 3;
      if (f == F_MNIST) {
        o[0] = o[1] = o[2] = (uint8_t)pix((int)i, 0, y, x);
      } else if (f == F_RAW || f == F_RAW_RGB) {
        bool bgr = f == F_RAW;
        for (int c = 0; c < 3; c++)
          o[c] = (uint8_t)pix((int)i, bgr ? 2 - c : c, y, x);
      }
    }
  if (f == F_ENC || f == F_LSUN || f == F_FOLDER) {
    int k = image_of(f, i, label);
    assert_in_range(k, 0, NIMG - 1);
    memcpy(rgb, g_ref[k], sizeof g_ref[k]);
    *lossy = g_lossy[k];
  }
}

/* ---- opening ------------------------------------------------------------- */

static sl_dataset *open_with(const char *file, const char *const *kv) {
  return sl_test_open_kv(g_dir, file, kv);
}

static sl_dataset *open_fixture(fixture f) {
  static char labels[700];
  path_in(labels, sizeof labels, "lsun_labels.txt");
  const char *rgb[] = {"dataset.channel_order", "rgb", NULL};
  const char *lsun[] = {"dataset.label_file", labels, NULL};
  switch (f) {
  case F_RAW:
    return open_with("caffe_raw.mdb", NULL);
  case F_RAW_RGB:
    return open_with("caffe_raw.mdb", rgb);
  case F_MNIST:
    return open_with("mnist", NULL);
  case F_ENC:
    return open_with("caffe_enc.mdb", NULL);
  case F_LSUN:
    return open_with("lsun.mdb", lsun);
  default:
    return open_with("folder.mdb", NULL);
  }
}

/* Every sample's sl_dataset_decode against the reference. */
static void check_decode(sl_dataset *ds, fixture f, int side) {
  uint8_t want[S * S * 3];
  for (uint64_t i = 0; i < sl_dataset_count(ds); i++) {
    sl_sample_meta m;
    assert_int_equal(sl_dataset_info(ds, i, &m), SL_OK);
    assert_int_equal(m.width, side);
    assert_int_equal(m.height, side);
    int lossy;
    reference(f, i, m.label, want, &lossy);
    sl_test_expect_decode(ds, i, want, side, lossy, "decode");
  }
}

/* ---- tests --------------------------------------------------------------- */

static void test_caffe_raw(void **state) {
  (void)state;
  sl_dataset *ds = open_fixture(F_RAW);
  assert_string_equal(sl_dataset_entries(ds), "caffe");
  assert_string_equal(sl_dataset_format(ds), "lmdb");
  assert_int_equal(sl_dataset_count(ds), NRAW);
  assert_int_equal(sl_dataset_target_width(ds), 2);
  assert_int_equal(sl_dataset_class_count(ds), 0);
  for (uint64_t i = 0; i < NRAW; i++) {
    sl_sample_meta m;
    assert_int_equal(sl_dataset_info(ds, i, &m), SL_OK);
    assert_int_equal(m.label, k_raw_labels[i]);
    assert_int_equal(m.codec, SL_IMAGE_RAW_CHW_BGR);
    assert_int_equal(m.channels, 3);
    assert_int_equal(m.stored_bytes, 3 * S * S);
    assert_true(m.targets[0] == (float)i * 0.5f);
    assert_true(m.targets[1] == -(float)i);
  }
  check_decode(ds, F_RAW, S);
  /* Printable keys are the samples' names. */
  char name[64];
  assert_int_equal(sl_dataset_name(ds, 3, name, sizeof name), SL_OK);
  assert_string_equal(name, "00000003_train/img3.png");
  sl_dataset_close(ds);
  ds = open_fixture(F_RAW_RGB);
  sl_sample_meta m;
  assert_int_equal(sl_dataset_info(ds, 0, &m), SL_OK);
  assert_int_equal(m.codec, SL_IMAGE_RAW_CHW);
  check_decode(ds, F_RAW_RGB, S);
  sl_dataset_close(ds);
}

static void test_mnist_directory(void **state) {
  (void)state;
  sl_dataset *ds = open_fixture(F_MNIST);
  assert_string_equal(sl_dataset_entries(ds), "caffe");
  assert_int_equal(sl_dataset_count(ds), NMN);
  assert_int_equal(sl_dataset_annotated_count(ds), 2);
  assert_int_equal(sl_dataset_target_width(ds), 0);
  for (uint64_t i = 0; i < NMN; i++) {
    sl_sample_meta m;
    assert_int_equal(sl_dataset_info(ds, i, &m), SL_OK);
    assert_int_equal(m.label, (int32_t)(i % 10));
    assert_int_equal(m.channels, 1);
    assert_int_equal(m.stored_bytes, M * M);
  }
  check_decode(ds, F_MNIST, M);
  sl_dataset_close(ds);
}

static void test_caffe_encoded(void **state) {
  (void)state;
  sl_dataset *ds = open_fixture(F_ENC);
  assert_string_equal(sl_dataset_entries(ds), "caffe");
  assert_int_equal(sl_dataset_count(ds), NIMG);
  for (uint64_t i = 0; i < NIMG; i++) {
    sl_sample_meta m;
    assert_int_equal(sl_dataset_info(ds, i, &m), SL_OK);
    assert_int_equal(m.label, (int32_t)i);
    assert_int_equal(m.codec, i >= 6  ? SL_IMAGE_WEBP
                              : i % 2 ? SL_IMAGE_PNG
                                      : SL_IMAGE_JPEG);
    assert_int_equal(m.channels, i == 2 || i == 3 ? 1 : 3);
    /* The stored bytes are the image file itself. */
    uint8_t buf[16];
    size_t len;
    assert_int_equal(sl_dataset_read(ds, i, buf, sizeof buf, &len), SL_ETOOBIG);
    uint8_t *all = malloc(len);
    assert_int_equal(sl_dataset_read(ds, i, all, len, &len), SL_OK);
    if (i >= 6)
      assert_memory_equal(all + 8, "WEBP", 4);
    else if (i % 2)
      assert_true(all[0] == 0x89 && memcmp(all + len - 8, "IEND", 4) == 0);
    else
      assert_true(all[0] == 0xFF && all[len - 1] == 0xD9);
    free(all);
  }
  check_decode(ds, F_ENC, S);
  sl_dataset_close(ds);
}

static void test_lsun_and_folder(void **state) {
  (void)state;
  sl_dataset *ds = open_fixture(F_LSUN);
  assert_string_equal(sl_dataset_entries(ds), "images");
  assert_int_equal(sl_dataset_count(ds), NIMG);
  assert_int_equal(sl_dataset_target_width(ds), 1);
  bool seen[NIMG] = {0};
  for (uint64_t i = 0; i < NIMG; i++) {
    sl_sample_meta m;
    assert_int_equal(sl_dataset_info(ds, i, &m), SL_OK);
    int k = m.label - 10;
    assert_in_range(k, 0, NIMG - 1);
    assert_false(seen[k]);
    seen[k] = true;
    assert_true(m.targets[0] == (float)k / 4.0f);
  }
  check_decode(ds, F_LSUN, S);
  sl_dataset_close(ds);
  /* Without the label file: unlabelled. */
  char p[700];
  path_in(p, sizeof p, "lsun.mdb");
  assert_int_equal(sl_dataset_open_file(&ds, p), SL_OK);
  sl_sample_meta m;
  assert_int_equal(sl_dataset_info(ds, 0, &m), SL_OK);
  assert_int_equal(m.label, -1);
  assert_int_equal(sl_dataset_target_width(ds), 0);
  sl_dataset_close(ds);

  ds = open_fixture(F_FOLDER);
  assert_string_equal(sl_dataset_entries(ds), "images");
  assert_int_equal(sl_dataset_count(ds), NIMG);
  assert_int_equal(sl_dataset_skipped_entries(ds), 4);
  check_decode(ds, F_FOLDER, S);
  char name[8];
  assert_int_equal(sl_dataset_name(ds, 5, name, sizeof name), SL_OK);
  assert_string_equal(name, "5");
  sl_dataset_close(ds);
}

/* lsun_labels.txt rewritten by edit (its comment line dropped) as name,
 * then every sample of lsun.mdb labelled and targeted through it. */
static void check_label_file_variant(const char *name, bool bom, bool cr) {
  char in[700], out[700];
  path_in(in, sizeof in, "lsun_labels.txt");
  path_in(out, sizeof out, name);
  FILE *f = fopen(in, "rb"), *o = fopen(out, "wb");
  assert_non_null(f);
  assert_non_null(o);
  if (bom)
    fputs("\xEF\xBB\xBF", o);
  char line[512];
  while (fgets(line, sizeof line, f)) {
    if (line[0] == '#')
      continue;
    for (char *c = line; cr && *c; c++)
      if (*c == ' ')
        *c = '\r';
    fputs(line, o);
  }
  fclose(f);
  assert_int_equal(fclose(o), 0);
  const char *kv[] = {"dataset.label_file", out, NULL};
  sl_dataset *ds = open_with("lsun.mdb", kv);
  assert_int_equal(sl_dataset_target_width(ds), 1);
  for (uint64_t i = 0; i < NIMG; i++) {
    sl_sample_meta m;
    assert_int_equal(sl_dataset_info(ds, i, &m), SL_OK);
    if (m.label < 10 || m.label >= 10 + NIMG)
      fail_msg("%s: sample %" PRIu64 " has label %d", name, i, m.label);
    assert_true(m.targets[0] == (float)(m.label - 10) / 4.0f);
  }
  sl_dataset_close(ds);
}

/* Issue 25: a label file that starts with a UTF-8 byte-order mark (Windows
 * editors write one) labels its first key too (before: the key read with
 * the mark in front, matching nothing); one whose words are separated by
 * \r, a separator the parser splits on, is sized for its floats (before:
 * refused, as \r was not counted). */
static void test_label_file_bom_and_cr(void **state) {
  (void)state;
  check_label_file_variant("labels_bom.txt", true, false);
  check_label_file_variant("labels_cr.txt", false, true);
}

/* liblmdb calls counted by the wrappers below, and their count right after
 * loader_run's loader opened. */
static atomic_long g_mdb_calls;
static long g_after_open = -1;

/* The loader's batches, sample by sample, against the reference. */
static void loader_run(fixture f, const char *workers, const char *io) {
  static char labels[700];
  char p[700];
  path_in(labels, sizeof labels, "lsun_labels.txt");
  const char *file = f == F_MNIST    ? "mnist"
                     : f == F_ENC    ? "caffe_enc.mdb"
                     : f == F_LSUN   ? "lsun.mdb"
                     : f == F_FOLDER ? "folder.mdb"
                                     : "caffe_raw.mdb";
  path_in(p, sizeof p, file);
  int side = f == F_MNIST ? M : S;
  char res[16];
  snprintf(res, sizeof res, "%d", side);
  const char *kv[] = {"dataset.path",
                      p,
                      "dataset.channel_order",
                      f == F_RAW_RGB ? "rgb" : "bgr",
                      "dataset.label_file",
                      f == F_LSUN ? labels : "",
                      NULL};
  sl_config *cfg = sl_test_config_kv(kv);
  sl_test_set_native_batches(cfg, workers, "random", io, res);
  sl_loader *ld = sl_test_loader_open_or_skip(cfg, io, file);
  if (!ld) {
    sl_config_destroy(cfg);
    return;
  }
  g_after_open = atomic_load(&g_mdb_calls);
  assert_int_equal(sl_loader_start_epoch(ld, 0), SL_OK);
  sl_status st;
  sl_batch b;
  uint64_t seen = 0;
  uint8_t want[S * S * 3];
  while ((st = sl_loader_next(ld, &b)) == SL_OK) {
    assert_int_equal(b.n, 1);
    assert_int_equal(b.channels, 3);
    assert_int_equal(b.width, side);
    int lossy;
    reference(f, b.indices[0], b.labels[0], want, &lossy);
    sl_test_expect_pixels(b.data, want, (size_t)side * side * 3, lossy, file,
                          b.indices[0]);
    if (f == F_RAW || f == F_RAW_RGB)
      assert_int_equal(b.labels[0], k_raw_labels[b.indices[0]]);
    seen++;
    assert_int_equal(sl_batch_release(ld, &b, NULL), SL_OK);
  }
  if (st != SL_END)
    fail_msg("%s", sl_loader_errmsg(ld));
  assert_int_equal(seen, f == F_MNIST                   ? NMN
                         : f == F_RAW || f == F_RAW_RGB ? NRAW
                                                        : NIMG);
  sl_loader_close(ld);
  sl_config_destroy(cfg);
}

static void test_loader_batches(void **state) {
  (void)state;
  for (int f = F_RAW; f <= F_FOLDER; f++)
    for (int w = 1; w <= 2; w++)
      for (int q = 0; q < SL_TEST_IO_COUNT; q++)
        loader_run((fixture)f, w == 1 ? "1" : "2", sl_test_io_backends[q]);
}

/* Each damaged value: SL_EFORMAT naming its key, with a reason; verify
 * mode reports it as sample 1 and opens the other two. */
static void test_damaged(void **state) {
  (void)state;
  static const struct {
    const char *name, *why;
  } cases[] = {
      {"trunc", "past the end"},
      {"varint", "varint runs past the end"},
      {"length", "past the end"},
      {"rawsize", "raw Datum holds 100 data bytes"},
      {"wiretype", "unknown wire type"},
      {"empty", "zero bytes"},
      {"floats", "3 float targets where the first sample has 2"},
      {"absurd", "70000"},
      {"notimage", "not an image"},
      {"webp", "WebP"},
      {"encnoimage", "not an image"},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    char file[64], p[700], key[64];
    snprintf(file, sizeof file, "bad_%s.mdb", cases[c].name);
    snprintf(key, sizeof key, "00000001_bad_%s", cases[c].name);
    path_in(p, sizeof p, file);
    const char *want[] = {key, cases[c].why, NULL};
    sl_test_expect_one_bad_sample(p, file, want, 1, 2, 3);
  }
}

/* An LMDB of pickled or msgpack values is read as such (test_pickle has
 * the details) or, when it holds what sluice does not read, named for what
 * it is, not reported as a damaged Caffe Datum ("unknown wire type"). */
static void test_other_serialisations_named(void **state) {
  (void)state;
  static const struct {
    const char *file, *kind;
    sl_status st;
  } cases[] = {
      {"pickled.mdb", "pickle opcode EMPTY_DICT (0x7d) at offset", SL_EFORMAT},
      {"msgpack_map.mdb", "the values are msgpack maps, not Caffe Datums",
       SL_EUNSUPPORTED},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    char p[700];
    path_in(p, sizeof p, cases[c].file);
    sl_dataset *ds;
    assert_int_equal(sl_dataset_open_file(&ds, p), cases[c].st);
    const char *msg = sl_dataset_errmsg(ds);
    if (!strstr(msg, cases[c].kind) ||
        !strstr(msg, "sample 0 (key '00000000')") || strstr(msg, "wire type"))
      fail_msg("%s: message '%s' lacks '%s'", cases[c].file, msg,
               cases[c].kind);
    sl_dataset_close(ds);
  }
  char p[700];
  path_in(p, sizeof p, "msgpack.mdb");
  sl_dataset *ds;
  if (sl_dataset_open_file(&ds, p) != SL_OK)
    fail_msg("msgpack.mdb: %s", sl_dataset_errmsg(ds));
  assert_string_equal(sl_dataset_entries(ds), "msgpack");
  assert_int_equal(sl_dataset_count(ds), 3);
  for (uint64_t i = 0; i < 3; i++) {
    sl_sample_meta m;
    assert_int_equal(sl_dataset_info(ds, i, &m), SL_OK);
    assert_int_equal(m.label, (int32_t)i);
  }
  sl_dataset_close(ds);
}

/* An image folder whose first class folder is empty, and one with no class
 * folder at all, read with dataset.format = folder: the empty class keeps
 * its label, the folder without classes is refused. Both sorted empty
 * lists at a NULL array before (UBSan's findings in fuzz_folder). */
static void test_folder_empty_classes(void **state) {
  (void)state;
  char p[700], f[760];
  const char *const kv[] = {"dataset.format", "folder", NULL};
  path_in(p, sizeof p, "empty_first");
  assert_int_equal(mkdir(p, 0755), 0);
  snprintf(f, sizeof f, "%s/a", p);
  assert_int_equal(mkdir(f, 0755), 0);
  snprintf(f, sizeof f, "%s/b", p);
  assert_int_equal(mkdir(f, 0755), 0);
  snprintf(f, sizeof f, "%s/b/x.jpg", p);
  assert_int_equal(ti_jpeg(f, 8, 8, 0, 90), 0);
  sl_dataset *ds = sl_test_open_kv(NULL, p, kv);
  assert_int_equal(sl_dataset_count(ds), 1);
  assert_int_equal(sl_dataset_class_count(ds), 2);
  sl_sample_meta m;
  assert_int_equal(sl_dataset_info(ds, 0, &m), SL_OK);
  assert_int_equal(m.label, 1);
  sl_dataset_close(ds);
  path_in(p, sizeof p, "no_classes");
  assert_int_equal(mkdir(p, 0755), 0);
  assert_int_equal(sl_test_try_open_kv(&ds, NULL, p, kv), SL_EIO);
  if (!strstr(sl_dataset_errmsg(ds), "no class subfolders"))
    fail_msg("no classes: %s", sl_dataset_errmsg(ds));
  sl_dataset_close(ds);
}

/* A folder or an image given as the dataset is named for what it is, with
 * the command that makes a dataset of it (it said ".../data.mdb: No such
 * file or directory", and "HDF5 files made by `sluice pack`", stale: h5py
 * arrays are read too). */
static void test_folder_and_image_named(void **state) {
  (void)state;
  char p[700];
  path_in(p, sizeof p, "img");
  sl_dataset *ds;
  assert_int_equal(sl_dataset_open_file(&ds, p), SL_EIO);
  const char *msg = sl_dataset_errmsg(ds);
  if (!strstr(msg, "img: a folder, not a dataset (no data.mdb") ||
      !strstr(msg, "`sluice pack ") || strstr(msg, "No such file"))
    fail_msg("folder: %s", msg);
  sl_dataset_close(ds);
  path_in(p, sizeof p, "img/img0.jpg");
  assert_int_equal(sl_dataset_open_file(&ds, p), SL_EFORMAT);
  msg = sl_dataset_errmsg(ds);
  if (!strstr(msg, "img0.jpg: a JPEG image, not a dataset") ||
      !strstr(msg, "`sluice pack FOLDER OUT.lmdb`"))
    fail_msg("image: %s", msg);
  sl_dataset_close(ds);
  path_in(p, sizeof p, "img/list.txt");
  assert_int_equal(sl_dataset_open_file(&ds, p), SL_EFORMAT);
  msg = sl_dataset_errmsg(ds);
  if (!strstr(msg, "not an LMDB, HDF5, TFRecord or RecordIO file") ||
      !strstr(msg, "h5py-style arrays") || strstr(msg, "made by `sluice pack`"))
    fail_msg("text: %s", msg);
  sl_dataset_close(ds);
}

/* dataset.entries forces a reading: a Caffe file read as images or as
 * sluice's own fails with a message that says why. */
static void test_forced_layout(void **state) {
  (void)state;
  const char *cases[][2] = {{"images", "00000000_train/img0.png"},
                            {"sluice", "sluice.meta"}};
  for (int c = 0; c < 2; c++) {
    const char *layout[] = {"dataset.entries", cases[c][0], NULL};
    sl_dataset *ds;
    assert_int_equal(sl_test_try_open_kv(&ds, g_dir, "caffe_raw.mdb", layout),
                     SL_EFORMAT);
    if (!strstr(sl_dataset_errmsg(ds), cases[c][1]))
      fail_msg("layout %s: '%s'", cases[c][0], sl_dataset_errmsg(ds));
    sl_dataset_close(ds);
  }
  /* Forced caffe on the right file works. */
  const char *kv[] = {"dataset.entries", "caffe", NULL};
  sl_dataset *ds = open_with("caffe_raw.mdb", kv);
  assert_int_equal(sl_dataset_count(ds), NRAW);
  sl_dataset_close(ds);
}

/* dataset.lmdb_db reads a named sub-database; without it, or with a name
 * the file lacks, the open fails saying so. */
static void test_named_subdb(void **state) {
  (void)state;
  const char *train[] = {"dataset.lmdb_db", "train", NULL};
  const char *val[] = {"dataset.lmdb_db", "val", NULL};
  sl_dataset *ds = open_with("named.mdb", train);
  assert_string_equal(sl_dataset_entries(ds), "caffe");
  assert_int_equal(sl_dataset_count(ds), NRAW);
  check_decode(ds, F_RAW, S);
  sl_dataset_close(ds);
  ds = open_with("named.mdb", val);
  assert_int_equal(sl_dataset_count(ds), NIMG);
  check_decode(ds, F_ENC, S);
  sl_dataset_close(ds);
  char p[700];
  path_in(p, sizeof p, "named.mdb");
  assert_int_equal(sl_dataset_open_file(&ds, p), SL_EFORMAT);
  assert_non_null(strstr(sl_dataset_errmsg(ds), "dataset.lmdb_db"));
  sl_dataset_close(ds);
  const char *missing[] = {"dataset.lmdb_db", "test", NULL};
  assert_int_equal(sl_test_try_open_kv(&ds, g_dir, "named.mdb", missing),
                   SL_EFORMAT);
  assert_non_null(strstr(sl_dataset_errmsg(ds), "no LMDB sub-database named "
                                                "'test'"));
  sl_dataset_close(ds);
}

/* ---- no liblmdb call after open -------------------------------------------
 * This executable exports these (ENABLE_EXPORTS), so libsluice's calls to
 * liblmdb reach them first; each counts and forwards to liblmdb. */
#define MDB_WRAP(ret, name, params, args)                                      \
  __attribute__((visibility("default"))) ret name params {                     \
    static ret(*real) params;                                                  \
    if (!real)                                                                 \
      *(void **)&real = dlsym(RTLD_NEXT, #name);                               \
    atomic_fetch_add(&g_mdb_calls, 1);                                         \
    return real args;                                                          \
  }
#define MDB_WRAP_VOID(name, params, args)                                      \
  __attribute__((visibility("default"))) void name params {                    \
    static void(*real) params;                                                 \
    if (!real)                                                                 \
      *(void **)&real = dlsym(RTLD_NEXT, #name);                               \
    atomic_fetch_add(&g_mdb_calls, 1);                                         \
    real args;                                                                 \
  }
MDB_WRAP(int, mdb_env_create, (MDB_env * *e), (e))
MDB_WRAP(int, mdb_env_open,
         (MDB_env * e, const char *p, unsigned int f, mdb_mode_t m),
         (e, p, f, m))
MDB_WRAP(int, mdb_txn_begin,
         (MDB_env * e, MDB_txn *parent, unsigned int f, MDB_txn **t),
         (e, parent, f, t))
MDB_WRAP(int, mdb_dbi_open,
         (MDB_txn * t, const char *name, unsigned int f, MDB_dbi *d),
         (t, name, f, d))
MDB_WRAP(int, mdb_cursor_open, (MDB_txn * t, MDB_dbi d, MDB_cursor **c),
         (t, d, c))
MDB_WRAP(int, mdb_cursor_get,
         (MDB_cursor * c, MDB_val *k, MDB_val *v, MDB_cursor_op op),
         (c, k, v, op))
MDB_WRAP(int, mdb_get, (MDB_txn * t, MDB_dbi d, MDB_val *k, MDB_val *v),
         (t, d, k, v))
MDB_WRAP_VOID(mdb_cursor_close, (MDB_cursor * c), (c))
MDB_WRAP_VOID(mdb_txn_abort, (MDB_txn * t), (t))
MDB_WRAP_VOID(mdb_env_close, (MDB_env * e), (e))

/* Opening calls liblmdb (the counter moves: the wrappers are reached);
 * reading, decoding and a loader's whole epoch on every io backend do
 * not. */
static void test_no_lmdb_after_open(void **state) {
  (void)state;
  long before = atomic_load(&g_mdb_calls);
  sl_dataset *ds = open_fixture(F_ENC);
  long opened = atomic_load(&g_mdb_calls);
  assert_true(opened > before);
  check_decode(ds, F_ENC, S);
  uint8_t buf[1 << 14];
  size_t len;
  for (uint64_t i = 0; i < sl_dataset_count(ds); i++)
    assert_int_equal(sl_dataset_read(ds, i, buf, sizeof buf, &len), SL_OK);
  assert_int_equal(atomic_load(&g_mdb_calls), opened);
  sl_dataset_close(ds);
  assert_int_equal(atomic_load(&g_mdb_calls), opened);
  for (int q = 0; q < SL_TEST_IO_COUNT; q++) {
    long n0 = atomic_load(&g_mdb_calls);
    g_after_open = -1;
    loader_run(F_RAW, "2", sl_test_io_backends[q]);
    if (g_after_open >= 0) { /* the loader opened: none after that */
      assert_true(g_after_open > n0);
      assert_int_equal(atomic_load(&g_mdb_calls), g_after_open);
    }
  }
}

/* sluice info names the layout; verify --decode passes on good files and
 * names the key on a bad one; extract writes a Caffe raw Datum as a PPM
 * of RGB pixels. */
static void test_cli(void **state) {
  (void)state;
  static char out[1 << 16];
  char args[2048];
  static const struct {
    const char *file, *want;
  } info[] = {{"caffe_raw.mdb", "entries caffe"},
              {"mnist", "2 SSD AnnotatedDatums"},
              {"lsun.mdb", "webp 2"},
              {"folder.mdb", "skipped:     4 entries"},
              {"caffe_enc.mdb", "e.g. sample 0: 00000000_img0.jpg"}};
  for (size_t c = 0; c < sizeof info / sizeof info[0]; c++)
    sl_test_expect_cli_info(g_dir, info[c].file, info[c].want);
  snprintf(args, sizeof args, "verify '%s/bad_rawsize.mdb'", g_dir);
  assert_int_equal(cli_run(args, out, sizeof out), 1);
  assert_non_null(strstr(out, "00000001_bad_rawsize"));
  snprintf(args, sizeof args, "extract '%s/caffe_raw.mdb' 2 --out '%s'", g_dir,
           g_dir);
  if (cli_run(args, out, sizeof out) != 0)
    fail_msg("extract:\n%s", out);
  char p[700];
  path_in(p, sizeof p, "2.ppm");
  FILE *f = fopen(p, "rb");
  assert_non_null(f);
  static uint8_t ppm[64 + S * S * 3];
  size_t n = fread(ppm, 1, sizeof ppm, f);
  fclose(f);
  const char head[] = "P6\n32 32\n255\n";
  assert_int_equal(n, strlen(head) + S * S * 3);
  assert_memory_equal(ppm, head, strlen(head));
  uint8_t want[S * S * 3];
  int lossy;
  reference(F_RAW, 2, 0, want, &lossy);
  assert_memory_equal(ppm + strlen(head), want, sizeof want);
}

/* sluice pack --from rewrites a foreign file in sluice's layout: the same
 * labels, targets and pixels (JPEGs rewritten losslessly, raw planes and
 * WebP stored as pixels); a Caffe label below -1 is refused, naming it. */
static void test_pack_from(void **state) {
  (void)state;
  static char out[1 << 16];
  char args[2048], p[700];
  static const struct {
    const char *file, *set;
    fixture f;
    int side;
  } cases[] = {{"caffe_enc.mdb", "", F_ENC, S},
               {"mnist", "", F_MNIST, M},
               {"lsun.mdb", "dataset.label_file", F_LSUN, S}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    char set[800] = "";
    if (cases[c].set[0])
      snprintf(set, sizeof set, "--set %s='%s/lsun_labels.txt'", cases[c].set,
               g_dir);
    snprintf(args, sizeof args, "pack --from '%s/%s' '%s/packed%zu.lmdb' %s",
             g_dir, cases[c].file, g_dir, c, set);
    if (cli_run(args, out, sizeof out) != 0)
      fail_msg("%s:\n%s", args, out);
    snprintf(p, sizeof p, "packed%zu.lmdb", c);
    sl_dataset *ds = open_with(p, NULL);
    assert_string_equal(sl_dataset_entries(ds), "sluice");
    assert_int_equal(sl_dataset_count(ds), cases[c].f == F_MNIST ? NMN : NIMG);
    sl_sample_meta m;
    assert_int_equal(sl_dataset_info(ds, 1, &m), SL_OK);
    assert_int_equal(m.label, cases[c].f == F_LSUN ? m.label : 1);
    if (cases[c].f == F_LSUN) {
      assert_int_equal(sl_dataset_target_width(ds), 1);
      assert_true(m.targets[0] == (float)(m.label - 10) / 4.0f);
    }
    check_decode(ds, cases[c].f, cases[c].side);
    if (cases[c].f == F_ENC) { /* the keys became the samples' names */
      char name[64];
      assert_int_equal(sl_dataset_name(ds, 2, name, sizeof name), SL_OK);
      assert_string_equal(name, "00000002_img2.jpg");
    }
    sl_dataset_close(ds);
  }
  snprintf(args, sizeof args, "pack --from '%s/caffe_raw.mdb' '%s/no.lmdb'",
           g_dir, g_dir);
  assert_int_equal(cli_run(args, out, sizeof out), 1);
  assert_non_null(strstr(out, "sample 2 has label -3"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_caffe_raw),
      cmocka_unit_test(test_mnist_directory),
      cmocka_unit_test(test_caffe_encoded),
      cmocka_unit_test(test_lsun_and_folder),
      cmocka_unit_test(test_label_file_bom_and_cr),
      cmocka_unit_test(test_loader_batches),
      cmocka_unit_test(test_damaged),
      cmocka_unit_test(test_other_serialisations_named),
      cmocka_unit_test(test_folder_and_image_named),
      cmocka_unit_test(test_folder_empty_classes),
      cmocka_unit_test(test_forced_layout),
      cmocka_unit_test(test_named_subdb),
      cmocka_unit_test(test_cli),
      cmocka_unit_test(test_no_lmdb_after_open),
      cmocka_unit_test(test_pack_from),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
