/* loader.io through the whole loader on real files: synthetic JPEGs in
 * LMDB and HDF5, decoded and augmented by the real pipeline, read with
 * mmap, pread, uring (small pool, queue depth 1 and 16), uring + O_DIRECT
 * and auto: every backend gives bit-identical batches, in random and
 * quasi-random order, with several workers; an epoch abandoned midway with
 * a full read-ahead pool neither hangs nor changes the next epoch; a corrupt
 * sample is replaced the same way (the replacement is read outside the
 * order); a resumed epoch reads ahead from the resumed position; the chosen
 * backend is logged once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sluice.h"
#include "support/loader_data.h"

#define NSAMPLES 150
#define BAD_INDEX 33

typedef struct paths {
  char lmdb[512], h5[512];
} paths;

/* 3..30 KB each: the whole set is larger than a 1 MiB pool. */
static const sl_test_set k_set = {.n = NSAMPLES,
                                  .nclasses = 7,
                                  .bad = BAD_INDEX,
                                  .seed0 = 11,
                                  .w0 = 60,
                                  .wstep = 37,
                                  .wmod = 260,
                                  .h0 = 50,
                                  .hstep = 53,
                                  .hmod = 240};

static int setup(void **state) {
  paths *p = calloc(1, sizeof *p);
  assert_non_null(p);
  sl_test_tmp_path(p->lmdb, sizeof p->lmdb, "io_loader", "lmdb");
  sl_test_tmp_path(p->h5, sizeof p->h5, "io_loader", "h5");
  sl_test_write_set(p->lmdb, &k_set, 1);
  sl_test_write_set(p->h5, &k_set, 0);
  *state = p;
  return 0;
}

static int teardown(void **state) {
  paths *p = *state;
  sl_test_unlink_lmdb(p->lmdb);
  unlink(p->h5);
  free(p);
  return 0;
}

typedef struct logbook {
  int reading; /* lines saying which backend reads */
  char last[512];
} logbook;

static void log_fn(void *user, sl_log_level level, const char *msg) {
  logbook *b = user;
  if (strstr(msg, "reading with")) {
    b->reading++;
    snprintf(b->last, sizeof b->last, "%s", msg);
  }
}

/* The loader on path with the base settings, then kv (NULL-terminated). */
static sl_loader *open_on(const char *path, const char *const *kv,
                          logbook *book) {
  static const char *const base[] = {"device.backend",
                                     "host",
                                     "loader.batch_size",
                                     "8",
                                     "loader.workers",
                                     "3",
                                     "loader.drop_last",
                                     "false",
                                     "resolution.max",
                                     "40",
                                     "resolution.min",
                                     "40",
                                     "augment.dtype",
                                     "u8",
                                     "loader.on_error",
                                     "skip",
                                     "loader.quasi_block",
                                     "8",
                                     "loader.quasi_window",
                                     "3",
                                     NULL};
  return sl_test_open_loader(path, base, kv, book ? log_fn : NULL, book);
}

/* Hash of epoch e's batches (data, labels, indices) of bs samples. */
static uint64_t run_epoch(sl_loader *ld, uint64_t e, int bs) {
  uint64_t h = 0xcbf29ce484222325ULL;
  assert_int_equal(sl_loader_start_epoch(ld, e), SL_OK);
  sl_batch b;
  sl_status st;
  int batches = 0;
  while ((st = sl_loader_next(ld, &b)) == SL_OK) {
    h = sl_test_hash(h, b.indices, b.n * sizeof *b.indices);
    h = sl_test_hash(h, b.labels, b.n * sizeof *b.labels);
    h = sl_test_hash(h, b.data, b.bytes);
    assert_int_equal(sl_batch_release(ld, &b, NULL), SL_OK);
    batches++;
  }
  if (st != SL_END)
    fprintf(stderr, "epoch %llu: %s\n", (unsigned long long)e,
            sl_loader_errmsg(ld));
  assert_int_equal(st, SL_END);
  assert_int_equal(batches, (NSAMPLES + bs - 1) / bs);
  return h;
}

static const char *const backends[][9] = {
    {"loader.io", "mmap", NULL},
    {"loader.io", "pread", NULL},
    {"loader.io", "uring", "io.pool_size", "1MiB", "io.queue_depth", "1", NULL},
    {"loader.io", "uring", "io.pool_size", "1MiB", "io.queue_depth", "16",
     NULL},
    {"loader.io", "uring", "io.direct", "true", "io.pool_size", "2MiB", NULL},
    {"loader.io", "auto", NULL},
};
#define NBACKENDS (sizeof backends / sizeof *backends)
static const char *const wanted[NBACKENDS] = {"mmap",  "pread", "uring",
                                              "uring", "uring", "mmap"};

static void same_batches(const char *path, const char *order) {
  uint64_t ref[2] = {0, 0};
  for (size_t k = 0; k < NBACKENDS; k++) {
    const char *kv[16];
    int n = 0;
    for (int i = 0; backends[k][i]; i++)
      kv[n++] = backends[k][i];
    kv[n++] = "loader.order";
    kv[n++] = order;
    kv[n] = NULL;
    logbook book = {0};
    sl_loader *ld = open_on(path, kv, &book);
    assert_int_equal(book.reading, 1); /* said once, at open */
    char want[64];
    snprintf(want, sizeof want, "reading with %s", wanted[k]);
    if (!strstr(book.last, want))
      fprintf(stderr, "backend %zu: %s\n", k, book.last);
    assert_non_null(strstr(book.last, want));
    for (uint64_t e = 0; e < 2; e++) {
      uint64_t h = run_epoch(ld, e, 8);
      if (k == 0)
        ref[e] = h;
      else if (h != ref[e])
        fprintf(stderr, "%s %s: backend %zu epoch %llu differs\n", path, order,
                k, (unsigned long long)e);
      assert_true(h == ref[e]);
    }
    assert_int_equal(book.reading, 1); /* not per epoch */
    sl_loader_stats s;
    assert_int_equal(sl_loader_stats_get(ld, &s), SL_OK);
    sl_loader_close(ld);
  }
}

static void identical_lmdb_random(void **state) {
  paths *p = *state;
  same_batches(p->lmdb, "random");
}

static void identical_lmdb_quasi(void **state) {
  paths *p = *state;
  same_batches(p->lmdb, "quasi_random");
}

static void identical_hdf5_random(void **state) {
  paths *p = *state;
  same_batches(p->h5, "random");
}

static void identical_hdf5_quasi(void **state) {
  paths *p = *state;
  same_batches(p->h5, "quasi_random");
}

/* An epoch abandoned after one batch while the uring pool (1 MiB) is
 * smaller than the positions the workers may claim (staging 4 x 32 samples
 * of ~16 KB), so workers wait on reads that need buffers of positions no
 * worker will load: the next start must not hang, and its batches equal
 * those of a fresh loader. */
static void abandon_midway(void **state) {
  paths *p = *state;
  const char *kv[] = {"loader.io",
                      "uring",
                      "io.pool_size",
                      "1MiB",
                      "io.queue_depth",
                      "4",
                      "device.staging",
                      "4",
                      "loader.batch_size",
                      "32",
                      NULL};
  sl_loader *fresh = open_on(p->h5, kv, NULL);
  uint64_t ref = run_epoch(fresh, 1, 32);
  sl_loader_close(fresh);
  sl_loader *ld = open_on(p->h5, kv, NULL);
  for (int round = 0; round < 3; round++) {
    assert_int_equal(sl_loader_start_epoch(ld, 0), SL_OK);
    sl_batch b;
    assert_int_equal(sl_loader_next(ld, &b), SL_OK);
    usleep(20000); /* let the reader fill the pool */
    assert_int_equal(sl_batch_release(ld, &b, NULL), SL_OK);
  }
  assert_true(run_epoch(ld, 1, 32) == ref);
  /* And closed midway. */
  assert_int_equal(sl_loader_start_epoch(ld, 0), SL_OK);
  sl_batch b;
  assert_int_equal(sl_loader_next(ld, &b), SL_OK);
  assert_int_equal(sl_batch_release(ld, &b, NULL), SL_OK);
  sl_loader_close(ld);
}

/* Hash of the rest of the current epoch. */
static uint64_t rest_of_epoch(sl_loader *ld) {
  uint64_t h = 0xcbf29ce484222325ULL;
  sl_batch b;
  sl_status st;
  while ((st = sl_loader_next(ld, &b)) == SL_OK) {
    h = sl_test_hash(h, b.indices, b.n * sizeof *b.indices);
    h = sl_test_hash(h, b.data, b.bytes);
    assert_int_equal(sl_batch_release(ld, &b, NULL), SL_OK);
  }
  assert_int_equal(st, SL_END);
  return h;
}

/* Resumed mid-epoch, the read-ahead starts at the resumed position: the
 * rest of the epoch equals the uninterrupted run's, across backends. */
static void resume_mid_epoch(void **state) {
  paths *p = *state;
  const char *kv[] = {"loader.io", "uring",        "io.pool_size",
                      "1MiB",      "loader.order", "quasi_random",
                      NULL};
  const char *kv2[] = {"loader.io",    "uring",        "io.direct", "true",
                       "loader.order", "quasi_random", NULL};
  sl_loader *ld = open_on(p->lmdb, kv, NULL);
  assert_int_equal(sl_loader_start_epoch(ld, 1), SL_OK);
  for (int k = 0; k < 5; k++) {
    sl_batch b;
    assert_int_equal(sl_loader_next(ld, &b), SL_OK);
    assert_int_equal(sl_batch_release(ld, &b, NULL), SL_OK);
  }
  uint8_t blob[SL_LOADER_STATE_BYTES];
  size_t len = sizeof blob;
  assert_int_equal(sl_loader_save_state(ld, blob, &len), SL_OK);
  uint64_t want = rest_of_epoch(ld);
  sl_loader_close(ld);
  for (int k = 0; k < 2; k++) {
    ld = open_on(p->lmdb, k ? kv2 : kv, NULL);
    assert_int_equal(sl_loader_restore_state(ld, blob, len), SL_OK);
    assert_true(rest_of_epoch(ld) == want);
    sl_loader_close(ld);
  }
}

static void copy_file(const char *from, const char *to) {
  FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
  assert_non_null(in);
  assert_non_null(out);
  char b[65536];
  size_t n;
  while ((n = fread(b, 1, sizeof b, in)) > 0)
    assert_int_equal(fwrite(b, 1, n, out), n);
  fclose(in);
  assert_int_equal(fclose(out), 0);
}

/* The dataset truncated under a running loader (as `cp new.lmdb p.lmdb`
 * does while training runs), after two batches, for every backend: with
 * on_error = fail the epoch stops with SL_EIO naming the file and the
 * sample; with skip the bad samples are replaced and counted, or the batch
 * fails once the replacements also fail. Either way the process lives
 * (mmap used to die of SIGBUS here). */
static void truncated_under_loader(void **state) {
  (void)state;
  static const char *const modes[] = {"fail", "skip"};
  /* uring's pool small enough that it has not read the whole file ahead
   * when the cut comes. */
  static const char *const cut_backends[][9] = {
      {"loader.io", "mmap", NULL},
      {"loader.io", "pread", NULL},
      {"loader.io", "uring", "io.pool_size", "1MiB", "io.queue_depth", "1",
       NULL},
      {"loader.io", "uring", "io.pool_size", "1MiB", "io.queue_depth", "16",
       NULL},
      {"loader.io", "uring", "io.direct", "true", "io.pool_size", "1MiB", NULL},
  };
  /* About 4 MiB: uring's smallest pool (1 MiB) holds a quarter of it. */
  sl_test_set big = k_set;
  big.n = 480;
  big.bad = -1;
  char master[512];
  sl_test_tmp_path(master, sizeof master, "io_loader_trunc_master", "lmdb");
  sl_test_write_set(master, &big, 0);
  for (size_t k = 0; k < sizeof cut_backends / sizeof *cut_backends; k++) {
    for (int m = 0; m < 2; m++) {
      char path[512];
      sl_test_tmp_path(path, sizeof path, "io_loader_trunc", "lmdb");
      copy_file(master, path);
      const char *kv[16];
      int n = 0;
      for (int i = 0; cut_backends[k][i]; i++)
        kv[n++] = cut_backends[k][i];
      kv[n++] = "loader.on_error";
      kv[n++] = modes[m];
      kv[n] = NULL;
      sl_loader *ld = open_on(path, kv, NULL);
      assert_int_equal(sl_loader_start_epoch(ld, 0), SL_OK);
      sl_batch b;
      for (int i = 0; i < 2; i++) {
        assert_int_equal(sl_loader_next(ld, &b), SL_OK);
        assert_int_equal(sl_batch_release(ld, &b, NULL), SL_OK);
      }
      FILE *f = fopen(path, "rb");
      assert_non_null(f);
      assert_int_equal(fseek(f, 0, SEEK_END), 0);
      long size = ftell(f);
      fclose(f);
      assert_int_equal(truncate(path, size / 3), 0);
      sl_status st;
      while ((st = sl_loader_next(ld, &b)) == SL_OK)
        assert_int_equal(sl_batch_release(ld, &b, NULL), SL_OK);
      char msg[1024]; /* before stats_get, which clears it */
      snprintf(msg, sizeof msg, "%s", sl_loader_errmsg(ld));
      sl_loader_stats s;
      assert_int_equal(sl_loader_stats_get(ld, &s), SL_OK);
      if (m == 0 || st != SL_END) {
        if (st != (m == 0 ? SL_EIO : SL_ESAMPLE))
          fprintf(stderr, "%s on_error=%s: %s: %s\n", cut_backends[k][1],
                  modes[m], sl_status_name(st), msg);
        assert_int_equal(st, m == 0 ? SL_EIO : SL_ESAMPLE);
        if (!strstr(msg, "sample ") || !strstr(msg, path))
          fprintf(stderr, "%s on_error=%s: %s\n", cut_backends[k][1], modes[m],
                  msg);
        assert_non_null(strstr(msg, "sample "));
        assert_non_null(strstr(msg, path));
      } else {
        assert_true(s.skipped > 0);
      }
      sl_loader_close(ld);
      sl_test_unlink_lmdb(path);
    }
  }
  sl_test_unlink_lmdb(master);
}

/* The dataset replaced by rename under a running loader (what `sluice
 * pack` and `mv new p` do), after two batches, for every backend: the
 * loader holds the old file (its descriptor and mapping stay valid), so
 * the epoch ends exactly as an uninterrupted one, with nothing skipped,
 * though the file now at the path is a third of the old one. */
static void replaced_by_rename(void **state) {
  (void)state;
  for (size_t k = 0; k < sizeof backends / sizeof *backends; k++) {
    char path[512], next[512];
    sl_test_tmp_path(path, sizeof path, "io_loader_renamed", "lmdb");
    sl_test_tmp_path(next, sizeof next, "io_loader_renamed_next", "lmdb");
    sl_test_write_set(path, &k_set, 0);
    const char *kv[16];
    int n = 0;
    for (int i = 0; backends[k][i]; i++)
      kv[n++] = backends[k][i];
    kv[n++] = "loader.on_error";
    kv[n++] = "fail";
    kv[n] = NULL;
    sl_loader *ref = open_on(path, kv, NULL);
    uint64_t want = run_epoch(ref, 0, 8);
    sl_loader_close(ref);

    sl_loader *ld = open_on(path, kv, NULL);
    assert_int_equal(sl_loader_start_epoch(ld, 0), SL_OK);
    uint64_t h = 0xcbf29ce484222325ULL;
    sl_batch b;
    sl_status st;
    int batches = 0;
    while ((st = sl_loader_next(ld, &b)) == SL_OK) {
      h = sl_test_hash(h, b.indices, b.n * sizeof *b.indices);
      h = sl_test_hash(h, b.labels, b.n * sizeof *b.labels);
      h = sl_test_hash(h, b.data, b.bytes);
      assert_int_equal(sl_batch_release(ld, &b, NULL), SL_OK);
      if (++batches == 2) { /* a third of the file, renamed over it */
        copy_file(path, next);
        FILE *f = fopen(next, "rb");
        assert_non_null(f);
        assert_int_equal(fseek(f, 0, SEEK_END), 0);
        long size = ftell(f);
        assert_int_equal(fclose(f), 0);
        assert_int_equal(truncate(next, size / 3), 0);
        assert_int_equal(rename(next, path), 0);
      }
    }
    if (st != SL_END)
      fail_msg("%s: %s: %s", backends[k][1], sl_status_name(st),
               sl_loader_errmsg(ld));
    sl_loader_stats s;
    assert_int_equal(sl_loader_stats_get(ld, &s), SL_OK);
    assert_int_equal(s.skipped, 0);
    assert_true(h == want); /* the old file's samples, all of them */
    sl_loader_close(ld);
    sl_test_unlink_lmdb(path);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(identical_lmdb_random),
      cmocka_unit_test(identical_lmdb_quasi),
      cmocka_unit_test(identical_hdf5_random),
      cmocka_unit_test(identical_hdf5_quasi),
      cmocka_unit_test(abandon_midway),
      cmocka_unit_test(resume_mid_epoch),
      cmocka_unit_test(truncated_under_loader),
      cmocka_unit_test(replaced_by_rename),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
