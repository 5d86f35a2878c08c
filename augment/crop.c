/* Crop geometry: torchvision's RandomResizedCrop and the eval center crop,
 * the DCT scale choice, and the size of one output sample. */
#include <math.h>

#include "augment/pipeline.h"
#include "common/dtype.h"
#include "common/rng.h"

static sl_crop_box whole(int w, int h) {
  sl_crop_box b = {0, 0, w, h};
  return b;
}

static sl_crop_box random_resized(const sl_aug_params *p, int W, int H,
                                  sl_rng *r) {
  double area = (double)W * (double)H;
  double lr0 = log(p->ratio[0]), lr1 = log(p->ratio[1]);
  for (int t = 0; t < 10; t++) {
    double target =
        area * (p->scale[0] + (p->scale[1] - p->scale[0]) * sl_rng_uniform(r));
    double ar = exp(lr0 + (lr1 - lr0) * sl_rng_uniform(r));
    double fw = nearbyint(sqrt(target * ar)), fh = nearbyint(sqrt(target / ar));
    if (fw > 0 && fw <= W && fh > 0 && fh <= H) {
      sl_crop_box b;
      b.w = (int)fw;
      b.h = (int)fh;
      b.y = (int)sl_rng_below(r, (uint64_t)(H - b.h + 1));
      b.x = (int)sl_rng_below(r, (uint64_t)(W - b.w + 1));
      return b;
    }
  }
  /* Fallback: the central crop, clamped to the ratio range. */
  double in_ratio = (double)W / (double)H;
  double rmin = fmin(p->ratio[0], p->ratio[1]);
  double rmax = fmax(p->ratio[0], p->ratio[1]);
  sl_crop_box b = whole(W, H);
  if (in_ratio < rmin) {
    b.h = (int)nearbyint((double)W / rmin);
  } else if (in_ratio > rmax) {
    b.w = (int)nearbyint((double)H * rmax);
  }
  b.w = b.w < 1 ? 1 : b.w > W ? W : b.w;
  b.h = b.h < 1 ? 1 : b.h > H ? H : b.h;
  b.x = (W - b.w) / 2;
  b.y = (H - b.h) / 2;
  return b;
}

static int clampi(double v, int lo, int hi) {
  return v < lo ? lo : v > hi ? hi : (int)v;
}

static sl_crop_box center(const sl_aug_params *p, int W, int H, int out_h,
                          int out_w) {
  /* torchvision eval: Resize(int(res / ratio)) on the shorter side (the
   * longer becomes int(rs * long / short)), then CenterCrop(out_h, out_w),
   * whose offset is int(round((side - out) / 2)) pixels of the resized
   * image (round half to even, as Python); mapped back to full-size
   * pixels by each axis's own resize factor. */
  int res = out_h < out_w ? out_h : out_w;
  double rs = floor((double)res / p->center_ratio + 1e-9);
  double rw, rh; /* the resized image */
  if (W <= H)
    rw = rs, rh = floor(rs * (double)H / (double)W);
  else
    rh = rs, rw = floor(rs * (double)W / (double)H);
  double fx = rw / (double)W, fy = rh / (double)H;
  double left = nearbyint((rw - out_w) / 2.0),
         top = nearbyint((rh - out_h) / 2.0);
  sl_crop_box b;
  b.w = clampi(nearbyint((double)out_w / fx), 1, W);
  b.h = clampi(nearbyint((double)out_h / fy), 1, H);
  b.x = left > 0 ? (int)nearbyint(left / fx) : (W - b.w) / 2;
  b.y = top > 0 ? (int)nearbyint(top / fy) : (H - b.h) / 2;
  b.x = b.x > W - b.w ? W - b.w : b.x;
  b.y = b.y > H - b.h ? H - b.h : b.y;
  return b;
}

void sl_aug_sample_crop(const sl_aug_params *p, int img_w, int img_h, int out_h,
                        int out_w, uint64_t seed, uint64_t epoch,
                        uint64_t index, sl_crop_box *box, int *flip) {
  sl_rng r = sl_rng_for(seed, epoch, index);
  *flip = sl_rng_uniform(&r) < p->flip;
  if (p->crop == SL_CROP_RANDOM_RESIZED)
    *box = random_resized(p, img_w, img_h, &r);
  else if (p->crop == SL_CROP_CENTER)
    *box = center(p, img_w, img_h, out_h, out_w);
  else
    *box = whole(img_w, img_h);
}

int sl_aug_dct_scale(int crop_w, int crop_h, int out_w, int out_h) {
  /* 7/8 is left out: it shrinks the region by at most 1/8, then libyuv
   * resamples by a ratio close to 1, which blurs more than 8/8 plus a box
   * filter (bench_decode: no faster; mean PSNR 0.9 dB lower at 224). */
  static const int k_scales[] = {1, 2, 3, 4, 5, 6};
  for (size_t i = 0; i < sizeof k_scales / sizeof k_scales[0]; i++) {
    int m = k_scales[i];
    if ((int64_t)crop_w * m >= (int64_t)8 * out_w &&
        (int64_t)crop_h * m >= (int64_t)8 * out_h)
      return m;
  }
  return 8;
}

void sl_aug_level_plan(const sl_crop_box *b, int img_w, int img_h,
                       const int *lw, const int *lh, int n, int out_w,
                       int out_h, int *level, int *scale) {
  int k = 0;
  for (int i = n - 1; i > 0; i--)
    if ((int64_t)b->w * lw[i] >= (int64_t)out_w * img_w &&
        (int64_t)b->h * lh[i] >= (int64_t)out_h * img_h) {
      k = i;
      break;
    }
  static const int k_scales[] = {1, 2, 3, 4, 5, 6};
  int m = 8;
  for (size_t i = 0; i < sizeof k_scales / sizeof k_scales[0]; i++)
    if ((int64_t)b->w * lw[k] * k_scales[i] >= (int64_t)8 * out_w * img_w &&
        (int64_t)b->h * lh[k] * k_scales[i] >= (int64_t)8 * out_h * img_h) {
      m = k_scales[i];
      break;
    }
  *level = k;
  *scale = m;
}

size_t sl_aug_sample_bytes(const sl_aug_params *p, int out_h, int out_w) {
  return (size_t)out_h * (size_t)out_w * (size_t)p->channels *
         sl_dtype_bytes(p->dtype);
}
