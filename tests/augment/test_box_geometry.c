/* augment/boxes.h and the detection crops: boxes against a reference of
 * each transform written here from the geometry the pipeline exposes
 * (sl_aug_sample_geom: crop, placement, flip, and the recipe's steps, from
 * which torchvision's forward affine matrix is rebuilt independently of
 * ops_geometric.c), the clipping and dropping rules, iou_crop's IoU
 * constraint, letterbox's placement and pad, and boxes that follow the
 * pixels through the real pipeline. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "augment/boxes.h"
#include "augment/pipeline.h"
#include "common/rng.h"
#include "support/aug_params.h"

enum { RAW = 3 };

static sl_aug_params defaults(void) {
  return sl_test_aug_params(SL_LAYOUT_NHWC);
}

/* RandAugment with two ops: the geometric ones appear often. */
static void with_policy(sl_aug_params *p) {
  p->recipe.policy.policy = SL_AUTO_RANDAUGMENT;
  p->recipe.policy.num_ops = 2;
  p->recipe.policy.bins = 31;
  p->recipe.policy.magnitude = 9;
  p->recipe.policy.interp = SL_INTERP_NEAREST;
}

/* n random boxes (x0 y0 x1 y1, stride 6 floats as sl_box) in W x H. */
static void random_boxes(sl_rng *r, int W, int H, float *b, int n) {
  for (int i = 0; i < n; i++) {
    double x0 = (W - 1) * sl_rng_uniform(r);
    double y0 = (H - 1) * sl_rng_uniform(r);
    double w = 0.5 + 0.6 * W * sl_rng_uniform(r);
    double h = 0.5 + 0.6 * H * sl_rng_uniform(r);
    b[6 * i + 0] = (float)x0;
    b[6 * i + 1] = (float)y0;
    b[6 * i + 2] = (float)(x0 + w > W ? W : x0 + w);
    b[6 * i + 3] = (float)(y0 + h > H ? H : y0 + h);
  }
}

/* ---- the reference ---- */

/* torchvision's _get_inverse_affine_matrix(..., inverted=False): the
 * forward map of F.affine about center (cx, cy) in box coordinates. */
static void tv_forward(double cx, double cy, double angle, double tx, double ty,
                       double sh_x, double sh_y, double F[6]) {
  double rot = angle * M_PI / 180, sx = sh_x * M_PI / 180,
         sy = sh_y * M_PI / 180;
  double a = cos(rot - sy) / cos(sy);
  double b = -cos(rot - sy) * tan(sx) / cos(sy) - sin(rot);
  double c = sin(rot - sy) / cos(sy);
  double d = -sin(rot - sy) * tan(sx) / cos(sy) + cos(rot);
  F[0] = a, F[1] = b, F[3] = c, F[4] = d;
  F[2] = a * -cx + b * -cy + cx + tx;
  F[5] = c * -cx + d * -cy + cy + ty;
}

/* The forward matrix of a policy step as torchvision v2's _apply_op hands
 * it to the box kernels: ShearX/Y about (0, 0), translate by int(m),
 * rotate(angle = m) (the kernel takes -angle) about the center. Returns 0
 * for a step that moves no pixel. */
static int step_forward(const sl_policy_step *s, int w, int h, double F[6]) {
  double m = s->magnitude, cx = 0.5 * w, cy = 0.5 * h;
  switch (s->op) {
  case SL_POP_SHEAR_X:
    tv_forward(0, 0, 0, 0, 0, atan(m) * 180 / M_PI, 0, F);
    return 1;
  case SL_POP_SHEAR_Y:
    tv_forward(0, 0, 0, 0, 0, 0, atan(m) * 180 / M_PI, F);
    return 1;
  case SL_POP_TRANSLATE_X:
    tv_forward(cx, cy, 0, (double)(int)m, 0, 0, 0, F);
    return 1;
  case SL_POP_TRANSLATE_Y:
    tv_forward(cx, cy, 0, 0, (double)(int)m, 0, 0, F);
    return 1;
  case SL_POP_ROTATE:
    tv_forward(cx, cy, -m, 0, 0, 0, 0, F);
    return 1;
  default:
    return 0;
  }
}

static double clampd(double v, double lo, double hi) {
  return v < lo ? lo : v > hi ? hi : v;
}

/* The chain written out: crop and scale, clip to the placed region, flip,
 * each geometric step's corners through F (enclosing box, clamped). */
static void ref_chain(const sl_aug_geom *g, int out_w, int out_h, int clip,
                      const float *in, double b[4]) {
  double sx = (double)g->place_w / g->crop.w;
  double sy = (double)g->place_h / g->crop.h;
  double x0 = g->place_x + (in[0] - g->crop.x) * sx;
  double x1 = g->place_x + (in[2] - g->crop.x) * sx;
  double y0 = g->place_y + (in[1] - g->crop.y) * sy;
  double y1 = g->place_y + (in[3] - g->crop.y) * sy;
  if (clip) {
    double L = g->place_x, R = g->place_x + g->place_w;
    double T = g->place_y, B = g->place_y + g->place_h;
    x0 = clampd(x0, L, R), x1 = clampd(x1, L, R);
    y0 = clampd(y0, T, B), y1 = clampd(y1, T, B);
  }
  if (g->flip) {
    double t = x0;
    x0 = out_w - x1;
    x1 = out_w - t;
  }
  for (int i = 0; i < g->rd.n_steps; i++) {
    double F[6];
    if (!step_forward(&g->rd.steps[i], out_w, out_h, F))
      continue;
    double xs[4] = {x0, x1, x1, x0}, ys[4] = {y0, y0, y1, y1};
    x0 = y0 = INFINITY, x1 = y1 = -INFINITY;
    for (int k = 0; k < 4; k++) {
      double px = F[0] * xs[k] + F[1] * ys[k] + F[2];
      double py = F[3] * xs[k] + F[4] * ys[k] + F[5];
      x0 = fmin(x0, px), x1 = fmax(x1, px);
      y0 = fmin(y0, py), y1 = fmax(y1, py);
    }
    if (clip) {
      x0 = clampd(x0, 0, out_w), x1 = clampd(x1, 0, out_w);
      y0 = clampd(y0, 0, out_h), y1 = clampd(y1, 0, out_h);
    }
  }
  b[0] = x0, b[1] = y0, b[2] = x1, b[3] = y1;
}

/* The reference's kept boxes, compared with sl_boxes_map's. */
static void check_against_reference(const sl_aug_geom *g, int out_w, int out_h,
                                    double min_area, const float *in, int n) {
  float out[64 * 4];
  uint32_t src[64];
  uint32_t kept = sl_boxes_map(g, out_w, out_h, min_area, in, 24, (uint32_t)n,
                               out, src, 64);
  uint32_t k = 0;
  for (int i = 0; i < n; i++) {
    const float *f = in + 6 * i;
    double b[4], u[4];
    ref_chain(g, out_w, out_h, 1, f, b);
    ref_chain(g, out_w, out_h, 0, f, u);
    double w = b[2] - b[0], h = b[3] - b[1];
    double area_u = (u[2] - u[0]) * (u[3] - u[1]);
    /* Decisions within rounding of a threshold are not compared. */
    if (fabs(w - 1) < 1e-6 || fabs(h - 1) < 1e-6 ||
        (min_area > 0 && fabs(w * h - min_area * area_u) < 1e-6 * area_u)) {
      if (k < kept && src[k] == (uint32_t)i)
        k++;
      continue;
    }
    int keep = w >= 1 && h >= 1 && !(min_area > 0 && w * h < min_area * area_u);
    if (!keep) {
      assert_true(k >= kept || src[k] != (uint32_t)i);
      continue;
    }
    assert_true(k < kept);
    assert_int_equal(src[k], i);
    for (int c = 0; c < 4; c++)
      assert_true(fabs(out[4 * k + c] - b[c]) < 1e-3);
    k++;
  }
  assert_int_equal(k, kept);
}

/* ---- tests ---- */

static void test_geom_is_the_crop_draw(void **state) {
  (void)state;
  sl_crop crops[] = {SL_CROP_RANDOM_RESIZED, SL_CROP_CENTER, SL_CROP_NONE};
  for (int c = 0; c < 3; c++) {
    sl_aug_params p = defaults();
    p.crop = crops[c];
    with_policy(&p);
    for (uint64_t i = 0; i < 300; i++) {
      sl_aug_geom g;
      sl_crop_box b;
      int flip;
      sl_aug_sample_geom(&p, NULL, 0, 0, 500, 375, 160, 224, 3, 1, i, &g);
      sl_aug_sample_crop(&p, 500, 375, 160, 224, 3, 1, i, &b, &flip);
      assert_memory_equal(&g.crop, &b, sizeof b);
      assert_int_equal(g.flip, flip);
      assert_true(g.place_x == 0 && g.place_y == 0 && g.place_w == 224 &&
                  g.place_h == 160);
      int warps = 0;
      for (int s = 0; s < g.rd.n_steps; s++) {
        double F[6];
        warps += step_forward(&g.rd.steps[s], 224, 160, F);
      }
      assert_int_equal(g.n_warps, warps);
      assert_true(g.min_iou == -1.0 && !g.centers);
    }
  }
}

static void test_boxes_match_reference(void **state) {
  (void)state;
  sl_rng r = sl_rng_for(11, 0, 0);
  float in[40 * 6];
  for (int setting = 0; setting < 6; setting++) {
    sl_aug_params p = defaults();
    p.crop = setting % 3 == 0   ? SL_CROP_RANDOM_RESIZED
             : setting % 3 == 1 ? SL_CROP_CENTER
                                : SL_CROP_LETTERBOX;
    if (setting >= 3)
      with_policy(&p);
    double min_area = setting == 4 ? 0.4 : 0;
    int out_w = setting == 5 ? 224 : 192, out_h = setting == 5 ? 160 : 192;
    int warped = 0;
    for (uint64_t i = 0; i < 400; i++) {
      int W = 200 + (int)sl_rng_below(&r, 500);
      int H = 200 + (int)sl_rng_below(&r, 500);
      int n = 1 + (int)sl_rng_below(&r, 40);
      random_boxes(&r, W, H, in, n);
      sl_aug_geom g;
      sl_aug_sample_geom(&p, in, 24, (uint32_t)n, W, H, out_h, out_w, 5, 2, i,
                         &g);
      warped += g.n_warps > 0;
      check_against_reference(&g, out_w, out_h, min_area, in, n);
    }
    if (setting >= 3)
      assert_true(warped > 50);
  }
}

static void test_clip_drop_and_cap(void **state) {
  (void)state;
  sl_aug_geom g;
  memset(&g, 0, sizeof g);
  g.crop = (sl_crop_box){100, 100, 200, 200};
  g.place_w = g.place_h = 100; /* scale 0.5 */
  g.min_iou = -1;
  float in[6 * 6] = {
      120, 120, 220,   220, 0, 0, /* inside: (10, 10, 60, 60) */
      50,  150, 150,   250, 0, 0, /* half out: (0, 25, 25, 75) of 2500 */
      150, 150, 151.5, 160, 0, 0, /* 0.75 px wide: dropped */
      0,   0,   90,    90,  0, 0, /* outside the crop: dropped */
      200, 200, 190,   210, 0, 0, /* inverted: dropped */
      280, 280, 400,   400, 0, 0, /* corner: (90, 90, 100, 100) */
  };
  float out[6 * 4];
  uint32_t src[6];
  assert_int_equal(sl_boxes_map(&g, 100, 100, 0, in, 24, 6, out, src, 6), 3);
  float want[12] = {10, 10, 60, 60, 0, 25, 25, 75, 90, 90, 100, 100};
  for (int k = 0; k < 12; k++)
    assert_true(fabsf(out[k] - want[k]) < 1e-5f);
  assert_true(src[0] == 0 && src[1] == 1 && src[2] == 5);
  /* box_min_area: the half-out box keeps 1250 of 2500; the corner 100 of
   * (140 - 90)^2 = 3600. */
  assert_int_equal(sl_boxes_map(&g, 100, 100, 0.5, in, 24, 6, out, src, 6), 2);
  assert_true(src[0] == 0 && src[1] == 1);
  assert_int_equal(sl_boxes_map(&g, 100, 100, 0.51, in, 24, 6, out, src, 6), 1);
  /* The cap keeps the first kept ones and still counts the rest. */
  memset(src, 0xff, sizeof src);
  assert_int_equal(sl_boxes_map(&g, 100, 100, 0, in, 24, 6, out, src, 2), 3);
  assert_true(src[0] == 0 && src[1] == 1 && src[2] == UINT32_MAX);
  assert_int_equal(sl_boxes_map(&g, 100, 100, 0, in, 24, 6, NULL, NULL, 0), 3);
  /* Flip about the output's middle. */
  g.flip = 1;
  assert_int_equal(sl_boxes_map(&g, 100, 100, 0, in, 24, 1, out, src, 1), 1);
  assert_true(out[0] == 40 && out[1] == 10 && out[2] == 90 && out[3] == 60);
  /* A warp that moves by (+7, -3) pixels: the inverse matrix samples
   * (x - 7, y + 3). */
  g.flip = 0;
  g.n_warps = 1;
  double m[6] = {1, 0, -7, 0, 1, 3};
  memcpy(g.warp[0], m, sizeof m);
  assert_int_equal(sl_boxes_map(&g, 100, 100, 0, in, 24, 1, out, src, 1), 1);
  assert_true(out[0] == 17 && out[1] == 7 && out[2] == 67 && out[3] == 57);
  /* Single-box primitives. */
  double b[4] = {10, 20, 30, 40};
  sl_box_flip(b, 100);
  assert_true(b[0] == 70 && b[2] == 90);
  sl_box_clip(b, 0, 0, 80, 30);
  assert_true(b[0] == 70 && b[1] == 20 && b[2] == 80 && b[3] == 30);
}

static double iou(const float *b, const sl_crop_box *c) {
  double l = c->x, t = c->y, r = c->x + c->w, bt = c->y + c->h;
  double iw = fmin(b[2], r) - fmax(b[0], l),
         ih = fmin(b[3], bt) - fmax(b[1], t);
  double inter = (iw > 0 ? iw : 0) * (ih > 0 ? ih : 0);
  return inter / ((b[2] - b[0]) * (b[3] - b[1]) + (r - l) * (bt - t) - inter);
}

static int center_in(const float *b, const sl_crop_box *c) {
  double cx = 0.5 * (b[0] + b[2]), cy = 0.5 * (b[1] + b[3]);
  return c->x < cx && cx < c->x + c->w && c->y < cy && cy < c->y + c->h;
}

static void test_iou_crop_constraint(void **state) {
  (void)state;
  sl_rng r = sl_rng_for(12, 0, 0);
  float in[12 * 6], out[12 * 4];
  uint32_t src[12];
  for (int all = 0; all < 2; all++) {
    sl_aug_params p = defaults();
    p.crop = SL_CROP_IOU;
    p.iou_all = all;
    int seen[7] = {0}, cropped = 0;
    const double opts[7] = {0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0};
    for (uint64_t i = 0; i < 2000; i++) {
      int W = 640, H = 480, n = 1 + (int)sl_rng_below(&r, 12);
      random_boxes(&r, W, H, in, n);
      sl_aug_geom g;
      sl_aug_sample_geom(&p, in, 24, (uint32_t)n, W, H, 300, 300, 9, 0, i, &g);
      int o = 0;
      while (o < 7 && opts[o] != g.min_iou)
        o++;
      assert_true(o < 7);
      seen[o]++;
      const sl_crop_box *c = &g.crop;
      if (g.min_iou >= 1) {
        assert_true(c->x == 0 && c->y == 0 && c->w == W && c->h == H);
        assert_false(g.centers);
        continue;
      }
      cropped++;
      assert_true(g.centers);
      assert_true(c->w >= (int)(0.3 * W) && c->h >= (int)(0.3 * H));
      assert_true(c->x >= 0 && c->y >= 0 && c->x + c->w <= W &&
                  c->y + c->h <= H);
      double aspect = (double)c->w / c->h;
      assert_true(aspect >= 0.5 && aspect <= 2.0);
      /* The constraint over the boxes centred in the crop. */
      double best = -1, worst = 2;
      for (int b = 0; b < n; b++)
        if (center_in(in + 6 * b, c)) {
          best = fmax(best, iou(in + 6 * b, c));
          worst = fmin(worst, iou(in + 6 * b, c));
        }
      assert_true(best >= g.min_iou - 1e-9);
      uint32_t kept =
          sl_boxes_map(&g, 300, 300, 0, in, 24, (uint32_t)n, out, src, 12);
      for (uint32_t k = 0; k < kept; k++) {
        const float *b = in + 6 * src[k];
        assert_true(center_in(b, c)); /* every kept box is centred in it */
        if (all) /* ... and, with iou_all, meets the IoU drawn */
          assert_true(iou(b, c) >= g.min_iou - 1e-9);
      }
      if (all)
        assert_true(worst >= g.min_iou - 1e-9);
    }
    /* Random boxes rarely allow 0.9 (it is tried, then another option). */
    for (int o = 0; o < 7; o++)
      assert_true(o == 5 || seen[o] > 0);
    assert_true(cropped > 1000);
  }
  /* No boxes: the whole image, as the "leave as is" option. */
  sl_aug_params p = defaults();
  p.crop = SL_CROP_IOU;
  sl_aug_geom g;
  sl_aug_sample_geom(&p, NULL, 0, 0, 640, 480, 300, 300, 9, 0, 1, &g);
  assert_true(g.crop.w == 640 && g.crop.h == 480 && g.min_iou == 1.0);
}

/* A w x h RGB image of value v with the rectangle [x0, x1) x [y0, y1) of
 * value fg. */
static uint8_t *raw_image(int w, int h, uint8_t v, int x0, int y0, int x1,
                          int y1, uint8_t fg) {
  uint8_t *px = malloc((size_t)w * h * 3);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      memset(px + ((size_t)y * w + x) * 3,
             x >= x0 && x < x1 && y >= y0 && y < y1 ? fg : v, 3);
  return px;
}

static void test_letterbox(void **state) {
  (void)state;
  sl_aug_params p = defaults();
  p.crop = SL_CROP_LETTERBOX;
  p.flip = 0;
  p.letterbox_fill = 114;
  sl_pipeline *pl;
  sl_err err;
  assert_int_equal(sl_pipeline_create(&pl, &p, 64, &err), SL_OK);
  /* (W, H) -> placed (x, y, w, h) in 64 x 64: 100 x 45 scales by 0.64 to
   * 64 x 28.8 -> 29 rows, spare 35: top round(17.5 - 0.1) = 17; 50 x 100
   * to 32 x 64, spare 32: left 16; 64 x 64 fills the output. */
  int cases[3][6] = {{100, 45, 0, 17, 64, 29},
                     {50, 100, 16, 0, 32, 64},
                     {64, 64, 0, 0, 64, 64}};
  uint8_t out[64 * 64 * 3];
  for (int c = 0; c < 3; c++) {
    int W = cases[c][0], H = cases[c][1];
    uint8_t *img = raw_image(W, H, 200, 0, 0, 0, 0, 0);
    float box[6] = {10, 5, 40, 30, 0, 0}, ob[4];
    uint32_t src;
    sl_aug_boxes bx = {box, 24, 1, ob, &src, 1, 0, 0};
    assert_int_equal(sl_pipeline_run_boxes(pl, img, (size_t)W * H * 3, RAW, H,
                                           W, 3, 1, 0, 7, 64, 64, out, &bx,
                                           &err),
                     SL_OK);
    int px = cases[c][2], py = cases[c][3], pw = cases[c][4], ph = cases[c][5];
    sl_aug_geom g;
    sl_aug_sample_geom(&p, box, 24, 1, W, H, 64, 64, 1, 0, 7, &g);
    assert_true(g.place_x == px && g.place_y == py && g.place_w == pw &&
                g.place_h == ph);
    for (int y = 0; y < 64; y++)
      for (int x = 0; x < 64; x++) {
        int in = x >= px && x < px + pw && y >= py && y < py + ph;
        for (int k = 0; k < 3; k++) { /* libyuv's box filter: +-2 */
          int v = out[(y * 64 + x) * 3 + k];
          if (in)
            assert_true(v >= 198 && v <= 202);
          else
            assert_int_equal(v, 114);
        }
      }
    assert_int_equal(bx.kept, 1);
    assert_int_equal(bx.n_out, 1);
    double sx = (double)pw / W, sy = (double)ph / H;
    assert_true(fabs(ob[0] - (px + 10 * sx)) < 1e-4);
    assert_true(fabs(ob[1] - (py + 5 * sy)) < 1e-4);
    assert_true(fabs(ob[2] - (px + 40 * sx)) < 1e-4);
    assert_true(fabs(ob[3] - (py + 30 * sy)) < 1e-4);
    free(img);
  }
  sl_pipeline_destroy(pl);
  /* The pad's value is an option; a bad one is refused. */
  p.letterbox_fill = 0;
  assert_int_equal(sl_pipeline_create(&pl, &p, 64, &err), SL_OK);
  uint8_t *img = raw_image(100, 45, 200, 0, 0, 0, 0, 0);
  assert_int_equal(sl_pipeline_run(pl, img, 100 * 45 * 3, RAW, 45, 100, 3, 1, 0,
                                   7, 64, 64, out, &err),
                   SL_OK);
  assert_int_equal(out[0], 0);
  assert_true(out[(40 * 64 + 3) * 3] >= 198);
  free(img);
  sl_pipeline_destroy(pl);
  p.letterbox_fill = 256;
  assert_int_equal(sl_pipeline_create(&pl, &p, 64, &err), SL_EINVAL);
  p.letterbox_fill = 114;
  p.box_min_area = 1.5;
  assert_int_equal(sl_pipeline_create(&pl, &p, 64, &err), SL_EINVAL);
}

/* A bright rectangle on black, its box given: through the real pipeline
 * (crop, flip, the policy's warps), every bright output pixel lies in the
 * box the pipeline returns, and the box is what sl_boxes_map gives for
 * sl_aug_sample_geom's record. */
static void test_boxes_follow_pixels(void **state) {
  (void)state;
  sl_crop crops[] = {SL_CROP_RANDOM_RESIZED, SL_CROP_IOU, SL_CROP_LETTERBOX};
  int W = 200, H = 160, O = 96;
  uint8_t *img = raw_image(W, H, 0, 60, 40, 140, 120, 255);
  float box[6] = {60, 40, 140, 120, 0, 0};
  uint8_t *out = malloc((size_t)O * O * 3);
  int checked = 0, warped = 0;
  for (int c = 0; c < 3; c++) {
    sl_aug_params p = defaults();
    p.crop = crops[c];
    p.scale[0] = 0.3;
    with_policy(&p);
    sl_pipeline *pl;
    sl_err err;
    assert_int_equal(sl_pipeline_create(&pl, &p, O, &err), SL_OK);
    for (uint64_t i = 0; i < 300; i++) {
      float ob[4];
      uint32_t src;
      sl_aug_boxes bx = {box, 24, 1, ob, &src, 1, 0, 0};
      assert_int_equal(sl_pipeline_run_boxes(pl, img, (size_t)W * H * 3, RAW, H,
                                             W, 3, 4, 1, i, O, O, out, &bx,
                                             &err),
                       SL_OK);
      sl_aug_geom g;
      sl_aug_sample_geom(&p, box, 24, 1, W, H, O, O, 4, 1, i, &g);
      float want[4];
      uint32_t kept = sl_boxes_map(&g, O, O, 0, box, 24, 1, want, NULL, 1);
      assert_int_equal(bx.kept, kept);
      if (kept)
        assert_memory_equal(ob, want, sizeof want);
      /* Only samples whose ops all keep white white. */
      int plain = 1;
      for (int s = 0; s < g.rd.n_steps; s++) {
        sl_policy_op op = g.rd.steps[s].op;
        plain &= op == SL_POP_IDENTITY ||
                 (op >= SL_POP_SHEAR_X && op <= SL_POP_ROTATE);
      }
      if (!plain)
        continue;
      checked++;
      warped += g.n_warps > 0;
      int bright = 0;
      for (int y = 0; y < O; y++)
        for (int x = 0; x < O; x++) {
          if (out[((size_t)y * O + x) * 3] < 128)
            continue;
          bright++;
          /* pixel (x, y) covers [x, x + 1): inside the box, give or take
           * the resampling's and nearest sampling's pixel */
          assert_true(kept == 1);
          assert_true(x + 1 >= ob[0] - 1.5 && x <= ob[2] + 1.5);
          assert_true(y + 1 >= ob[1] - 1.5 && y <= ob[3] + 1.5);
        }
      if (kept && g.n_warps == 0 && ob[2] - ob[0] >= 4 && ob[3] - ob[1] >= 4) {
        int cx = (int)(0.5 * (ob[0] + ob[2])),
            cy = (int)(0.5 * (ob[1] + ob[3]));
        assert_true(out[((size_t)cy * O + cx) * 3] > 200);
        assert_true(bright > 0);
      }
    }
    sl_pipeline_destroy(pl);
  }
  assert_true(checked > 60 && warped > 20);
  free(out);
  free(img);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_geom_is_the_crop_draw),
      cmocka_unit_test(test_boxes_match_reference),
      cmocka_unit_test(test_clip_drop_and_cap),
      cmocka_unit_test(test_iou_crop_constraint),
      cmocka_unit_test(test_letterbox),
      cmocka_unit_test(test_boxes_follow_pixels),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
