/* The per-sample chain of a recipe (recipe.h): flip, policy, ColorJitter,
 * RandomGrayscale, GaussianBlur, and RandomErasing's box. */
#include "augment/recipe.h"

#include <math.h>
#include <string.h>

#include <libyuv/planar_functions.h>

int sl_recipe_has_pixel_ops(const sl_aug_recipe *r) {
  int jitter = r->jitter_p > 0 && (r->jitter[0] > 0 || r->jitter[1] > 0 ||
                                   r->jitter[2] > 0 || r->jitter[3] > 0);
  return r->policy.policy != SL_AUTO_NONE || jitter || r->grayscale > 0 ||
         r->blur > 0;
}

sl_status sl_recipe_check(const sl_aug_recipe *r, sl_err *err) {
  const sl_policy_params *p = &r->policy;
  if ((unsigned)p->policy > SL_AUTO_AUTOAUGMENT ||
      (unsigned)p->interp > SL_INTERP_BILINEAR)
    return sl_err_set(err, SL_EINVAL,
                      "augment: bad auto policy or "
                      "interpolation");
  if (p->policy == SL_AUTO_RANDAUGMENT &&
      (p->num_ops < 1 || p->num_ops > SL_POLICY_MAX_OPS))
    return sl_err_set(err, SL_EINVAL, "augment.auto_ops: %d (1..%d)",
                      p->num_ops, SL_POLICY_MAX_OPS);
  if (p->policy != SL_AUTO_NONE && (p->bins < 2 || p->bins > 1000))
    return sl_err_set(err, SL_EINVAL, "augment.auto_bins: %d (2..1000)",
                      p->bins);
  if (p->policy == SL_AUTO_RANDAUGMENT &&
      !(p->magnitude >= 0 && p->magnitude <= p->bins - 1))
    return sl_err_set(err, SL_EINVAL,
                      "augment.auto_magnitude: %g is not a bin of "
                      "augment.auto_bins = %d (0..%d)",
                      p->magnitude, p->bins, p->bins - 1);
  if (!(p->magnitude_std >= 0))
    return sl_err_set(err, SL_EINVAL, "augment.auto_magnitude_std: %g (>= 0)",
                      p->magnitude_std);
  for (int k = 0; k < 3; k++)
    if (!(r->jitter[k] >= 0))
      return sl_err_set(err, SL_EINVAL,
                        "augment.color_jitter: factor %d is %g (>= 0)", k + 1,
                        r->jitter[k]);
  if (!(r->jitter[3] >= 0 && r->jitter[3] <= 0.5))
    return sl_err_set(err, SL_EINVAL,
                      "augment.color_jitter: hue %g (0..0.5, as ColorJitter)",
                      r->jitter[3]);
  if (r->blur > 0 &&
      (r->blur_kernel < 1 || r->blur_kernel > 255 || r->blur_kernel % 2 == 0))
    return sl_err_set(err, SL_EINVAL, "augment.blur_kernel: %d (odd, 1..255)",
                      r->blur_kernel);
  if (r->blur > 0 &&
      !(r->blur_sigma[0] > 0 && r->blur_sigma[0] <= r->blur_sigma[1]))
    return sl_err_set(err, SL_EINVAL,
                      "augment.blur_sigma: (%g, %g) (0 < min <= max)",
                      r->blur_sigma[0], r->blur_sigma[1]);
  if (r->erasing > 0 && (!(r->erasing_scale[0] > 0 &&
                           r->erasing_scale[0] <= r->erasing_scale[1] &&
                           r->erasing_scale[1] <= 1) ||
                         !(r->erasing_ratio[0] > 0 &&
                           r->erasing_ratio[0] <= r->erasing_ratio[1])))
    return sl_err_set(err, SL_EINVAL,
                      "augment.erasing_scale (%g, %g) or erasing_ratio (%g, "
                      "%g) out of range (0 < min <= max, scale <= 1)",
                      r->erasing_scale[0], r->erasing_scale[1],
                      r->erasing_ratio[0], r->erasing_ratio[1]);
  return SL_OK;
}

static void mirror(sl_image *im, sl_op_scratch *s) {
  size_t bytes = (size_t)im->w * (size_t)im->h * (size_t)im->ch;
  if (im->ch == 4)
    ARGBMirror(im->px, im->w * 4, s->img, im->w * 4, im->w, im->h);
  else
    MirrorPlane(im->px, im->w, s->img, im->w, im->w, im->h);
  memcpy(im->px, s->img, bytes);
}

static double uniform_in(sl_rng *r, double lo, double hi) {
  return lo + (hi - lo) * sl_rng_uniform(r);
}

/* ColorJitter.get_params and forward: a random order of the four
 * (torch.randperm), a factor drawn for each configured one. */
static void color_jitter(const sl_aug_recipe *r, sl_rng *rng, sl_image *im) {
  int order[4] = {0, 1, 2, 3};
  for (int i = 3; i > 0; i--) { /* Fisher-Yates */
    int j = (int)sl_rng_below(rng, (uint64_t)i + 1);
    int t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  double f[4];
  for (int k = 0; k < 3; k++) {
    double lo = 1.0 - r->jitter[k] < 0 ? 0 : 1.0 - r->jitter[k];
    f[k] = r->jitter[k] > 0 ? uniform_in(rng, lo, 1.0 + r->jitter[k]) : 1.0;
  }
  f[3] = r->jitter[3] > 0 ? uniform_in(rng, -r->jitter[3], r->jitter[3]) : 0.0;
  for (int i = 0; i < 4; i++) {
    int k = order[i];
    if (!(r->jitter[k] > 0))
      continue;
    switch (k) {
    case 0:
      sl_op_brightness(im, f[0]);
      break;
    case 1:
      sl_op_contrast(im, f[1]);
      break;
    case 2:
      sl_op_saturation(im, f[2]);
      break;
    default:
      sl_op_hue(im, f[3]);
      break;
    }
  }
}

void sl_recipe_run(const sl_aug_recipe *r, sl_rng *rng, sl_image *im, int flip,
                   sl_op_scratch *s) {
  if (flip)
    mirror(im, s);
  if (r->policy.policy != SL_AUTO_NONE) {
    sl_policy_step steps[SL_POLICY_MAX_OPS];
    int n = sl_policy_draw(&r->policy, im->w, im->h, rng, steps);
    for (int i = 0; i < n; i++)
      sl_policy_apply(im, &steps[i], r->policy.interp,
                      r->policy.has_fill ? r->policy.fill : NULL, s);
  }
  if (r->jitter_p > 0 && (r->jitter[0] > 0 || r->jitter[1] > 0 ||
                          r->jitter[2] > 0 || r->jitter[3] > 0)) {
    if (sl_rng_uniform(rng) < r->jitter_p)
      color_jitter(r, rng, im);
  }
  if (r->grayscale > 0 && sl_rng_uniform(rng) < r->grayscale)
    sl_op_grayscale(im);
  if (r->blur > 0 && sl_rng_uniform(rng) < r->blur) {
    double sigma = uniform_in(rng, r->blur_sigma[0], r->blur_sigma[1]);
    sl_op_gaussian_blur(im, r->blur_kernel, r->blur_kernel, sigma, sigma, s);
  }
}

void sl_recipe_erase_box(const sl_aug_recipe *r, sl_rng *rng, int h, int w,
                         sl_erase_box *box) {
  memset(box, 0, sizeof *box);
  if (!(r->erasing > 0) || !(sl_rng_uniform(rng) < r->erasing))
    return;
  double area = (double)h * (double)w;
  double lr0 = log(r->erasing_ratio[0]), lr1 = log(r->erasing_ratio[1]);
  for (int t = 0; t < 10; t++) {
    double ea =
        area * uniform_in(rng, r->erasing_scale[0], r->erasing_scale[1]);
    double ar = exp(uniform_in(rng, lr0, lr1));
    int eh = (int)nearbyint(sqrt(ea * ar)), ew = (int)nearbyint(sqrt(ea / ar));
    if (!(eh < h && ew < w))
      continue;
    box->on = 1;
    box->h = eh;
    box->w = ew;
    box->i = (int)sl_rng_below(rng, (uint64_t)(h - eh + 1));
    box->j = (int)sl_rng_below(rng, (uint64_t)(w - ew + 1));
    return;
  }
}
