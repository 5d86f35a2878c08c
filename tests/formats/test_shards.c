/* TFRecord and RecordIO shards read in place as one dataset, on fixtures
 * made by the real writers (foreign/make_shards.py with /usr/bin/python3:
 * the `tfrecord` package's TFRecordWriter, as TensorFlow's ImageNet
 * converter and TFDS name files and features, and mxrecordio.py, mxnet's
 * RecordIO layout byte for byte): brace patterns, list files and TFDS's
 * -of-N naming (one shard or the prefix given; a missing shard named);
 * pixels and labels against what the writer stored through the dataset
 * API and the loader on every io backend, in shard order, quasi_random
 * blocks being whole shards; an empty shard; a multi-part RecordIO record
 * inside a later shard (joined back), .idx files beside some shards and
 * not others; a damaged record in shard k naming that shard,
 * the record and its offset in it. And an image folder read through a
 * list file (PATH LABEL lines; im2rec's .lst, written by a copy of its
 * write_list), images PIL wrote: labels, targets, names, every io
 * backend, bad lines named. `sluice info`, `verify`, `extract` and
 * `pack --from` on all. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "../support/dataset_checks.h"
#include "../support/test_dir.h"
#include "../tools/cli_run.h"
#include "formats/core/source.h"
#include "sluice.h"

#ifndef SLUICE_TEST_PYTHON
#define SLUICE_TEST_PYTHON "/usr/bin/python3"
#endif

static char g_dir[512];

static void path_in(char *out, size_t cap, const char *name) {
  snprintf(out, cap, "%s/%s", g_dir, name);
}

static int setup(void **state) {
  (void)state;
  if (sl_test_make_dir(g_dir, sizeof g_dir, "shards") != 0)
    return -1;
  char arg[600];
  snprintf(arg, sizeof arg, "'%s'", g_dir);
  return sl_test_make_fixtures("test_shards", SLUICE_TEST_PYTHON,
                               SLUICE_SHARDS_PY, arg,
                               "python3-numpy, python3-pil, "
                               "python3-protobuf, python3-crc32c and "
                               "`tfrecord` (scripts/test-requirements.txt)");
}

static int teardown(void **state) {
  (void)state;
  return sl_test_remove_dir(g_dir);
}

/* ---- references ---------------------------------------------------------- */

/* Opens path (under the fixtures) through the dataset API and checks
 * every sample against refname's references, in order. */
static void check_dataset(const char *name, const char *refname,
                          const char *format, const char *const *kv) {
  char path[700];
  path_in(path, sizeof path, name);
  size_t n;
  sl_test_ref *r = sl_test_load_refs(g_dir, refname, &n);
  sl_dataset *ds = sl_test_open_kv(NULL, path, kv);
  sl_test_expect_refs(ds, format, r, n, path);
  for (uint64_t i = 0; i < n; i++) {
    sl_sample_meta m;
    assert_int_equal(sl_dataset_info(ds, i, &m), SL_OK);
    assert_int_equal(m.codec, r[i].lossy ? SL_IMAGE_JPEG : SL_IMAGE_PNG);
  }
  sl_dataset_close(ds);
  free(r);
}

/* The shards' first samples as the source reports them. */
static void expect_file_first(const char *name, const uint64_t *first,
                              size_t nfiles) {
  char p[700];
  path_in(p, sizeof p, name);
  sl_source *src;
  sl_err err;
  if (sl_source_open(&src, p, SL_FORMAT_AUTO, SL_SOURCE_MMAP, &err) != SL_OK)
    fail_msg("%s", err.msg);
  assert_int_equal(sl_source_fd(src), -1);
  assert_int_equal(sl_source_file_count(src), nfiles);
  for (size_t k = 0; k < nfiles; k++)
    assert_int_equal(sl_source_file_first(src, k), first[k]);
  /* mapped: every shard at its base; a read points into the map */
  for (uint64_t i = 0; i < sl_source_count(src); i++) {
    const uint8_t *d;
    size_t len;
    assert_int_equal(sl_source_read(src, i, NULL, 0, &d, &len, &err), SL_OK);
    assert_true(len == sl_source_info(src, i)->length);
  }
  sl_source_close(src);
}

/* The loader's batches (crop none, 16x16 u8 HWC) against the references,
 * with loader.io = io; with quasi_random (a block per shard, a window of
 * one) each shard's samples come together. */
static void check_loader(const char *name, const char *refname, const char *io,
                         const char *order, const uint64_t *first,
                         size_t nfiles) {
  char path[700];
  path_in(path, sizeof path, name);
  size_t n;
  sl_test_ref *r = sl_test_load_refs(g_dir, refname, &n);
  const char *kv[] = {"dataset.path", path, "loader.quasi_window", "1", NULL};
  sl_config *cfg = sl_test_config_kv(kv);
  sl_test_set_native_batches(cfg, "2", order, io, "16");
  sl_loader *ld;
  sl_status st = sl_loader_open(&ld, cfg);
  if (st != SL_OK)
    fail_msg("%s (io %s): %s", path, io, sl_loader_errmsg(ld));
  assert_int_equal(sl_loader_start_epoch(ld, 0), SL_OK);
  sl_batch b;
  uint64_t seen = 0, *order_seen = calloc(n, sizeof *order_seen);
  assert_non_null(order_seen);
  while ((st = sl_loader_next(ld, &b)) == SL_OK) {
    assert_int_equal(b.n, 1);
    uint64_t i = b.indices[0];
    assert_true(i < n);
    sl_test_expect_ref_pixels(b.data, &r[i], path, i);
    assert_int_equal(b.labels[0], r[i].label);
    assert_true(seen < n);
    order_seen[seen++] = i;
    assert_int_equal(sl_batch_release(ld, &b, NULL), SL_OK);
  }
  if (st != SL_END)
    fail_msg("%s (io %s): %s", path, io, sl_loader_errmsg(ld));
  assert_int_equal(seen, n);
  if (strcmp(order, "quasi_random") == 0) {
    /* the shard of each sample seen changes only when a shard is done */
    size_t cur = (size_t)-1, left = 0;
    for (uint64_t q = 0; q < n; q++) {
      size_t k = 0;
      while (k + 1 < nfiles && first[k + 1] <= order_seen[q])
        k++;
      if (k != cur) {
        if (left != 0)
          fail_msg("%s: shard %zu left before its end", path, cur);
        cur = k;
        left = (size_t)((k + 1 < nfiles ? first[k + 1] : n) - first[k]);
      }
      left--;
    }
  }
  sl_loader_close(ld);
  sl_config_destroy(cfg);
  free(order_seen);
  free(r);
}

static void check_every_io(const char *name, const char *refname,
                           const uint64_t *first, size_t nfiles) {
  for (int q = 0; q < SL_TEST_IO_COUNT; q++) {
    const char *io = sl_test_io_backends[q];
    check_loader(name, refname, io, "random", first, nfiles);
    check_loader(name, refname, io, "quasi_random", first, nfiles);
  }
}

/* A damaged set (NAME.bad: shard, record, offset, sample): the open fails
 * naming the shard, the record and its offset in that shard; verify mode
 * reports the sample and opens the rest. */
static void check_damaged(const char *name, const char *badname,
                          const char *why) {
  char p[700], bp[700], shard[300], want[1024];
  unsigned long long rec, off, sample;
  snprintf(bp, sizeof bp, "%s/%s.bad", g_dir, badname);
  FILE *f = fopen(bp, "r");
  assert_non_null(f);
  assert_int_equal(
      fscanf(f, "%299s %llu %llu %llu", shard, &rec, &off, &sample), 4);
  fclose(f);
  path_in(p, sizeof p, name);
  snprintf(want, sizeof want, "%s/%s: record %llu at offset %llu", g_dir, shard,
           rec, off);
  sl_dataset *ds;
  assert_int_equal(sl_dataset_open_file(&ds, p), SL_EFORMAT);
  const char *msg = sl_dataset_errmsg(ds);
  /* the framing's damage is found counting, the rest appending: both
   * name the shard, then the record and its offset in it */
  const char *rec_at = strstr(want, ": record ") + 2;
  const char *in_msg = strstr(msg, shard);
  if (!in_msg || !strstr(in_msg, rec_at) || !strstr(msg, why))
    fail_msg("%s: '%s' lacks '%s' or '%s'", name, msg, want, why);
  sl_dataset_close(ds);
  sl_test_bad_seen b = {0};
  ds = sl_test_open_verify(p, name, &b);
  assert_int_equal(b.calls, 1);
  assert_int_equal(b.index, sample);
  if (!strstr(b.reason, want) || !strstr(b.reason, why))
    fail_msg("%s verify: '%s' lacks '%s'", name, b.reason, want);
  uint64_t count = sl_dataset_count(ds);
  sl_test_expect_skipped(ds, count, sample,
                         sample + 1 < count ? sample + 1 : 0);
  sl_dataset_close(ds);
}

/* ---- TFRecord ------------------------------------------------------------ */

static const uint64_t k_tf_first[] = {0, 2, 5, 5};
static const uint64_t k_tfds_first[] = {0, 3, 5};

static void test_tf_pattern(void **state) {
  (void)state;
  check_dataset("tf/train-{00000..00003}.tfrecord", "tf", "tfrecord", NULL);
  const char *kv[] = {"dataset.format", "tfrecord", NULL};
  check_dataset("tf/train-{00000..00003}.tfrecord", "tf", "tfrecord", kv);
  check_dataset("tf/list.txt", "tf", "tfrecord", NULL);
  expect_file_first("tf/train-{00000..00003}.tfrecord", k_tf_first, 4);
  /* names come from the records, in whichever shard */
  char p[700], name[64];
  path_in(p, sizeof p, "tf/list.txt");
  sl_dataset *ds;
  assert_int_equal(sl_dataset_open_file(&ds, p), SL_OK);
  assert_int_equal(sl_dataset_name(ds, 6, name, sizeof name), SL_OK);
  assert_string_equal(name, "s06.jpg");
  /* its size is the shards' bytes, not the offset space padding them */
  uint64_t bytes = 0;
  for (int k = 0; k < 4; k++) {
    char sp[64], full[700];
    struct stat sb;
    snprintf(sp, sizeof sp, "tf/train-%05d.tfrecord", k);
    path_in(full, sizeof full, sp);
    assert_int_equal(stat(full, &sb), 0);
    bytes += (uint64_t)sb.st_size;
  }
  assert_int_equal(sl_dataset_file_count(ds), 4);
  assert_int_equal(sl_dataset_file_size(ds), bytes);
  sl_dataset_close(ds);
  /* the converter's 1-based labels shifted, across shards */
  const char *off[] = {"dataset.label_offset", "-1", NULL};
  path_in(p, sizeof p, "tf/train-{00000..00003}.tfrecord");
  assert_int_equal(sl_test_try_open_kv(&ds, NULL, p, off), SL_OK);
  sl_sample_meta m;
  assert_int_equal(sl_dataset_info(ds, 5, &m), SL_OK);
  assert_int_equal(m.label, (5 * 3) % 7);
  sl_dataset_close(ds);
  check_every_io("tf/train-{00000..00003}.tfrecord", "tf", k_tf_first, 4);
}

static void test_tfds(void **state) {
  (void)state;
  /* the prefix, or any one shard, names all three */
  check_dataset("tfds/mnist-train.tfrecord", "tfds", "tfrecord", NULL);
  check_dataset("tfds/mnist-train.tfrecord-00002-of-00003", "tfds", "tfrecord",
                NULL);
  expect_file_first("tfds/mnist-train.tfrecord-00000-of-00003", k_tfds_first,
                    3);
  check_every_io("tfds/mnist-train.tfrecord", "tfds", k_tfds_first, 3);
  /* a missing shard is named, whichever is given */
  const char *given[] = {"tfdsgap/mnist-train.tfrecord",
                         "tfdsgap/mnist-train.tfrecord-00002-of-00003"};
  for (int g = 0; g < 2; g++) {
    char p[700];
    path_in(p, sizeof p, given[g]);
    sl_dataset *ds;
    assert_int_equal(sl_dataset_open_file(&ds, p), SL_EIO);
    const char *msg = sl_dataset_errmsg(ds);
    if (!strstr(msg, "shard 1 of 3 is missing") ||
        !strstr(msg, "mnist-train.tfrecord-00001-of-00003"))
      fail_msg("%s: %s", given[g], msg);
    sl_dataset_close(ds);
  }
}

static void test_tf_damaged(void **state) {
  (void)state;
  check_damaged("tfbad/train-{00000..00003}.tfrecord", "tfbad",
                "data CRC mismatch");
  /* gzip-compressed shards are refused as such */
  char gz[700];
  path_in(gz, sizeof gz, "tfgz/train-{00000..00001}.tfrecord");
  sl_dataset *gds;
  assert_int_equal(sl_dataset_open_file(&gds, gz), SL_EUNSUPPORTED);
  if (!strstr(sl_dataset_errmsg(gds), "gzip-compressed") ||
      !strstr(sl_dataset_errmsg(gds), "train-00000.tfrecord"))
    fail_msg("%s", sl_dataset_errmsg(gds));
  sl_dataset_close(gds);
  /* a missing shard of a pattern names itself */
  char p[700];
  path_in(p, sizeof p, "tf/train-{00000..00004}.tfrecord");
  sl_dataset *ds;
  assert_int_equal(sl_dataset_open_file(&ds, p), SL_EIO);
  assert_non_null(strstr(sl_dataset_errmsg(ds), "train-00004.tfrecord"));
  sl_dataset_close(ds);
  /* shards of another kind forced as TFRecord: the shard is named */
  const char *kv[] = {"dataset.format", "tfrecord", NULL};
  path_in(p, sizeof p, "rio/part-{0..2}.rec");
  assert_int_equal(sl_test_try_open_kv(&ds, NULL, p, kv), SL_EFORMAT);
  assert_non_null(strstr(sl_dataset_errmsg(ds), "part-0.rec"));
  sl_dataset_close(ds);
  /* options for other formats are refused as for one file */
  const char *lay[] = {"dataset.entries", "caffe", NULL};
  path_in(p, sizeof p, "tf/list.txt");
  assert_int_equal(sl_test_try_open_kv(&ds, NULL, p, lay), SL_ECONFIG);
  sl_dataset_close(ds);
}

/* ---- RecordIO ------------------------------------------------------------ */

static const uint64_t k_rio_first[] = {0, 3, 5};

static void test_rio(void **state) {
  (void)state;
  /* part-0 and part-2 with their .idx, part-1 scanned */
  check_dataset("rio/part-{0..2}.rec", "rio", "recordio", NULL);
  check_dataset("rio/list.txt", "rio", "recordio", NULL);
  const char *kv[] = {"dataset.format", "recordio", NULL};
  check_dataset("rio/part-{0..2}.rec", "rio", "recordio", kv);
  expect_file_first("rio/part-{0..2}.rec", k_rio_first, 3);
  /* sample 4, part-1's record 1, was split by the writer: joined back */
  char p[700];
  path_in(p, sizeof p, "commented.jpg");
  FILE *f = fopen(p, "rb");
  assert_non_null(f);
  uint8_t want[8192], got[8192];
  size_t n = fread(want, 1, sizeof want, f), len = 0;
  fclose(f);
  assert_true(n > 0 && n < sizeof want);
  path_in(p, sizeof p, "rio/part-{0..2}.rec");
  sl_dataset *ds;
  assert_int_equal(sl_dataset_open_file(&ds, p), SL_OK);
  if (sl_dataset_read(ds, 4, got, sizeof got, &len) != SL_OK)
    fail_msg("%s", sl_dataset_errmsg(ds));
  assert_int_equal(len, n);
  assert_memory_equal(got, want, n);
  sl_dataset_close(ds);
  check_every_io("rio/part-{0..2}.rec", "rio", k_rio_first, 3);
  /* a label_key is TFRecord's and WebDataset's */
  const char *lk[] = {"dataset.label_key", "cls", NULL};
  assert_int_equal(sl_test_try_open_kv(&ds, NULL, p, lk), SL_ECONFIG);
  sl_dataset_close(ds);
}

static void test_rio_damaged(void **state) {
  (void)state;
  check_damaged("riobad/part-{0..2}.rec", "riobad",
                "magic ced7630a, not ced7230a");
}

/* ---- image lists --------------------------------------------------------- */

static void test_lists(void **state) {
  (void)state;
  check_dataset("lists/train.txt", "list", "folder", NULL);
  check_dataset("lists/train.lst", "list", "folder", NULL);
  const char *kv[] = {"dataset.format", "folder", NULL};
  check_dataset("lists/train.txt", "list", "folder", kv);
  check_dataset("lists/multi.lst", "list", "folder", NULL);
  char p[1400], name[700], want[700];
  path_in(p, sizeof p, "lists/multi.lst");
  sl_dataset *ds;
  assert_int_equal(sl_dataset_open_file(&ds, p), SL_OK);
  assert_int_equal(sl_dataset_target_width(ds), 2);
  assert_int_equal(sl_dataset_class_count(ds), 0);
  for (uint64_t i = 0; i < sl_dataset_count(ds); i++) {
    sl_sample_meta m;
    assert_int_equal(sl_dataset_info(ds, i, &m), SL_OK);
    assert_true(m.targets[0] == (float)m.label);
    assert_true(m.targets[1] == (float)m.label / 4.0f);
  }
  sl_dataset_close(ds);
  /* a sample's name is its path as listed: relative, or absolute */
  path_in(p, sizeof p, "lists/train.txt");
  assert_int_equal(sl_dataset_open_file(&ds, p), SL_OK);
  assert_int_equal(sl_dataset_target_width(ds), 0);
  assert_int_equal(sl_dataset_name(ds, 1, name, sizeof name), SL_OK);
  assert_string_equal(name, "img/b c/1.png");
  assert_int_equal(sl_dataset_name(ds, 3, name, sizeof name), SL_OK);
  snprintf(want, sizeof want, "%s/lists/img/b c/3.png", g_dir);
  assert_string_equal(name, want);
  sl_dataset_close(ds);
  for (int q = 0; q < SL_TEST_IO_COUNT; q++)
    check_loader("lists/train.lst", "list", sl_test_io_backends[q], "random",
                 NULL, 0);
  /* a bad line fails the open naming the list and the line */
  static const char *const bad[] = {"badlabel.txt", "missing.txt",
                                    "notimage.txt"};
  for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
    char lp[1200], line[64];
    snprintf(lp, sizeof lp, "%s/%s.line", g_dir, bad[b]);
    FILE *f = fopen(lp, "r");
    assert_non_null(f);
    int n = 0;
    assert_int_equal(fscanf(f, "%d", &n), 1);
    fclose(f);
    snprintf(line, sizeof line, "line %d", n);
    char rel[64];
    snprintf(rel, sizeof rel, "lists/%s", bad[b]);
    path_in(p, sizeof p, rel);
    sl_status st = sl_test_try_open_kv(&ds, NULL, p, kv);
    assert_true(st == SL_EFORMAT || st == SL_EIO);
    const char *msg = sl_dataset_errmsg(ds);
    if (!strstr(msg, p) || !strstr(msg, line))
      fail_msg("%s: '%s' names no '%s'", bad[b], msg, line);
    sl_dataset_close(ds);
  }
}

/* ---- the command line ---------------------------------------------------- */

static void test_cli(void **state) {
  (void)state;
  static char out[1 << 16];
  char args[2048];
  static const struct {
    const char *path, *want;
  } info[] = {
      {"tf/train-{00000..00003}.tfrecord", "format:      tfrecord"},
      {"tfds/mnist-train.tfrecord", "samples:     7"},
      {"rio/list.txt", "format:      recordio"},
      {"lists/train.lst", "an image list"},
      {"lists/multi.lst", "targets:     2 floats per sample"},
  };
  for (size_t c = 0; c < sizeof info / sizeof info[0]; c++)
    sl_test_expect_cli_info(g_dir, info[c].path, info[c].want);
  snprintf(args, sizeof args, "verify '%s/tfbad/train-{00000..00003}.tfrecord'",
           g_dir);
  assert_int_equal(cli_run(args, out, sizeof out), 1);
  if (!strstr(out, "sample 3: ") || !strstr(out, "train-00001.tfrecord: "
                                                 "record 1 at offset"))
    fail_msg("%s:\n%s", args, out);
  /* extract: sample 6 (the last shard's last record) as the writer gave */
  snprintf(args, sizeof args,
           "extract '%s/tf/train-{00000..00003}.tfrecord' 6 --out '%s/ex'",
           g_dir, g_dir);
  if (cli_run(args, out, sizeof out) != 0)
    fail_msg("%s:\n%s", args, out);
  char p[700];
  path_in(p, sizeof p, "ex/6.jpg");
  struct stat sb;
  if (stat(p, &sb) != 0)
    fail_msg("extract wrote no %s:\n%s", p, out);
  /* pack --from: the shards (and a list) rewritten in sluice's layout,
   * labels as the writer stored them */
  static const struct {
    const char *from, *ref;
  } pack[] = {{"tfds/mnist-train.tfrecord", "tfds"},
              {"rio/part-{0..2}.rec", "rio"},
              {"lists/train.lst", "list"}};
  for (size_t c = 0; c < sizeof pack / sizeof pack[0]; c++) {
    snprintf(args, sizeof args, "pack --from '%s/%s' '%s/packed%zu.lmdb'",
             g_dir, pack[c].from, g_dir, c);
    if (cli_run(args, out, sizeof out) != 0)
      fail_msg("%s:\n%s", args, out);
    char name[64];
    snprintf(name, sizeof name, "packed%zu.lmdb", c);
    size_t n;
    sl_test_ref *r = sl_test_load_refs(g_dir, pack[c].ref, &n);
    path_in(p, sizeof p, name);
    sl_dataset *ds;
    assert_int_equal(sl_dataset_open_file(&ds, p), SL_OK);
    assert_int_equal(sl_dataset_count(ds), n);
    for (uint64_t i = 0; i < n; i++) {
      sl_sample_meta m;
      assert_int_equal(sl_dataset_info(ds, i, &m), SL_OK);
      assert_int_equal(m.label, r[i].label);
    }
    sl_dataset_close(ds);
    free(r);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tf_pattern),  cmocka_unit_test(test_tfds),
      cmocka_unit_test(test_tf_damaged),  cmocka_unit_test(test_rio),
      cmocka_unit_test(test_rio_damaged), cmocka_unit_test(test_lists),
      cmocka_unit_test(test_cli),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
