/* Detection boxes through a real loader: a file of synthetic JPEGs with
 * boxes (the public writer), read with each crop; every batch's boxes
 * equal the geometry the pipeline exposes (sl_aug_sample_geom with the
 * loader's settings) applied to the stored boxes; 1 and 3 workers give
 * bit-identical batches, boxes included; the capacity keeps the first
 * boxes and counts the rest; resume, eval and sharding cover boxes; a
 * file without boxes gives none. */
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

#include "augment/boxes.h"
#include "loader/settings.h"
#include "sluice.h"
#include "support/loader_data.h"
#include "tools/synth.h"

#define NSAMPLES 30
#define BIG 7 /* sample with 12 boxes */

static char g_path[512], g_plain[512];

/* Sample i's boxes: i % 5 of them (12 for BIG), inside its w x h image,
 * at least 4 pixels a side (over 1 output pixel at any resolution of the
 * tests), a few reaching its edges. */
static uint32_t boxes_of(int i, int w, int h, sl_box *out) {
  uint32_t n = i == BIG ? 12 : (uint32_t)(i % 5);
  sl_rng r = sl_rng_for(77, (uint64_t)i, 0);
  for (uint32_t k = 0; k < n; k++) {
    float x0 = (float)(sl_rng_uniform(&r) * (w - 6));
    float y0 = (float)(sl_rng_uniform(&r) * (h - 6));
    float x1 = x0 + 4 + (float)(sl_rng_uniform(&r) * (w - x0 - 4));
    float y1 = y0 + 4 + (float)(sl_rng_uniform(&r) * (h - y0 - 4));
    out[k] = (sl_box){x0, y0, x1, y1, (int32_t)((i + k) % 4), 0};
  }
  return n;
}

static void write_file(const char *path, int with_boxes) {
  sl_test_unlink_lmdb(path);
  sl_writer *w;
  assert_int_equal(sl_writer_create(&w, path, NULL), SL_OK);
  for (int i = 0; i < NSAMPLES; i++) {
    int wd = 60 + (i * 17) % 90, ht = 50 + (i * 23) % 80;
    sl_synth_jpeg_opts o = sl_synth_jpeg_defaults();
    uint8_t *buf;
    size_t len;
    assert_int_equal(sl_synth_jpeg((uint64_t)i + 3, wd, ht, &o, &buf, &len,
                                   &(sl_synth_err){0}),
                     SL_OK);
    sl_box b[16];
    uint32_t n = with_boxes ? boxes_of(i, wd, ht, b) : 0;
    sl_status st =
        sl_writer_add_annotated(w, buf, len, i % 4, NULL, NULL, b, n);
    if (st != SL_OK)
      fprintf(stderr, "%s\n", sl_writer_errmsg(w));
    assert_int_equal(st, SL_OK);
    free(buf);
  }
  assert_int_equal(sl_writer_commit(w), SL_OK);
  sl_writer_destroy(w);
}

static int setup(void **state) {
  (void)state;
  sl_test_tmp_path(g_path, sizeof g_path, "loader_boxes", "lmdb");
  sl_test_tmp_path(g_plain, sizeof g_plain, "loader_noboxes", "lmdb");
  write_file(g_path, 1);
  write_file(g_plain, 0);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  sl_test_unlink_lmdb(g_path);
  sl_test_unlink_lmdb(g_plain);
  return 0;
}

static const char *const k_base[] = {"device.backend",
                                     "host",
                                     "loader.batch_size",
                                     "4",
                                     "loader.order",
                                     "random",
                                     "loader.drop_last",
                                     "false",
                                     "resolution.schedule",
                                     "steps",
                                     "resolution.steps",
                                     "0:48, 1:64",
                                     "augment.dtype",
                                     "u8",
                                     "augment.auto",
                                     "randaugment",
                                     NULL};

static sl_config *config(const char *path, const char *const *kv) {
  sl_config *cfg;
  assert_int_equal(sl_config_create(&cfg), SL_OK);
  assert_int_equal(sl_config_set(cfg, "dataset.path", path), SL_OK);
  for (int i = 0; k_base[i]; i += 2)
    assert_int_equal(sl_config_set(cfg, k_base[i], k_base[i + 1]), SL_OK);
  for (int i = 0; kv && kv[i]; i += 2)
    assert_int_equal(sl_config_set(cfg, kv[i], kv[i + 1]), SL_OK);
  return cfg;
}

static sl_loader *open_cfg(const sl_config *cfg) {
  sl_loader *ld = NULL;
  sl_status st = sl_loader_open(&ld, cfg);
  if (st != SL_OK)
    fprintf(stderr, "open: %s\n", sl_loader_errmsg(ld));
  assert_int_equal(st, SL_OK);
  return ld;
}

/* Every sample of b against the exposed geometry on its stored boxes. */
static uint64_t check_batch(const sl_batch *b, const sl_settings *s,
                            sl_dataset *ds, uint32_t cap) {
  assert_int_equal(b->box_capacity, cap);
  assert_non_null(b->boxes);
  uint64_t over = 0;
  for (uint32_t j = 0; j < b->n; j++) {
    uint64_t idx = b->indices[j];
    sl_sample_meta m;
    assert_int_equal(sl_dataset_info(ds, idx, &m), SL_OK);
    const sl_box *sb;
    uint32_t n;
    assert_int_equal(sl_dataset_boxes(ds, idx, &sb, &n), SL_OK);
    assert_int_equal(m.box_count, n);
    sl_aug_geom g;
    sl_aug_sample_geom(&s->aug, (const float *)sb, sizeof(sl_box), n,
                       (int)m.width, (int)m.height, (int)b->height,
                       (int)b->width, s->sampler.seed, b->epoch, idx, &g);
    float want[16 * 4];
    uint32_t src[16];
    uint32_t kept =
        sl_boxes_map(&g, (int)b->width, (int)b->height, s->aug.box_min_area,
                     (const float *)sb, sizeof(sl_box), n, want, src, cap);
    uint32_t cnt = kept < cap ? kept : cap;
    over += kept - cnt;
    assert_int_equal(b->box_counts[j], cnt);
    const float *got = b->boxes + (size_t)j * cap * 4;
    const int32_t *lab = b->box_labels + (size_t)j * cap;
    assert_memory_equal(got, want, (size_t)cnt * 4 * sizeof(float));
    for (uint32_t k = 0; k < cnt; k++) {
      assert_int_equal(lab[k], sb[src[k]].label);
      assert_true(got[4 * k] >= 0 && got[4 * k + 2] <= (float)b->width);
      assert_true(got[4 * k + 1] >= 0 && got[4 * k + 3] <= (float)b->height);
      assert_true(got[4 * k + 2] - got[4 * k] >= 1);
    }
    for (uint32_t k = cnt; k < cap; k++) {
      assert_int_equal(lab[k], -1);
      for (int c = 0; c < 4; c++)
        assert_true(got[4 * k + c] == 0.0f);
    }
  }
  return over;
}

/* Runs epochs [0, 2), checking every batch; returns a hash of all the
 * batches' bytes, boxes included. */
static uint64_t run_checked(const sl_config *cfg, uint32_t cap, int *warped) {
  sl_settings s;
  sl_err err;
  assert_int_equal(sl_settings_from_config(&s, cfg, &err), SL_OK);
  sl_dataset *ds;
  assert_int_equal(sl_dataset_open_file(&ds, g_path), SL_OK);
  sl_loader *ld = open_cfg(cfg);
  uint64_t h = 0xcbf29ce484222325ULL, over = 0;
  for (uint64_t e = 0; e < 2; e++) {
    assert_int_equal(sl_loader_start_epoch(ld, e), SL_OK);
    sl_batch b;
    sl_status st;
    while ((st = sl_loader_next(ld, &b)) == SL_OK) {
      over += check_batch(&b, &s, ds, cap);
      h = sl_test_hash(h, b.data, b.bytes);
      h = sl_test_hash(h, b.boxes, (size_t)b.n * cap * 16);
      h = sl_test_hash(h, b.box_labels, (size_t)b.n * cap * 4);
      h = sl_test_hash(h, b.box_counts, (size_t)b.n * 4);
      for (uint32_t j = 0; warped && j < b.n; j++) {
        sl_aug_geom g;
        sl_rng rr = sl_recipe_rng(s.sampler.seed, e, b.indices[j]);
        sl_recipe_draw_all(&s.aug.recipe, &rr, (int)b.width, (int)b.height,
                           &g.rd);
        for (int k = 0; k < g.rd.n_steps; k++)
          *warped += g.rd.steps[k].op >= SL_POP_SHEAR_X &&
                     g.rd.steps[k].op <= SL_POP_ROTATE;
      }
      assert_int_equal(sl_batch_release(ld, &b, SL_RELEASE_DONE), SL_OK);
    }
    assert_int_equal(st, SL_END);
  }
  sl_loader_stats stats;
  assert_int_equal(sl_loader_stats_get(ld, &stats), SL_OK);
  assert_int_equal(stats.boxes_over, over);
  sl_loader_close(ld);
  sl_dataset_close(ds);
  return h;
}

static void test_boxes_every_crop_and_workers(void **state) {
  (void)state;
  const char *crops[] = {"random_resized", "iou_crop", "letterbox", "center",
                         "none"};
  for (int c = 0; c < 5; c++) {
    uint64_t h[2];
    int warped = 0;
    for (int k = 0; k < 2; k++) {
      const char *kv[] = {"augment.crop",
                          crops[c],
                          "loader.workers",
                          k ? "3" : "1",
                          "augment.box_min_area",
                          c == 0 ? "0.3" : "0",
                          NULL};
      sl_config *cfg = config(g_path, kv);
      h[k] = run_checked(cfg, 12, &warped);
      sl_config_destroy(cfg);
    }
    assert_true(h[0] == h[1]); /* 1 and 3 workers: the same bytes */
    assert_true(warped > 0);
  }
}

static void test_capacity_keeps_first_and_counts(void **state) {
  (void)state;
  const char *kv[] = {"loader.max_boxes",
                      "3",
                      "augment.crop",
                      "none",
                      "augment.auto",
                      "none",
                      NULL};
  sl_config *cfg = config(g_path, kv);
  (void)run_checked(cfg, 3, NULL);
  /* With the whole image and no warps every box is kept: the over count is
   * each sample's count beyond 3, for the two epochs. */
  sl_loader *ld = open_cfg(cfg);
  uint64_t want = 0;
  for (int i = 0; i < NSAMPLES; i++) {
    uint32_t n = i == BIG ? 12 : (uint32_t)(i % 5);
    want += n > 3 ? n - 3 : 0;
  }
  assert_int_equal(sl_loader_start_epoch(ld, 0), SL_OK);
  sl_batch b;
  while (sl_loader_next(ld, &b) == SL_OK)
    sl_batch_release(ld, &b, SL_RELEASE_DONE);
  sl_loader_stats st;
  assert_int_equal(sl_loader_stats_get(ld, &st), SL_OK);
  /* drop_last false: the padded repeats count again */
  assert_true(st.boxes_over >= want && st.boxes_over <= want + 4 * 9);
  assert_true(st.box_samples_over >= 1);
  sl_loader_close(ld);
  sl_config_destroy(cfg);
}

/* Batches [from, end) of epoch 1 as one hash. */
static uint64_t hash_from(sl_loader *ld, uint64_t skip) {
  uint64_t h = 0xcbf29ce484222325ULL;
  sl_batch b;
  uint64_t k = 0;
  while (sl_loader_next(ld, &b) == SL_OK) {
    if (k++ >= skip) {
      h = sl_test_hash(h, b.boxes, (size_t)b.n * b.box_capacity * 16);
      h = sl_test_hash(h, b.box_counts, (size_t)b.n * 4);
      h = sl_test_hash(h, b.box_labels, (size_t)b.n * b.box_capacity * 4);
    }
    sl_batch_release(ld, &b, SL_RELEASE_DONE);
  }
  return h;
}

static void test_resume_eval_and_shards(void **state) {
  (void)state;
  const char *kv[] = {"augment.crop", "iou_crop", NULL};
  sl_config *cfg = config(g_path, kv);
  sl_loader *a = open_cfg(cfg);
  assert_int_equal(sl_loader_start_epoch(a, 1), SL_OK);
  uint64_t whole = hash_from(a, 3);
  assert_int_equal(sl_loader_start_epoch(a, 1), SL_OK);
  sl_batch b;
  for (int k = 0; k < 3; k++) {
    assert_int_equal(sl_loader_next(a, &b), SL_OK);
    sl_batch_release(a, &b, SL_RELEASE_DONE);
  }
  uint8_t blob[SL_LOADER_STATE_BYTES];
  size_t len = sizeof blob;
  assert_int_equal(sl_loader_save_state(a, blob, &len), SL_OK);
  sl_loader_close(a);
  sl_loader *r = open_cfg(cfg);
  assert_int_equal(sl_loader_restore_state(r, blob, len), SL_OK);
  assert_true(hash_from(r, 0) == whole);
  sl_loader_close(r);
  /* Another capacity is another run: refused. */
  assert_int_equal(sl_config_set(cfg, "loader.max_boxes", "5"), SL_OK);
  r = open_cfg(cfg);
  assert_int_equal(sl_loader_restore_state(r, blob, len), SL_ESTATE);
  sl_loader_close(r);
  sl_config_destroy(cfg);

  /* Eval (the center crop) and two ranks, each batch checked. */
  for (int rank = 0; rank < 2; rank++) {
    char rk[4];
    snprintf(rk, sizeof rk, "%d", rank);
    const char *ev[] = {"loader.mode", "eval", "loader.world_size", "2",
                        "loader.rank", rk,     "resolution.eval",   "40",
                        NULL};
    sl_config *c2 = config(g_path, ev);
    sl_settings s;
    sl_err err;
    assert_int_equal(sl_settings_from_config(&s, c2, &err), SL_OK);
    assert_int_equal(s.aug.crop, SL_CROP_CENTER);
    sl_dataset *ds;
    assert_int_equal(sl_dataset_open_file(&ds, g_path), SL_OK);
    sl_loader *ld = open_cfg(c2);
    assert_int_equal(sl_loader_start_epoch(ld, 0), SL_OK);
    while (sl_loader_next(ld, &b) == SL_OK) {
      check_batch(&b, &s, ds, 12);
      sl_batch_release(ld, &b, SL_RELEASE_DONE);
    }
    sl_loader_close(ld);
    sl_dataset_close(ds);
    sl_config_destroy(c2);
  }
}

static void test_file_without_boxes(void **state) {
  (void)state;
  const char *kv[] = {"loader.max_boxes", "10", NULL};
  sl_config *cfg = config(g_plain, kv);
  sl_loader *ld = open_cfg(cfg);
  assert_int_equal(sl_loader_start_epoch(ld, 0), SL_OK);
  sl_batch b;
  assert_int_equal(sl_loader_next(ld, &b), SL_OK);
  assert_int_equal(b.box_capacity, 0);
  assert_null(b.boxes);
  assert_null(b.box_labels);
  assert_null(b.box_counts);
  sl_batch_release(ld, &b, SL_RELEASE_DONE);
  sl_loader_close(ld);
  sl_config_destroy(cfg);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_boxes_every_crop_and_workers),
      cmocka_unit_test(test_capacity_keeps_first_and_counts),
      cmocka_unit_test(test_resume_eval_and_shards),
      cmocka_unit_test(test_file_without_boxes),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
