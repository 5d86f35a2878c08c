/* augment/: crop parameters as torchvision draws them, DCT scale choice,
 * quality against a float reference, dtype conversion precision,
 * determinism, flips, and errors through the whole pipeline. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "augment/convert.h"
#include "augment/pipeline.h"
#include "codecs/img_util.h"
#include "support/aug_params.h"
#include "support/synth_jpeg.h"
#include "tools/synth.h"

enum { JPEG = 1, PNG = 2, RAW = 3 };

static sl_aug_params defaults(void) {
  return sl_test_aug_params(SL_LAYOUT_NHWC);
}

static sl_pipeline *new_pipeline(const sl_aug_params *p, int side) {
  sl_pipeline *pl;
  sl_err err;
  assert_int_equal(sl_pipeline_create(&pl, p, side, &err), SL_OK);
  return pl;
}

static blob jpeg(uint64_t seed, int w, int h, sl_synth_color c, int prog) {
  sl_synth_jpeg_opts o = sl_synth_jpeg_defaults();
  o.color = c;
  o.progressive = prog;
  o.texture = 2;
  return sl_test_jpeg(seed, w, h, &o);
}

/* ---- crop parameters ---- */

static void test_random_resized_crop_statistics(void **state) {
  (void)state;
  sl_aug_params p = defaults();
  int W = 400, H = 400, n = 20000, flips = 0; /* square: ratios symmetric */
  double area = 0, cx = 0, cy = 0, logr = 0;
  for (int i = 0; i < n; i++) {
    sl_crop_box b;
    int flip;
    sl_aug_sample_crop(&p, W, H, 224, 224, 7, 3, (uint64_t)i, &b, &flip);
    assert_true(b.x >= 0 && b.y >= 0 && b.w >= 1 && b.h >= 1);
    assert_true(b.x + b.w <= W && b.y + b.h <= H);
    double a = (double)b.w * b.h / (W * H), r = (double)b.w / b.h;
    /* rounding of w and h widens the ranges a little for small crops */
    assert_true(a >= 0.08 * 0.9 && a <= 1.0);
    assert_true(r >= 0.75 * 0.95 && r <= 4.0 / 3.0 * 1.05);
    area += a;
    cx += (b.x + b.w / 2.0) / W;
    cy += (b.y + b.h / 2.0) / H;
    logr += log(r);
    flips += flip;
  }
  area /= n, cx /= n, cy /= n, logr /= n;
  /* Accepted draws are uniform in area up to what fits: mean a bit under
   * (0.08 + 1) / 2 = 0.54 because large, elongated ones get rejected. */
  assert_true(area > 0.40 && area < 0.56);
  assert_true(fabs(cx - 0.5) < 0.01 && fabs(cy - 0.5) < 0.01);
  assert_true(fabs(logr) < 0.03); /* log-uniform around ratio 1 */
  assert_true(abs(flips - n / 2) < n / 50);
  /* The same key gives the same crop; other keys differ. */
  sl_crop_box a, b, c;
  int fa, fb, fc;
  sl_aug_sample_crop(&p, W, H, 224, 224, 1, 2, 3, &a, &fa);
  sl_aug_sample_crop(&p, W, H, 224, 224, 1, 2, 3, &b, &fb);
  sl_aug_sample_crop(&p, W, H, 224, 224, 1, 3, 3, &c, &fc);
  assert_memory_equal(&a, &b, sizeof a);
  assert_int_equal(fa, fb);
  assert_true(memcmp(&a, &c, sizeof a) != 0);
}

static void test_crop_fallback_center_none(void **state) {
  (void)state;
  sl_aug_params p = defaults();
  sl_crop_box b;
  int flip;
  /* No draw can fit a 2..3 ratio in a square image with scale ~1: the
   * fallback is the central crop clamped to the ratio range. */
  p.scale[0] = 0.99, p.scale[1] = 1.0, p.ratio[0] = 2.0, p.ratio[1] = 3.0;
  sl_aug_sample_crop(&p, 100, 100, 64, 64, 1, 0, 0, &b, &flip);
  assert_int_equal(b.w, 100);
  assert_int_equal(b.h, 50);
  assert_int_equal(b.x, 0);
  assert_int_equal(b.y, 25);
  p.ratio[0] = 0.2, p.ratio[1] = 0.25; /* too tall: full height */
  sl_aug_sample_crop(&p, 100, 100, 64, 64, 1, 0, 0, &b, &flip);
  assert_int_equal(b.h, 100);
  assert_int_equal(b.w, 25);
  assert_int_equal(b.x, 37);
  /* Center: 500x375 at 224 with 224/256: torchvision resizes to 341x256
   * and crops at left = round(58.5) = 58, top = 16 resized pixels: 85.04
   * and 23.44 full-size pixels (the centred box would start at 86, 23.5). */
  p = defaults();
  p.crop = SL_CROP_CENTER;
  sl_aug_sample_crop(&p, 500, 375, 224, 224, 1, 0, 0, &b, &flip);
  assert_int_equal(b.w, 328);
  assert_int_equal(b.h, 328);
  assert_int_equal(b.x, 85);
  assert_int_equal(b.y, 23);
  /* 375x500 (portrait): 256x341, top = round(58.5) = 58 -> 85. */
  sl_aug_sample_crop(&p, 375, 500, 224, 224, 1, 0, 0, &b, &flip);
  assert_int_equal(b.x, 23);
  assert_int_equal(b.y, 85);
  p.crop = SL_CROP_NONE;
  sl_aug_sample_crop(&p, 500, 375, 224, 224, 1, 0, 0, &b, &flip);
  assert_int_equal(b.x, 0);
  assert_int_equal(b.w, 500);
  assert_int_equal(b.h, 375);
  /* flip = 0 never flips, flip = 1 always does. */
  p.flip = 0;
  sl_aug_sample_crop(&p, 50, 50, 8, 8, 1, 0, 5, &b, &flip);
  assert_int_equal(flip, 0);
  p.flip = 1;
  sl_aug_sample_crop(&p, 50, 50, 8, 8, 1, 0, 5, &b, &flip);
  assert_int_equal(flip, 1);
}

static void test_dct_scale_choice(void **state) {
  (void)state;
  /* The cheapest covering scale by augment/crop.c's cost model. 8/8 would
   * cover too, but box-reduces 500 wide (2 * 224 <= 500) row by row. */
  assert_int_equal(sl_aug_dct_scale(500, 375, 224, 224), 5);
  /* 3/8 covers (187 x 140), but 4/8 (SIMD IDCTs) is cheaper. */
  assert_int_equal(sl_aug_dct_scale(500, 375, 128, 128), 4);
  assert_int_equal(sl_aug_dct_scale(448, 448, 224, 224), 4);
  assert_int_equal(sl_aug_dct_scale(447, 448, 224, 224), 5);
  /* 6/8 covers, but its 12x12 plain-C chroma IDCT costs more than 8/8. */
  assert_int_equal(sl_aug_dct_scale(300, 300, 224, 224), 8);
  assert_int_equal(sl_aug_dct_scale(260, 260, 224, 224), 8); /* not 7 */
  assert_int_equal(sl_aug_dct_scale(2000, 2000, 128, 128), 1);
  assert_int_equal(sl_aug_dct_scale(1024, 1100, 128, 128), 1);
  assert_int_equal(sl_aug_dct_scale(1023, 1100, 128, 128), 2);
  assert_int_equal(sl_aug_dct_scale(100, 100, 224, 224), 8);
  assert_int_equal(sl_aug_dct_scale(224, 224, 224, 224), 8);
  assert_int_equal(sl_aug_dct_scale(600, 1000, 128, 256), 3);
  /* Each dimension is covered whenever some scale covers it (never an
   * upscale in the IDCT), and 7/8 is never chosen. */
  for (int w = 1; w < 2000; w += 37)
    for (int o = 8; o < 300; o += 41) {
      int m = sl_aug_dct_scale(w, 2 * w, o, o);
      assert_true(m >= 1 && m <= 8 && m != 7);
      if (w * 8 >= 8 * o) /* coverable */
        assert_true(w * m >= 8 * o);
      else
        assert_int_equal(m, 8);
    }
}

/* ---- quality ---- */

/* Mean PSNR of the pipeline's u8 output against a full-size decode
 * (TurboJPEG) resampled by float area averaging over the same crop. */
static double mean_psnr(int res, sl_filter filter) {
  sl_aug_params p = defaults();
  p.flip = 0;
  p.filter = filter;
  sl_pipeline *pl = new_pipeline(&p, 256);
  static const int sizes[][2] = {{500, 375}, {375, 500},  {640, 480},
                                 {320, 240}, {1024, 768}, {500, 333},
                                 {800, 600}, {256, 256}};
  static const sl_synth_color colors[] = {SL_SYNTH_420, SL_SYNTH_444,
                                          SL_SYNTH_422, SL_SYNTH_420};
  uint8_t *out = malloc((size_t)res * res * 3);
  float *ref = malloc(sizeof(float) * res * res * 3);
  double sum = 0;
  int n = 0;
  for (int i = 0; i < 16; i++) {
    int W = sizes[i % 8][0], H = sizes[i % 8][1];
    blob b = jpeg(100 + i, W, H, colors[i % 4], i % 3 == 2);
    int tw, th;
    uint8_t *full = tu_tj_decode(b.p, b.n, 3, &tw, &th);
    assert_non_null(full);
    sl_err err;
    for (int k = 0; k < 4; k++) {
      uint64_t idx = (uint64_t)(i * 4 + k);
      assert_int_equal(sl_pipeline_run(pl, b.p, b.n, JPEG, 0, 0, 0, 5, 0, idx,
                                       res, res, out, &err),
                       SL_OK);
      sl_crop_box box;
      int flip;
      sl_aug_sample_crop(&p, W, H, res, res, 5, 0, idx, &box, &flip);
      tu_area_resample(full, W, 3, box.x, box.y, box.w, box.h, res, res, ref);
      sum += tu_psnr(out, ref, (size_t)res * res * 3);
      n++;
    }
    free(full), free(b.p);
  }
  free(out), free(ref);
  sl_pipeline_destroy(pl);
  return sum / n;
}

static void test_quality_psnr(void **state) {
  (void)state;
  double q224 = mean_psnr(224, SL_FILTER_BOX);
  double q128 = mean_psnr(128, SL_FILTER_BOX);
  double b128 = mean_psnr(128, SL_FILTER_BILINEAR);
  print_message("mean PSNR: 224 %.2f dB, 128 %.2f dB (bilinear %.2f dB)\n",
                q224, q128, b128);
  assert_true(q224 >= 32.0);
  assert_true(q128 >= 32.0);
  assert_true(b128 >= 30.0);
}

/* ---- dtypes, layouts, flips, determinism ---- */

static float half_to_float(uint16_t h) {
  int e = (h >> 10) & 31, m = h & 1023;
  float v = e == 0 ? ldexpf((float)m, -24) : ldexpf((float)(m | 1024), e - 25);
  return (h & 0x8000) ? -v : v;
}

static float bf16_to_float(uint16_t h) {
  uint32_t x = (uint32_t)h << 16;
  float f;
  memcpy(&f, &x, 4);
  return f;
}

static void test_dtypes_match_float_reference(void **state) {
  (void)state;
  blob b = jpeg(3, 400, 300, SL_SYNTH_420, 0);
  sl_aug_params p = defaults();
  p.layout = SL_LAYOUT_NCHW;
  int R = 96, n = R * R * 3;
  sl_pipeline *pu = new_pipeline(&p, 128);
  uint8_t *u8 = malloc((size_t)n);
  sl_err err;
  assert_int_equal(
      sl_pipeline_run(pu, b.p, b.n, JPEG, 0, 0, 0, 1, 2, 3, R, R, u8, &err),
      SL_OK);
  void *buf = malloc((size_t)n * 4);
  for (int dt = SL_DTYPE_FP16; dt <= SL_DTYPE_FP32; dt++) {
    for (int lay = 0; lay < 2; lay++) {
      p.dtype = (sl_dtype)dt;
      p.layout = (sl_layout)lay;
      sl_pipeline *pl = new_pipeline(&p, 128);
      assert_int_equal(sl_aug_sample_bytes(&p, R, R),
                       (size_t)n * (dt == SL_DTYPE_FP32 ? 4 : 2));
      assert_int_equal(sl_pipeline_run(pl, b.p, b.n, JPEG, 0, 0, 0, 1, 2, 3, R,
                                       R, buf, &err),
                       SL_OK);
      for (int c = 0; c < 3; c++)
        for (int i = 0; i < R * R; i++) {
          double ref =
              ((double)u8[c * R * R + i] / 255.0 - p.mean[c]) / p.std[c];
          size_t j =
              lay == SL_LAYOUT_NCHW ? (size_t)c * R * R + i : (size_t)i * 3 + c;
          double got, tol;
          if (dt == SL_DTYPE_FP32) {
            got = ((float *)buf)[j];
            tol = 1e-6 * fmax(1.0, fabs(ref));
          } else if (dt == SL_DTYPE_FP16) {
            got = half_to_float(((uint16_t *)buf)[j]);
            tol = fabs(ref) * 0x1p-11 + 0x1p-25;
          } else {
            got = bf16_to_float(((uint16_t *)buf)[j]);
            tol = fabs(ref) * 0x1p-8 + 1e-30;
          }
          if (fabs(got - ref) > tol * 1.0001)
            fail_msg("dtype %d layout %d: %g vs %g", dt, lay, got, ref);
        }
      sl_pipeline_destroy(pl);
    }
  }
  /* The conversions themselves, at their edges. */
  assert_int_equal(sl_f32_to_f16(1.0f), 0x3c00);
  assert_int_equal(sl_f32_to_f16(-2.0f), 0xc000);
  assert_int_equal(sl_f32_to_f16(65520.0f), 0x7c00);        /* rounds to inf */
  assert_int_equal(sl_f32_to_f16(0x1p-24f), 0x0001);        /* subnormal */
  assert_int_equal(sl_f32_to_f16(1.0f + 0x1p-11f), 0x3c00); /* ties even */
  assert_int_equal(sl_f32_to_bf16(1.0f), 0x3f80);
  assert_int_equal(sl_f32_to_bf16(1.0f + 0x1p-8f), 0x3f80); /* ties even */
  assert_int_equal(sl_f32_to_bf16(-1.0f - 0x1p-7f), 0xbf81);
  free(u8), free(buf), free(b.p);
  sl_pipeline_destroy(pu);
}

/* Same key -> same bytes, whatever the pipeline object or call order. */
static void test_determinism_and_flip(void **state) {
  (void)state;
  enum { N = 12, R = 64 };
  blob imgs[N];
  for (int i = 0; i < N; i++)
    imgs[i] = jpeg(40 + i, 120 + 17 * i, 90 + 11 * i, SL_SYNTH_420, i & 1);
  sl_aug_params p = defaults();
  p.dtype = SL_DTYPE_FP16;
  sl_pipeline *a = new_pipeline(&p, R), *b = new_pipeline(&p, 2 * R);
  size_t sz = sl_aug_sample_bytes(&p, R, R);
  uint8_t *fa = malloc(sz * N), *fb = malloc(sz * N);
  sl_err err;
  for (int i = 0; i < N; i++)
    assert_int_equal(sl_pipeline_run(a, imgs[i].p, imgs[i].n, JPEG, 0, 0, 0, 9,
                                     1, (uint64_t)i, R, R, fa + sz * i, &err),
                     SL_OK);
  for (int i = N - 1; i >= 0; i--)
    assert_int_equal(sl_pipeline_run(b, imgs[i].p, imgs[i].n, JPEG, 0, 0, 0, 9,
                                     1, (uint64_t)i, R, R, fb + sz * i, &err),
                     SL_OK);
  assert_memory_equal(fa, fb, sz * N);
  /* Another epoch changes the draws. */
  assert_int_equal(sl_pipeline_run(b, imgs[0].p, imgs[0].n, JPEG, 0, 0, 0, 9, 2,
                                   0, R, R, fb, &err),
                   SL_OK);
  assert_true(memcmp(fa, fb, sz) != 0);
  /* flip = 1 is the mirror image of flip = 0 (same crop: the flip draw
   * comes first either way), for every dtype and layout, and for outputs
   * wider than the u8 mirror's 512-pixel chunks. */
  static const int shapes[][2] = {{R, R}, {5, 700}};
  size_t big = (size_t)R * R * 3 * 4; /* >= 5 * 700 * 3 * 4 */
  uint8_t *o0 = malloc(big), *o1 = malloc(big);
  for (int dt = 0; dt < 4; dt++)
    for (int lay = 0; lay < 2; lay++)
      for (int sh = 0; sh < 2; sh++) {
        sl_aug_params p0 = defaults(), p1;
        p0.dtype = (sl_dtype)dt, p0.layout = (sl_layout)lay;
        p0.flip = 0;
        p1 = p0;
        p1.flip = 1;
        int oh = shapes[sh][0], ow = shapes[sh][1];
        sl_pipeline *q0 = new_pipeline(&p0, 700), *q1 = new_pipeline(&p1, 700);
        size_t es = sl_aug_sample_bytes(&p0, 1, 1) / 3; /* element size */
        for (int i = 0; i < N; i += 3) {
          assert_int_equal(sl_pipeline_run(q0, imgs[i].p, imgs[i].n, JPEG, 0, 0,
                                           0, 3, 0, (uint64_t)i, oh, ow, o0,
                                           &err),
                           SL_OK);
          assert_int_equal(sl_pipeline_run(q1, imgs[i].p, imgs[i].n, JPEG, 0, 0,
                                           0, 3, 0, (uint64_t)i, oh, ow, o1,
                                           &err),
                           SL_OK);
          for (int c = 0; c < 3; c++)
            for (int y = 0; y < oh; y++)
              for (int x = 0; x < ow; x++) {
                size_t i0, i1;
                if (lay == SL_LAYOUT_NCHW) {
                  i0 = ((size_t)c * oh + y) * ow + x;
                  i1 = ((size_t)c * oh + y) * ow + (ow - 1 - x);
                } else {
                  i0 = ((size_t)y * ow + x) * 3 + c;
                  i1 = ((size_t)y * ow + (ow - 1 - x)) * 3 + c;
                }
                assert_memory_equal(o0 + i0 * es, o1 + i1 * es, es);
              }
        }
        sl_pipeline_destroy(q0), sl_pipeline_destroy(q1);
      }
  sl_pipeline_times t;
  sl_pipeline_times_get(a, &t);
  assert_true(t.decode_ns > 0 && t.augment_ns > 0);
  for (int i = 0; i < N; i++)
    free(imgs[i].p);
  free(fa), free(fb), free(o0), free(o1);
  sl_pipeline_destroy(a), sl_pipeline_destroy(b);
}

/* ---- other codecs, gray output, tiny and huge images ---- */

static void test_raw_png_gray_tiny(void **state) {
  (void)state;
  sl_aug_params p = defaults();
  p.crop = SL_CROP_NONE;
  p.flip = 0;
  sl_pipeline *pl = new_pipeline(&p, 64);
  /* A raw array resized to its own size comes back unchanged. */
  int W = 40, H = 30;
  uint8_t *rgb = malloc((size_t)W * H * 3), *out = malloc(64 * 64 * 3);
  sl_synth_pixels(2, -1, 1, W, H, 3, rgb);
  sl_err err;
  assert_int_equal(sl_pipeline_run(pl, rgb, (size_t)W * H * 3, RAW, H, W, 3, 1,
                                   0, 0, H, W, out, &err),
                   SL_OK);
  assert_memory_equal(out, rgb, (size_t)W * H * 3);
  /* PNG of the same pixels: identical output. */
  blob png;
  assert_int_equal(
      sl_synth_png(2, -1, W, H, 3, &png.p, &png.n, &(sl_synth_err){0}), SL_OK);
  assert_int_equal(
      sl_pipeline_run(pl, png.p, png.n, PNG, 0, 0, 0, 1, 0, 0, H, W, out, &err),
      SL_OK);
  assert_memory_equal(out, rgb, (size_t)W * H * 3);
  /* Gray output. */
  sl_aug_params g = p;
  g.channels = 1;
  sl_pipeline *pg = new_pipeline(&g, 64);
  uint8_t *gray = malloc((size_t)W * H);
  sl_synth_pixels(2, -1, 1, W, H, 1, gray);
  assert_int_equal(sl_pipeline_run(pg, rgb, (size_t)W * H * 3, RAW, H, W, 3, 1,
                                   0, 0, H, W, out, &err),
                   SL_OK);
  for (int i = 0; i < W * H; i++)
    assert_true(abs(out[i] - gray[i]) <= 1);
  /* Tiny images (1x1, 7x5), every crop mode, up to 64x64. */
  for (int mode = 0; mode < 3; mode++) {
    sl_aug_params t = defaults();
    t.crop = (sl_crop)mode;
    sl_pipeline *pt = new_pipeline(&t, 64);
    int sz[][2] = {{1, 1}, {7, 5}, {5, 7}, {17, 3}};
    for (int k = 0; k < 4; k++) {
      blob b = jpeg(k, sz[k][0], sz[k][1], SL_SYNTH_420, k & 1);
      assert_int_equal(sl_pipeline_run(pt, b.p, b.n, JPEG, 0, 0, 0, 1, 0,
                                       (uint64_t)k, 64, 48, out, &err),
                       SL_OK);
      free(b.p);
    }
    sl_pipeline_destroy(pt);
  }
  free(rgb), free(out), free(gray), free(png.p);
  sl_pipeline_destroy(pl), sl_pipeline_destroy(pg);
}

/* A big image at a small output goes through DCT scale 1/8 and the box
 * reduction, within the fixed scratch. */
static void test_big_image_small_output(void **state) {
  (void)state;
  sl_aug_params p = defaults();
  p.crop = SL_CROP_NONE;
  p.flip = 0;
  sl_pipeline *pl = new_pipeline(&p, 32);
  blob b = jpeg(5, 2048, 1536, SL_SYNTH_420, 0);
  uint8_t out[32 * 24 * 3];
  float ref[32 * 24 * 3];
  sl_err err;
  assert_int_equal(
      sl_pipeline_run(pl, b.p, b.n, JPEG, 0, 0, 0, 1, 0, 0, 24, 32, out, &err),
      SL_OK);
  int w, h;
  uint8_t *full = tu_tj_decode(b.p, b.n, 3, &w, &h);
  tu_area_resample(full, w, 3, 0, 0, w, h, 32, 24, ref);
  assert_true(tu_psnr(out, ref, sizeof out) > 32.0);
  free(full), free(b.p);
  sl_pipeline_destroy(pl);
}

/* ---- errors ---- */

static void test_pipeline_errors(void **state) {
  (void)state;
  sl_aug_params p = defaults();
  p.crop = SL_CROP_NONE;
  sl_pipeline *pl = new_pipeline(&p, 64);
  blob g = jpeg(1, 80, 60, SL_SYNTH_420, 1);
  uint8_t ref[32 * 32 * 3], out[32 * 32 * 3];
  sl_err err;
  assert_int_equal(
      sl_pipeline_run(pl, g.p, g.n, JPEG, 0, 0, 0, 1, 0, 0, 32, 32, ref, &err),
      SL_OK);
  for (size_t cut = 0; cut + 2 < g.n; cut += 1 + cut / 8) {
    sl_status st = sl_pipeline_run(pl, g.p, cut, JPEG, 0, 0, 0, 1, 0, 0, 32, 32,
                                   out, &err);
    assert_true(st == SL_EDECODE);
  }
  assert_int_equal(
      sl_pipeline_run(pl, g.p, g.n, JPEG, 0, 0, 0, 1, 0, 0, 32, 32, out, &err),
      SL_OK);
  assert_memory_equal(out, ref, sizeof out);
  assert_int_equal(
      sl_pipeline_run(pl, g.p, g.n, JPEG, 0, 0, 0, 1, 0, 0, 65, 32, out, &err),
      SL_EINVAL);
  assert_int_equal(
      sl_pipeline_run(pl, g.p, g.n, 9, 0, 0, 0, 1, 0, 0, 32, 32, out, &err),
      SL_EUNSUPPORTED);
  assert_int_equal(
      sl_pipeline_run(pl, g.p, 10, RAW, 2, 2, 3, 1, 0, 0, 32, 32, out, &err),
      SL_EDECODE);
  /* Over max_pixels. */
  sl_aug_params small = p;
  small.max_pixels = 80 * 60 - 1;
  sl_pipeline *ps = new_pipeline(&small, 64);
  assert_int_equal(
      sl_pipeline_run(ps, g.p, g.n, JPEG, 0, 0, 0, 1, 0, 0, 32, 32, out, &err),
      SL_ETOOBIG);
  sl_pipeline_destroy(ps);
  /* Bad parameters. */
  sl_pipeline *bad;
  sl_aug_params q = defaults();
  q.channels = 2;
  assert_int_equal(sl_pipeline_create(&bad, &q, 64, &err), SL_EINVAL);
  q = defaults();
  q.std[1] = 0;
  assert_int_equal(sl_pipeline_create(&bad, &q, 64, &err), SL_EINVAL);
  q = defaults();
  q.scale[0] = 0.9, q.scale[1] = 0.5;
  assert_int_equal(sl_pipeline_create(&bad, &q, 64, &err), SL_EINVAL);
  assert_int_equal(sl_pipeline_create(&bad, &p, 0, &err), SL_EINVAL);
  free(g.p);
  sl_pipeline_destroy(pl);
  sl_pipeline_destroy(NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_random_resized_crop_statistics),
      cmocka_unit_test(test_crop_fallback_center_none),
      cmocka_unit_test(test_dct_scale_choice),
      cmocka_unit_test(test_quality_psnr),
      cmocka_unit_test(test_dtypes_match_float_reference),
      cmocka_unit_test(test_determinism_and_flip),
      cmocka_unit_test(test_raw_png_gray_tiny),
      cmocka_unit_test(test_big_image_small_output),
      cmocka_unit_test(test_pipeline_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
