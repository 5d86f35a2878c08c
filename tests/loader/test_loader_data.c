/* The loader on real files: synthetic JPEGs written to LMDB and HDF5 with
 * the formats/ writer, decoded and augmented by the real pipeline. Same
 * seed → bit-identical batches for 1, 2 and 8 workers; another seed
 * differs; resume equals the uninterrupted run; every resolution of a
 * schedule has its shape; a corrupt sample fails naming its index, or is
 * skipped and counted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sluice.h"
#include "support/loader_data.h"
#include "support/proc.h"

#define NSAMPLES 48
#define BAD_INDEX 17

static char g_lmdb[512], g_h5[512];

static const sl_test_set k_set = {.n = NSAMPLES,
                                  .nclasses = 5,
                                  .bad = BAD_INDEX,
                                  .seed0 = 1,
                                  .w0 = 40,
                                  .wstep = 13,
                                  .wmod = 70,
                                  .h0 = 36,
                                  .hstep = 29,
                                  .hmod = 80};

static int setup(void **state) {
  sl_test_tmp_path(g_lmdb, sizeof g_lmdb, "loader_data", "lmdb");
  sl_test_tmp_path(g_h5, sizeof g_h5, "loader_data", "h5");
  sl_test_write_set(g_lmdb, &k_set, 1);
  sl_test_write_set(g_h5, &k_set, 0);
  return 0;
}

static int teardown(void **state) {
  sl_test_unlink_lmdb(g_lmdb);
  unlink(g_h5);
  return 0;
}

static sl_loader *open_on(const char *path, const char *const *kv) {
  static const char *const base[] = {"device.backend",
                                     "host",
                                     "loader.batch_size",
                                     "6",
                                     "loader.order",
                                     "random",
                                     "loader.drop_last",
                                     "false",
                                     "resolution.schedule",
                                     "steps",
                                     "resolution.steps",
                                     "0:32, 1:48, 2:24",
                                     "augment.dtype",
                                     "fp16",
                                     NULL};
  return sl_test_open_loader(path, base, kv, NULL, NULL);
}

/* Hash of epochs [e0, e1) from batch `from` of e0; checks shapes. */
static uint64_t run(sl_loader *ld, uint64_t e0, uint64_t e1, int start) {
  static const uint32_t res[] = {32, 48, 24, 24};
  uint64_t h = 0xcbf29ce484222325ULL;
  for (uint64_t e = e0; e < e1; e++) {
    if (start || e > e0)
      assert_int_equal(sl_loader_start_epoch(ld, e), SL_OK);
    sl_batch b;
    sl_status st;
    while ((st = sl_loader_next(ld, &b)) == SL_OK) {
      assert_int_equal(b.height, res[e]);
      assert_int_equal(b.width, res[e]);
      assert_int_equal(b.channels, 3);
      assert_int_equal(b.dtype, SL_DTYPE_FP16);
      assert_int_equal(b.bytes, (size_t)b.n * 3 * 2 * res[e] * res[e]);
      for (uint32_t j = 0; j < b.n; j++) {
        assert_true(b.indices[j] < NSAMPLES);
        assert_int_equal(b.labels[j], (int32_t)(b.indices[j] % 5));
      }
      h = sl_test_hash(h, b.indices, b.n * sizeof *b.indices);
      h = sl_test_hash(h, b.data, b.bytes);
      assert_int_equal(sl_batch_release(ld, &b, NULL), SL_OK);
    }
    if (st != SL_END)
      fail_msg("%s", sl_loader_errmsg(ld));
  }
  return h;
}

static void test_deterministic_over_workers(void **state) {
  uint64_t h[3];
  const char *workers[] = {"1", "2", "8"};
  for (int i = 0; i < 3; i++) {
    const char *kv[] = {"loader.workers", workers[i], NULL};
    sl_loader *ld = open_on(g_h5, kv);
    h[i] = run(ld, 0, 3, 1);
    sl_loader_close(ld);
  }
  assert_int_equal(h[0], h[1]);
  assert_int_equal(h[1], h[2]);
  const char *pread[] = {"loader.workers", "2", "loader.io", "pread", NULL};
  sl_loader *lp = open_on(g_h5, pread); /* bytes by pread, same batches */
  assert_int_equal(run(lp, 0, 3, 1), h[0]);
  sl_loader_close(lp);
  const char *kv[] = {"loader.workers", "2", "loader.seed", "2", NULL};
  sl_loader *ld = open_on(g_h5, kv);
  assert_true(run(ld, 0, 3, 1) != h[0]);
  sl_loader_close(ld);
  /* JPEGs decoded to planes: other pixels, the same for any worker count */
  uint64_t hp[2];
  const char *pw[] = {"1", "8"};
  for (int i = 0; i < 2; i++) {
    const char *kp[] = {"loader.workers", pw[i], "augment.jpeg_planes", "true",
                        NULL};
    sl_loader *lq = open_on(g_h5, kp);
    hp[i] = run(lq, 0, 3, 1);
    sl_loader_close(lq);
  }
  assert_int_equal(hp[0], hp[1]);
  assert_true(hp[0] != h[0]);
}

/* The recipe's per-sample ops and batch mixing: the same batches and soft
 * targets for any worker count (the mixing runs on the mover thread: TSan
 * sees it with the workers), other batches than without them. */
static void test_recipe_and_mixing_over_workers(void **state) {
  const char *const recipe[] = {"augment.auto",
                                "randaugment",
                                "augment.color_jitter",
                                "0.4, 0.4, 0.4, 0.1",
                                "augment.blur",
                                "0.5",
                                "augment.blur_kernel",
                                "3",
                                "augment.erasing",
                                "0.5",
                                "augment.mixup",
                                "0.8",
                                "augment.cutmix",
                                "1.0",
                                "augment.label_smoothing",
                                "0.1"};
  uint64_t h[3];
  const char *workers[] = {"1", "3", "8"};
  for (int i = 0; i < 3; i++) {
    const char *kv[2 + sizeof recipe / sizeof recipe[0] + 1];
    size_t n = 0;
    kv[n++] = "loader.workers";
    kv[n++] = workers[i];
    for (size_t k = 0; k < sizeof recipe / sizeof recipe[0]; k++)
      kv[n++] = recipe[k];
    kv[n] = NULL;
    sl_loader *ld = open_on(g_lmdb, kv);
    assert_int_equal(sl_loader_start_epoch(ld, 1), SL_OK);
    sl_batch b;
    uint64_t hh = 0xcbf29ce484222325ULL;
    int mixed = 0;
    while (sl_loader_next(ld, &b) == SL_OK) {
      assert_int_equal(b.target_width, 5);
      for (uint32_t j = 0; j < b.n; j++) {
        double sum = 0;
        for (int c = 0; c < 5; c++)
          sum += b.targets[j * 5 + c];
        assert_true(fabs(sum - 1.0) < 1e-5);
      }
      mixed += b.mix_kind != 0;
      hh = sl_test_hash(hh, b.data, b.bytes);
      hh = sl_test_hash(hh, b.targets, (size_t)b.n * 5 * sizeof(float));
      hh = sl_test_hash(hh, &b.mix_lambda, sizeof b.mix_lambda);
      assert_int_equal(sl_batch_release(ld, &b, NULL), SL_OK);
    }
    assert_true(mixed > 0);
    h[i] = hh;
    sl_loader_close(ld);
  }
  assert_int_equal(h[0], h[1]);
  assert_int_equal(h[1], h[2]);
}

/* Two datasets mixed 3:1 (dataset.mix: the HDF5 file twice, the second
 * drawn with its own augmentation seed): the same batches for 1, 2 and 8
 * workers (TSan sees the members' readers with the workers), each
 * sample's source and label as its index says, shares exact. */
static void test_dataset_mix_over_workers(void **state) {
  char mix[1100];
  snprintf(mix, sizeof mix, "%s, %s", g_h5, g_h5);
  uint64_t h[3];
  const char *workers[] = {"1", "2", "8"};
  for (int i = 0; i < 3; i++) {
    const char *kv[] = {"dataset.path",
                        "",
                        "dataset.mix",
                        mix,
                        "dataset.weights",
                        "3, 1",
                        "loader.workers",
                        workers[i],
                        NULL};
    sl_loader *ld = open_on(g_h5, kv);
    assert_int_equal(sl_loader_source_count(ld), 2);
    assert_int_equal(sl_loader_sample_count(ld), 2 * NSAMPLES);
    uint64_t share[2] = {0, 0};
    h[i] = SL_TEST_HASH0;
    assert_int_equal(sl_loader_start_epoch(ld, 1), SL_OK);
    sl_batch b;
    sl_status st;
    while ((st = sl_loader_next(ld, &b)) == SL_OK) {
      uint32_t src[6];
      assert_int_equal(sl_batch_sources(ld, &b, src), SL_OK);
      for (uint32_t j = 0; j < b.valid; j++) {
        uint64_t local;
        assert_int_equal(sl_loader_source_of(ld, b.indices[j], &local), src[j]);
        assert_int_equal(b.labels[j], (int32_t)(local % 5));
        share[src[j]]++;
      }
      h[i] = sl_test_hash(h[i], b.indices, b.n * sizeof *b.indices);
      h[i] = sl_test_hash(h[i], b.data, b.bytes);
      assert_int_equal(sl_batch_release(ld, &b, NULL), SL_OK);
    }
    if (st != SL_END)
      fail_msg("%s", sl_loader_errmsg(ld));
    assert_int_equal(share[0], 72); /* 96 x 3/4 */
    assert_int_equal(share[1], 24);
    assert_int_equal(sl_loader_source_of(ld, 2 * NSAMPLES, NULL), UINT32_MAX);
    sl_loader_close(ld);
  }
  assert_int_equal(h[0], h[1]);
  assert_int_equal(h[1], h[2]);
}

static void test_resume(void **state) {
  const char *kv[] = {"loader.workers",
                      "3",
                      "loader.order",
                      "quasi_random",
                      "loader.quasi_block",
                      "4",
                      NULL};
  sl_loader *ld = open_on(g_h5, kv);
  assert_int_equal(sl_loader_start_epoch(ld, 1), SL_OK);
  sl_batch b;
  for (int k = 0; k < 3; k++) {
    assert_int_equal(sl_loader_next(ld, &b), SL_OK);
    sl_batch_release(ld, &b, NULL);
  }
  uint8_t blob[SL_LOADER_STATE_BYTES];
  size_t len = sizeof blob;
  assert_int_equal(sl_loader_save_state(ld, blob, &len), SL_OK);
  uint64_t want = run(ld, 1, 3, 0);
  sl_loader_close(ld);
  ld = open_on(g_h5, kv);
  assert_int_equal(sl_loader_restore_state(ld, blob, len), SL_OK);
  assert_int_equal(run(ld, 1, 3, 0), want);
  sl_loader_close(ld);
}

/* A state restores only onto the same data and the same batch contents:
 * another file with the same sample count, sizes and labels but other
 * images is refused, as are another resolution.max and other augmentation
 * or dtype settings, each naming what differs. The same samples in the
 * other file format resume. */
static void test_resume_refuses_other_data(void **state) {
  const char *kv[] = {"resolution.schedule", "constant", NULL};
  sl_loader *ld = open_on(g_h5, kv);
  assert_int_equal(sl_loader_start_epoch(ld, 1), SL_OK);
  sl_batch b;
  assert_int_equal(sl_loader_next(ld, &b), SL_OK);
  assert_int_equal(sl_batch_release(ld, &b, NULL), SL_OK);
  uint8_t blob[SL_LOADER_STATE_BYTES];
  size_t len = sizeof blob;
  assert_int_equal(sl_loader_save_state(ld, blob, &len), SL_OK);
  sl_loader_close(ld);

  /* Same count, sizes, labels and class count; other images. */
  char other[512];
  sl_test_tmp_path(other, sizeof other, "loader_data_other", "h5");
  sl_test_set set = k_set;
  set.seed0 = 1000;
  sl_test_write_set(other, &set, 1);
  ld = open_on(other, kv);
  assert_int_equal(sl_loader_sample_count(ld), NSAMPLES);
  assert_int_equal(sl_loader_restore_state(ld, blob, len), SL_ESTATE);
  if (!strstr(sl_loader_errmsg(ld), "dataset"))
    fail_msg("%s", sl_loader_errmsg(ld));
  sl_loader_close(ld);
  /* The same samples in another order (as pack --shuffle makes them). */
  set = k_set;
  set.reverse = 1;
  sl_test_write_set(other, &set, 1);
  ld = open_on(other, kv);
  assert_int_equal(sl_loader_restore_state(ld, blob, len), SL_ESTATE);
  if (!strstr(sl_loader_errmsg(ld), "another order"))
    fail_msg("%s", sl_loader_errmsg(ld));
  sl_loader_close(ld);
  unlink(other);

  /* Each refusal names what changed, and an augmentation change names its
   * group of keys alone (issue 40: erasing listed crop, flip, mean...). */
  const char *const changed[][4] = {
      /* key, value, named, none of these named */
      {"resolution.max", "160", "resolution", "augment"},
      {"augment.flip", "0", "augment.flip",
       "crop mean filter erasing mixup auto color"},
      {"augment.dtype", "fp32", "augment.dtype", "resolution flip"},
      {"loader.mode", "eval", "loader.mode", "augment"},
      {"augment.jpeg_planes", "true", "augment.jpeg_planes",
       "crop flip mean erasing mixup auto color"},
      {"augment.erasing", "0.25", "augment.erasing",
       "crop flip mean filter mixup auto color"},
      {"augment.mixup", "0.2", "augment.mixup",
       "crop flip mean filter erasing auto color"},
      {"augment.std", "0.5,0.5,0.5", "augment.std",
       "crop flip filter erasing mixup auto color"},
      {"augment.auto", "trivial", "augment.auto",
       "crop flip mean filter erasing mixup color"}};
  for (size_t i = 0; i < sizeof changed / sizeof changed[0]; i++) {
    const char *kv2[] = {"resolution.schedule", "constant", changed[i][0],
                         changed[i][1], NULL};
    ld = open_on(g_h5, kv2);
    assert_int_equal(sl_loader_restore_state(ld, blob, len), SL_ESTATE);
    const char *msg = sl_loader_errmsg(ld);
    if (!strstr(msg, changed[i][2]))
      fail_msg("%s = %s: %s", changed[i][0], changed[i][1], msg);
    char others[128];
    snprintf(others, sizeof others, "%s", changed[i][3]);
    for (char *save = NULL, *w = strtok_r(others, " ", &save); w;
         w = strtok_r(NULL, " ", &save))
      if (strstr(msg, w))
        fail_msg("%s = %s names %s: %s", changed[i][0], changed[i][1], w, msg);
    sl_loader_close(ld);
  }

  /* A version 2 blob (saved before the group tags: order .. channels as
   * u32; rank and world size as u64 at 56 and 64, as version 3 has them)
   * still restores, and a refusal then says it cannot tell which. */
  uint8_t v2[SL_LOADER_STATE_BYTES];
  memcpy(v2, blob, sizeof v2);
  v2[8] = 2;
  v2[12] = 128; /* versions 2 to 4 are 128 bytes */
  v2[13] = 0;
  memset(v2 + 56, 0, 16);
  memcpy(v2 + 56, blob + 56, 4); /* rank */
  memcpy(v2 + 64, blob + 60, 4); /* world size */
  for (int i = 5; i >= 0; i--) {
    uint8_t v = blob[72 + i];
    memset(v2 + 72 + 4 * i, 0, 4);
    v2[72 + 4 * i] = v;
  }
  uint64_t sum = 0xcbf29ce484222325ULL;
  for (int i = 0; i < 120; i++)
    sum = (sum ^ v2[i]) * 0x100000001b3ULL;
  for (int i = 0; i < 8; i++)
    v2[120 + i] = (uint8_t)(sum >> (8 * i));
  ld = open_on(g_h5, kv);
  if (sl_loader_restore_state(ld, v2, len) != SL_OK)
    fail_msg("version 2: %s", sl_loader_errmsg(ld));
  sl_loader_close(ld);
  const char *kv3[] = {"resolution.schedule", "constant", "augment.erasing",
                       "0.25", NULL};
  ld = open_on(g_h5, kv3);
  assert_int_equal(sl_loader_restore_state(ld, v2, len), SL_ESTATE);
  if (!strstr(sl_loader_errmsg(ld), "older sluice"))
    fail_msg("version 2: %s", sl_loader_errmsg(ld));
  sl_loader_close(ld);

  /* The same samples in LMDB: the same batches, so it resumes. */
  ld = open_on(g_lmdb, kv);
  if (sl_loader_restore_state(ld, blob, len) != SL_OK)
    fail_msg("%s", sl_loader_errmsg(ld));
  sl_loader_close(ld);
}

/* The same images with and without sluice pack's restart layout give the
 * same batches, byte for byte; only the laid-out ones are decoded from
 * their crops' segments (stats). */
static void test_restart_layout_same_batches(void **state) {
  sl_test_set set = k_set;
  set.bad = -1;
  set.w0 = 180, set.wmod = 160, set.h0 = 140, set.hmod = 150;
  char plain[512], laid[512];
  sl_test_tmp_path(plain, sizeof plain, "loader_plain", "h5");
  sl_test_tmp_path(laid, sizeof laid, "loader_laid", "h5");
  sl_test_write_set(plain, &set, 0);
  set.restart_layout = 1;
  sl_test_write_set(laid, &set, 0);
  const char *kv[] = {"loader.workers", "2", NULL};
  uint64_t h[2], windowed[2];
  const char *paths[2] = {plain, laid};
  for (int i = 0; i < 2; i++) {
    sl_loader *ld = open_on(paths[i], kv);
    h[i] = run(ld, 0, 3, 1);
    sl_loader_stats s;
    assert_int_equal(sl_loader_stats_get(ld, &s), SL_OK);
    assert_int_equal(s.jpeg_samples, s.samples);
    windowed[i] = s.jpeg_windowed;
    sl_loader_close(ld);
  }
  assert_int_equal(h[0], h[1]);
  assert_int_equal(windowed[0], 0);
  assert_true(windowed[1] > 3 * NSAMPLES / 2); /* most of 3 epochs */
  unlink(plain);
  unlink(laid);
}

/* The set of the restart-layout test, large enough for levels. */
static sl_test_set levels_set(unsigned levels) {
  sl_test_set set = k_set;
  set.bad = -1;
  set.w0 = 180, set.wmod = 160, set.h0 = 140, set.hmod = 150;
  set.restart_layout = 1;
  set.levels = levels;
  return set;
}

/* A file with resolution levels holds the same samples as one without:
 * same count, labels, sizes and order, and level 0 decodes to the same
 * pixels. Its batches are the same for 1 and 2 workers (LMDB and HDF5),
 * most crops come from a smaller level, and the stats count them. */
static void test_levels_same_samples_and_batches(void **state) {
  char plain[512], lv[512], lvh[512];
  sl_test_tmp_path(plain, sizeof plain, "levels_plain", "lmdb");
  sl_test_tmp_path(lv, sizeof lv, "levels", "lmdb");
  sl_test_tmp_path(lvh, sizeof lvh, "levels", "h5");
  sl_test_set set = levels_set(0);
  sl_test_write_set(plain, &set, 0);
  set = levels_set(SL_LEVEL_SCALE(4));
  sl_test_write_set(lv, &set, 0);
  set = levels_set(SL_LEVEL_SCALE(4) | SL_LEVEL_SCALE(2));
  sl_test_write_set(lvh, &set, 0);
  sl_dataset *a, *b;
  assert_int_equal(sl_dataset_open_file(&a, plain), SL_OK);
  assert_int_equal(sl_dataset_open_file(&b, lv), SL_OK);
  assert_int_equal(sl_dataset_count(a), sl_dataset_count(b));
  assert_int_equal(sl_dataset_levels(a, NULL, NULL), 0);
  uint64_t images[4], bytes[4];
  assert_int_equal(sl_dataset_levels(b, images, bytes), 2);
  assert_int_equal(images[0], NSAMPLES);
  assert_true(images[1] == NSAMPLES && bytes[1] > 0 && bytes[1] < bytes[0]);
  size_t cap = 400 * 300 * 3, la, lb;
  uint8_t *pa = malloc(cap), *pb = malloc(cap);
  assert_true(pa && pb);
  for (uint64_t i = 0; i < sl_dataset_count(a); i++) {
    sl_sample_meta ma, mb;
    assert_int_equal(sl_dataset_info(a, i, &ma), SL_OK);
    assert_int_equal(sl_dataset_info(b, i, &mb), SL_OK);
    assert_int_equal(ma.label, mb.label);
    assert_int_equal(ma.width, mb.width);
    assert_int_equal(ma.height, mb.height);
    assert_int_equal(ma.codec, SL_IMAGE_JPEG);
    assert_int_equal(mb.codec, SL_IMAGE_JPEG_LEVELS);
    assert_int_equal(sl_dataset_decode(a, i, pa, cap, &la), SL_OK);
    if (sl_dataset_decode(b, i, pb, cap, &lb) != SL_OK)
      fail_msg("%s", sl_dataset_errmsg(b));
    assert_int_equal(la, lb);
    assert_memory_equal(pa, pb, la);
  }
  free(pa);
  free(pb);
  sl_dataset_close(a);
  sl_dataset_close(b);
  const char *paths[2] = {lv, lvh};
  for (int f = 0; f < 2; f++) {
    uint64_t h[2];
    for (int nw = 1; nw <= 2; nw++) {
      const char *kv[] = {"loader.workers", nw == 1 ? "1" : "2", NULL};
      sl_loader *ld = open_on(paths[f], kv);
      h[nw - 1] = run(ld, 0, 3, 1);
      sl_loader_stats s;
      assert_int_equal(sl_loader_stats_get(ld, &s), SL_OK);
      assert_int_equal(s.jpeg_samples, s.samples);
      uint64_t sum = 0;
      for (int k = 0; k < 4; k++)
        sum += s.level_decodes[k];
      assert_int_equal(sum, s.samples);
      /* 24..48 px crops of 140+ px images: nearly all from a level. */
      assert_true(s.level_decodes[1] + s.level_decodes[2] > s.samples / 2);
      if (f == 1)
        assert_true(s.level_decodes[2] > 0);
      sl_loader_close(ld);
    }
    assert_int_equal(h[0], h[1]);
  }
  sl_test_unlink_lmdb(plain);
  sl_test_unlink_lmdb(lv);
  unlink(lvh);
}

/* io.level_only: each backend reads a level record's directory and the
 * one level its crop decodes from, so the bytes read per epoch fall below
 * the records' total (which a whole read takes, exactly, as does uring
 * with io.direct, which reads whole blocks), and the batches are bit for
 * bit those of whole reads, for 1 and 2 workers. */
static void test_levels_read_only_chosen_level(void **state) {
  char lv[512], lvh[512];
  sl_test_tmp_path(lv, sizeof lv, "levels_part", "lmdb");
  sl_test_tmp_path(lvh, sizeof lvh, "levels_part", "h5");
  sl_test_set set = levels_set(SL_LEVEL_SCALE(4));
  sl_test_write_set(lv, &set, 0);
  set = levels_set(SL_LEVEL_SCALE(4) | SL_LEVEL_SCALE(2));
  sl_test_write_set(lvh, &set, 0);
  const char *paths[2] = {lv, lvh};
  const char *ios[4] = {"mmap", "pread", "uring", "uring"}; /* last: direct */
  for (int f = 0; f < 2; f++) {
    sl_dataset *ds;
    assert_int_equal(sl_dataset_open_file(&ds, paths[f]), SL_OK);
    uint64_t total = 0; /* the records' bytes: what one epoch of whole reads
                           takes */
    for (uint64_t i = 0; i < sl_dataset_count(ds); i++) {
      sl_sample_meta m;
      assert_int_equal(sl_dataset_info(ds, i, &m), SL_OK);
      assert_int_equal(m.codec, SL_IMAGE_JPEG_LEVELS);
      total += m.stored_bytes;
    }
    sl_dataset_close(ds);
    uint64_t h0 = 0;
    for (int io = 0; io < 4; io++)
      for (int only = 0; only < 2; only++)
        for (int nw = 1; nw <= 2; nw++) {
          const char *kv[] = {"loader.io",
                              ios[io],
                              "io.direct",
                              io == 3 ? "true" : "false",
                              "io.level_only",
                              only ? "true" : "false",
                              "loader.workers",
                              nw == 1 ? "1" : "2",
                              NULL};
          sl_loader *ld = open_on(paths[f], kv);
          uint64_t h = run(ld, 0, 3, 1);
          sl_loader_stats s;
          assert_int_equal(sl_loader_stats_get(ld, &s), SL_OK);
          assert_int_equal(s.samples, 3 * NSAMPLES);
          if (io == 0 && only == 0 && nw == 1)
            h0 = h;
          if (h != h0)
            fail_msg("%s: io %s%s, level_only %d, %d workers: other batches",
                     paths[f], ios[io], io == 3 ? " direct" : "", only, nw);
          int whole = !only || io == 3;
          if (whole && s.bytes_read != 3 * total)
            fail_msg("%s: io %s%s whole records: %llu bytes read, records "
                     "%llu",
                     paths[f], ios[io], io == 3 ? " direct" : "",
                     (unsigned long long)s.bytes_read,
                     (unsigned long long)(3 * total));
          /* 24..48 px crops of 140+ px images come nearly all from a level
           * of a quarter (1/2 scale) or a sixteenth of level 0's pixels. */
          if (!whole && s.bytes_read * 2 > 3 * total)
            fail_msg("%s: io %s level_only: %llu bytes read, records %llu",
                     paths[f], ios[io], (unsigned long long)s.bytes_read,
                     (unsigned long long)(3 * total));
          if (!whole && nw == 1)
            print_message("%s %s: %llu of %llu bytes read\n",
                          f ? "hdf5" : "lmdb", ios[io],
                          (unsigned long long)s.bytes_read,
                          (unsigned long long)(3 * total));
          sl_loader_close(ld);
        }
  }
  sl_test_unlink_lmdb(lv);
  unlink(lvh);
}

/* A level record damaged in the file (level 1's width in its directory
 * made larger than level 0's) fails the sample with a message naming the
 * file, the sample and the level record, in the loader and in
 * sl_dataset_decode; so does a level JPEG whose size no longer matches its
 * directory (in sl_dataset_decode, which decodes every level). The file
 * still opens (records are read lazily). */
static void test_levels_damaged(void **state) {
  char lv[512];
  sl_test_tmp_path(lv, sizeof lv, "levels_bad", "lmdb");
  sl_test_set set = levels_set(SL_LEVEL_SCALE(4));
  sl_test_write_set(lv, &set, 0);
  FILE *f = fopen(lv, "r+b");
  assert_non_null(f);
  assert_int_equal(fseek(f, 0, SEEK_END), 0);
  long n = ftell(f);
  uint8_t *buf = malloc((size_t)n);
  assert_non_null(buf);
  rewind(f);
  assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
  long at = -1;
  for (long i = 0; i + 4 <= n && at < 0; i++)
    if (memcmp(buf + i, "SLV1", 4) == 0)
      at = i;
  assert_true(at >= 0);
  /* Directory entry 1 (after the 8-byte header and entry 0): its width. */
  long wpos = at + 8 + 8 + 6;
  assert_int_equal(fseek(f, wpos, SEEK_SET), 0);
  uint8_t big[2] = {0xff, 0xff};
  assert_int_equal(fwrite(big, 1, 2, f), 2);
  /* The next record: its level 1 JPEG's own height (in its SOF marker)
   * made one larger, with the directory intact. */
  long at2 = -1;
  for (long i = at + 4; i + 4 <= n && at2 < 0; i++)
    if (memcmp(buf + i, "SLV1", 4) == 0)
      at2 = i;
  assert_true(at2 > at);
  uint32_t l0 = (uint32_t)buf[at2 + 8] | (uint32_t)buf[at2 + 9] << 8 |
                (uint32_t)buf[at2 + 10] << 16 | (uint32_t)buf[at2 + 11] << 24;
  long j1 = at2 + 8 + 2 * 8 + (long)l0, sof = -1;
  for (long i = j1; i + 1 < n && sof < 0; i++)
    if (buf[i] == 0xff && (buf[i + 1] == 0xc0 || buf[i + 1] == 0xc1))
      sof = i;
  assert_true(sof > j1);
  uint8_t h[2] = {buf[sof + 5], (uint8_t)(buf[sof + 6] + 1)};
  assert_int_equal(fseek(f, sof + 5, SEEK_SET), 0);
  assert_int_equal(fwrite(h, 1, 2, f), 2);
  fclose(f);
  free(buf);
  const char *kv[] = {"loader.order", "sequential", "loader.workers", "1",
                      NULL};
  sl_loader *ld = open_on(lv, kv);
  assert_int_equal(sl_loader_start_epoch(ld, 0), SL_OK);
  sl_batch b;
  sl_status st;
  while ((st = sl_loader_next(ld, &b)) == SL_OK)
    sl_batch_release(ld, &b, NULL);
  assert_int_not_equal(st, SL_END);
  const char *msg = sl_loader_errmsg(ld);
  if (!strstr(msg, "level record") || !strstr(msg, "sample ") ||
      !strstr(msg, "levels_bad"))
    fail_msg("message '%s' does not name the file, sample and level record",
             msg);
  sl_loader_close(ld);
  sl_dataset *ds;
  assert_int_equal(sl_dataset_open_file(&ds, lv), SL_OK);
  size_t cap = 400 * 300 * 3, len, bad = 0;
  uint8_t *px = malloc(cap);
  assert_non_null(px);
  for (uint64_t i = 0; i < sl_dataset_count(ds); i++) {
    sl_status s = sl_dataset_decode(ds, i, px, cap, &len);
    if (s == SL_OK)
      continue;
    bad++;
    assert_int_equal(s, SL_EDECODE);
    if (!strstr(sl_dataset_errmsg(ds), "level record"))
      fail_msg("%s", sl_dataset_errmsg(ds));
  }
  free(px);
  assert_int_equal(bad, 2); /* the damaged directory, the damaged level 1 */
  sl_dataset_close(ds);
  sl_test_unlink_lmdb(lv);
}

static void test_corrupt_fail(void **state) {
  const char *kv[] = {"loader.order", "sequential", "loader.workers", "2",
                      NULL};
  sl_loader *ld = open_on(g_lmdb, kv);
  assert_int_equal(sl_loader_start_epoch(ld, 0), SL_OK);
  sl_batch b;
  sl_status st;
  int k = 0;
  while ((st = sl_loader_next(ld, &b)) == SL_OK) {
    sl_batch_release(ld, &b, NULL);
    k++;
  }
  assert_int_equal(k, BAD_INDEX / 6);
  assert_int_not_equal(st, SL_END);
  char want[32];
  snprintf(want, sizeof want, "sample %d", BAD_INDEX);
  if (!strstr(sl_loader_errmsg(ld), want))
    fail_msg("message '%s' does not name %s", sl_loader_errmsg(ld), want);
  sl_loader_close(ld);
}

static void test_corrupt_skip(void **state) {
  const char *kv[] = {"loader.on_error", "skip", "loader.workers", "2", NULL};
  sl_loader *ld = open_on(g_lmdb, kv);
  run(ld, 0, 2, 1);
  sl_loader_stats s;
  assert_int_equal(sl_loader_stats_get(ld, &s), SL_OK);
  assert_true(s.skipped >= 2);
  assert_true(s.nbad >= 1);
  assert_int_equal(s.bad[0], BAD_INDEX);
  assert_true(s.bytes_read > 0);
  assert_true(s.decode_ns > 0);
  sl_loader_close(ld);
}

/* A schedule whose buffers cannot fit is refused at open with the bytes
 * it would need, before any is allocated (it tried to allocate them, and
 * the 24 TiB staging buffers of steps = 0:8192 failed or thrashed); a
 * step above resolution.max is refused by the config's bounds. */
static void test_open_refuses_what_cannot_fit(void **state) {
  (void)state;
  sl_config *cfg;
  assert_int_equal(sl_config_create(&cfg), SL_OK);
  static const char *const kv[] = {"dataset.path",
                                   g_lmdb,
                                   "device.backend",
                                   "host",
                                   "loader.batch_size",
                                   "65536",
                                   "resolution.schedule",
                                   "steps",
                                   "resolution.max",
                                   "8192",
                                   "resolution.steps",
                                   "0:128, 3:8192",
                                   NULL};
  for (int i = 0; kv[i]; i += 2)
    assert_int_equal(sl_config_set(cfg, kv[i], kv[i + 1]), SL_OK);
  sl_loader *ld;
  assert_int_equal(sl_loader_open(&ld, cfg), SL_ECONFIG);
  const char *msg = sl_loader_errmsg(ld);
  if (!strstr(msg, "8192 (resolution.steps), need 120.0 TiB of host memory") ||
      !strstr(msg, "5 batches of 65536 samples at 8192x8192x3, 24.0 TiB each"))
    fail_msg("message: %s", msg);
  sl_loader_close(ld);
  assert_int_equal(sl_config_set(cfg, "resolution.max", "128"), SL_OK);
  assert_int_equal(sl_loader_open(&ld, cfg), SL_ECONFIG);
  msg = sl_loader_errmsg(ld);
  if (!strstr(msg, "step 2 (3:8192) exceeds resolution.max (128)"))
    fail_msg("message: %s", msg);
  sl_loader_close(ld);
  sl_config_destroy(cfg);
}

/* Everything is allocated at open: anonymous RSS (VmRSS also counts the
 * mapped dataset's pages, which the kernel may reclaim and fault back) after
 * epoch 1 and after epoch 5 of the real pipeline are the same (within 1 MiB of
 * allocator noise).
 */
static void test_no_growth(void **state) {
  const char *kv[] = {"loader.workers",
                      "2",
                      "resolution.schedule",
                      "constant",
                      "resolution.min",
                      "32",
                      "resolution.max",
                      "64",
                      "loader.on_error",
                      "skip",
                      NULL};
  sl_loader *ld = open_on(g_lmdb, kv);
  long r[6];
  for (uint64_t e = 0; e < 6; e++) {
    assert_int_equal(sl_loader_start_epoch(ld, e), SL_OK);
    sl_batch b;
    sl_status st;
    while ((st = sl_loader_next(ld, &b)) == SL_OK)
      sl_batch_release(ld, &b, NULL);
    assert_int_equal(st, SL_END);
    r[e] = sl_test_status_kib("RssAnon");
  }
  sl_loader_close(ld);
  assert_true(r[1] > 0);
  if (sl_test_rss_is_meaningful() && r[5] - r[1] >= 1024)
    fail_msg("anonymous RSS grew from %ld KiB (epoch 1) to %ld KiB (epoch 5)",
             r[1], r[5]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_deterministic_over_workers),
      cmocka_unit_test(test_recipe_and_mixing_over_workers),
      cmocka_unit_test(test_dataset_mix_over_workers),
      cmocka_unit_test(test_resume),
      cmocka_unit_test(test_resume_refuses_other_data),
      cmocka_unit_test(test_restart_layout_same_batches),
      cmocka_unit_test(test_levels_same_samples_and_batches),
      cmocka_unit_test(test_levels_read_only_chosen_level),
      cmocka_unit_test(test_levels_damaged),
      cmocka_unit_test(test_corrupt_fail),
      cmocka_unit_test(test_corrupt_skip),
      cmocka_unit_test(test_open_refuses_what_cannot_fit),
      cmocka_unit_test(test_no_growth),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
