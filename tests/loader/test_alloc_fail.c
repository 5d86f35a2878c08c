/* Allocation failure at every point, SQLite style: the kth malloc, calloc,
 * realloc, posix_memalign, aligned_alloc or strdup made by sluice's own code
 * (the stages' objects are linked with --wrap, so allocations inside
 * liblmdb, libhdf5 and glibc are not counted) fails, for k = 1, 2, ...
 * until the operation succeeds, over sl_dataset_open (LMDB, HDF5),
 * sl_loader_open plus one batch, and a writer's life (create, adds,
 * commit). Each failure must be a clean error (a status and a message;
 * SL_ENOMEM counted), no crash, and, under ASan, no leak; a failed writer
 * leaves no file. The counts are printed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sluice.h"
#include "support/alloc_fail.h"
#include "support/loader_data.h"

/* ---- the operations ---- */
typedef struct paths {
  char lmdb[512], h5[512], out[512];
} paths;

static const sl_test_set k_set = {.n = 12,
                                  .nclasses = 3,
                                  .bad = -1,
                                  .seed0 = 5,
                                  .w0 = 40,
                                  .wstep = 7,
                                  .wmod = 30,
                                  .h0 = 30,
                                  .hstep = 11,
                                  .hmod = 30};

typedef struct tally {
  long points;   /* allocations failed with the operation failing */
  long absorbed; /* allocations failed and the operation still whole */
} tally;

/* A failed allocation must come back as SL_ENOMEM with a message: not as
 * a format or I/O error, which would send the user after the wrong cause. */
static void check_failed(tally *t, sl_status st, const char *msg,
                         const char *what, long k) {
  if (st != SL_ENOMEM || !msg || !msg[0])
    fail_msg("%s, allocation %ld failed: %s '%s'", what, k, sl_status_name(st),
             msg ? msg : "(null)");
  t->points++;
}

static void dataset_open(const char *path, tally *t) {
  for (long k = 1;; k++) {
    sl_dataset *ds = NULL;
    sl_alloc_fail_arm(k);
    sl_status st = sl_dataset_open_file(&ds, path);
    int hit = sl_alloc_fail_disarm();
    if (!hit) {
      assert_int_equal(st, SL_OK);
      assert_int_equal(sl_dataset_count(ds), (uint64_t)k_set.n);
      sl_dataset_close(ds);
      return;
    }
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", ds ? sl_dataset_errmsg(ds) : "no handle");
    if (st == SL_OK) { /* the failure was absorbed: it must still work */
      assert_int_equal(sl_dataset_count(ds), (uint64_t)k_set.n);
      t->absorbed++;
    } else
      check_failed(t, st, msg, path, k);
    sl_dataset_close(ds);
  }
}

static void loader_open(const char *path, tally *t) {
  static const char *const base[] = {"device.backend",
                                     "host",
                                     "loader.batch_size",
                                     "4",
                                     "loader.workers",
                                     "2",
                                     "resolution.max",
                                     "32",
                                     "resolution.min",
                                     "32",
                                     "augment.dtype",
                                     "u8",
                                     NULL};
  sl_config *cfg;
  assert_int_equal(sl_config_create(&cfg), SL_OK);
  assert_int_equal(sl_config_set(cfg, "dataset.path", path), SL_OK);
  for (int i = 0; base[i]; i += 2)
    assert_int_equal(sl_config_set(cfg, base[i], base[i + 1]), SL_OK);
  for (long k = 1;; k++) {
    sl_loader *ld = NULL;
    sl_alloc_fail_arm(k);
    sl_status st = sl_loader_open(&ld, cfg);
    if (st == SL_OK)
      st = sl_loader_start_epoch(ld, 0);
    sl_batch b;
    if (st == SL_OK && (st = sl_loader_next(ld, &b)) == SL_OK)
      st = sl_batch_release(ld, &b, NULL);
    int hit = sl_alloc_fail_disarm();
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", sl_loader_errmsg(ld));
    sl_loader_close(ld);
    if (!hit) {
      assert_int_equal(st, SL_OK);
      break;
    }
    if (st != SL_OK)
      check_failed(t, st, msg, "loader", k);
    else
      t->absorbed++;
  }
  sl_config_destroy(cfg);
}

/* The writer's temporary files beside path (".NAME.sluice-tmp.PID"). */
static size_t temp_files(const char *path) {
  char pat[1100];
  const char *slash = strrchr(path, '/');
  snprintf(pat, sizeof pat, "%.*s.%s.sluice-tmp*",
           slash ? (int)(slash - path + 1) : 0, path, slash ? slash + 1 : path);
  glob_t g;
  int rc = glob(pat, 0, NULL, &g);
  size_t n = rc == 0 ? g.gl_pathc : 0;
  if (rc == 0)
    globfree(&g);
  return n;
}

/* A committed file reads back whole. */
static void check_written(const char *path) {
  sl_dataset *ds = NULL;
  if (sl_dataset_open_file(&ds, path) != SL_OK)
    fail_msg("%s", sl_dataset_errmsg(ds));
  assert_int_equal(sl_dataset_count(ds), 3);
  assert_int_equal(sl_dataset_class_count(ds), 3); /* labels 0..2 */
  sl_dataset_close(ds);
  assert_int_equal(temp_files(path), 0);
}

static void writer_life(const char *path, tally *t) {
  uint8_t px[16 * 16 * 3];
  for (size_t i = 0; i < sizeof px; i++)
    px[i] = (uint8_t)(i * 7);
  for (long k = 1;; k++) {
    sl_writer_options o = {0};
    o.target_width = 1;
    sl_writer *w = NULL;
    sl_alloc_fail_arm(k);
    sl_status st = sl_writer_create(&w, path, &o);
    for (int i = 0; i < 3 && st == SL_OK; i++)
      st = sl_writer_add_pixels(w, px, 16, 16, 3, i, (float[]){0.5f}, "x");
    if (st == SL_OK)
      st = sl_writer_set_class_name(w, 1, "one");
    if (st == SL_OK)
      st = sl_writer_commit(w);
    int hit = sl_alloc_fail_disarm();
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", w ? sl_writer_errmsg(w) : "no handle");
    sl_writer_destroy(w);
    struct stat sb;
    if (!hit) {
      assert_int_equal(st, SL_OK);
      check_written(path);
      sl_test_unlink_lmdb(path);
      unlink(path);
      return;
    }
    if (st == SL_OK) { /* absorbed: the file must be whole */
      check_written(path);
      sl_test_unlink_lmdb(path);
      unlink(path);
      t->absorbed++;
      continue;
    }
    check_failed(t, st, msg, path, k);
    assert_int_not_equal(stat(path, &sb), 0); /* no partial output */
    assert_int_equal(temp_files(path), 0);    /* nor a temporary file */
  }
}

static paths g_p;

static int setup(void **state) {
  (void)state;
  sl_test_tmp_path(g_p.lmdb, sizeof g_p.lmdb, "alloc", "lmdb");
  sl_test_tmp_path(g_p.h5, sizeof g_p.h5, "alloc", "h5");
  sl_test_write_set(g_p.lmdb, &k_set, 0);
  sl_test_write_set(g_p.h5, &k_set, 0);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  sl_test_unlink_lmdb(g_p.lmdb);
  unlink(g_p.h5);
  return 0;
}

static void report(const char *what, const tally *t) {
  fprintf(stderr,
          "%s: %ld allocation points injected (%ld SL_ENOMEM, %ld absorbed), "
          "0 crashes\n",
          what, t->points + t->absorbed, t->points, t->absorbed);
  assert_true(t->points > 0);
}

static void dataset_open_lmdb(void **state) {
  (void)state;
  tally t = {0};
  dataset_open(g_p.lmdb, &t);
  report("sl_dataset_open LMDB", &t);
}

static void dataset_open_hdf5(void **state) {
  (void)state;
  tally t = {0};
  dataset_open(g_p.h5, &t);
  report("sl_dataset_open HDF5", &t);
}

static void loader_lmdb(void **state) {
  (void)state;
  tally t = {0};
  loader_open(g_p.lmdb, &t);
  report("sl_loader_open + one batch, LMDB", &t);
}

static void loader_hdf5(void **state) {
  (void)state;
  tally t = {0};
  loader_open(g_p.h5, &t);
  report("sl_loader_open + one batch, HDF5", &t);
}

static void writer_lmdb(void **state) {
  (void)state;
  tally t = {0};
  sl_test_tmp_path(g_p.out, sizeof g_p.out, "alloc_out", "lmdb");
  writer_life(g_p.out, &t);
  report("writer life, LMDB", &t);
}

static void writer_hdf5(void **state) {
  (void)state;
  tally t = {0};
  sl_test_tmp_path(g_p.out, sizeof g_p.out, "alloc_out", "h5");
  writer_life(g_p.out, &t);
  report("writer life, HDF5", &t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(dataset_open_lmdb), cmocka_unit_test(dataset_open_hdf5),
      cmocka_unit_test(loader_lmdb),       cmocka_unit_test(loader_hdf5),
      cmocka_unit_test(writer_lmdb),       cmocka_unit_test(writer_hdf5),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
