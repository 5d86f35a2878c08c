/* HDF5 files h5py wrote (layout "array"), through the public API: NHWC and
 * NCHW colour arrays, gray (N,H,W), the course-style train_set_x/y, a
 * 512-byte userblock with PCam-like (N,1,1,1) labels, one-hot targets, and
 * a file whose arrays are named by dataset.images / dataset.targets;
 * chunked unfiltered arrays (one sample a chunk, four a chunk with a partial
 * edge chunk, chunks after a userblock, a two-level v1 B-tree, a paged fixed
 * array, a single chunk, extensible arrays of 3 and 4500 chunks); filtered
 * chunks (gzip+shuffle,
 * lzf with incompressible chunks stored raw, gzip+fletcher32, 500 samples a
 * chunk, a chunk written raw with filter mask 1; Blosc as PyTables writes
 * it, with blosclz, lz4, zlib and zstd, byte- and bit-shuffle, its own
 * chunk shape and NCHW) and chunks never written
 * (fill value 17 under gzip, 0 unfiltered in a B-tree and a fixed array);
 * images that span chunks (rows cut unfiltered, h5py's auto-chunking under
 * gzip with the channel axis split, gzip+shuffle partial on every axis,
 * NCHW lzf, gray, gzip+fletcher32 in a fixed array, an extensible array,
 * chunks never written in a partly written row and in whole rows);
 * a vlen uint8 dataset of PNG and JPEG files after a userblock; the same
 * files as fixed-size rows ((N, L) uint8, (N,) opaque) padded, with their
 * lengths (lengths, sizes, or named by dataset.lengths). The
 * fixtures and what numpy reads from them are written by h5py
 * (foreign/make_h5.py, run with /usr/bin/python3).
 *
 * Checks: layout, count, sizes, labels and targets against numpy's; every
 * sample's sl_dataset_decode and the loader's batches (crop none at the
 * native size, u8 NHWC, 1 and 2 workers, io mmap, pread and uring) byte for
 * byte against numpy's pixels (JPEG within 3 of PIL's decode), NCHW also read
 * as BGR, with the loader's chunk decompressions counted; that no HDF5 call
 * is made after open (wrappers of libhdf5's entry points sluice calls); that
 * damaged or unsupported inputs (float pixels, rank 2, zero-size, an
 * unsupported filter, a row of chunks spread over the file, a v2 B-tree
 * of more
 * than 4096 chunks, damaged B-tree and fixed array nodes, a fixed-size row
 * of length 0 or longer than its row, rows without lengths, a vlen element
 * that is no image, a heap object longer than its collection, 4 channels,
 * unknown axes, mismatched labels, a cut file, an ambiguous choice) are
 * SL_EFORMAT naming the dataset; that damaged compressed bytes (gzip
 * garbage, a fletcher32 mismatch, Blosc garbage) fail that sample's read naming
 * the file, sample, dataset and chunk; and `sluice info`, `verify --decode` and
 * `pack --from` on such files. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dlfcn.h>
#include <errno.h>
#include <hdf5.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sluice.h"
#include "tests/support/dataset_checks.h"
#include "tests/support/test_dir.h"
#include "tests/tools/cli_run.h"

#ifndef SLUICE_TEST_PYTHON
#define SLUICE_TEST_PYTHON "/usr/bin/python3"
#endif

static char g_dir[512];
static atomic_long g_h5_calls;

typedef struct fixture {
  const char *name;
  uint32_t n, h, w, ch; /* ch: channels as stored (1 or 3) */
  uint32_t k;           /* targets per sample */
  int lossy;            /* largest difference from numpy's (JPEG) */
  const char *kv[7];    /* extra options, NULL-terminated pairs */
  uint32_t unfilters;   /* chunk decompressions in an epoch (one per chunk
                           whose filters are undone, with the chunk cache) */
} fixture;

static const fixture k_fix[] = {
    {"nhwc", 6, 20, 20, 3, 0, 0, {NULL}, 0},
    {"nchw", 5, 16, 16, 3, 0, 0, {NULL}, 0},
    {"gray", 4, 12, 12, 1, 3, 0, {NULL}, 0},
    {"course", 3, 8, 10, 3, 0, 0, {NULL}, 0},
    {"userblock", 3, 9, 9, 3, 0, 0, {NULL}, 0},
    {"two",
     3,
     5,
     5,
     1,
     2,
     0,
     {"dataset.images", "b", "dataset.targets", "tg"},
     0},
    {"chunk1", 5, 10, 10, 3, 0, 0, {NULL}, 0},
    {"chunk4", 10, 8, 8, 3, 0, 0, {NULL}, 0},
    {"chunkub", 6, 8, 8, 3, 0, 0, {NULL}, 0},
    {"chunkbt", 1100, 8, 8, 3, 0, 0, {NULL}, 0},
    {"chunkfa", 1100, 8, 8, 3, 0, 0, {NULL}, 0},
    {"chunksingle", 5, 8, 8, 3, 0, 0, {NULL}, 0},
    {"chunkea", 6, 8, 8, 3, 0, 0, {NULL}, 0},
    {"ea_many", 4500, 4, 4, 3, 0, 0, {NULL}, 0},
    {"gz", 6, 10, 10, 3, 0, 0, {NULL}, 6},
    {"lzf", 10, 8, 8, 3, 0, 0, {NULL}, 2},
    {"fletcher", 5, 8, 8, 3, 0, 0, {NULL}, 3},
    {"many500", 600, 8, 8, 3, 0, 0, {NULL}, 2},
    {"mask", 4, 8, 8, 3, 0, 0, {NULL}, 3},
    {"unalloc", 6, 8, 8, 3, 0, 0, {NULL}, 2},
    {"unalloc_raw", 6, 8, 8, 3, 0, 0, {NULL}, 0},
    {"unalloc_fa", 6, 8, 8, 3, 0, 0, {NULL}, 0},
    {"pcam", 5, 8, 8, 3, 0, 0, {"dataset.labels_path", "@DIR/pcam_y.h5"}, 0},
    {"onehot", 5, 8, 8, 3, 3, 0, {"dataset.label_from", "argmax"}, 0},
    {"q50", 1000, 8, 8, 3, 0, 0, {NULL}, 20},
    {"vlen", 6, 16, 16, 3, 0, 3, {NULL}, 0},
    {"fixed", 6, 16, 16, 3, 0, 3, {NULL}, 0},
    {"fixedop", 6, 16, 16, 3, 0, 3, {NULL}, 0},
    {"fixednamed", 6, 16, 16, 3, 0, 3, {"dataset.lengths", "nbytes"}, 0},
    {"tiles_split", 4, 8, 8, 3, 0, 0, {NULL}, 4},
    {"tiles_auto", 64, 48, 48, 3, 0, 0, {NULL}, 4},
    {"tiles_gz", 12, 20, 20, 3, 0, 0, {NULL}, 3},
    {"tiles_nchw", 6, 16, 16, 3, 0, 0, {NULL}, 3},
    {"tiles_gray", 7, 10, 10, 1, 0, 0, {NULL}, 3},
    {"tiles_fa", 5, 12, 12, 3, 0, 0, {NULL}, 3},
    {"tiles_ea", 6, 8, 8, 3, 0, 0, {NULL}, 3},
    {"tiles_unalloc", 6, 8, 8, 3, 0, 0, {NULL}, 1},
    {"blosc_lz", 8, 32, 32, 3, 0, 0, {NULL}, 4},
    {"blosc_lz4", 7, 32, 32, 3, 0, 0, {NULL}, 3},
    {"blosc_zlib", 6, 24, 24, 3, 0, 0, {NULL}, 3},
    {"blosc_zstd", 40, 32, 32, 3, 0, 0, {NULL}, 2},
    {"blosc_nchw", 5, 32, 32, 3, 0, 0, {NULL}, 5},
};
enum { NFIX = sizeof k_fix / sizeof k_fix[0] };

static void path_in(char *buf, size_t cap, const char *name, const char *ext) {
  snprintf(buf, cap, "%s/%s%s", g_dir, name, ext);
}

static void *slurp(const char *name, const char *ext, size_t want) {
  char p[700];
  path_in(p, sizeof p, name, ext);
  FILE *f = fopen(p, "rb");
  assert_non_null(f);
  void *buf = malloc(want + 1);
  assert_non_null(buf);
  size_t got = fread(buf, 1, want + 1, f);
  fclose(f);
  if (got != want)
    fail_msg("%s: %zu bytes, expected %zu", p, got, want);
  return buf;
}

static int setup(void **state) {
  (void)state;
  if (sl_test_make_dir(g_dir, sizeof g_dir, "h5array") != 0)
    return -1;
  char arg[1100];
  snprintf(arg, sizeof arg, "'%s'", g_dir);
  return sl_test_make_fixtures("test_h5array", SLUICE_TEST_PYTHON, SLUICE_H5_PY,
                               arg,
                               "python3-h5py, python3-numpy and python3-pil");
}

static int teardown(void **state) {
  (void)state;
  return sl_test_remove_dir(g_dir);
}

static sl_config *config_for(const fixture *f, const char *const *more) {
  char p[700];
  path_in(p, sizeof p, f->name, ".h5");
  sl_config *cfg;
  assert_int_equal(sl_config_create(&cfg), SL_OK);
  assert_int_equal(sl_config_set(cfg, "dataset.path", p), SL_OK);
  for (const char *const *kv = f->kv; kv[0]; kv += 2) {
    char v[700]; /* "@DIR/" names a file beside the fixtures */
    snprintf(v, sizeof v, "%s%s", strncmp(kv[1], "@DIR", 4) ? "" : g_dir,
             strncmp(kv[1], "@DIR", 4) ? kv[1] : kv[1] + 4);
    assert_int_equal(sl_config_set(cfg, kv[0], v), SL_OK);
  }
  for (; more && more[0]; more += 2)
    if (sl_config_set(cfg, more[0], more[1]) != SL_OK)
      fail_msg("%s", sl_config_errmsg(cfg));
  return cfg;
}

/* numpy's RGB pixels of sample i, as the loader gives them with channel
 * order bgr (planes swapped) when bgr. */
static void expected(const fixture *f, const uint8_t *rgb, uint64_t i, bool bgr,
                     uint8_t *out) {
  size_t px = (size_t)f->h * f->w;
  const uint8_t *s = rgb + i * px * 3;
  for (size_t q = 0; q < px; q++)
    for (int c = 0; c < 3; c++)
      out[q * 3 + c] = s[q * 3 + (bgr ? 2 - c : c)];
}

/* The class names make_h5.py wrote as NAME.cls (one a line), against
 * sl_dataset_class_name; none when there is no such file. */
static void check_class_names(const fixture *f, sl_dataset *ds) {
  char p[700], line[1100];
  path_in(p, sizeof p, f->name, ".cls");
  FILE *fh = fopen(p, "rb");
  uint32_t k = 0;
  while (fh && fgets(line, sizeof line, fh)) {
    line[strcspn(line, "\n")] = '\0';
    const char *got = sl_dataset_class_name(ds, k);
    if (!got || strcmp(got, line) != 0)
      fail_msg("%s: class %u is \"%s\", numpy's \"%s\"", f->name, k,
               got ? got : "(none)", line);
    k++;
  }
  if (fh)
    fclose(fh);
  assert_int_equal(sl_dataset_class_count(ds), k);
  assert_null(sl_dataset_class_name(ds, k));
  if (k)
    assert_non_null(strstr(sl_dataset_description(ds), "class names from"));
}

/* Index, labels, targets, class names and sl_dataset_decode against numpy. */
static void test_open_and_decode(void **state) {
  (void)state;
  for (int x = 0; x < NFIX; x++) {
    const fixture *f = &k_fix[x];
    sl_config *cfg = config_for(f, NULL);
    sl_dataset *ds;
    if (sl_dataset_open(&ds, cfg) != SL_OK)
      fail_msg("%s: %s", f->name, sl_dataset_errmsg(ds));
    sl_config_destroy(cfg);
    assert_string_equal(sl_dataset_format(ds), "hdf5");
    assert_string_equal(sl_dataset_entries(ds), "array");
    assert_non_null(strstr(sl_dataset_description(ds), "uint8"));
    assert_int_equal(sl_dataset_count(ds), f->n);
    assert_int_equal(sl_dataset_target_width(ds), f->k);
    check_class_names(f, ds);
    size_t px = (size_t)f->h * f->w;
    uint8_t *rgb = slurp(f->name, ".rgb", f->n * px * 3);
    int32_t *lab = slurp(f->name, ".lab", f->n * 4);
    float *tgt = f->k ? slurp(f->name, ".tgt", (size_t)f->n * f->k * 4) : NULL;
    uint8_t *got = malloc(px * 3), *want = malloc(px * 3);
    assert_true(got && want);
    for (uint64_t i = 0; i < f->n; i++) {
      sl_sample_meta m;
      assert_int_equal(sl_dataset_info(ds, i, &m), SL_OK);
      assert_int_equal(m.width, f->w);
      assert_int_equal(m.height, f->h);
      assert_int_equal(m.channels, f->ch);
      assert_int_equal(m.label, lab[i]);
      assert_int_equal(m.target_width, f->k);
      for (uint32_t q = 0; q < f->k; q++)
        assert_true(m.targets[q] == tgt[i * f->k + q]);
      size_t len;
      if (sl_dataset_decode(ds, i, got, px * 3, &len) != SL_OK)
        fail_msg("%s: %s", f->name, sl_dataset_errmsg(ds));
      assert_int_equal(len, px * f->ch);
      expected(f, rgb, i, false, want);
      if (f->ch == 1)
        for (size_t q = 0; q < px; q++)
          want[q] = want[q * 3];
      sl_test_expect_pixels(got, want, len, f->lossy, f->name, i);
    }
    free(got);
    free(want);
    free(rgb);
    free(lab);
    free(tgt);
    sl_dataset_close(ds);
  }
}

static long g_after_open = -1;
static uint64_t g_bytes_read; /* the last loader_run_range's epoch */

/* The loader's batches, sample by sample, against numpy's pixels. */
static const char *g_order = "random"; /* loader.order of loader_run */

static void loader_run_range(const fixture *f, const char *workers,
                             const char *io, bool bgr, const char *cache,
                             uint32_t lo, uint32_t hi) {
  char res[16];
  snprintf(res, sizeof res, "%u", f->w);
  const char *kv[] = {"dataset.channel_order",
                      bgr ? "bgr" : "auto",
                      "loader.quasi_block",
                      "50",
                      "loader.quasi_window",
                      "2",
                      "dataset.chunk_cache",
                      cache,
                      NULL};
  sl_config *cfg = config_for(f, kv);
  sl_test_set_native_batches(cfg, workers, g_order, io, res);
  sl_loader *ld = sl_test_loader_open_or_skip(cfg, io, f->name);
  if (!ld) {
    sl_config_destroy(cfg);
    return;
  }
  g_after_open = atomic_load(&g_h5_calls);
  size_t px = (size_t)f->h * f->w;
  uint8_t *rgb = slurp(f->name, ".rgb", f->n * px * 3);
  int32_t *lab = slurp(f->name, ".lab", f->n * 4);
  uint8_t *want = malloc(px * 3);
  assert_non_null(want);
  assert_int_equal(sl_loader_start_epoch(ld, 0), SL_OK);
  sl_status st;
  sl_batch b;
  uint64_t seen = 0;
  while ((st = sl_loader_next(ld, &b)) == SL_OK) {
    assert_int_equal(b.n, 1);
    assert_int_equal(b.channels, 3);
    assert_int_equal(b.width, f->w);
    assert_int_equal(b.height, f->h);
    uint64_t i = b.indices[0];
    expected(f, rgb, i, bgr, want);
    sl_test_expect_pixels(b.data, want, px * 3, f->lossy, f->name, i);
    assert_int_equal(b.labels[0], lab[i]);
    seen++;
    assert_int_equal(sl_batch_release(ld, &b, NULL), SL_OK);
  }
  if (st != SL_END)
    fail_msg("%s", sl_loader_errmsg(ld));
  assert_int_equal(seen, f->n);
  sl_loader_stats stats;
  assert_int_equal(sl_loader_stats_get(ld, &stats), SL_OK);
  g_bytes_read = stats.bytes_read;
  if (lo != hi)
    print_message("%s: %s workers, order %s, chunk cache %s: %llu chunk "
                  "decompressions in an epoch\n",
                  f->name, workers, g_order, cache,
                  (unsigned long long)stats.chunk_unfilters);
  if (stats.chunk_unfilters < lo || stats.chunk_unfilters > hi)
    fail_msg("%s (%s workers, order %s, chunk cache %s): %llu chunk "
             "decompressions, %u to %u expected",
             f->name, workers, g_order, cache,
             (unsigned long long)stats.chunk_unfilters, lo, hi);
  free(rgb);
  free(lab);
  free(want);
  sl_loader_close(ld);
  sl_config_destroy(cfg);
}

static void loader_run_cache(const fixture *f, const char *workers,
                             const char *io, bool bgr, const char *cache,
                             uint32_t unfilters) {
  loader_run_range(f, workers, io, bgr, cache, unfilters, unfilters);
}

static void loader_run(const fixture *f, const char *workers, const char *io,
                       bool bgr) {
  loader_run_cache(f, workers, io, bgr, "256MiB", f->unfilters);
}

static const fixture *fixture_named(const char *name);

static void test_loader_batches(void **state) {
  (void)state;
  for (int x = 0; x < NFIX; x++) {
    /* crop none resizes to a square of at least resolution.min = 8 */
    if (k_fix[x].w != k_fix[x].h || k_fix[x].w < 8)
      continue;
    for (int w = 1; w <= 2; w++)
      for (int q = 0; q < SL_TEST_IO_COUNT; q++)
        loader_run(&k_fix[x], w == 1 ? "1" : "2", sl_test_io_backends[q],
                   false);
  }
  /* NCHW planes read as BGR come out swapped. */
  loader_run(&k_fix[1], "2", "pread", true);
  /* Without the chunk cache every sample decompresses its chunk (lzf: the
   * 4 + 2 samples of its compressed first and partial edge chunks). */
  loader_run_cache(fixture_named("many500"), "2", "mmap", false, "0", 600);
  uint64_t uncached = g_bytes_read;
  /* A chunk in the cache is not read again (mmap and pread): each of the
   * two chunks is read once, not once a sample. */
  char p[700];
  struct stat fs;
  path_in(p, sizeof p, "many500", ".h5");
  assert_int_equal(stat(p, &fs), 0);
  for (int q = 0; q < 2; q++) {
    loader_run_cache(fixture_named("many500"), "1", q ? "pread" : "mmap", false,
                     "256MiB", 2);
    if (g_bytes_read > (uint64_t)fs.st_size || g_bytes_read * 100 > uncached)
      fail_msg("many500 (%s, cached): %llu bytes read, file %lld, %llu "
               "without the cache",
               q ? "pread" : "mmap", (unsigned long long)g_bytes_read,
               (long long)fs.st_size, (unsigned long long)uncached);
  }
  loader_run_cache(fixture_named("lzf"), "1", "pread", false, "0", 6);
  /* 20 chunks of 50 and a cache of 4: quasi_random blocks of whole chunks
   * (runs of 2) decompress each chunk about once an epoch (at most 1.1
   * times the chunks); a random order, many times more. */
  const fixture *q = fixture_named("q50");
  g_order = "quasi_random";
  loader_run_range(q, "1", "mmap", false, "38400", 20, 22);
  loader_run_range(q, "2", "pread", false, "38400", 20, 22);
  g_order = "random";
  loader_run_range(q, "2", "mmap", false, "38400", 100, 1000);
}

/* Damaged or unsupported inputs: SL_EFORMAT naming the dataset. */
static void test_refused(void **state) {
  (void)state;
  static const struct {
    const char *file, *opt, *val, *msg;
  } cases[] = {
      {"bad_float", NULL, NULL, "/images has float32 elements"},
      {"bad_huge", NULL, NULL,
       "has shape (4, 40000, 40000, 3): samples of 4800000000 bytes"},
      {"bad_rank2", NULL, NULL, "/images has shape (4, 16): rank 2"},
      {"bad_zero", NULL, NULL, "/images is empty (shape (0, 4, 4, 3))"},
      {"bad_chunked", NULL, NULL,
       "/images is chunked and filtered with scaleoffset+shuffle: sluice "
       "undoes gzip, shuffle, lzf, blosc and fletcher32 only"},
      {"bad_scatter", NULL, NULL,
       "the 2 chunks of samples 0..3 (768 bytes) are spread over"},
      {"bad_many", NULL, NULL,
       "has 4097 chunks in a chunk index of type version 2 B-tree"},
      {"bad_tree", NULL, NULL,
       "its chunk index is damaged: no chunk B-tree node (TREE"},
      {"bad_fadb", NULL, NULL,
       "its chunk index is damaged: no fixed array data block (FADB)"},
      {"bad_chunked", NULL, NULL, "sluice pack --from"},
      /* h5repack without a filter's plugin exits 0 with a copy that has no
       * array: the advice says so. */
      {"bad_chunked", NULL, NULL,
       "plugin on HDF5_PLUGIN_PATH, else the copy has no array: check it "
       "with h5ls"},
      {"pcam", "dataset.labels_path", "/nonexistent/y.h5",
       "dataset.labels_path = /nonexistent/y.h5: HDF5 cannot open it"},
      {"bad_vlen", NULL, NULL, "sample 0 (/images[0]): JPEG image whose"},
      {"bad_heap", NULL, NULL, "sample 0 (/images[0]): heap collection at"},
      {"bad_heap", NULL, NULL, "length runs past its collection's end"},
      {"bad_rank2", NULL, NULL,
       "read as fixed-size encoded images (rows of JPEG/PNG bytes padded to "
       "16), but no dataset gives each row's length"},
      {"bad_len0", NULL, NULL,
       "sample 3 (/images[3]): its length /lengths[3] = 0 is not above 0"},
      {"bad_lenbig", NULL, NULL, "sample 4 (/images[4]): its length "},
      {"bad_lenbig", NULL, NULL, "is past the end of its row of "},
      {"fixed", "dataset.lengths", "nope",
       "dataset.lengths = /nope: no such dataset"},
      {"fixednamed", NULL, NULL,
       "no dataset gives each row's length (lengths, "
       "sizes or lens; name it with dataset.lengths)"},
      {"bad_labels", NULL, NULL,
       "/labels has shape (5,) but /images holds 6 images"},
      {"bad_4ch", NULL, NULL, "4 channels"},
      {"bad_axes", NULL, NULL, "set dataset.axis_order"},
      {"bad_axes", "dataset.axis_order", "nwhc", "width-major"},
      {"bad_cut", NULL, NULL, "truncated or damaged"},
      {"two", NULL, NULL, "(/a, /b); name one with dataset.images"},
      {"two", "dataset.images", "nope", "dataset.images = /nope"},
      {"nhwc", "dataset.channel_order", "bgr", "channel_order = bgr"},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    char p[700];
    path_in(p, sizeof p, cases[c].file, ".h5");
    sl_config *cfg;
    assert_int_equal(sl_config_create(&cfg), SL_OK);
    assert_int_equal(sl_config_set(cfg, "dataset.path", p), SL_OK);
    if (cases[c].opt)
      assert_int_equal(sl_config_set(cfg, cases[c].opt, cases[c].val), SL_OK);
    sl_dataset *ds;
    sl_status st = sl_dataset_open(&ds, cfg);
    if (st != SL_EFORMAT || !strstr(sl_dataset_errmsg(ds), cases[c].msg))
      fail_msg("%s: status %d, message '%s' (expected '%s')", cases[c].file,
               (int)st, sl_dataset_errmsg(ds), cases[c].msg);
    sl_dataset_close(ds);
    sl_config_destroy(cfg);
  }
  /* argmax needs (N,K) rows: a configuration error naming the labels. */
  const fixture *f = fixture_named("nhwc");
  const char *kv[] = {"dataset.label_from", "argmax", NULL};
  sl_config *cfg = config_for(f, kv);
  sl_dataset *ds;
  sl_status st = sl_dataset_open(&ds, cfg);
  if (st != SL_ECONFIG ||
      !strstr(sl_dataset_errmsg(ds), "/labels has one value a row"))
    fail_msg("argmax on (N,) labels: status %d, '%s'", (int)st,
             sl_dataset_errmsg(ds));
  sl_dataset_close(ds);
  sl_config_destroy(cfg);
}

/* Damaged compressed bytes: the open succeeds (the index is sound), the
 * sample's read fails naming the file, dataset, sample and chunk; the
 * loader's epoch fails with the same message. */
static void test_damaged_chunks(void **state) {
  (void)state;
  static const struct {
    const char *file;
    uint64_t sample;
    const char *msg;
  } cases[] = {
      {"bad_gzbytes", 1,
       "sample 1: dataset /images, chunk 1 (filter mask 0): gzip: "},
      {"bad_fletcher", 0,
       "sample 0: dataset /images, chunk 0 (filter mask 0): fletcher32 "
       "checksum mismatch"},
      {"bad_blosc", 2,
       "sample 2: dataset /images, chunk 1 (filter mask 0): blosc: corrupt "
       "compressed data"},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    char p[700];
    path_in(p, sizeof p, cases[c].file, ".h5");
    sl_dataset *ds;
    if (sl_dataset_open_file(&ds, p) != SL_OK)
      fail_msg("%s: %s", cases[c].file, sl_dataset_errmsg(ds));
    uint8_t px[32 * 32 * 3];
    size_t len;
    sl_status st = sl_dataset_decode(ds, cases[c].sample, px, sizeof px, &len);
    if (st != SL_EFORMAT || !strstr(sl_dataset_errmsg(ds), cases[c].msg) ||
        !strstr(sl_dataset_errmsg(ds), p))
      fail_msg("%s: status %d, message '%s' (expected '%s')", cases[c].file,
               (int)st, sl_dataset_errmsg(ds), cases[c].msg);
    /* the other samples of other chunks still read */
    assert_int_equal(sl_dataset_decode(ds, 4, px, sizeof px, &len), SL_OK);
    sl_dataset_close(ds);
  }
}

/* ---- no HDF5 call after open ----------------------------------------------
 * This executable exports these (ENABLE_EXPORTS), so libsluice's calls into
 * libhdf5 reach them first; each counts and forwards. They cover the calls
 * every open makes and the ones a read would need. */
/* A file cut while it is opened: after the g_cut_nth call (counted from
 * when g_cut_path was set) of the libhdf5 entry point g_cut_fn, the file
 * g_cut_path is truncated to g_cut_to bytes (HDF5 has read what it needs;
 * sluice's map of the file is made, and is read next). */
static const char *g_cut_path, *g_cut_fn;
static long g_cut_nth;
static off_t g_cut_to;

static void cut_hook(const char *fn) {
  if (g_cut_path && strcmp(fn, g_cut_fn) == 0 && --g_cut_nth == 0) {
    if (truncate(g_cut_path, g_cut_to) != 0)
      fail_msg("truncate %s: %s", g_cut_path, strerror(errno));
    g_cut_path = NULL;
  }
}

#define H5_WRAP(ret, name, params, args)                                       \
  __attribute__((visibility("default"))) ret name params {                     \
    static ret(*real) params;                                                  \
    if (!real)                                                                 \
      *(void **)&real = dlsym(RTLD_NEXT, #name);                               \
    atomic_fetch_add(&g_h5_calls, 1);                                          \
    ret r = real args;                                                         \
    cut_hook(#name);                                                           \
    return r;                                                                  \
  }
H5_WRAP(hid_t, H5Fopen, (const char *n, unsigned f, hid_t p), (n, f, p))
H5_WRAP(herr_t, H5Fclose, (hid_t f), (f))
H5_WRAP(hid_t, H5Dopen2, (hid_t l, const char *n, hid_t p), (l, n, p))
H5_WRAP(herr_t, H5Dclose, (hid_t d), (d))
H5_WRAP(herr_t, H5Dread,
        (hid_t d, hid_t mt, hid_t ms, hid_t fs, hid_t p, void *buf),
        (d, mt, ms, fs, p, buf))
H5_WRAP(haddr_t, H5Dget_offset, (hid_t d), (d))
H5_WRAP(htri_t, H5Lexists, (hid_t l, const char *n, hid_t p), (l, n, p))
H5_WRAP(hid_t, H5Dget_space, (hid_t d), (d))

static void test_no_hdf5_after_open(void **state) {
  (void)state;
  long before = atomic_load(&g_h5_calls);
  sl_config *cfg = config_for(&k_fix[0], NULL);
  sl_dataset *ds;
  assert_int_equal(sl_dataset_open(&ds, cfg), SL_OK);
  sl_config_destroy(cfg);
  long opened = atomic_load(&g_h5_calls);
  assert_true(opened > before);
  uint8_t buf[20 * 20 * 3];
  size_t len;
  for (uint64_t i = 0; i < sl_dataset_count(ds); i++) {
    assert_int_equal(sl_dataset_read(ds, i, buf, sizeof buf, &len), SL_OK);
    assert_int_equal(sl_dataset_decode(ds, i, buf, sizeof buf, &len), SL_OK);
  }
  sl_dataset_close(ds);
  assert_int_equal(atomic_load(&g_h5_calls), opened);
  for (int q = 0; q < SL_TEST_IO_COUNT; q++) {
    long n0 = atomic_load(&g_h5_calls);
    g_after_open = -1;
    loader_run(&k_fix[1], "2", sl_test_io_backends[q], false);
    if (g_after_open >= 0) {
      assert_true(g_after_open > n0);
      assert_int_equal(atomic_load(&g_h5_calls), g_after_open);
    }
  }
}

/* An array file cut (truncated) while it is opened, after each call of a
 * libhdf5 entry point in turn (HDF5 has read some metadata; sluice has
 * mapped the file): SL_OK when nothing is read past the cut, else an error
 * naming the file, never the death of the process. A cut just before
 * sluice reads the map (a chunk index: chunkbt's B-tree, chunkfa's fixed
 * array; a vlen element's heap object; a fixed-size row's image header) is
 * SL_EIO saying SIGBUS. */
static void test_cut_during_open(void **state) {
  (void)state;
  static const struct {
    const char *name, *fn;
  } cases[] = {{"chunkbt", "H5Dget_space"},
               {"chunkfa", "H5Dget_space"},
               {"vlen", "H5Dread"},
               {"fixed", "H5Dread"}};
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
    char src[700], p[700], cmd[1600];
    path_in(src, sizeof src, cases[k].name, ".h5");
    path_in(p, sizeof p, "cut", ".h5");
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", src, p);
    assert_int_equal(system(cmd), 0);
    /* The calls in a whole open (the count never reaches 0). */
    g_cut_path = p;
    g_cut_fn = cases[k].fn;
    g_cut_nth = -1;
    sl_dataset *ds = NULL;
    assert_int_equal(sl_dataset_open_file(&ds, p), SL_OK);
    sl_dataset_close(ds);
    long calls = -1 - g_cut_nth;
    g_cut_path = NULL;
    assert_true(calls > 0);
    int sigbus = 0;
    for (long nth = 1; nth <= calls; nth++) {
      assert_int_equal(system(cmd), 0);
      g_cut_path = p;
      g_cut_nth = nth;
      g_cut_to = 4096;
      ds = NULL;
      sl_status st = sl_dataset_open_file(&ds, p);
      assert_null(g_cut_path); /* cut */
      char msg[1024];
      snprintf(msg, sizeof msg, "%s", st == SL_OK ? "" : sl_dataset_errmsg(ds));
      sl_dataset_close(ds);
      if (st != SL_OK && !strstr(msg, "cut.h5"))
        fail_msg("%s, cut after call %ld of %s: %d %s", cases[k].name, nth,
                 cases[k].fn, st, msg);
      sigbus += st == SL_EIO && strstr(msg, "SIGBUS") != NULL;
    }
    if (!sigbus)
      fail_msg("%s: no cut after a call of %s was met by a read of the map",
               cases[k].name, cases[k].fn);
  }
}

/* A `sluice pack --from` copy of fixture f holds numpy's pixels and labels. */
static void check_packed(const fixture *f, const char *packed) {
  char p[700];
  path_in(p, sizeof p, packed, ".lmdb");
  sl_dataset *ds;
  assert_int_equal(sl_dataset_open_file(&ds, p), SL_OK);
  assert_int_equal(sl_dataset_count(ds), f->n);
  size_t px = (size_t)f->h * f->w;
  uint8_t *rgb = slurp(f->name, ".rgb", f->n * px * 3);
  int32_t *lab = slurp(f->name, ".lab", f->n * 4);
  uint8_t *got = malloc(px * 3), *want = malloc(px * 3);
  assert_true(got && want);
  for (uint64_t i = 0; i < f->n; i++) {
    sl_sample_meta m;
    assert_int_equal(sl_dataset_info(ds, i, &m), SL_OK);
    assert_int_equal(m.label, lab[i]);
    size_t len;
    assert_int_equal(sl_dataset_decode(ds, i, got, px * 3, &len), SL_OK);
    assert_int_equal(len, px * 3);
    expected(f, rgb, i, false, want);
    sl_test_expect_pixels(got, want, len, 0, packed, i);
  }
  free(got);
  free(want);
  free(rgb);
  free(lab);
  sl_dataset_close(ds);
}

static const fixture *fixture_named(const char *name) {
  for (int x = 0; x < NFIX; x++)
    if (strcmp(k_fix[x].name, name) == 0)
      return &k_fix[x];
  fail_msg("no fixture %s", name);
  return NULL;
}

/* The command line: info names the datasets; verify, extract and pack
 * --from read the file. */
static void test_cli(void **state) {
  (void)state;
  static char out[1 << 16];
  char args[2048];
  snprintf(args, sizeof args, "info '%s/nchw.h5'", g_dir);
  if (cli_run(args, out, sizeof out) != 0)
    fail_msg("%s", out);
  assert_non_null(strstr(out, "entries array"));
  assert_non_null(strstr(out, "images /imgs (5, 3, 16, 16) uint8, NCHW RGB"));
  assert_non_null(strstr(out, "labels /y (5, 1)"));
  snprintf(args, sizeof args, "info '%s/many500.h5'", g_dir);
  if (cli_run(args, out, sizeof out) != 0)
    fail_msg("%s", out);
  assert_non_null(strstr(out, "chunked, filters shuffle+gzip (undone by the "
                              "workers), samples per chunk 500"));
  assert_non_null(strstr(out, "advice: 500 samples a compressed chunk of "
                              "96000 bytes"));
  assert_non_null(strstr(out, "192000 bytes cache them all"));
  snprintf(args, sizeof args, "verify --decode '%s/userblock.h5'", g_dir);
  if (cli_run(args, out, sizeof out) != 0)
    fail_msg("%s", out);
  snprintf(args, sizeof args, "verify --decode '%s/lzf.h5'", g_dir);
  if (cli_run(args, out, sizeof out) != 0)
    fail_msg("%s", out);
  /* A chunk of garbage: verify names the sample and the chunk. */
  snprintf(args, sizeof args, "verify --decode '%s/bad_gzbytes.h5'", g_dir);
  if (cli_run(args, out, sizeof out) == 0 ||
      !strstr(out, "sample 1: dataset /images, chunk 1 (filter mask 0): "
                   "gzip: not a valid zlib stream"))
    fail_msg("verify of bad_gzbytes: %s", out);
  snprintf(args, sizeof args, "pack --from '%s/nhwc.h5' '%s/packed.lmdb'",
           g_dir, g_dir);
  if (cli_run(args, out, sizeof out) != 0)
    fail_msg("%s", out);
  check_packed(&k_fix[0], "packed");
  /* From compressed chunks (and a chunk never written): pixels, not the
   * chunk's bytes. */
  snprintf(args, sizeof args, "pack --from '%s/unalloc.h5' '%s/packed2.lmdb'",
           g_dir, g_dir);
  if (cli_run(args, out, sizeof out) != 0)
    fail_msg("%s", out);
  check_packed(fixture_named("unalloc"), "packed2");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_open_and_decode),
      cmocka_unit_test(test_loader_batches),
      cmocka_unit_test(test_refused),
      cmocka_unit_test(test_damaged_chunks),
      cmocka_unit_test(test_no_hdf5_after_open),
      cmocka_unit_test(test_cut_during_open),
      cmocka_unit_test(test_cli),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
