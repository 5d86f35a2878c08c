/* Resolution levels in the pipeline: the level choice at its boundaries
 * (a crop that just covers the output at a level, and one that just does
 * not), the level records sl_jpeg_levels_make writes (sizes, small images
 * skip a level, area average), and exact crop mapping: a sharp marker lands
 * at the same output pixel, within a pixel, whichever level a crop is
 * decoded from. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <turbojpeg.h>

#include "augment/pipeline.h"
#include "augment/resample.h"
#include "codecs/codec.h"
#include "codecs/img_util.h"
#include "codecs/jpeg_levels.h"
#include "formats/core/levels.h"
#include "support/aug_params.h"
#include "support/synth_jpeg.h"

/* A W x H RGB JPEG (q95, 4:2:0): dark grey with a bright 8 x 8 square whose
 * top-left corner is (mx, my). The caller frees with tjFree. */
static uint8_t *marker_jpeg(int W, int H, int mx, int my, size_t *len) {
  uint8_t *px = malloc((size_t)W * H * 3);
  assert_non_null(px);
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) {
      int in = x >= mx && x < mx + 8 && y >= my && y < my + 8;
      uint8_t *p = px + ((size_t)y * W + x) * 3;
      p[0] = p[1] = p[2] = in ? 235 : 40;
    }
  tjhandle tj = tjInitCompress();
  assert_non_null(tj);
  unsigned char *out = NULL;
  unsigned long n = 0;
  assert_int_equal(
      tjCompress2(tj, px, W, 0, H, TJPF_RGB, &out, &n, TJSAMP_420, 95, 0), 0);
  tjDestroy(tj);
  free(px);
  *len = n;
  return out;
}

/* Brightness-weighted centroid of an out x out u8 HWC image, above the
 * background. */
static void centroid(const uint8_t *img, int out, double *cx, double *cy) {
  double s = 0, sx = 0, sy = 0;
  for (int y = 0; y < out; y++)
    for (int x = 0; x < out; x++) {
      double v = img[((size_t)y * out + x) * 3] - 60.0;
      if (v > 0)
        s += v, sx += v * (x + 0.5), sy += v * (y + 0.5);
    }
  assert_true(s > 0);
  *cx = sx / s;
  *cy = sy / s;
}

static void test_level_plan_boundaries(void **state) {
  (void)state;
  /* 500 x 376 at levels 1/2 (250 x 188) and 1/4 (125 x 94), output 128. */
  const int lw[3] = {500, 250, 125}, lh[3] = {376, 188, 94};
  int level, m;
  /* Level 1 covers 128 when w * 250 >= 128 * 500 and h * 188 >= 128 * 376:
   * w, h >= 256. */
  sl_crop_box b = {0, 0, 256, 256};
  sl_aug_level_plan(&b, 500, 376, lw, lh, 3, 128, 128, &level, &m);
  assert_int_equal(level, 1);
  assert_int_equal(m, 8); /* 256 * 250 / 500 = 128: no DCT reduction */
  b.w = 255;              /* just short in width */
  sl_aug_level_plan(&b, 500, 376, lw, lh, 3, 128, 128, &level, &m);
  assert_int_equal(level, 0);
  assert_int_equal(m, sl_aug_dct_scale(255, 256, 128, 128));
  b.w = 256, b.h = 255; /* just short in height */
  sl_aug_level_plan(&b, 500, 376, lw, lh, 3, 128, 128, &level, &m);
  assert_int_equal(level, 0);
  /* Level 2 covers 128 only for w, h >= 512 (more than the image): the
   * whole image is level 1 at 128. At 64 it is level 2 (125 x 94), where
   * the DCT scale must keep 94 * m / 8 >= 64: m = 6 or 8 (5 gives 58.75);
   * the cost model takes 8, cheaper than 6/8's plain-C IDCTs. */
  b = (sl_crop_box){0, 0, 500, 376};
  sl_aug_level_plan(&b, 500, 376, lw, lh, 3, 128, 128, &level, &m);
  assert_int_equal(level, 1);
  sl_aug_level_plan(&b, 500, 376, lw, lh, 3, 64, 64, &level, &m);
  assert_int_equal(level, 2);
  assert_int_equal(m, 8);
  /* At 47 x 47, 4/8 (62.5 x 47) just covers it; at 48, 5/8 is needed. */
  sl_aug_level_plan(&b, 500, 376, lw, lh, 3, 47, 47, &level, &m);
  assert_int_equal(level, 2);
  assert_int_equal(m, 4);
  sl_aug_level_plan(&b, 500, 376, lw, lh, 3, 48, 48, &level, &m);
  assert_int_equal(m, 5);
  /* One level only (a file without levels): level 0, sl_aug_dct_scale. */
  b = (sl_crop_box){10, 20, 300, 200};
  sl_aug_level_plan(&b, 500, 376, lw, lh, 1, 128, 128, &level, &m);
  assert_int_equal(level, 0);
  assert_int_equal(m, sl_aug_dct_scale(300, 200, 128, 128));
}

static void test_levels_make(void **state) {
  (void)state;
  size_t len;
  uint8_t *jpg = marker_jpeg(301, 199, 100, 80, &len);
  uint8_t *rec = NULL;
  size_t rl = 0;
  sl_err err = {0};
  /* 1/2 (151 x 100) is kept; 1/4 (75 x 50) is under 64 px: skipped. */
  assert_int_equal(sl_jpeg_levels_make(jpg, len,
                                       SL_LEVEL_SCALE(4) | SL_LEVEL_SCALE(2),
                                       90, 1u << 28, &rec, &rl, &err),
                   SL_OK);
  assert_non_null(rec);
  sl_levels lv;
  assert_null(sl_levels_parse(rec, rl, &lv));
  assert_int_equal(lv.n, 2);
  assert_int_equal(lv.level[0].width, 301);
  assert_int_equal(lv.level[0].height, 199);
  assert_int_equal(lv.level[1].width, 151);
  assert_int_equal(lv.level[1].height, 100);
  assert_int_equal(lv.level[0].len, len);
  assert_memory_equal(lv.level[0].bytes, jpg, len); /* level 0 as given */
  /* Every cut of the record is refused, not read past. */
  for (size_t cut = 0; cut < rl; cut += 97)
    assert_non_null(sl_levels_parse(rec, cut, &lv));
  free(rec);
  /* An image too small for every level: no record. */
  tjFree(jpg);
  jpg = marker_jpeg(100, 90, 10, 10, &len);
  assert_int_equal(sl_jpeg_levels_make(jpg, len, SL_LEVEL_SCALE(4), 90,
                                       1u << 28, &rec, &rl, &err),
                   SL_OK);
  assert_null(rec);
  assert_int_equal(
      sl_jpeg_levels_make(jpg, len, 0x80, 90, 1u << 28, &rec, &rl, &err),
      SL_EINVAL);
  tjFree(jpg);
}

/* The marker's output position from the plain JPEG (level 0) and from the
 * level records, over many random-resized crops and an odd-sized image
 * (so that crops map to fractional level pixels). */
static void test_crop_mapping(void **state) {
  (void)state;
  const int W = 401, H = 353, out = 64;
  size_t len;
  uint8_t *jpg = marker_jpeg(W, H, 196, 172, &len);
  uint8_t *rec = NULL;
  size_t rl = 0;
  sl_err err = {0};
  assert_int_equal(sl_jpeg_levels_make(jpg, len,
                                       SL_LEVEL_SCALE(6) | SL_LEVEL_SCALE(4) |
                                           SL_LEVEL_SCALE(2),
                                       95, 1u << 28, &rec, &rl, &err),
                   SL_OK);
  assert_non_null(rec);
  sl_aug_params p = sl_test_aug_params(SL_LAYOUT_NHWC);
  p.scale[0] = 0.6; /* the crop always holds the central marker */
  p.flip = 0;
  sl_pipeline *pl;
  assert_int_equal(sl_pipeline_create(&pl, &p, 256, &err), SL_OK);
  uint8_t a[256 * 256 * 3], b[256 * 256 * 3];
  double worst = 0, worst_true = 0, worst_l0 = 0;
  for (uint64_t i = 0; i < 40; i++) {
    int o = i % 2 ? out : 3 * out / 2; /* 64 and 96: different levels */
    if (sl_pipeline_run(pl, jpg, len, SL_IMAGE_JPEG, 0, 0, 0, 7, 0, i, o, o, a,
                        &err) != SL_OK ||
        sl_pipeline_run(pl, rec, rl, SL_IMAGE_JPEG_LEVELS, 0, 0, 0, 7, 0, i, o,
                        o, b, &err) != SL_OK)
      fail_msg("%s", err.msg);
    double ax, ay, bx, by;
    centroid(a, o, &ax, &ay);
    centroid(b, o, &bx, &by);
    double d = fmax(fabs(ax - bx), fabs(ay - by));
    worst = fmax(worst, d);
    /* Where the marker's centre (200, 176) truly falls in the crop. */
    sl_crop_box box;
    int flip;
    sl_aug_sample_crop(&p, W, H, o, o, 7, 0, i, &box, &flip);
    double tx = (200.0 - box.x) * o / box.w, ty = (176.0 - box.y) * o / box.h;
    double dt = fmax(fabs(bx - tx), fabs(by - ty));
    worst_true = fmax(worst_true, dt);
    worst_l0 = fmax(worst_l0, fmax(fabs(ax - tx), fabs(ay - ty)));
    if (getenv("SL_LV_DEBUG"))
      print_message(
          "%llu o=%d box %d,%d %dx%d: l0 %+.2f %+.2f lv %+.2f %+.2f\n",
          (unsigned long long)i, o, box.x, box.y, box.w, box.h, ax - tx,
          ay - ty, bx - tx, by - ty);
    if (d > 1.0 || dt > 1.0)
      fail_msg("sample %llu at %d: marker at (%.2f, %.2f) from level 0, "
               "(%.2f, %.2f) from levels",
               (unsigned long long)i, o, ax, ay, bx, by);
  }
  sl_pipeline_times t;
  sl_pipeline_times_get(pl, &t);
  /* The crops did use the smaller levels (else the test shows nothing). */
  assert_true(t.level_decodes[1] + t.level_decodes[2] + t.level_decodes[3] >=
              30);
  assert_true(t.level_decodes[2] > 0 && t.level_decodes[3] > 0);
  print_message("worst marker offset: levels vs level 0 %.3f px, levels vs "
                "the crop's geometry %.3f px (level 0 alone: %.3f px)\n",
                worst, worst_true, worst_l0);
  sl_pipeline_destroy(pl);
  free(rec);
  tjFree(jpg);
}

/* The quality test of test_augment, per level: mean PSNR of the pipeline's
 * output from level records (3/4 and 1/2, q90) against the float area
 * average of the *original* full-size image over the same crop, at 224,
 * 160 and 128, grouped by the level each crop was decoded from. */
static void test_quality_per_level(void **state) {
  (void)state;
  static const int res[3] = {224, 160, 128};
  static const int sizes[4][2] = {
      {500, 375}, {375, 500}, {500, 333}, {640, 480}};
  sl_aug_params p = sl_test_aug_params(SL_LAYOUT_NHWC);
  p.flip = 0;
  sl_err err = {0};
  sl_pipeline *pl;
  assert_int_equal(sl_pipeline_create(&pl, &p, 224, &err), SL_OK);
  uint8_t *out = malloc(224 * 224 * 3);
  float *ref = malloc(sizeof(float) * 224 * 224 * 3);
  assert_true(out && ref);
  double sum[3][4] = {{0}};
  int cnt[3][4] = {{0}};
  for (int i = 0; i < 12; i++) {
    int W = sizes[i % 4][0], H = sizes[i % 4][1];
    sl_synth_jpeg_opts o = sl_synth_jpeg_defaults();
    o.texture = 2; /* ImageNet-like bytes */
    o.restart_mcus = -1;
    blob b = sl_test_jpeg(300 + (uint64_t)i, W, H, &o);
    int tw, th;
    uint8_t *full = tu_tj_decode(b.p, b.n, 3, &tw, &th);
    assert_non_null(full);
    uint8_t *rec = NULL;
    size_t rl = 0;
    assert_int_equal(sl_jpeg_levels_make(b.p, b.n,
                                         SL_LEVEL_SCALE(6) | SL_LEVEL_SCALE(4),
                                         90, 1u << 28, &rec, &rl, &err),
                     SL_OK);
    assert_non_null(rec);
    for (int r = 0; r < 3; r++)
      for (int k = 0; k < 8; k++) {
        uint64_t idx = (uint64_t)(i * 8 + k);
        sl_pipeline_times t0, t1;
        sl_pipeline_times_get(pl, &t0);
        if (sl_pipeline_run(pl, rec, rl, SL_IMAGE_JPEG_LEVELS, 0, 0, 0, 5, 0,
                            idx, res[r], res[r], out, &err) != SL_OK)
          fail_msg("%s", err.msg);
        sl_pipeline_times_get(pl, &t1);
        int lv = 0;
        for (int q = 0; q < 4; q++)
          if (t1.level_decodes[q] != t0.level_decodes[q])
            lv = q;
        sl_crop_box box;
        int flip;
        sl_aug_sample_crop(&p, W, H, res[r], res[r], 5, 0, idx, &box, &flip);
        tu_area_resample(full, W, 3, box.x, box.y, box.w, box.h, res[r], res[r],
                         ref);
        sum[r][lv] += tu_psnr(out, ref, (size_t)res[r] * res[r] * 3);
        cnt[r][lv]++;
      }
    free(rec);
    free(full);
    free(b.p);
  }
  int levels_used = 0;
  for (int r = 0; r < 3; r++)
    for (int lv = 0; lv < 3; lv++) {
      if (!cnt[r][lv])
        continue;
      double m = sum[r][lv] / cnt[r][lv];
      print_message("mean PSNR at %d, level %d (%s): %.2f dB over %d crops\n",
                    res[r], lv,
                    lv == 0   ? "full"
                    : lv == 1 ? "3/4"
                              : "1/2",
                    m, cnt[r][lv]);
      levels_used += lv > 0;
      if (m < 32.0)
        fail_msg("mean PSNR %.2f dB < 32 at %d from level %d", m, res[r], lv);
    }
  assert_true(levels_used >= 4);
  free(out);
  free(ref);
  sl_pipeline_destroy(pl);
}

/* The resampler's AVX2 passes give the same bytes as its SSE2 ones (so a
 * batch does not depend on the CPU), for RGBX and gray, over fractional
 * windows of several reductions. */
static void test_resampler_same_bytes(void **state) {
  (void)state;
  enum { SW = 301, SH = 257 };
  uint8_t *src = malloc((size_t)SW * SH * 4);
  uint8_t *a = malloc(256 * 256 * 4), *b = malloc(256 * 256 * 4);
  assert_true(src && a && b);
  uint32_t x = 12345;
  for (size_t i = 0; i < (size_t)SW * SH * 4; i++)
    src[i] = (uint8_t)((x = x * 1103515245u + 12345u) >> 24);
  for (int ch = 1; ch <= 4; ch += 3) {
    sl_resampler *r1 = sl_resampler_create(256, 600, ch);
    sl_resampler *r2 = sl_resampler_create(256, 600, ch);
    assert_true(r1 && r2);
    sl_resampler_baseline(r2);
    /* reductions, an upscale (JPEG chroma planes), 1 and odd outputs */
    static const double win[6][4] = {
        {0.3, 300.2, 0.7, 256.9}, {10.5, 211.25, 3.1, 150.6},
        {0, 301, 0, 257},         {50.9, 151.1, 20.2, 119.8},
        {5.5, 20.25, 7.1, 12.9},  {299.5, 301, 0, 1.5}};
    static const int outs[6][2] = {{150, 128}, {128, 97}, {255, 256},
                                   {64, 64},   {57, 33},  {1, 3}};
    for (int k = 0; k < 6; k++) {
      int ow = outs[k][0], oh = outs[k][1];
      assert_int_equal(sl_resample_area(r1, src, (size_t)SW * ch, SW, SH,
                                        win[k][0], win[k][1], win[k][2],
                                        win[k][3], a, ow, oh),
                       0);
      assert_int_equal(sl_resample_area(r2, src, (size_t)SW * ch, SW, SH,
                                        win[k][0], win[k][1], win[k][2],
                                        win[k][3], b, ow, oh),
                       0);
      assert_memory_equal(a, b, (size_t)ow * oh * ch);
    }
    sl_resampler_destroy(r1);
    sl_resampler_destroy(r2);
  }
  free(src);
  free(a);
  free(b);
}

/* A damaged directory is an error naming the level record, not a crash. */
static void test_damaged_record(void **state) {
  (void)state;
  size_t len;
  uint8_t *jpg = marker_jpeg(300, 300, 140, 140, &len);
  uint8_t *rec = NULL;
  size_t rl = 0;
  sl_err err = {0};
  assert_int_equal(sl_jpeg_levels_make(jpg, len, SL_LEVEL_SCALE(4), 90,
                                       1u << 28, &rec, &rl, &err),
                   SL_OK);
  sl_aug_params p = sl_test_aug_params(SL_LAYOUT_NHWC);
  sl_pipeline *pl;
  assert_int_equal(sl_pipeline_create(&pl, &p, 64, &err), SL_OK);
  uint8_t o[64 * 64 * 3];
  /* Level 1's width (150) made 149: its JPEG no longer matches. */
  uint8_t *w1 = rec + SL_LEVELS_HDR + SL_LEVELS_ENTRY + 6;
  assert_int_equal(w1[0] | w1[1] << 8, 150);
  w1[0] = 149;
  p.crop = SL_CROP_NONE;
  sl_pipeline_destroy(pl);
  assert_int_equal(sl_pipeline_create(&pl, &p, 64, &err), SL_OK);
  assert_int_equal(sl_pipeline_run(pl, rec, rl, SL_IMAGE_JPEG_LEVELS, 0, 0, 0,
                                   1, 0, 0, 64, 64, o, &err),
                   SL_EDECODE);
  assert_non_null(strstr(err.msg, "level 1"));
  assert_non_null(strstr(err.msg, "damaged level record"));
  /* Cut: the record ends inside level 1. */
  w1[0] = 150;
  assert_int_equal(sl_pipeline_run(pl, rec, rl - 10, SL_IMAGE_JPEG_LEVELS, 0, 0,
                                   0, 1, 0, 0, 64, 64, o, &err),
                   SL_EDECODE);
  assert_non_null(strstr(err.msg, "level record"));
  sl_pipeline_destroy(pl);
  free(rec);
  tjFree(jpg);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_level_plan_boundaries),
      cmocka_unit_test(test_levels_make),
      cmocka_unit_test(test_crop_mapping),
      cmocka_unit_test(test_quality_per_level),
      cmocka_unit_test(test_resampler_same_bytes),
      cmocka_unit_test(test_damaged_record),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
