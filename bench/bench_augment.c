/* Cost of each recipe op (augment/ops.h, policy.h, recipe.h) on one
 * res x res RGBX crop, one thread: the median of R runs of K images each,
 * in microseconds per image. The torchvision side of the same ops is
 * bench/bench_augment_tv.py; bench/run.sh reports both.
 *
 *   bench_augment [--res 224] [--rounds 7] [--images 200]
 *
 * Prints one `RESULT {"case": "augment_op", "op": ..., "res": ...,
 * "us_per_image": ...}` line per op. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "augment/ops.h"
#include "augment/policy.h"
#include "augment/recipe.h"
#include "common/clock.h"
#include "common/rng.h"

typedef struct op_case {
  const char *name;
  void (*run)(sl_image *im, sl_op_scratch *s, sl_rng *r);
} op_case;

static void op_brightness(sl_image *im, sl_op_scratch *s, sl_rng *r) {
  (void)s, (void)r;
  sl_op_brightness(im, 1.3);
}
static void op_contrast(sl_image *im, sl_op_scratch *s, sl_rng *r) {
  (void)s, (void)r;
  sl_op_contrast(im, 1.3);
}
static void op_saturation(sl_image *im, sl_op_scratch *s, sl_rng *r) {
  (void)s, (void)r;
  sl_op_saturation(im, 1.3);
}
static void op_hue(sl_image *im, sl_op_scratch *s, sl_rng *r) {
  (void)s, (void)r;
  sl_op_hue(im, 0.1);
}
static void op_sharpness(sl_image *im, sl_op_scratch *s, sl_rng *r) {
  (void)r;
  sl_op_sharpness(im, 1.5, s);
}
static void op_posterize(sl_image *im, sl_op_scratch *s, sl_rng *r) {
  (void)s, (void)r;
  sl_op_posterize(im, 4);
}
static void op_solarize(sl_image *im, sl_op_scratch *s, sl_rng *r) {
  (void)s, (void)r;
  sl_op_solarize(im, 128);
}
static void op_autocontrast(sl_image *im, sl_op_scratch *s, sl_rng *r) {
  (void)s, (void)r;
  sl_op_autocontrast(im);
}
static void op_equalize(sl_image *im, sl_op_scratch *s, sl_rng *r) {
  (void)s, (void)r;
  sl_op_equalize(im);
}
static void op_grayscale(sl_image *im, sl_op_scratch *s, sl_rng *r) {
  (void)s, (void)r;
  sl_op_grayscale(im);
}
static void op_rotate_nearest(sl_image *im, sl_op_scratch *s, sl_rng *r) {
  (void)r;
  double m[6];
  sl_affine_params(im->w, im->h, -20, 0, 0, 1, 0, 0, 0, 0, 0, m);
  sl_op_warp(im, m, SL_INTERP_NEAREST, NULL, s);
}
static void op_rotate_bilinear(sl_image *im, sl_op_scratch *s, sl_rng *r) {
  (void)r;
  double m[6];
  sl_affine_params(im->w, im->h, -20, 0, 0, 1, 0, 0, 0, 0, 0, m);
  sl_op_warp(im, m, SL_INTERP_BILINEAR, NULL, s);
}
static void op_blur23(sl_image *im, sl_op_scratch *s, sl_rng *r) {
  (void)r;
  sl_op_gaussian_blur(im, 23, 23, 1.5, 1.5, s);
}
static void run_policy(sl_auto_policy pol, sl_image *im, sl_op_scratch *s,
                       sl_rng *r) {
  sl_policy_params p = {pol, 2, 31, 9, 0.5, SL_INTERP_NEAREST, 0, {0}};
  if (pol == SL_AUTO_RANDAUGMENT)
    p.bins = 11;
  sl_policy_step st[SL_POLICY_MAX_OPS];
  int n = sl_policy_draw(&p, im->w, im->h, r, st);
  for (int i = 0; i < n; i++)
    sl_policy_apply(im, &st[i], p.interp, NULL, s);
}
static void op_trivial(sl_image *im, sl_op_scratch *s, sl_rng *r) {
  run_policy(SL_AUTO_TRIVIAL, im, s, r);
}
static void op_randaugment(sl_image *im, sl_op_scratch *s, sl_rng *r) {
  run_policy(SL_AUTO_RANDAUGMENT, im, s, r);
}
static void op_autoaugment(sl_image *im, sl_op_scratch *s, sl_rng *r) {
  run_policy(SL_AUTO_AUTOAUGMENT, im, s, r);
}
static void op_jitter(sl_image *im, sl_op_scratch *s, sl_rng *r) {
  sl_aug_recipe rc;
  memset(&rc, 0, sizeof rc);
  rc.jitter[0] = rc.jitter[1] = rc.jitter[2] = 0.4;
  rc.jitter[3] = 0.1;
  rc.jitter_p = 1;
  sl_recipe_draw d;
  sl_recipe_draw_all(&rc, r, im->w, im->h, &d);
  sl_recipe_apply(&rc, &d, im, 0, s);
}

static const op_case k_cases[] = {
    {"adjust_brightness", op_brightness},
    {"adjust_contrast", op_contrast},
    {"adjust_saturation", op_saturation},
    {"adjust_hue", op_hue},
    {"adjust_sharpness", op_sharpness},
    {"posterize", op_posterize},
    {"solarize", op_solarize},
    {"autocontrast", op_autocontrast},
    {"equalize", op_equalize},
    {"rgb_to_grayscale", op_grayscale},
    {"rotate_nearest", op_rotate_nearest},
    {"rotate_bilinear", op_rotate_bilinear},
    {"gaussian_blur_23", op_blur23},
    {"color_jitter_0.4_0.4_0.4_0.1", op_jitter},
    {"trivial_augment_wide", op_trivial},
    {"randaugment_n2_m9_mstd0.5", op_randaugment},
    {"autoaugment_imagenet", op_autoaugment},
};

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  int res = 224, rounds = 7, images = 200;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--res") == 0)
      res = atoi(argv[i + 1]);
    else if (strcmp(argv[i], "--rounds") == 0)
      rounds = atoi(argv[i + 1]);
    else if (strcmp(argv[i], "--images") == 0)
      images = atoi(argv[i + 1]);
  }
  if (res < 8 || res > 4096 || rounds < 1 || rounds > 99 || images < 1) {
    fprintf(stderr, "bench_augment: bad --res, --rounds or --images\n");
    return 2;
  }
  size_t n = (size_t)res * (size_t)res;
  uint8_t *orig = malloc(n * 4), *px = malloc(n * 4);
  sl_op_scratch s = {malloc(n * 4), malloc(n * 4 * sizeof(float)), n,
                     malloc(sl_op_line_floats((size_t)res) * sizeof(float)),
                     (size_t)res};
  if (!orig || !px || !s.img || !s.rows || !s.line) {
    fprintf(stderr, "bench_augment: out of memory\n");
    return 1;
  }
  /* a smooth gradient with noise: photo-like histograms */
  sl_rng g = sl_rng_for(1, 2, 3);
  for (size_t i = 0; i < n; i++)
    for (int c = 0; c < 4; c++)
      orig[4 * i + c] = (uint8_t)((i % (size_t)res) * 200 / (size_t)res +
                                  (size_t)c * 20 + sl_rng_below(&g, 30));
  uint64_t t[99];
  for (size_t k = 0; k < sizeof k_cases / sizeof k_cases[0]; k++) {
    for (int r = 0; r < rounds; r++) {
      uint64_t total = 0;
      for (int j = 0; j < images; j++) {
        memcpy(px, orig, n * 4);
        sl_image im = {px, res, res, 4};
        sl_rng rng = sl_recipe_rng(5, (uint64_t)r, (uint64_t)j);
        uint64_t t0 = sl_now_ns();
        k_cases[k].run(&im, &s, &rng);
        total += sl_now_ns() - t0;
      }
      t[r] = total;
    }
    qsort(t, (size_t)rounds, sizeof t[0], cmp_u64);
    printf("RESULT {\"case\": \"augment_op\", \"op\": \"%s\", \"res\": %d, "
           "\"us_per_image\": %.2f}\n",
           k_cases[k].name, res, (double)t[rounds / 2] / images / 1000.0);
  }
  free(orig);
  free(px);
  free(s.img);
  free(s.rows);
  free(s.line);
  return 0;
}
