/* augment/ops, policy and recipe from C (the torchvision comparisons are
 * python/tests/test_augment.py): identities and exact values every op must
 * meet, every op on every edge size through sl_augment_apply (for the
 * sanitizers), the policies' and the recipe's draws, and the recipe in the
 * pipeline: deterministic, off in its absence, erasing writing the normalized
 * 0. */
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
#include "augment/mix.h"
#include "augment/ops.h"
#include "augment/pipeline.h"
#include "augment/pointwise.h"
#include "augment/policy.h"
#include "augment/recipe.h"
#include "common/half.h"
#include "support/aug_params.h"
#include "support/synth_jpeg.h"

static uint8_t *noise(int w, int h, int c, uint64_t seed) {
  uint8_t *p = malloc((size_t)w * h * c);
  assert_non_null(p);
  sl_rng r = sl_rng_for(seed, 0, 0);
  for (size_t i = 0; i < (size_t)w * h * c; i++)
    p[i] = (uint8_t)sl_rng_u64(&r);
  return p;
}

static sl_status apply(const char *op, const sl_augment_args *a, uint8_t *px,
                       int w, int h, int c) {
  char msg[256];
  return sl_augment_apply(op, a, px, (uint32_t)h, (uint32_t)w, (uint32_t)c, msg,
                          sizeof msg);
}

static void test_identities(void **state) {
  (void)state;
  int w = 37, h = 23;
  uint8_t *img = noise(w, h, 3, 1), *x = malloc((size_t)w * h * 3);
  assert_non_null(x);
  size_t n = (size_t)w * h * 3;
  struct {
    const char *op;
    sl_augment_args a;
    int twice; /* applied twice gives the image back */
  } cases[] = {
      {"invert", {.angle = 0}, 1},
      {"hflip", {.angle = 0}, 1},
      {"rotate", {.angle = 0}, 0},
      {"rotate", {.angle = 180}, 1},
      {"affine", {.scale = 1}, 0},
      {"adjust_brightness", {.factor = 1}, 0},
      {"adjust_contrast", {.factor = 1}, 0},
      {"adjust_saturation", {.factor = 1}, 0},
      {"adjust_sharpness", {.factor = 1}, 0},
      {"adjust_hue", {.factor = 0}, 0},
      {"posterize", {.bits = 8}, 0},
      {"solarize", {.threshold = 256}, 0},
      {"gaussian_blur", {.kernel_size = {1, 1}, .sigma = {1, 1}}, 0},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    memcpy(x, img, n);
    assert_int_equal(apply(cases[k].op, &cases[k].a, x, w, h, 3), SL_OK);
    if (cases[k].twice)
      assert_int_equal(apply(cases[k].op, &cases[k].a, x, w, h, 3), SL_OK);
    int maxd = 0;
    for (size_t i = 0; i < n; i++) {
      int d = abs((int)x[i] - (int)img[i]);
      maxd = d > maxd ? d : maxd;
    }
    if (maxd > (strcmp(cases[k].op, "adjust_hue") == 0 ? 1 : 0))
      fail_msg("%s: identity off by %d", cases[k].op, maxd);
  }
  free(img);
  free(x);
}

static void test_exact_values(void **state) {
  (void)state;
  uint8_t px[4 * 3] = {10, 20, 30, 200, 100, 50, 0, 0, 0, 255, 255, 255};
  sl_augment_args a = {.bits = 2};
  assert_int_equal(apply("posterize", &a, px, 4, 1, 3), SL_OK);
  assert_int_equal(px[0], 0);
  assert_int_equal(px[3], 192);
  assert_int_equal(px[4], 64);
  uint8_t g[3] = {255, 0, 0};
  assert_int_equal(apply("rgb_to_grayscale", &a, g, 1, 1, 3), SL_OK);
  assert_int_equal(g[0], 76); /* int(0.2989 * 255) */
  assert_int_equal(g[0], g[2]);
  /* autocontrast stretches each channel to 0..255 */
  uint8_t ac[2 * 3] = {50, 60, 70, 150, 61, 70};
  assert_int_equal(apply("autocontrast", &a, ac, 2, 1, 3), SL_OK);
  assert_int_equal(ac[0], 0);
  assert_int_equal(ac[3], 255);
  assert_int_equal(ac[4], 255);
  assert_int_equal(ac[2], 70); /* a flat channel is left alone */
  /* a NaN or an infinity is refused, named, before any pixel moves */
  uint8_t keep[4 * 3];
  memcpy(keep, px, sizeof keep);
  sl_augment_args nan_angle = {.angle = NAN},
                  inf_shift = {.translate = {INFINITY, 0}},
                  inf_factor = {.factor = INFINITY};
  char msg[256];
  assert_int_equal(
      sl_augment_apply("rotate", &nan_angle, px, 1, 4, 3, msg, sizeof msg),
      SL_EINVAL);
  assert_non_null(strstr(msg, "angle"));
  assert_int_equal(
      sl_augment_apply("translate_x", &inf_shift, px, 1, 4, 3, msg, sizeof msg),
      SL_EINVAL);
  assert_non_null(strstr(msg, "translate"));
  assert_int_equal(sl_augment_apply("adjust_contrast", &inf_factor, px, 1, 4, 3,
                                    msg, sizeof msg),
                   SL_EINVAL);
  assert_non_null(strstr(msg, "not a finite number"));
  assert_memory_equal(px, keep, sizeof keep);
  /* erase sets exactly its box, clipped to the image */
  int w = 9, h = 7;
  uint8_t *img = noise(w, h, 3, 2), *x = malloc((size_t)w * h * 3);
  assert_non_null(x);
  memcpy(x, img, (size_t)w * h * 3);
  sl_augment_args e = {.i = 5, .j = 6, .h = 9, .w = 9, .value = {1, 2, 3}};
  assert_int_equal(apply("erase", &e, x, w, h, 3), SL_OK);
  for (int y = 0; y < h; y++)
    for (int xx = 0; xx < w; xx++)
      for (int c = 0; c < 3; c++) {
        size_t i = ((size_t)y * w + xx) * 3 + c;
        int in = y >= 5 && xx >= 6;
        assert_int_equal(x[i], in ? c + 1 : img[i]);
      }
  /* a flat image stays flat under blur, sharpness and equalize */
  memset(x, 90, (size_t)w * h * 3);
  sl_augment_args b = {.kernel_size = {7, 5}, .sigma = {3, 1}, .factor = 2};
  assert_int_equal(apply("gaussian_blur", &b, x, w, h, 3), SL_OK);
  assert_int_equal(apply("adjust_sharpness", &b, x, w, h, 3), SL_OK);
  assert_int_equal(apply("equalize", &b, x, w, h, 3), SL_OK);
  for (size_t i = 0; i < (size_t)w * h * 3; i++)
    assert_int_equal(x[i], 90);
  /* rotate by 90 degrees moves the top-right corner to the top-left
   * (counter-clockwise) on a square image */
  uint8_t sq[4 * 4];
  for (int i = 0; i < 16; i++)
    sq[i] = (uint8_t)i;
  sl_augment_args r = {.angle = 90};
  assert_int_equal(apply("rotate", &r, sq, 4, 4, 1), SL_OK);
  assert_int_equal(sq[0], 3);
  assert_int_equal(sq[15], 12);
  free(img);
  free(x);
}

/* Every op on 1x1, 1xN, Nx1, gray and odd sizes, with extreme
 * parameters: what the sanitizers need to see. */
static void test_every_op_on_edge_sizes(void **state) {
  (void)state;
  /* the ops: all of sl_augment_op_get's table, and it has them all */
  const char *ops[32];
  size_t nops = 0;
  sl_augment_op_info info;
  while (nops < 32 && sl_augment_op_get((uint32_t)nops, &info))
    ops[nops++] = info.name;
  assert_int_equal(nops, 20);
  int sizes[][2] = {{1, 1}, {1, 9}, {9, 1}, {2, 2}, {3, 3}, {31, 17}};
  sl_augment_args a = {.angle = -45,
                       .translate = {300, -300},
                       .scale = 0.3,
                       .shear = {80, -80},
                       .interpolation = 1,
                       .has_fill = 1,
                       .fill = {255, 0, 255},
                       .factor = 0.5,
                       .bits = 0,
                       .threshold = 0,
                       .kernel_size = {255, 3},
                       .sigma = {50, 0.01},
                       .i = -3,
                       .j = 2,
                       .h = 100,
                       .w = 1,
                       .value = {255, 255, 255}};
  for (int interp = 0; interp < 2; interp++)
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
      for (int c = 1; c <= 3; c += 2)
        for (size_t k = 0; k < nops; k++) {
          int w = sizes[s][0], h = sizes[s][1];
          uint8_t *x = noise(w, h, c, k);
          a.interpolation = interp;
          assert_int_equal(apply(ops[k], &a, x, w, h, c), SL_OK);
          a.translate[0] = -a.translate[0]; /* both directions */
          assert_int_equal(apply(ops[k], &a, x, w, h, c), SL_OK);
          free(x);
        }
  /* a translation by whole pixels (the row-copy path) moves every pixel */
  int w = 6, h = 5;
  uint8_t *x = noise(w, h, 3, 9), *y = malloc((size_t)w * h * 3);
  assert_non_null(y);
  memcpy(y, x, (size_t)w * h * 3);
  sl_augment_args t = {
      .translate = {2, -1}, .scale = 1, .has_fill = 1, .fill = {7, 8, 9}};
  assert_int_equal(apply("affine", &t, y, w, h, 3), SL_OK);
  for (int yy = 0; yy < h; yy++)
    for (int xx = 0; xx < w; xx++)
      for (int c = 0; c < 3; c++) {
        int sx = xx - 2, sy = yy + 1;
        int in = sx >= 0 && sx < w && sy >= 0 && sy < h;
        assert_int_equal(y[((size_t)yy * w + xx) * 3 + c],
                         in ? x[((size_t)sy * w + sx) * 3 + c] : 7 + c);
      }
  free(x);
  free(y);
  uint8_t px[3] = {0};
  assert_int_equal(apply("no_such_op", &a, px, 1, 1, 3), SL_EINVAL);
  assert_int_equal(apply("invert", &a, px, 1, 1, 2), SL_EINVAL);
  sl_augment_args bad = {.factor = 0.6};
  char msg[256];
  assert_int_equal(
      sl_augment_apply("adjust_hue", &bad, px, 1, 1, 3, msg, sizeof msg),
      SL_EINVAL);
  assert_non_null(strstr(msg, "adjust_hue"));
}

/* sl_augment_op_get's table is what apply and boxes take: every op runs,
 * the ops said to move boxes move them, the others are refused, and an
 * unknown op's message lists the table. */
static void test_op_table(void **state) {
  (void)state;
  sl_augment_args a = {.scale = 1,
                       .factor = 0.5,
                       .bits = 8,
                       .kernel_size = {3, 3},
                       .sigma = {1, 1},
                       .h = 1,
                       .w = 1};
  sl_augment_op_info info;
  char msg[512], names[512] = "";
  uint32_t i = 0;
  for (; sl_augment_op_get(i, &info); i++) {
    assert_non_null(info.name);
    assert_non_null(info.params);
    assert_null(info.reserved[0]);
    uint8_t px[5 * 4 * 3] = {0};
    assert_int_equal(apply(info.name, &a, px, 5, 4, 3), SL_OK);
    float box[4] = {1, 1, 3, 2};
    sl_status st =
        sl_augment_boxes(info.name, &a, box, 1, 4, 5, msg, sizeof msg);
    assert_int_equal(st, info.moves_boxes ? SL_OK : SL_EINVAL);
    size_t at = strlen(names);
    snprintf(names + at, sizeof names - at, "%s%s", i ? ", " : "", info.name);
  }
  assert_int_equal(i, 20);
  assert_int_equal(sl_augment_op_get(i, &info), 0);
  assert_int_equal(sl_augment_op_get(0, NULL), 0);
  uint8_t px[3] = {0};
  assert_int_equal(sl_augment_apply("nope", &a, px, 1, 1, 3, msg, sizeof msg),
                   SL_EINVAL);
  assert_non_null(strstr(msg, names));
}

static void test_policy_draws(void **state) {
  (void)state;
  sl_policy_params p = {SL_AUTO_TRIVIAL,   2, 31, 9, 0,
                        SL_INTERP_NEAREST, 0, {0}};
  int counts[SL_POP_COUNT] = {0};
  for (uint64_t i = 0; i < 14000; i++) {
    sl_rng r = sl_recipe_rng(5, 1, i), r2 = r;
    sl_policy_step s[SL_POLICY_MAX_OPS], s2[SL_POLICY_MAX_OPS];
    assert_int_equal(sl_policy_draw(&p, 224, 224, &r, s), 1);
    assert_int_equal(sl_policy_draw(&p, 224, 224, &r2, s2), 1);
    assert_int_equal(s[0].op, s2[0].op); /* a pure function */
    assert_true(s[0].magnitude == s2[0].magnitude);
    counts[s[0].op]++;
    if (s[0].op == SL_POP_ROTATE)
      assert_true(fabs(s[0].magnitude) <= 135.0 + 1e-4);
    if (s[0].op == SL_POP_POSTERIZE)
      assert_true(s[0].magnitude >= 2 && s[0].magnitude <= 8);
  }
  assert_int_equal(counts[SL_POP_INVERT], 0); /* not in TrivialAugmentWide */
  for (int k = 0; k < SL_POP_INVERT; k++)
    assert_true(counts[k] > 800 && counts[k] < 1200);
  p.policy = SL_AUTO_RANDAUGMENT;
  p.num_ops = 3;
  sl_rng r = sl_recipe_rng(5, 1, 0);
  sl_policy_step s[SL_POLICY_MAX_OPS];
  assert_int_equal(sl_policy_draw(&p, 224, 224, &r, s), 3);
  p.policy = SL_AUTO_AUTOAUGMENT;
  assert_true(sl_policy_draw(&p, 224, 224, &r, s) <= 2);
  assert_string_equal(sl_policy_op_name(SL_POP_SHEAR_X), "ShearX");
  assert_null(sl_policy_op_name(SL_POP_COUNT));
}

/* sl_recipe_draw_all: a pure function of the stream; the jitter's order a
 * permutation with its factors in ColorJitter's ranges; the erasing box
 * inside the sample. (The distributions against torchvision's get_params
 * are python/tests/test_augment.py's.) */
static void test_recipe_draws(void **state) {
  (void)state;
  sl_aug_recipe rc;
  memset(&rc, 0, sizeof rc);
  rc.jitter[0] = 1.5; /* [max(0, 1 - 1.5), 2.5] */
  rc.jitter[1] = rc.jitter[2] = 0.4;
  rc.jitter[3] = 0.1;
  rc.jitter_p = 1;
  rc.erasing = 1;
  rc.erasing_scale[0] = 0.02;
  rc.erasing_scale[1] = 0.33;
  rc.erasing_ratio[0] = 0.3;
  rc.erasing_ratio[1] = 3.3;
  int boxes = 0;
  for (uint64_t i = 0; i < 2000; i++) {
    sl_rng r = sl_recipe_rng(5, 1, i), r2 = r;
    sl_recipe_draw d, d2;
    sl_recipe_draw_all(&rc, &r, 48, 40, &d);
    sl_recipe_draw_all(&rc, &r2, 48, 40, &d2);
    assert_memory_equal(&d, &d2, sizeof d);
    assert_true(d.jitter);
    int seen = 0;
    for (int k = 0; k < 4; k++)
      seen |= 1 << d.jitter_order[k];
    assert_int_equal(seen, 15);
    assert_true(d.jitter_factor[0] >= 0 && d.jitter_factor[0] <= 2.5);
    for (int k = 1; k < 3; k++)
      assert_true(d.jitter_factor[k] >= 0.6 && d.jitter_factor[k] <= 1.4);
    assert_true(fabs(d.jitter_factor[3]) <= 0.1);
    if (d.erase.on) {
      boxes++;
      assert_true(d.erase.h > 0 && d.erase.h < 40);
      assert_true(d.erase.w > 0 && d.erase.w < 48);
      assert_true(d.erase.i >= 0 && d.erase.i + d.erase.h <= 40);
      assert_true(d.erase.j >= 0 && d.erase.j + d.erase.w <= 48);
    }
  }
  assert_true(boxes > 1900); /* ten tries nearly always find one */
  rc.jitter[1] = 0;          /* contrast off: left at 1 */
  sl_rng r = sl_recipe_rng(5, 1, 0);
  sl_recipe_draw d;
  sl_recipe_draw_all(&rc, &r, 48, 40, &d);
  assert_true(d.jitter_factor[1] == 1.0);
}

static sl_pipeline *pipeline(const sl_aug_params *p) {
  sl_pipeline *pl;
  sl_err err;
  assert_int_equal(sl_pipeline_create(&pl, p, 64, &err), SL_OK);
  return pl;
}

static void run(sl_pipeline *pl, const blob *j, uint64_t index, void *dst) {
  sl_err err;
  assert_int_equal(sl_pipeline_run(pl, j->p, j->n, 1, 0, 0, 0, 3, 0, index, 48,
                                   40, dst, &err),
                   SL_OK);
}

static void test_recipe_in_the_pipeline(void **state) {
  (void)state;
  sl_synth_jpeg_opts o = sl_synth_jpeg_defaults();
  blob j = sl_test_jpeg(11, 120, 90, &o);
  sl_aug_params plain = sl_test_aug_params(SL_LAYOUT_NCHW);
  plain.dtype = SL_DTYPE_FP32;
  sl_aug_params rec = plain;
  rec.recipe.policy = (sl_policy_params){
      SL_AUTO_RANDAUGMENT, 2, 31, 9, 0.5, SL_INTERP_BILINEAR, 1,
      {124, 116, 104}};
  rec.recipe.jitter[0] = rec.recipe.jitter[3] = 0.3;
  rec.recipe.jitter_p = 1;
  rec.recipe.grayscale = 0.3;
  rec.recipe.blur = 0.5;
  rec.recipe.blur_kernel = 5;
  rec.recipe.blur_sigma[0] = 0.1, rec.recipe.blur_sigma[1] = 2;
  sl_pipeline *a = pipeline(&plain), *b = pipeline(&rec), *b2 = pipeline(&rec);
  size_t bytes = sl_aug_sample_bytes(&plain, 48, 40);
  float *x = malloc(bytes), *y = malloc(bytes), *z = malloc(bytes);
  assert_true(x && y && z);
  int differ = 0;
  for (uint64_t i = 0; i < 20; i++) {
    run(a, &j, i, x);
    run(b, &j, i, y);
    run(b2, &j, 19 - i, z); /* another pipeline, another order */
    run(b2, &j, i, z);
    assert_memory_equal(y, z, bytes);
    differ += memcmp(x, y, bytes) != 0;
  }
  assert_true(differ >= 15); /* a few draws may be Identity-only */
  /* erasing: value 0 in normalized units on fp32 */
  sl_aug_params er = plain;
  er.recipe.erasing = 1;
  er.recipe.erasing_scale[0] = 0.3, er.recipe.erasing_scale[1] = 0.3;
  er.recipe.erasing_ratio[0] = er.recipe.erasing_ratio[1] = 1;
  sl_pipeline *e = pipeline(&er);
  run(e, &j, 3, y);
  size_t zeros = 0;
  for (size_t k = 0; k < 48 * 40; k++)
    zeros += y[k] == 0 && y[k + 48 * 40] == 0 && y[k + 2 * 48 * 40] == 0;
  assert_true(zeros >= 500 && zeros <= 700); /* sqrt(0.3*1920)^2 ~ 576 */
  /* a bad recipe is refused at create */
  sl_aug_params bad = plain;
  bad.recipe.blur = 1;
  bad.recipe.blur_kernel = 4;
  sl_pipeline *none;
  sl_err err;
  assert_int_equal(sl_pipeline_create(&none, &bad, 64, &err), SL_EINVAL);
  assert_non_null(strstr(err.msg, "blur_kernel"));
  sl_pipeline_destroy(a);
  sl_pipeline_destroy(b);
  sl_pipeline_destroy(b2);
  sl_pipeline_destroy(e);
  free(x);
  free(y);
  free(z);
  free(j.p);
}

/* The pipeline hands the flip to the conversion when the drawn ops commute
 * with a mirror: a sample drawn with flip = 1 is then the mirror of the same
 * sample with flip = 0 (the flip's draw is taken either way, so the crop and
 * the recipe's draws are the same), on u8 NCHW, fp32 NHWC and gray. */
static void test_pipeline_flips_late_samples_mirrored(void **state) {
  (void)state;
  sl_synth_jpeg_opts o = sl_synth_jpeg_defaults();
  blob j = sl_test_jpeg(12, 120, 90, &o);
  for (int form = 0; form < 3; form++) {
    sl_aug_params p =
        sl_test_aug_params(form == 1 ? SL_LAYOUT_NHWC : SL_LAYOUT_NCHW);
    p.dtype = form == 1 ? SL_DTYPE_FP32 : SL_DTYPE_U8;
    p.channels = form == 2 ? 1 : 3;
    p.recipe.policy = (sl_policy_params){SL_AUTO_TRIVIAL,   1, 31,       0, 0,
                                         SL_INTERP_NEAREST, 0, {0, 0, 0}};
    for (int k = 0; k < 4; k++)
      p.recipe.jitter[k] = k == 3 ? 0.1 : 0.4;
    p.recipe.jitter_p = 0.5;
    sl_aug_params q = p;
    p.flip = 1.0, q.flip = 0.0;
    sl_pipeline *a = pipeline(&p), *b = pipeline(&q);
    size_t bytes = sl_aug_sample_bytes(&p, 48, 40);
    size_t eb = p.dtype == SL_DTYPE_FP32 ? 4 : 1;
    int nch = p.channels, late = 0;
    uint8_t *x = malloc(bytes), *y = malloc(bytes);
    assert_true(x && y);
    for (uint64_t i = 0; i < 40; i++) {
      sl_rng r = sl_recipe_rng(3, 0, i);
      sl_recipe_draw d;
      sl_recipe_draw_all(&p.recipe, &r, 40, 48, &d);
      if (!sl_recipe_flip_commutes(&d))
        continue;
      late++;
      run(a, &j, i, x);
      run(b, &j, i, y);
      for (int c = 0; c < nch; c++)
        for (int yy = 0; yy < 48; yy++)
          for (int xx = 0; xx < 40; xx++) {
            size_t at = form == 1 ? ((size_t)yy * 40 + xx) * 3 + c
                                  : (size_t)c * 48 * 40 + (size_t)yy * 40 + xx;
            size_t mirror =
                form == 1 ? ((size_t)yy * 40 + (39 - xx)) * 3 + c
                          : (size_t)c * 48 * 40 + (size_t)yy * 40 + 39 - xx;
            if (memcmp(x + at * eb, y + mirror * eb, eb) != 0)
              fail_msg("form %d sample %llu: flipped (%d, %d, %d) is not the "
                       "mirror",
                       form, (unsigned long long)i, xx, yy, c);
          }
    }
    assert_true(late >= 15);
    free(x), free(y);
    sl_pipeline_destroy(a);
    sl_pipeline_destroy(b);
  }
  free(j.p);
}

static int same_plan(const sl_mix_plan *a, const sl_mix_plan *b) {
  return a->kind == b->kind && a->lambda == b->lambda && a->y0 == b->y0 &&
         a->y1 == b->y1 && a->x0 == b->x0 && a->x1 == b->x1;
}

/* Mixup/CutMix plans: Beta(a, a)'s mean and variance, CutMix's lambda
 * from its clipped box, plans a pure function of (seed, epoch, rank,
 * batch). */
static void test_mix_plans(void **state) {
  (void)state;
  sl_mix_params p = {.mixup = 0.8, .prob = 1, .classes = 4};
  double s = 0, s2 = 0;
  int n = 20000;
  for (int k = 0; k < n; k++) {
    sl_mix_plan m, m2;
    sl_mix_plan_for(&p, 9, 2, 0, (uint64_t)k, 32, 48, &m);
    sl_mix_plan_for(&p, 9, 2, 0, (uint64_t)k, 32, 48, &m2);
    assert_true(m.lambda == m2.lambda);
    assert_int_equal(m.kind, SL_MIX_MIXUP);
    s += m.lambda, s2 += m.lambda * m.lambda;
  }
  double mean = s / n, var = s2 / n - mean * mean;
  assert_true(fabs(mean - 0.5) < 0.01);
  assert_true(fabs(var - 1.0 / (4 * (2 * 0.8 + 1))) < 0.005); /* 0.0962 */
  p.cutmix = 1.0;
  p.switch_prob = 0.5;
  int cuts = 0;
  for (int k = 0; k < 2000; k++) {
    sl_mix_plan m;
    sl_mix_plan_for(&p, 9, 2, 0, (uint64_t)k, 32, 48, &m);
    if (m.kind != SL_MIX_CUTMIX)
      continue;
    cuts++;
    assert_true(m.y0 >= 0 && m.y0 <= m.y1 && m.y1 <= 32);
    assert_true(m.x0 >= 0 && m.x0 <= m.x1 && m.x1 <= 48);
    double area = (double)(m.y1 - m.y0) * (m.x1 - m.x0);
    assert_true(fabs(m.lambda - (1 - area / (32.0 * 48))) < 1e-6);
  }
  assert_true(cuts > 850 && cuts < 1150);
  /* Each rank draws its own plans (issue 40): with 8 ranks, no batch
   * index has two ranks sharing kind, lambda and box; a rank's plans are
   * the same at every call (a resume draws them again). */
  int same = 0;
  for (int k = 0; k < 200; k++) {
    sl_mix_plan m[8];
    for (uint64_t rank = 0; rank < 8; rank++) {
      sl_mix_plan again;
      sl_mix_plan_for(&p, 9, 2, rank, (uint64_t)k, 32, 48, &m[rank]);
      sl_mix_plan_for(&p, 9, 2, rank, (uint64_t)k, 32, 48, &again);
      assert_true(same_plan(&m[rank], &again));
      for (uint64_t o = 0; o < rank; o++)
        same += same_plan(&m[o], &m[rank]);
    }
  }
  assert_int_equal(same, 0);
  p.prob = 0;
  sl_mix_plan none;
  sl_mix_plan_for(&p, 9, 2, 0, 0, 32, 48, &none);
  assert_int_equal(none.kind, SL_MIX_NONE);
  assert_true(none.lambda == 1.0);
}

/* Pixels in every dtype and layout; soft targets. */
static void test_mix_pixels_and_targets(void **state) {
  (void)state;
  enum { N = 3, H = 4, W = 5, C = 3 };
  sl_mix_plan mix = {SL_MIX_MIXUP, 0.75, 0, 0, 0, 0};
  float f[N * H * W * C];
  uint8_t u[N * H * W * C];
  uint16_t hf[N * H * W * C];
  for (int i = 0; i < N * H * W * C; i++) {
    f[i] = (float)i;
    u[i] = (uint8_t)(i * 2);
    hf[i] = sl_f32_to_f16((float)i);
  }
  sl_mix_pixels(&mix, f, N, H, W, C, SL_DTYPE_FP32, SL_LAYOUT_NCHW);
  sl_mix_pixels(&mix, u, N, H, W, C, SL_DTYPE_U8, SL_LAYOUT_NHWC);
  sl_mix_pixels(&mix, hf, N, H, W, C, SL_DTYPE_FP16, SL_LAYOUT_NCHW);
  int per = H * W * C;
  for (int i = 0; i < per; i++) {
    float a = (float)i, b = (float)(2 * per + i);
    assert_true(f[i] == 0.75f * a + 0.25f * b);
    assert_true(f[2 * per + i] == 0.75f * b + 0.25f * a);
    assert_true(f[per + i] == (float)(per + i)); /* the middle one */
    float ua = (float)(uint8_t)(2 * i),
          ub = (float)(uint8_t)(2 * (2 * per + i));
    assert_int_equal(u[i], (uint8_t)nearbyintf(0.75f * ua + 0.25f * ub));
    assert_true(fabsf(sl_f16_to_f32(hf[i]) - (0.75f * a + 0.25f * b)) <= 0.5f);
  }
  sl_mix_plan cut = {SL_MIX_CUTMIX, 0.7, 1, 3, 2, 4};
  for (int i = 0; i < N * per; i++)
    f[i] = (float)(i / per); /* sample index */
  sl_mix_pixels(&cut, f, N, H, W, C, SL_DTYPE_FP32, SL_LAYOUT_NHWC);
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++)
      for (int c = 0; c < C; c++) {
        int in = y >= 1 && y < 3 && x >= 2 && x < 4;
        assert_true(f[(y * W + x) * C + c] == (in ? 2.0f : 0.0f));
        assert_true(f[2 * per + (y * W + x) * C + c] == (in ? 0.0f : 2.0f));
      }
  sl_mix_params p = {.smoothing = 0.1, .classes = 4};
  int32_t labels[N] = {1, -1, 3};
  float t[N * 4];
  sl_mix_targets(&p, &mix, labels, N, t);
  float off = 0.1f / 4, on = 1 - 0.1f + off;
  assert_true(fabsf(t[1] - (0.75f * on + 0.25f * off)) < 1e-6f);
  assert_true(fabsf(t[3] - (0.75f * off + 0.25f * on)) < 1e-6f);
  assert_true(fabsf(t[4 + 0] - off) < 1e-6f); /* unlabelled: all off */
  sl_err err;
  sl_mix_params bad = {.mixup = 1, .prob = 1};
  assert_int_equal(sl_mix_check(&bad, &err), SL_EINVAL);
  assert_non_null(strstr(err.msg, "num_classes"));
}

/* The vector loops (SSE2, AVX2 where the CPU has it) give the bytes of
 * their scalar formula, one byte at a time, on every width (tails of 1 to
 * 31 bytes) and on a 224 x 224 crop; and the ops built on them
 * (contrast, saturation, grayscale, autocontrast) the bytes of torchvision's
 * float32 formulas written out here, hue those of its scalar loop (a 1x1
 * image). */
static void test_pointwise_loops_are_their_formula(void **state) {
  (void)state;
  sl_rng r = sl_rng_for(77, 0, 0);
  const int sizes[][2] = {{1, 1},  {3, 1},  {5, 2},  {7, 3},    {9, 1},
                          {17, 3}, {31, 2}, {33, 5}, {224, 224}};
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
    for (int ch = 1; ch <= 4; ch += 3) {
      int w = sizes[s][0], h = sizes[s][1];
      size_t n = (size_t)w * h * ch;
      uint8_t *img = noise(w, h, ch, 100 + s), *x = malloc(n);
      assert_non_null(x);
      for (int form = 0; form < 2; form++) {
        float a[4], b[4];
        for (int c = 0; c < 4; c++) {
          a[c] = (float)(sl_rng_uniform(&r) * 4.0 - 1.0);
          b[c] = (float)(sl_rng_uniform(&r) * 600.0 - 300.0);
        }
        memcpy(x, img, n);
        sl_map_channels(x, (size_t)w * h, ch, (sl_map_form)form, a, b);
        for (size_t i = 0; i < n; i++) {
          int c = ch == 1 ? 0 : (int)(i % 4);
          uint8_t want = sl_map_one((sl_map_form)form, a[c], b[c], img[i]);
          if (x[i] != want)
            fail_msg("map form %d %dx%dx%d byte %zu: %d, formula %d", form, w,
                     h, ch, i, x[i], want);
        }
      }
      if (ch == 4) {
        uint64_t sum = 0;
        for (size_t i = 0; i < (size_t)w * h; i++)
          sum += (uint8_t)(0.2989f * (float)img[4 * i] +
                           0.587f * (float)img[4 * i + 1] +
                           0.114f * (float)img[4 * i + 2]);
        assert_int_equal(sl_luma_sum(img, (size_t)w * h), sum);
        /* contrast: _blend(img, mean(grayscale), f), truncated */
        double f = 5.0 * sl_rng_uniform(&r); /* clamps on both sides */
        float mean = (float)((double)sum / (double)((size_t)w * h));
        float fr = (float)f, fo = (float)(1.0 - f);
        memcpy(x, img, n);
        sl_image im = {x, w, h, 4};
        sl_op_contrast(&im, f);
        for (size_t i = 0; i < n; i++) {
          if (i % 4 == 3)
            continue;
          float v = fr * (float)img[i] + fo * mean;
          uint8_t want = v <= 0 ? 0 : v >= 255 ? 255 : (uint8_t)v;
          if (x[i] != want)
            fail_msg("contrast %g %dx%d byte %zu: %d, formula %d", f, w, h, i,
                     x[i], want);
        }
        /* saturation: _blend(img, grayscale(img), f), truncated */
        memcpy(x, img, n);
        sl_op_saturation(&im, f);
        for (size_t i = 0; i < n; i++) {
          if (i % 4 == 3)
            continue;
          const uint8_t *q = img + i - i % 4;
          float g = fo * (float)(uint8_t)(0.2989f * (float)q[0] +
                                          0.587f * (float)q[1] +
                                          0.114f * (float)q[2]);
          float v = fr * (float)img[i] + g;
          uint8_t want = v <= 0 ? 0 : v >= 255 ? 255 : (uint8_t)v;
          if (x[i] != want)
            fail_msg("saturation %g %dx%d byte %zu: %d, formula %d", f, w, h, i,
                     x[i], want);
        }
        /* rgb_to_grayscale: the luma byte in the three channels */
        memcpy(x, img, n);
        sl_op_grayscale(&im);
        for (size_t i = 0; i < n; i++) {
          const uint8_t *q = img + i - i % 4;
          uint8_t want = (uint8_t)(0.2989f * (float)q[0] +
                                   0.587f * (float)q[1] + 0.114f * (float)q[2]);
          if (i % 4 != 3 && x[i] != want)
            fail_msg("grayscale %dx%d byte %zu: %d, formula %d", w, h, i, x[i],
                     want);
        }
        /* hue: each pixel as the scalar loop does it on a 1x1 image */
        double hf = sl_rng_uniform(&r) - 0.5;
        memcpy(x, img, n);
        sl_op_hue(&im, hf);
        for (size_t i = 0; i < (size_t)w * h; i++) {
          uint8_t one[4];
          memcpy(one, img + 4 * i, 4);
          sl_image im1 = {one, 1, 1, 4};
          sl_op_hue(&im1, hf);
          for (int c = 0; c < 3; c++)
            if (x[4 * i + c] != one[c])
              fail_msg("hue %g %dx%d pixel %zu channel %d: %d, alone %d", hf, w,
                       h, i, c, x[4 * i + c], one[c]);
        }
        /* autocontrast: (v - min) * (255 / (max - min)) per channel */
        memcpy(x, img, n);
        sl_op_autocontrast(&im);
        for (int c = 0; c < 3; c++) {
          int lo = 255, hi = 0;
          for (size_t i = (size_t)c; i < n; i += 4)
            lo = img[i] < lo ? img[i] : lo, hi = img[i] > hi ? img[i] : hi;
          float scale = 255.0f / ((float)hi - (float)lo), mn = (float)lo;
          if (!isfinite(scale))
            scale = 1.0f, mn = 0.0f;
          for (size_t i = (size_t)c; i < n; i += 4) {
            float v = ((float)img[i] - mn) * scale;
            uint8_t want = v <= 0 ? 0 : v >= 255 ? 255 : (uint8_t)v;
            if (x[i] != want)
              fail_msg("autocontrast %dx%d byte %zu: %d, formula %d", w, h, i,
                       x[i], want);
          }
        }
      }
      free(img);
      free(x);
    }
  }
}

/* RandomErasing on converted samples of every dtype, layout and channel
 * count: exactly the box's elements (clipped to the sample) change, to the
 * normalized 0 (u8: the mean's byte) or to N(0, 1) draws taken channel by
 * channel, row by row, as torchvision draws them. */
static void test_erase_on_every_sample_form(void **state) {
  (void)state;
  const sl_dtype dtypes[] = {SL_DTYPE_U8, SL_DTYPE_FP32, SL_DTYPE_FP16,
                             SL_DTYPE_BF16};
  int h = 11, w = 13;
  sl_erase_box box = {.on = 1, .i = 4, .j = 9, .h = 20, .w = 3};
  for (size_t d = 0; d < 4; d++)
    for (int layout = 0; layout < 2; layout++)
      for (int nch = 1; nch <= 3; nch += 2)
        for (int random = 0; random < 2; random++) {
          sl_aug_params p =
              sl_test_aug_params(layout ? SL_LAYOUT_NHWC : SL_LAYOUT_NCHW);
          p.dtype = dtypes[d], p.channels = nch;
          size_t bytes = sl_aug_sample_bytes(&p, h, w);
          size_t eb = bytes / ((size_t)h * w * nch);
          uint8_t *x = malloc(bytes);
          assert_non_null(x);
          memset(x, 0xA5, bytes);
          sl_rng r = sl_rng_for(5, 0, 0), want_r = r;
          sl_convert_erase(&p, x, h, w, &box, random, &r);
          for (int c = 0; c < nch; c++)
            for (int y = 0; y < h; y++)
              for (int xx = 0; xx < w; xx++) {
                int in = y >= 4 && xx >= 9 && xx < 12;
                size_t px = (size_t)y * w + xx;
                size_t at = layout == 0 || nch == 1 ? (size_t)c * h * w + px
                                                    : px * nch + (size_t)c;
                const uint8_t *e = x + at * eb;
                if (!in) {
                  for (size_t k = 0; k < eb; k++)
                    assert_int_equal(e[k], 0xA5);
                  continue;
                }
                double v = random ? sl_rng_normal(&want_r) : 0.0;
                if (p.dtype == SL_DTYPE_U8) {
                  double b = nearbyint((v * p.std[c] + p.mean[c]) * 255.0);
                  assert_int_equal(e[0], b < 0 ? 0 : b > 255 ? 255 : (int)b);
                } else if (p.dtype == SL_DTYPE_FP32) {
                  float f;
                  memcpy(&f, e, 4);
                  assert_true(f == (float)v);
                } else {
                  uint16_t hv, want = p.dtype == SL_DTYPE_BF16
                                          ? sl_f32_to_bf16((float)v)
                                          : sl_f32_to_f16((float)v);
                  memcpy(&hv, e, 2);
                  assert_int_equal(hv, want);
                }
              }
          free(x);
        }
  /* a box clipped to nothing changes nothing */
  sl_aug_params p = sl_test_aug_params(SL_LAYOUT_NCHW);
  size_t bytes = sl_aug_sample_bytes(&p, h, w);
  uint8_t *x = malloc(bytes), *y = malloc(bytes);
  assert_true(x && y);
  memset(x, 0x5A, bytes), memcpy(y, x, bytes);
  sl_rng r = sl_rng_for(5, 0, 0);
  const sl_erase_box outside[] = {
      {1, h, 0, 4, 4}, {1, 0, w, 4, 4}, {1, -9, -9, 5, 5}, {1, 2, 2, 0, 3}};
  for (int k = 0; k < 4; k++)
    sl_convert_erase(&p, x, h, w, &outside[k], k & 1, &r);
  assert_memory_equal(x, y, bytes);
  free(x), free(y);
}

/* Nearest warps give, pixel for pixel, the formula they implement: input
 * pixel (round(m0 xc + (m1 yc + m2 + ox)), round(m3 xc + (m4 yc + m5 +
 * oy))), rounding half to even, or the fill outside; on random rotations,
 * shears, scales and translations of RGBX and gray images (the AVX2,
 * SSE2, shifted-row and scalar paths). */
static void test_nearest_warp_is_its_formula(void **state) {
  (void)state;
  sl_rng r = sl_rng_for(91, 0, 0);
  const int sizes[][2] = {{1, 1}, {2, 3}, {5, 4}, {7, 9}, {31, 17}, {64, 48}};
  size_t cap = 64 * 48;
  sl_op_scratch s = {.img = malloc(cap * 4), .pixels = cap};
  assert_non_null(s.img);
  for (int t = 0; t < 240; t++) {
    int w = sizes[t % 6][0], h = sizes[t % 6][1], ch = t % 5 == 4 ? 1 : 4;
    double m[6];
    double angle = t % 3 == 0 ? 0.0 : sl_rng_uniform(&r) * 360.0 - 180.0;
    double tx = t % 2 ? floor(sl_rng_uniform(&r) * 20.0 - 10.0) : 0.0;
    double shx = t % 4 == 1 ? sl_rng_uniform(&r) * 60.0 - 30.0 : 0.0;
    double scale = t % 7 == 3 ? 0.5 + sl_rng_uniform(&r) : 1.0;
    sl_affine_params(w, h, angle, tx, -tx / 2, scale, shx, 0, 0, 0, 0, m);
    double fill[3] = {7, 200, 99};
    int with_fill = t % 2;
    uint8_t *img = noise(w, h, ch, (uint64_t)t),
            *x = malloc((size_t)w * h * ch);
    assert_non_null(x);
    memcpy(x, img, (size_t)w * h * ch);
    sl_image im = {x, w, h, ch};
    sl_op_warp(&im, m, SL_INTERP_NEAREST, with_fill ? fill : NULL, &s);
    double ox = (w - 1) * 0.5, oy = (h - 1) * 0.5;
    for (int y = 0; y < h; y++)
      for (int xx = 0; xx < w; xx++) {
        double xc = xx - ox, yc = y - oy;
        double bx = m[1] * yc + m[2] + ox, by = m[4] * yc + m[5] + oy;
        double rx = nearbyint(m[0] * xc + bx), ry = nearbyint(m[3] * xc + by);
        int in = rx >= 0 && rx < w && ry >= 0 && ry < h;
        for (int c = 0; c < (ch == 1 ? 1 : 3); c++) {
          int want = in          ? img[((size_t)ry * w + (size_t)rx) * ch + c]
                     : with_fill ? (int)fill[c]
                                 : 0;
          int got = x[((size_t)y * w + xx) * ch + c];
          if (got != want)
            fail_msg("warp %d (%dx%dx%d, angle %g, t %g, shear %g, scale %g) "
                     "pixel (%d, %d) channel %d: %d, formula %d",
                     t, w, h, ch, angle, tx, shx, scale, xx, y, c, got, want);
        }
      }
    free(img);
    free(x);
  }
  free(s.img);
}

/* adjust_sharpness gives torchvision's formula byte for byte: the 3x3
 * smoothing (1 1 1 / 1 5 1 / 1 1 1, / 13) rounded half to even inside the
 * one-pixel border, the image on it, then _blend(img, smoothed, factor)
 * truncated; on widths that leave every tail of the vector loops. */
static void test_sharpness_is_its_formula(void **state) {
  (void)state;
  const int sizes[][2] = {{3, 3}, {4, 5}, {9, 4}, {13, 6}, {37, 5}, {224, 9}};
  sl_rng r = sl_rng_for(33, 0, 0);
  size_t cap = 224 * 9;
  sl_op_scratch s = {.img = malloc(cap * 4), .pixels = cap};
  assert_non_null(s.img);
  for (size_t t = 0; t < 2 * sizeof sizes / sizeof sizes[0]; t++) {
    int w = sizes[t / 2][0], h = sizes[t / 2][1], ch = t % 2 ? 4 : 1;
    size_t stride = (size_t)w * ch;
    double f = 2.0 * sl_rng_uniform(&r);
    uint8_t *img = noise(w, h, ch, 500 + t), *x = malloc(stride * h);
    assert_non_null(x);
    memcpy(x, img, stride * h);
    sl_image im = {x, w, h, ch};
    sl_op_sharpness(&im, f, &s);
    float a = (float)f, o = (float)(1.0 - f);
    for (int y = 0; y < h; y++)
      for (size_t k = 0; k < stride; k++) {
        if (ch == 4 && k % 4 == 3)
          continue;
        const uint8_t *p = img + (size_t)y * stride + k;
        float deg = p[0];
        if (y > 0 && y < h - 1 && k >= (size_t)ch && k < stride - ch) {
          int ring = p[-stride - ch] + p[-stride] + p[-stride + ch] + p[-ch] +
                     p[ch] + p[stride - ch] + p[stride] + p[stride + ch];
          float v = (1.0f / 13.0f) * (float)ring + (5.0f / 13.0f) * (float)p[0];
          v = nearbyintf(v);
          deg = v < 0 ? 0 : v > 255 ? 255 : v;
        }
        float v = a * (float)p[0] + o * deg;
        int want = v <= 0 ? 0 : v >= 255 ? 255 : (int)v;
        int got = x[(size_t)y * stride + k];
        if (got != want)
          fail_msg("sharpness %g on %dx%dx%d at row %d byte %zu: %d, formula "
                   "%d",
                   f, w, h, ch, y, k, got, want);
      }
    free(img);
    free(x);
  }
  free(s.img);
}

/* Where sl_recipe_flip_commutes says so, mirroring after the recipe's ops
 * gives exactly the bytes of mirroring before (as torchvision orders
 * them): on draws of all three policies with ColorJitter and grayscale, and
 * it says no for every draw with a geometric step or a blur. */
static void test_late_flip_gives_the_same_bytes(void **state) {
  (void)state;
  int w = 61, h = 23;
  size_t n = (size_t)w * h * 4;
  sl_op_scratch s = {.img = malloc(n),
                     .rows = malloc(n * sizeof(float)),
                     .pixels = (size_t)w * h,
                     .line_w = (size_t)w};
  s.line = malloc(sl_op_line_floats((size_t)w) * sizeof(float));
  uint8_t *img = noise(w, h, 4, 8), *a = malloc(n), *b = malloc(n);
  assert_true(s.img && s.rows && s.line && a && b);
  const sl_auto_policy pols[] = {SL_AUTO_TRIVIAL, SL_AUTO_RANDAUGMENT,
                                 SL_AUTO_AUTOAUGMENT};
  int late = 0, early = 0;
  for (int t = 0; t < 600; t++) {
    sl_aug_recipe rc;
    memset(&rc, 0, sizeof rc);
    rc.policy.policy = pols[t % 3];
    rc.policy.num_ops = 2, rc.policy.bins = 31, rc.policy.magnitude = 9;
    for (int k = 0; k < 4; k++)
      rc.jitter[k] = t % 4 == 1 ? 0.4 : 0.0;
    rc.jitter[3] = t % 4 == 1 ? 0.1 : 0.0;
    rc.jitter_p = 1, rc.grayscale = t % 8 == 3 ? 1.0 : 0.0;
    rc.blur = t % 16 == 5 ? 1.0 : 0.0, rc.blur_kernel = 5;
    rc.blur_sigma[0] = 0.1, rc.blur_sigma[1] = 2.0;
    sl_rng r = sl_recipe_rng(9, 0, (uint64_t)t);
    sl_recipe_draw d;
    sl_recipe_draw_all(&rc, &r, w, h, &d);
    int moves = d.blur;
    for (int k = 0; k < d.n_steps; k++) {
      double m[6];
      moves |= sl_policy_matrix(&d.steps[k], w, h, m);
    }
    assert_int_equal(sl_recipe_flip_commutes(&d), !moves);
    if (moves) {
      early++;
      continue;
    }
    late++;
    memcpy(a, img, n), memcpy(b, img, n);
    sl_image ia = {a, w, h, 4}, ib = {b, w, h, 4};
    sl_recipe_apply(&rc, &d, &ia, 1, &s);
    sl_recipe_apply(&rc, &d, &ib, 0, &s);
    for (int y = 0; y < h; y++)
      for (int x = 0; x < w; x++)
        for (int c = 0; c < 3; c++)
          if (a[((size_t)y * w + x) * 4 + c] !=
              b[((size_t)y * w + (w - 1 - x)) * 4 + c])
            fail_msg("draw %d (%s then %d more): flip after differs at (%d, "
                     "%d)",
                     t, d.n_steps ? sl_policy_op_name(d.steps[0].op) : "-",
                     d.n_steps - 1, x, y);
  }
  assert_true(late > 100 && early > 100);
  free(img), free(a), free(b), free(s.img), free(s.rows), free(s.line);
}

/* grid_sample's bilinear value at (ix, iy), as ops.h defines it: where the
 * 2x2 square is inside, float32 weights and sums rounded half to even;
 * else the zero-padded blend in doubles, mask-blended with a fill. */
static uint8_t bilinear_formula(const uint8_t *img, int w, int h, int ch, int c,
                                double ix, double iy, const double *fill) {
  if (!(ix > -2.0 && ix < w + 1.0 && iy > -2.0 && iy < h + 1.0))
    return fill ? (uint8_t)nearbyint(fill[c]) : 0;
  double fx = floor(ix), fy = floor(iy), ax = ix - fx, ay = iy - fy;
  if (fx >= 0 && fx + 1 < w && fy >= 0 && fy + 1 < h) {
    float fa = (float)ax, fb = (float)ay;
    const uint8_t *p = img + ((size_t)fy * w + (size_t)fx) * ch + c;
    const uint8_t *q = p + (size_t)w * ch;
    float v = (1 - fa) * (1 - fb) * (float)p[0] + fa * (1 - fb) * (float)p[ch] +
              (1 - fa) * fb * (float)q[0] + fa * fb * (float)q[ch];
    v = nearbyintf(v);
    return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
  }
  double wt[4] = {(1 - ax) * (1 - ay), ax * (1 - ay), (1 - ax) * ay, ax * ay};
  double acc = 0, mask = 0;
  for (int k = 0; k < 4; k++) {
    double px = fx + (k & 1), py = fy + (k >> 1);
    if (px < 0 || px >= w || py < 0 || py >= h)
      continue;
    acc += wt[k] * (double)img[((size_t)py * w + (size_t)px) * ch + c];
    mask += wt[k];
  }
  if (fill)
    acc = acc * mask + (1.0 - mask) * fill[c];
  acc = nearbyint(acc);
  return (uint8_t)(acc <= 0 ? 0 : acc >= 255 ? 255 : acc);
}

/* Bilinear warps give that formula pixel for pixel (the AVX2 quads, the
 * SSE2 pixel and the scalar border) on random rotations, shears and
 * scales, with and without a fill. */
static void test_bilinear_warp_is_its_formula(void **state) {
  (void)state;
  sl_rng r = sl_rng_for(92, 0, 0);
  const int sizes[][2] = {{1, 1}, {2, 3}, {5, 4}, {9, 7}, {31, 17}, {64, 48}};
  size_t cap = 64 * 48;
  sl_op_scratch s = {.img = malloc(cap * 4), .pixels = cap};
  assert_non_null(s.img);
  for (int t = 0; t < 180; t++) {
    int w = sizes[t % 6][0], h = sizes[t % 6][1], ch = t % 5 == 4 ? 1 : 4;
    double m[6], fill[3] = {3, 140, 255};
    double angle = sl_rng_uniform(&r) * 360.0 - 180.0;
    double shx = t % 3 == 1 ? sl_rng_uniform(&r) * 60.0 - 30.0 : 0.0;
    double scale = 0.6 + sl_rng_uniform(&r);
    sl_affine_params(w, h, angle, 1.5, -2.25, scale, shx, 0, 0, 0, 0, m);
    const double *f = t % 2 ? fill : NULL;
    uint8_t *img = noise(w, h, ch, (uint64_t)t + 1000),
            *x = malloc((size_t)w * h * ch);
    assert_non_null(x);
    memcpy(x, img, (size_t)w * h * ch);
    sl_image im = {x, w, h, ch};
    sl_op_warp(&im, m, SL_INTERP_BILINEAR, f, &s);
    double ox = (w - 1) * 0.5, oy = (h - 1) * 0.5;
    for (int y = 0; y < h; y++)
      for (int xx = 0; xx < w; xx++) {
        double xc = xx - ox, yc = y - oy;
        double bx = m[1] * yc + m[2] + ox, by = m[4] * yc + m[5] + oy;
        double ix = m[0] * xc + bx, iy = m[3] * xc + by;
        for (int c = 0; c < (ch == 1 ? 1 : 3); c++) {
          int want = bilinear_formula(img, w, h, ch, c, ix, iy, f);
          int got = x[((size_t)y * w + xx) * ch + c];
          if (got != want)
            fail_msg("bilinear warp %d (%dx%dx%d, angle %g) pixel (%d, %d) "
                     "channel %d: %d, formula %d",
                     t, w, h, ch, angle, xx, y, c, got, want);
        }
      }
    free(img);
    free(x);
  }
  free(s.img);
}

/* reflect padding as torch's "reflect", folded again past the image */
static int reflect_index(int i, int n) {
  if (n == 1)
    return 0;
  int period = 2 * (n - 1);
  i %= period;
  i += i < 0 ? period : 0;
  return i < n ? i : period - i;
}

/* gaussian_blur gives its formula byte for byte: torchvision's float32
 * kernel (linspace, exp, normalized), the horizontal then the vertical
 * pass over reflect-padded rows, each element's products summed in tap
 * order from 0, rounded half to even; on widths that leave every tail of
 * the vector loops and kernels wider than the image. */
static void test_blur_is_its_formula(void **state) {
  (void)state;
  const int sizes[][2] = {{1, 1}, {3, 2}, {9, 5}, {13, 7}, {40, 6}, {224, 5}};
  sl_rng r = sl_rng_for(44, 0, 0);
  size_t cap = 224 * 7;
  sl_op_scratch s = {.img = malloc(cap * 4),
                     .rows = malloc(cap * 4 * sizeof(float)),
                     .pixels = cap,
                     .line_w = 224};
  s.line = malloc(sl_op_line_floats(224) * sizeof(float));
  float *t = malloc(cap * 4 * sizeof(float));
  assert_true(s.img && s.rows && s.line && t);
  for (int n = 0; n < 48; n++) {
    int w = sizes[n % 6][0], h = sizes[n % 6][1], ch = n % 4 == 3 ? 1 : 4;
    int kx = 1 + 2 * (int)(sl_rng_uniform(&r) * 12),
        ky = 1 + 2 * (int)(sl_rng_uniform(&r) * 12);
    double sx = 0.1 + 3 * sl_rng_uniform(&r), sy = 0.1 + 3 * sl_rng_uniform(&r);
    size_t stride = (size_t)w * ch;
    uint8_t *img = noise(w, h, ch, 300 + n), *x = malloc(stride * h);
    assert_non_null(x);
    memcpy(x, img, stride * h);
    sl_image im = {x, w, h, ch};
    sl_op_gaussian_blur(&im, kx, ky, sx, sy, &s);
    float kw[2][25];
    for (int a = 0; a < 2; a++) {
      int k = a ? ky : kx;
      float half = (float)(k - 1) * 0.5f, sum = 0, sg = (float)(a ? sy : sx);
      for (int i = 0; i < k; i++) {
        float xv =
            k == 1 ? -half : -half + (float)i * (2.0f * half / (float)(k - 1));
        float tv = xv / sg;
        kw[a][i] = expf(-0.5f * tv * tv);
        sum += kw[a][i];
      }
      for (int i = 0; i < k; i++)
        kw[a][i] /= sum;
    }
    for (int y = 0; y < h; y++)
      for (size_t k = 0; k < stride; k++) {
        float v = 0.0f;
        for (int i = 0; i < kx; i++)
          v += kw[0][i] *
               (float)img[(size_t)y * stride +
                          (size_t)reflect_index((int)(k / ch) - kx / 2 + i, w) *
                              ch +
                          k % ch];
        t[(size_t)y * stride + k] = v;
      }
    for (int y = 0; y < h; y++)
      for (size_t k = 0; k < stride; k++) {
        if (ch == 4 && k % 4 == 3)
          continue;
        float v = 0.0f;
        for (int i = 0; i < ky; i++)
          v += kw[1][i] *
               t[(size_t)reflect_index(y - ky / 2 + i, h) * stride + k];
        v = nearbyintf(v);
        int want = v < 0 ? 0 : v > 255 ? 255 : (int)v;
        if (x[(size_t)y * stride + k] != want)
          fail_msg("blur %dx%d (sigma %g, %g) on %dx%dx%d at row %d byte %zu: "
                   "%d, formula %d",
                   kx, ky, sx, sy, w, h, ch, y, k, x[(size_t)y * stride + k],
                   want);
      }
    free(img);
    free(x);
  }
  free(s.img), free(s.rows), free(s.line), free(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_identities),
      cmocka_unit_test(test_exact_values),
      cmocka_unit_test(test_pointwise_loops_are_their_formula),
      cmocka_unit_test(test_erase_on_every_sample_form),
      cmocka_unit_test(test_nearest_warp_is_its_formula),
      cmocka_unit_test(test_bilinear_warp_is_its_formula),
      cmocka_unit_test(test_sharpness_is_its_formula),
      cmocka_unit_test(test_blur_is_its_formula),
      cmocka_unit_test(test_every_op_on_edge_sizes),
      cmocka_unit_test(test_op_table),
      cmocka_unit_test(test_policy_draws),
      cmocka_unit_test(test_recipe_draws),
      cmocka_unit_test(test_late_flip_gives_the_same_bytes),
      cmocka_unit_test(test_recipe_in_the_pipeline),
      cmocka_unit_test(test_pipeline_flips_late_samples_mirrored),
      cmocka_unit_test(test_mix_plans),
      cmocka_unit_test(test_mix_pixels_and_targets),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
