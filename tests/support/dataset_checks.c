/* The format tests' shared dataset and loader checks (dataset_checks.h). */
#include "tests/support/dataset_checks.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/tools/cli_run.h"

const char *const sl_test_io_backends[SL_TEST_IO_COUNT] = {"mmap", "pread",
                                                           "uring"};

void sl_test_expect_pixels(const uint8_t *got, const uint8_t *want, size_t n,
                           int tolerance, const char *what, uint64_t sample) {
  for (size_t q = 0; q < n; q++) {
    int d = (int)got[q] - (int)want[q];
    if (d > tolerance || d < -tolerance)
      fail_msg("%s: sample %llu byte %zu: %d, reference %d", what,
               (unsigned long long)sample, q, got[q], want[q]);
  }
}

void sl_test_expect_decode(sl_dataset *ds, uint64_t i, const uint8_t *rgb,
                           int side, int tolerance, const char *what) {
  size_t px = (size_t)side * side, len;
  sl_sample_meta m;
  assert_int_equal(sl_dataset_info(ds, i, &m), SL_OK);
  uint8_t *got = malloc(px * 3), *want = malloc(px * 3);
  assert_non_null(got);
  assert_non_null(want);
  if (sl_dataset_decode(ds, i, got, px * 3, &len) != SL_OK)
    fail_msg("%s: sample %llu: %s", what, (unsigned long long)i,
             sl_dataset_errmsg(ds));
  assert_int_equal(len, px * m.channels);
  memcpy(want, rgb, px * 3);
  if (m.channels == 1) /* gray: compare with the reference's R */
    for (size_t p = 0; p < px; p++)
      want[p] = want[p * 3];
  sl_test_expect_pixels(got, want, len, tolerance, what, i);
  free(got);
  free(want);
}

sl_config *sl_test_config_kv(const char *const *kv) {
  sl_config *cfg;
  assert_int_equal(sl_config_create(&cfg), SL_OK);
  for (; kv && kv[0]; kv += 2)
    if (sl_config_set(cfg, kv[0], kv[1]) != SL_OK)
      fail_msg("%s = %s: %s", kv[0], kv[1], sl_config_errmsg(cfg));
  return cfg;
}

void sl_test_set_native_batches(sl_config *cfg, const char *workers,
                                const char *order, const char *io,
                                const char *max_side) {
  const char *kv[] = {"loader.batch_size",
                      "1",
                      "loader.workers",
                      workers,
                      "loader.order",
                      order,
                      "loader.io",
                      io,
                      "device.backend",
                      "host",
                      "augment.dtype",
                      "u8",
                      "augment.layout",
                      "nhwc",
                      "augment.crop",
                      "none",
                      "augment.flip",
                      "0",
                      "resolution.min",
                      "8",
                      "resolution.max",
                      max_side,
                      NULL};
  for (const char *const *p = kv; p[0]; p += 2)
    if (sl_config_set(cfg, p[0], p[1]) != SL_OK)
      fail_msg("%s = %s: %s", p[0], p[1], sl_config_errmsg(cfg));
}

sl_status sl_test_try_open_kv(sl_dataset **ds, const char *dir,
                              const char *file, const char *const *kv) {
  char path[1024];
  if (dir)
    snprintf(path, sizeof path, "%s/%s", dir, file);
  else
    snprintf(path, sizeof path, "%s", file);
  sl_config *cfg = sl_test_config_kv(NULL);
  if (sl_config_set(cfg, "dataset.path", path) != SL_OK)
    fail_msg("dataset.path = %s: %s", path, sl_config_errmsg(cfg));
  for (; kv && kv[0]; kv += 2)
    if (sl_config_set(cfg, kv[0], kv[1]) != SL_OK)
      fail_msg("%s = %s: %s", kv[0], kv[1], sl_config_errmsg(cfg));
  sl_status st = sl_dataset_open(ds, cfg);
  sl_config_destroy(cfg);
  return st;
}

sl_dataset *sl_test_open_kv(const char *dir, const char *file,
                            const char *const *kv) {
  sl_dataset *ds;
  if (sl_test_try_open_kv(&ds, dir, file, kv) != SL_OK)
    fail_msg("%s: %s", file, sl_dataset_errmsg(ds));
  return ds;
}

sl_loader *sl_test_loader_open_or_skip(sl_config *cfg, const char *io,
                                       const char *what) {
  sl_loader *ld;
  sl_status st = sl_loader_open(&ld, cfg);
  if (st != SL_OK && strcmp(io, "uring") == 0) { /* no io_uring here */
    print_message("loader.io = uring unavailable: %s\n", sl_loader_errmsg(ld));
    sl_loader_close(ld);
    return NULL;
  }
  if (st != SL_OK)
    fail_msg("%s (io %s): %s", what, io, sl_loader_errmsg(ld));
  return ld;
}

void sl_test_expect_open_refused(const char *path, sl_status status,
                                 const char *what, const char *const *want) {
  sl_dataset *ds;
  sl_status st = sl_dataset_open_file(&ds, path);
  if (st != status)
    fail_msg("%s: open gave status %d, not %d: %s", what, (int)st, (int)status,
             st == SL_OK ? "(opened)" : sl_dataset_errmsg(ds));
  const char *msg = sl_dataset_errmsg(ds);
  for (; *want; want++)
    if (!strstr(msg, *want))
      fail_msg("%s: message '%s' lacks '%s'", what, msg, *want);
  sl_dataset_close(ds);
}

sl_dataset *sl_test_open_verify(const char *path, const char *what,
                                sl_test_bad_seen *seen) {
  sl_dataset *ds;
  if (sl_dataset_open_verify(&ds, path, sl_test_on_bad, seen) != SL_OK)
    fail_msg("%s verify: %s", what, sl_dataset_errmsg(ds));
  return ds;
}

void sl_test_expect_skipped(sl_dataset *ds, uint64_t count, uint64_t bad,
                            uint64_t good) {
  assert_int_equal(sl_dataset_count(ds), count);
  sl_sample_meta m;
  assert_int_equal(sl_dataset_info(ds, bad, &m), SL_OK);
  assert_int_equal(m.codec, 0);
  assert_int_equal(sl_dataset_info(ds, good, &m), SL_OK);
  assert_int_not_equal(m.codec, 0);
}

void sl_test_expect_one_bad_sample(const char *path, const char *what,
                                   const char *const *want, uint64_t bad,
                                   uint64_t good, uint64_t count) {
  sl_test_expect_open_refused(path, SL_EFORMAT, what, want);
  sl_test_bad_seen b = {0};
  sl_dataset *ds = sl_test_open_verify(path, what, &b);
  if (b.calls != 1 || b.index != bad)
    fail_msg("%s verify: %d bad samples, the last %llu; sample %llu alone "
             "expected",
             what, b.calls, (unsigned long long)b.index,
             (unsigned long long)bad);
  if (!strstr(b.reason, want[0]))
    fail_msg("%s verify: '%s' lacks '%s'", what, b.reason, want[0]);
  sl_test_expect_skipped(ds, count, bad, good);
  sl_dataset_close(ds);
}

sl_test_ref *sl_test_load_refs(const char *dir, const char *name, size_t *n) {
  char p[1024];
  snprintf(p, sizeof p, "%s/%s.ref", dir, name);
  FILE *f = fopen(p, "rb");
  if (!f)
    fail_msg("%s: cannot open", p);
  sl_test_ref *r = calloc(SL_TEST_REF_MAX, sizeof *r);
  assert_non_null(r);
  size_t k = 0;
  while (k < SL_TEST_REF_MAX && fread(&r[k].label, 4, 1, f) == 1) {
    assert_int_equal(fread(&r[k].lossy, 4, 1, f), 1);
    assert_int_equal(fread(r[k].rgb, sizeof r[k].rgb, 1, f), 1);
    k++;
  }
  fclose(f);
  *n = k;
  return r;
}

void sl_test_expect_ref_pixels(const uint8_t *got, const sl_test_ref *r,
                               const char *what, uint64_t sample) {
  int worst = 0;
  for (size_t b = 0; b < sizeof r->rgb; b++) {
    int d = abs((int)got[b] - (int)r->rgb[b]);
    if (d > worst)
      worst = d;
  }
  if (worst > (r->lossy ? 6 : 0))
    fail_msg("%s: sample %llu: pixels differ by up to %d from the writer's",
             what, (unsigned long long)sample, worst);
}

void sl_test_expect_refs(sl_dataset *ds, const char *format,
                         const sl_test_ref *r, size_t n, const char *what) {
  assert_string_equal(sl_dataset_format(ds), format);
  assert_int_equal(sl_dataset_count(ds), n);
  uint8_t px[sizeof r->rgb];
  for (uint64_t i = 0; i < n; i++) {
    sl_sample_meta m;
    assert_int_equal(sl_dataset_info(ds, i, &m), SL_OK);
    if (m.label != r[i].label)
      fail_msg("%s: sample %llu: label %d, the writer stored %d", what,
               (unsigned long long)i, (int)m.label, (int)r[i].label);
    assert_int_equal(m.width, SL_TEST_REF_SIDE);
    assert_int_equal(m.height, SL_TEST_REF_SIDE);
    size_t len = 0;
    if (sl_dataset_decode(ds, i, px, sizeof px, &len) != SL_OK)
      fail_msg("%s: %s", what, sl_dataset_errmsg(ds));
    assert_int_equal(len, sizeof px);
    sl_test_expect_ref_pixels(px, &r[i], what, i);
  }
}

void sl_test_expect_cli_info(const char *dir, const char *file,
                             const char *want) {
  enum { OUT_CAP = 1 << 16 };
  char args[2048], *out = malloc(OUT_CAP);
  assert_non_null(out);
  snprintf(args, sizeof args, "info '%s/%s'", dir, file);
  int rc = cli_run(args, out, OUT_CAP);
  if (rc != 0)
    fail_msg("info %s: exit %d:\n%s", file, rc, out);
  if (!strstr(out, want))
    fail_msg("info %s: no '%s' in:\n%s", file, want, out);
  snprintf(args, sizeof args, "verify --decode '%s/%s'", dir, file);
  if (cli_run(args, out, OUT_CAP) != 0)
    fail_msg("verify %s:\n%s", file, out);
  free(out);
}
