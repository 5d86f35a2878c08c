/* Crop geometry: torchvision's RandomResizedCrop, the eval center crop,
 * v2's RandomIoUCrop and the letterbox, a sample's geometry record, the
 * DCT scale choice, and the size of one output sample. */
#include <math.h>
#include <string.h>

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

/* Box i's x0 y0 x1 y1. */
static const float *box_at(const float *boxes, size_t stride, uint32_t i) {
  return (const float *)((const char *)boxes + (size_t)i * stride);
}

/* torchvision's box_iou of box b with the crop [l, r) x [t, bt). */
static double iou_with(const float *b, double l, double t, double r,
                       double bt) {
  double a1 = ((double)b[2] - b[0]) * ((double)b[3] - b[1]);
  double a2 = (r - l) * (bt - t);
  double iw = fmin(b[2], r) - fmax(b[0], l),
         ih = fmin(b[3], bt) - fmax(b[1], t);
  double inter = (iw > 0 ? iw : 0) * (ih > 0 ? ih : 0);
  double uni = a1 + a2 - inter;
  return uni > 0 ? inter / uni : 0.0;
}

/* One trial's test: some box has its center strictly inside the crop, and
 * the largest (all: the smallest) IoU of those meets min_iou. Stops at the
 * first box that decides it (n <= SL_BOXES_MAX: each trial is bounded). */
static int iou_ok(const float *boxes, size_t stride, uint32_t n, int all,
                  double min_iou, double l, double t, double r, double bt) {
  int any = 0;
  for (uint32_t i = 0; i < n; i++) {
    const float *b = box_at(boxes, stride, i);
    double cx = 0.5 * ((double)b[0] + b[2]), cy = 0.5 * ((double)b[1] + b[3]);
    if (!(l < cx && cx < r && t < cy && cy < bt))
      continue;
    int meets = iou_with(b, l, t, r, bt) >= min_iou;
    if (!all && meets)
      return 1;
    if (all && !meets)
      return 0;
    any = 1;
  }
  return all && any;
}

/* RandomIoUCrop._get_params (pipeline.h); *min_iou gets the option. */
static sl_crop_box iou_crop(const sl_aug_params *p, const float *boxes,
                            size_t stride, uint32_t n, int W, int H, sl_rng *r,
                            double *min_iou) {
  static const double k_options[] = {0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0};
  enum { k_nopt = sizeof k_options / sizeof k_options[0] };
  *min_iou = 1.0;
  if (n == 0)
    return whole(W, H);
  const double s0 = SL_IOU_MIN_SCALE, s1 = SL_IOU_MAX_SCALE;
  for (int d = 0; d < SL_IOU_MAX_OPTION_DRAWS; d++) {
    double opt = k_options[sl_rng_below(r, k_nopt)];
    if (opt >= 1.0) {
      *min_iou = opt;
      return whole(W, H);
    }
    for (int t = 0; t < SL_IOU_TRIALS; t++) {
      double r0 = s0 + (s1 - s0) * sl_rng_uniform(r);
      double r1 = s0 + (s1 - s0) * sl_rng_uniform(r);
      int nw = (int)(W * r0), nh = (int)(H * r1);
      if (nw < 1 || nh < 1)
        continue;
      double aspect = (double)nw / (double)nh;
      if (!(SL_IOU_MIN_ASPECT <= aspect && aspect <= SL_IOU_MAX_ASPECT))
        continue;
      double u0 = sl_rng_uniform(r), u1 = sl_rng_uniform(r);
      int left = (int)((W - nw) * u0), top = (int)((H - nh) * u1);
      if (!iou_ok(boxes, stride, n, p->iou_all, opt, left, top, left + nw,
                  top + nh))
        continue;
      *min_iou = opt;
      sl_crop_box b = {left, top, nw, nh};
      return b;
    }
  }
  return whole(W, H);
}

/* The flip, then the crop: the stream's first draws. */
static void draw_crop(const sl_aug_params *p, const float *boxes, size_t stride,
                      uint32_t n, int img_w, int img_h, int out_h, int out_w,
                      sl_rng *r, sl_crop_box *box, int *flip, double *min_iou) {
  *flip = sl_rng_uniform(r) < p->flip;
  *min_iou = -1.0;
  if (p->crop == SL_CROP_RANDOM_RESIZED)
    *box = random_resized(p, img_w, img_h, r);
  else if (p->crop == SL_CROP_CENTER)
    *box = center(p, img_w, img_h, out_h, out_w);
  else if (p->crop == SL_CROP_IOU)
    *box = iou_crop(p, boxes, stride, n, img_w, img_h, r, min_iou);
  else
    *box = whole(img_w, img_h);
}

void sl_aug_sample_crop(const sl_aug_params *p, int img_w, int img_h, int out_h,
                        int out_w, uint64_t seed, uint64_t epoch,
                        uint64_t index, sl_crop_box *box, int *flip) {
  sl_rng r = sl_rng_for(seed, epoch, index);
  double min_iou;
  draw_crop(p, NULL, 0, 0, img_w, img_h, out_h, out_w, &r, box, flip, &min_iou);
}

/* Python's round(v - 0.1) for ultralytics' pad split. */
static int pad_before(int spare) {
  return (int)nearbyint((double)spare / 2.0 - 0.1);
}

void sl_aug_sample_geom(const sl_aug_params *p, const float *boxes,
                        size_t stride, uint32_t n, int img_w, int img_h,
                        int out_h, int out_w, uint64_t seed, uint64_t epoch,
                        uint64_t index, sl_aug_geom *g) {
  memset(g, 0, sizeof *g);
  sl_rng r = sl_rng_for(seed, epoch, index);
  draw_crop(p, boxes, stride, n, img_w, img_h, out_h, out_w, &r, &g->crop,
            &g->flip, &g->min_iou);
  g->centers = p->crop == SL_CROP_IOU && g->min_iou < 1.0;
  g->place_w = out_w, g->place_h = out_h;
  if (p->crop == SL_CROP_LETTERBOX) {
    double k = fmin((double)out_w / img_w, (double)out_h / img_h);
    int tw = (int)nearbyint(img_w * k), th = (int)nearbyint(img_h * k);
    g->place_w = tw < 1 ? 1 : tw > out_w ? out_w : tw;
    g->place_h = th < 1 ? 1 : th > out_h ? out_h : th;
    g->place_x = pad_before(out_w - g->place_w);
    g->place_y = pad_before(out_h - g->place_h);
  }
  sl_rng rr = sl_recipe_rng(seed, epoch, index);
  sl_recipe_draw_all(&p->recipe, &rr, out_w, out_h, &g->rd);
  g->recipe_rng = rr;
  for (int i = 0; i < g->rd.n_steps; i++)
    if (sl_policy_matrix(&g->rd.steps[i], out_w, out_h, g->warp[g->n_warps]))
      g->n_warps++;
}

/* The DCT scale cost model (issue 24). libjpeg-turbo 2.1 has SIMD inverse
 * DCTs only at 8/8, 4/8, 2/8 and 1/8; 3/8, 5/8 and 6/8 are plain C, and
 * for 4:2:0 it decodes chroma at twice the luma's scaled size to skip
 * upsampling (jdmaster.c), so 5/8 and 6/8 run 10x10 and 12x12 C IDCTs on
 * chroma. Hence a larger scale can be cheaper than the smallest that
 * covers. Estimated cost of decoding a crop at m/8 and resizing it: the
 * IDCT and colour conversion per 8x8 luma block of the crop at m (above
 * 1/8: entropy decoding is the same at every scale and left out), plus
 * the decoder's box reduction per scaled pixel when it reduces (row-by-row
 * reads and a C box filter), plus libyuv's resize per input pixel.
 * Measured with `build/bench/bench_decode --scale-costs --images 200
 * --rounds 5` (thread CPU time, medians over rounds and 224/192/160/128)
 * on 2026-12-04 on the 2-core AMD EPYC dev VM (AVX2, shared with a CI run),
 * libjpeg-turbo 2.1.5, 500x375 q90 4:2:0 synthetic photos. Other
 * subsamplings are costed as 4:2:0 (the sampling is not passed in); their
 * luma IDCTs have the same SIMD/plain-C split. */
static const double k_dct_ns[9] = {0,     0.0,   46.7, 93.6, 82.7,
                                   232.2, 269.9, 0,    181.4};
static const double k_box_ns = 4.0;     /* per scaled pixel, when reducing */
static const double k_resize_ns = 0.15; /* per resampler input pixel */

/* 7/8 is left out: it shrinks the region by at most 1/8, then libyuv
 * resamples by a ratio close to 1, which blurs more than 8/8 plus a box
 * filter (bench_decode: no faster; mean PSNR 0.9 dB lower at 224). */
static const int k_scales[] = {1, 2, 3, 4, 5, 6, 8};

/* The estimated cost of a cw x ch crop (full-size pixels) at m/8, as the
 * decoder plans it (codecs/decoder.c reduce_factor). */
static double scale_cost(double cw, double ch, int m, int out_w, int out_h) {
  double rw = cw * m / 8.0, rh = ch * m / 8.0;
  double kx = rw >= 2.0 * out_w ? floor(rw / out_w) : 1.0;
  double ky = rh >= 2.0 * out_h ? floor(rh / out_h) : 1.0;
  double c = cw * ch / 64.0 * k_dct_ns[m];
  if (kx > 1 || ky > 1)
    c += rw * rh * k_box_ns;
  return c + rw / kx * (rh / ky) * k_resize_ns;
}

/* The cheapest scale whose decode of the crop (w_num / den by h_num / den
 * full-size pixels) covers out_w x out_h (never upscale in the IDCT); on
 * a tie the larger, which resamples more. 8 when none covers. */
static int cheapest_scale(int64_t w_num, int64_t h_num, int64_t den, int out_w,
                          int out_h) {
  double cw = (double)w_num / (double)den, ch = (double)h_num / (double)den;
  int best = 8;
  double best_c = 0;
  int found = 0;
  for (size_t i = 0; i < sizeof k_scales / sizeof k_scales[0]; i++) {
    int m = k_scales[i];
    if (w_num * m < (int64_t)8 * out_w * den ||
        h_num * m < (int64_t)8 * out_h * den)
      continue;
    double c = scale_cost(cw, ch, m, out_w, out_h);
    if (!found || c <= best_c)
      best = m, best_c = c, found = 1;
  }
  return best;
}

int sl_aug_dct_scale(int crop_w, int crop_h, int out_w, int out_h) {
  return cheapest_scale(crop_w, crop_h, 1, out_w, out_h);
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
  /* The crop mapped to level k: b->w * lw[k] / img_w by b->h * lh[k] /
   * img_h, over a common denominator so the cover test stays exact. */
  *level = k;
  *scale = cheapest_scale((int64_t)b->w * lw[k] * img_h,
                          (int64_t)b->h * lh[k] * img_w, (int64_t)img_w * img_h,
                          out_w, out_h);
}

size_t sl_aug_sample_bytes(const sl_aug_params *p, int out_h, int out_w) {
  return (size_t)out_h * (size_t)out_w * (size_t)p->channels *
         sl_dtype_bytes(p->dtype);
}
