/* LMDB files of pickled and msgpack (image bytes, label) values, as
 * folder2lmdb.py (Efficient-PyTorch and forks) and tensorpack's
 * LMDBSerializer write them, through the public API. The fixtures are
 * written by py-lmdb with Python's pickle, msgpack and msgpack_numpy
 * (foreign/make_pickle.py, run with /usr/bin/python3) around image files
 * this test encodes (JPEG colour and gray, PNG, lossless WebP).
 *
 * Checks: the layout each is read as (pickle protocols 2 (Python 2's
 * bytes), 3, 4, 5 and the default, tuples and lists, bytearrays; msgpack
 * bin and msgpack_numpy arrays), labels, skipped metadata keys, pixels of
 * sl_dataset_decode and of the loader's batches on every io backend
 * against the images decoded directly; pickles that would load code
 * (__reduce__ to os.system, a numpy array, a numpy int label) and Python
 * 3's protocol-2 bytes refused naming the opcode; damaged values refused
 * naming key and offset, and reported per sample in verify mode; the
 * label file overriding stored labels; dataset.entries; `sluice info`,
 * `verify` and `pack --from`. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <png.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <turbojpeg.h>
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

enum { S = 32, NIMG = 4 };

static char g_dir[512];
static uint8_t g_ref[NIMG][S * S * 3]; /* RGB of image i, decoded here */
static int g_lossy[NIMG];

static void path_in(char *buf, size_t cap, const char *name) {
  snprintf(buf, cap, "%s/%s", g_dir, name);
}

/* Image i: JPEG colour (0), PNG (1), gray JPEG (2), lossless WebP (3); its
 * reference is TurboJPEG's, libpng's or libwebp's decode of the file. */
static int make_image(int i, const char *dir, FILE *list) {
  static const char *const k_names[NIMG] = {"img0.jpg", "img1.png", "img2.jpg",
                                            "img3.webp"};
  char path[700];
  snprintf(path, sizeof path, "%s/%s", dir, k_names[i]);
  fprintf(list, "%s\n", k_names[i]);
  if (i == 3) {
    uint8_t rgb[S * S * 3], *out = NULL;
    for (int p = 0; p < S * S; p++)
      for (int c = 0; c < 3; c++)
        rgb[p * 3 + c] = (uint8_t)(p * (c + 3) + i * 17);
    size_t len = WebPEncodeLosslessRGB(rgb, S, S, S * 3, &out);
    if (len == 0 || ti_write(path, out, len) != 0)
      return -1;
    WebPFree(out);
    memcpy(g_ref[i], rgb, sizeof rgb);
    return 0;
  }
  int rc = i == 1 ? ti_png(path, S, S, 0, 0) : ti_jpeg(path, S, S, i == 2, 90);
  size_t len;
  uint8_t *file = rc == 0 ? ti_read(path, &len) : NULL;
  if (!file)
    return -1;
  if (i == 1) {
    png_image img;
    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    rc = png_image_begin_read_from_memory(&img, file, len) ? 0 : -1;
    img.format = PNG_FORMAT_RGB;
    if (rc == 0 && !png_image_finish_read(&img, NULL, g_ref[i], 0, NULL))
      rc = -1;
  } else {
    tjhandle td = tjInitDecompress();
    rc = tjDecompress2(td, file, (unsigned long)len, g_ref[i], S, 0, S,
                       TJPF_RGB, 0);
    tjDestroy(td);
    g_lossy[i] = 1;
  }
  free(file);
  return rc;
}

static int setup(void **state) {
  (void)state;
  char img[600], cmd[2048], lp[700];
  if (sl_test_make_dir(g_dir, sizeof g_dir, "pickle") != 0)
    return -1;
  path_in(img, sizeof img, "img");
  if (mkdir(img, 0755) != 0)
    return -1;
  snprintf(lp, sizeof lp, "%s/list.txt", img);
  FILE *list = fopen(lp, "w");
  if (!list)
    return -1;
  for (int i = 0; i < NIMG; i++)
    if (make_image(i, img, list) != 0) {
      fclose(list);
      return -1;
    }
  fclose(list);
  snprintf(cmd, sizeof cmd, "'%s' '%s'", g_dir, img);
  return sl_test_make_fixtures(
      "test_pickle", SLUICE_TEST_PYTHON, SLUICE_PICKLE_PY, cmd,
      "python3-lmdb, python3-msgpack, python3-numpy and msgpack-numpy "
      "(scripts/test-requirements.txt)");
}

static int teardown(void **state) {
  (void)state;
  return sl_test_remove_dir(g_dir);
}

static sl_status open_kv(sl_dataset **ds, const char *file,
                         const char *const *kv) {
  return sl_test_try_open_kv(ds, g_dir, file, kv);
}

/* The readable fixtures: each holds image i with label 10 + i. */
static const struct {
  const char *file, *layout;
  uint64_t skipped;
} k_good[] = {
    {"pk_default.mdb", "pickle", 2}, {"pk3.mdb", "pickle", 2},
    {"pk4.mdb", "pickle", 2},        {"pk5.mdb", "pickle", 2},
    {"pk_list.mdb", "pickle", 2},    {"pk2_py2.mdb", "pickle", 2},
    {"tp_bin.mdb", "msgpack", 1},    {"tp_numpy.mdb", "msgpack", 1},
};

/* Layout, count, skipped keys, labels, names and every sample's decode. */
static void test_read(void **state) {
  (void)state;
  for (size_t c = 0; c < sizeof k_good / sizeof k_good[0]; c++) {
    sl_dataset *ds;
    if (open_kv(&ds, k_good[c].file, NULL) != SL_OK)
      fail_msg("%s: %s", k_good[c].file, sl_dataset_errmsg(ds));
    assert_string_equal(sl_dataset_entries(ds), k_good[c].layout);
    assert_int_equal(sl_dataset_count(ds), NIMG);
    assert_int_equal(sl_dataset_skipped_entries(ds), k_good[c].skipped);
    for (uint64_t i = 0; i < NIMG; i++) {
      sl_sample_meta m;
      assert_int_equal(sl_dataset_info(ds, i, &m), SL_OK);
      assert_int_equal(m.label, 10 + (int32_t)i);
      assert_int_equal(m.width, S);
      assert_int_equal(m.height, S);
      assert_int_equal(m.channels, i == 2 ? 1 : 3);
      sl_test_expect_decode(ds, i, g_ref[i], S, g_lossy[i], k_good[c].file);
      char name[64];
      assert_int_equal(sl_dataset_name(ds, i, name, sizeof name), SL_OK);
      char key[16];
      snprintf(key, sizeof key,
               strcmp(k_good[c].layout, "msgpack") == 0 ? "%08d" : "%d",
               (int)i);
      assert_string_equal(name, key);
    }
    sl_dataset_close(ds);
  }
}

/* The loader's batches, every io backend, against the reference. */
static void loader_run(const char *file, const char *io) {
  char p[700];
  path_in(p, sizeof p, file);
  const char *kv[] = {"dataset.path", p, NULL};
  sl_config *cfg = sl_test_config_kv(kv);
  sl_test_set_native_batches(cfg, "2", "random", io, "32");
  sl_loader *ld = sl_test_loader_open_or_skip(cfg, io, file);
  if (!ld) {
    sl_config_destroy(cfg);
    return;
  }
  sl_status st;
  assert_int_equal(sl_loader_start_epoch(ld, 0), SL_OK);
  sl_batch b;
  uint64_t seen = 0;
  while ((st = sl_loader_next(ld, &b)) == SL_OK) {
    assert_int_equal(b.n, 1);
    assert_int_equal(b.width, S);
    assert_int_equal(b.channels, 3);
    uint64_t i = b.indices[0];
    assert_true(i < NIMG);
    assert_int_equal(b.labels[0], 10 + (int32_t)i);
    sl_test_expect_pixels(b.data, g_ref[i], S * S * 3, g_lossy[i], file, i);
    seen++;
    assert_int_equal(sl_batch_release(ld, &b, NULL), SL_OK);
  }
  if (st != SL_END)
    fail_msg("%s: %s", file, sl_loader_errmsg(ld));
  assert_int_equal(seen, NIMG);
  sl_loader_close(ld);
  sl_config_destroy(cfg);
}

static void test_loader(void **state) {
  (void)state;
  const char *files[] = {"pk_default.mdb", "pk5.mdb", "tp_bin.mdb",
                         "tp_numpy.mdb"};
  for (size_t f = 0; f < sizeof files / sizeof files[0]; f++)
    for (int q = 0; q < SL_TEST_IO_COUNT; q++)
      loader_run(files[f], sl_test_io_backends[q]);
}

/* File bad_NAME.mdb / evil_NAME.mdb: sample 1 (key 00000001_bad_NAME) is
 * SL_EFORMAT with each of the wanted phrases; verify mode reports it alone
 * and opens the other two. */
static void expect_refused(const char *file, const char *name,
                           const char *const *want) {
  char p[700], key[64];
  path_in(p, sizeof p, file);
  snprintf(key, sizeof key, "key '00000001_bad_%s'", name);
  const char *phrases[8] = {key, "sample 1"};
  size_t n = 2;
  for (; *want; want++) {
    assert_true(n + 1 < sizeof phrases / sizeof phrases[0]);
    phrases[n++] = *want;
  }
  phrases[n] = NULL;
  sl_test_expect_one_bad_sample(p, file, phrases, 1, 2, 3);
}

/* The payloads pickle.dumps makes for code: refused naming the opcode and
 * what it would load; nothing is run (the payload would echo). */
static void test_code_refused(void **state) {
  (void)state;
  const char *reduce2[] = {"pickle opcode GLOBAL (0x63) at offset 2",
                           "'posix.system'", "never runs code", NULL};
  const char *reduce4[] = {"pickle opcode STACK_GLOBAL (0x93) at offset",
                           "'posix.system'", NULL};
  const char *numpy[] = {"STACK_GLOBAL", "'numpy.", "_reconstruct'", NULL};
  const char *label[] = {"STACK_GLOBAL", "'numpy", NULL};
  expect_refused("evil_reduce2.mdb", "reduce2", reduce2);
  expect_refused("evil_reduce4.mdb", "reduce4", reduce4);
  expect_refused("evil_numpy.mdb", "numpy", numpy);
  expect_refused("evil_label.mdb", "label", label);
  /* Python 3's protocol-2 bytes: _codecs.encode, a call; every sample. */
  sl_dataset *ds;
  assert_int_equal(open_kv(&ds, "pk2_py3.mdb", NULL), SL_EFORMAT);
  const char *msg = sl_dataset_errmsg(ds);
  if (!strstr(msg, "sample 0 (key '0')") ||
      !strstr(msg, "GLOBAL (0x63) at offset 2") ||
      !strstr(msg, "_codecs.encode") || !strstr(msg, "protocol 3 or more"))
    fail_msg("pk2_py3: %s", msg);
  sl_dataset_close(ds);
}

static void test_damaged(void **state) {
  (void)state;
  static const struct {
    const char *name, *why;
  } cases[] = {
      {"trunc", "FRAME (0x95) at offset 2 of the value: a frame past the end"},
      {"nostop", "a frame past the end of the value (truncated?)"},
      {"huge", "BINBYTES (0x42) at offset 2 of the value: 2147483647 bytes "
               "from offset 7, past the end of the value (58 bytes)"},
      {"opcode", "pickle opcode ? (0xfe) at offset 2 of the value: not a "
                 "pickle opcode"},
      {"trailing", "2 bytes after the pickle's STOP"},
      {"strlabel", "item 1 is a str, not an int label or None"},
      {"notimage", "not an image file"},
      {"biglabel", "label 1099511627776 outside int32"},
      {"mtrunc", "not one well-formed msgpack object"},
      {"mint32", "numpy array of type '<i4' and rank 1"},
      {"m2d", "numpy array of type '|u1' and rank 2"},
      {"mfloat", "item 1 (offset"},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    char file[64];
    snprintf(file, sizeof file, "bad_%s.mdb", cases[c].name);
    const char *want[] = {cases[c].why, NULL};
    expect_refused(file, cases[c].name, want);
  }
}

/* dataset.label_file overrides the stored labels; dataset.entries names
 * the reading (a wrong one fails at the first value, saying why). */
static void test_label_file_and_layout(void **state) {
  (void)state;
  char labels[700];
  path_in(labels, sizeof labels, "labels.txt");
  const char *lf[] = {"dataset.label_file", labels, NULL};
  sl_dataset *ds;
  if (open_kv(&ds, "pk4.mdb", lf) != SL_OK)
    fail_msg("%s", sl_dataset_errmsg(ds));
  for (uint64_t i = 0; i < NIMG; i++) {
    sl_sample_meta m;
    assert_int_equal(sl_dataset_info(ds, i, &m), SL_OK);
    assert_int_equal(m.label, 100 + (int32_t)i);
  }
  sl_dataset_close(ds);
  const char *mp[] = {"dataset.entries", "msgpack", NULL};
  const char *pk[] = {"dataset.entries", "pickle", NULL};
  if (open_kv(&ds, "tp_numpy.mdb", mp) != SL_OK)
    fail_msg("%s", sl_dataset_errmsg(ds));
  assert_string_equal(sl_dataset_entries(ds), "msgpack");
  sl_dataset_close(ds);
  assert_int_equal(open_kv(&ds, "tp_bin.mdb", pk), SL_EFORMAT);
  assert_non_null(strstr(sl_dataset_errmsg(ds), "not a pickle"));
  sl_dataset_close(ds);
  assert_int_equal(open_kv(&ds, "pk4.mdb", mp), SL_EFORMAT);
  assert_non_null(strstr(sl_dataset_errmsg(ds), "msgpack"));
  sl_dataset_close(ds);
}

/* sluice info names the layout and the skipped keys; verify --decode
 * passes; verify names the bad key of a damaged file. */
/* More than ten samples (issue 40): sample i is __keys__[i], the key
 * str(i), as folder2lmdb's own Dataset numbers them, not the i-th key in
 * LMDB's byte order ("10" before "2"); the loader's batches and `sluice
 * info` say the same. tensorpack's list is read too. */
static void test_keys_order(void **state) {
  (void)state;
  enum { MANY = 12 };
  sl_dataset *ds;
  if (open_kv(&ds, "pk_order.mdb", NULL) != SL_OK)
    fail_msg("pk_order.mdb: %s", sl_dataset_errmsg(ds));
  assert_int_equal(sl_dataset_count(ds), MANY);
  for (uint64_t i = 0; i < MANY; i++) {
    sl_sample_meta m;
    char name[64], key[16];
    assert_int_equal(sl_dataset_info(ds, i, &m), SL_OK);
    assert_int_equal(m.label, 10 + (int32_t)i);
    assert_int_equal(sl_dataset_name(ds, i, name, sizeof name), SL_OK);
    snprintf(key, sizeof key, "%d", (int)i);
    assert_string_equal(name, key);
    sl_test_expect_decode(ds, i, g_ref[i % NIMG], S, g_lossy[i % NIMG],
                          "pk_order.mdb");
  }
  if (!strstr(sl_dataset_sample_order(ds), "order of its __keys__ list"))
    fail_msg("%s", sl_dataset_sample_order(ds));
  sl_dataset_close(ds);
  if (open_kv(&ds, "tp_bin.mdb", NULL) != SL_OK)
    fail_msg("tp_bin.mdb: %s", sl_dataset_errmsg(ds));
  if (!strstr(sl_dataset_sample_order(ds), "order of its __keys__ list"))
    fail_msg("tp_bin.mdb: %s", sl_dataset_sample_order(ds));
  sl_dataset_close(ds);

  char p[700];
  path_in(p, sizeof p, "pk_order.mdb");
  const char *kv[] = {"dataset.path", p, NULL};
  sl_config *cfg = sl_test_config_kv(kv);
  sl_test_set_native_batches(cfg, "2", "random", "pread", "32");
  sl_loader *ld = sl_test_loader_open_or_skip(cfg, "pread", "pk_order.mdb");
  if (ld) {
    assert_int_equal(sl_loader_start_epoch(ld, 0), SL_OK);
    sl_batch b;
    uint64_t seen = 0;
    while (sl_loader_next(ld, &b) == SL_OK) {
      assert_int_equal(b.labels[0], 10 + (int32_t)b.indices[0]);
      seen++;
      assert_int_equal(sl_batch_release(ld, &b, NULL), SL_OK);
    }
    assert_int_equal(seen, MANY);
    sl_loader_close(ld);
  }
  sl_config_destroy(cfg);
  sl_test_expect_cli_info(g_dir, "pk_order.mdb",
                          "order:       samples in the order of its __keys__");
}

static void test_cli(void **state) {
  (void)state;
  static char out[1 << 16];
  char args[2048];
  static const struct {
    const char *file, *want;
  } info[] = {{"pk4.mdb", "entries pickle"},
              {"pk4.mdb", "skipped:     2 entries"},
              {"tp_numpy.mdb", "entries msgpack"}};
  for (size_t c = 0; c < sizeof info / sizeof info[0]; c++)
    sl_test_expect_cli_info(g_dir, info[c].file, info[c].want);
  snprintf(args, sizeof args, "verify '%s/evil_reduce4.mdb'", g_dir);
  assert_int_equal(cli_run(args, out, sizeof out), 1);
  if (!strstr(out, "00000001_bad_reduce4") || !strstr(out, "STACK_GLOBAL"))
    fail_msg("verify evil_reduce4:\n%s", out);
  /* pack --from: sluice's layout, the same labels and names. */
  snprintf(args, sizeof args, "pack --from '%s/pk5.mdb' '%s/packed.lmdb'",
           g_dir, g_dir);
  if (cli_run(args, out, sizeof out) != 0)
    fail_msg("pack --from:\n%s", out);
  sl_dataset *ds;
  if (open_kv(&ds, "packed.lmdb", NULL) != SL_OK)
    fail_msg("packed: %s", sl_dataset_errmsg(ds));
  assert_string_equal(sl_dataset_entries(ds), "sluice");
  assert_int_equal(sl_dataset_count(ds), NIMG);
  for (uint64_t i = 0; i < NIMG; i++) {
    sl_sample_meta m;
    char name[64], key[16];
    assert_int_equal(sl_dataset_info(ds, i, &m), SL_OK);
    assert_int_equal(m.label, 10 + (int32_t)i);
    assert_int_equal(sl_dataset_name(ds, i, name, sizeof name), SL_OK);
    snprintf(key, sizeof key, "%d", (int)i);
    assert_string_equal(name, key);
  }
  sl_dataset_close(ds);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_read),
      cmocka_unit_test(test_loader),
      cmocka_unit_test(test_code_refused),
      cmocka_unit_test(test_damaged),
      cmocka_unit_test(test_label_file_and_layout),
      cmocka_unit_test(test_keys_order),
      cmocka_unit_test(test_cli),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
