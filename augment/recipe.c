/* The per-sample chain of a recipe (recipe.h): flip, policy, ColorJitter,
 * RandomGrayscale, GaussianBlur, and RandomErasing's box: drawn at once
 * (sl_recipe_draw_all), then applied (sl_recipe_apply). */
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

/* ColorJitter.get_params: a random order of the four (torch.randperm's
 * fn_idx), then a factor for each configured one, uniform in
 * [max(0, 1 - b), 1 + b] (hue: [-h, h]). */
static void draw_jitter(const sl_aug_recipe *r, sl_rng *rng,
                        sl_recipe_draw *d) {
  int *order = d->jitter_order;
  for (int i = 0; i < 4; i++)
    order[i] = i;
  for (int i = 3; i > 0; i--) { /* Fisher-Yates */
    int j = (int)sl_rng_below(rng, (uint64_t)i + 1);
    int t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  for (int k = 0; k < 3; k++) {
    double lo = 1.0 - r->jitter[k] < 0 ? 0 : 1.0 - r->jitter[k];
    d->jitter_factor[k] =
        r->jitter[k] > 0 ? uniform_in(rng, lo, 1.0 + r->jitter[k]) : 1.0;
  }
  d->jitter_factor[3] =
      r->jitter[3] > 0 ? uniform_in(rng, -r->jitter[3], r->jitter[3]) : 0.0;
}

/* RandomErasing.get_params: ten tries of an area fraction uniform in
 * scale and a log-uniform aspect h / w in ratio, each side rounded half
 * to even (Python's round); the first box inside the image wins, at a
 * uniform position. */
static void draw_erase_box(const sl_aug_recipe *r, sl_rng *rng, int h, int w,
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

void sl_recipe_draw_all(const sl_aug_recipe *r, sl_rng *rng, int w, int h,
                        sl_recipe_draw *d) {
  memset(d, 0, sizeof *d);
  for (int k = 0; k < 4; k++) {
    d->jitter_order[k] = k;
    d->jitter_factor[k] = k < 3 ? 1.0 : 0.0;
  }
  if (r->policy.policy != SL_AUTO_NONE)
    d->n_steps = sl_policy_draw(&r->policy, w, h, rng, d->steps);
  if (r->jitter_p > 0 && (r->jitter[0] > 0 || r->jitter[1] > 0 ||
                          r->jitter[2] > 0 || r->jitter[3] > 0)) {
    if (sl_rng_uniform(rng) < r->jitter_p) {
      d->jitter = 1;
      draw_jitter(r, rng, d);
    }
  }
  if (r->grayscale > 0 && sl_rng_uniform(rng) < r->grayscale)
    d->grayscale = 1;
  if (r->blur > 0 && sl_rng_uniform(rng) < r->blur) {
    d->blur = 1;
    d->blur_sigma = uniform_in(rng, r->blur_sigma[0], r->blur_sigma[1]);
  }
  draw_erase_box(r, rng, h, w, &d->erase);
}

/* ColorJitter.forward: the configured factors in the drawn order. */
static void color_jitter(const sl_aug_recipe *r, const sl_recipe_draw *d,
                         sl_image *im) {
  for (int i = 0; i < 4; i++) {
    int k = d->jitter_order[i];
    double f = d->jitter_factor[k];
    if (!(r->jitter[k] > 0))
      continue;
    switch (k) {
    case 0:
      sl_op_brightness(im, f);
      break;
    case 1:
      sl_op_contrast(im, f);
      break;
    case 2:
      sl_op_saturation(im, f);
      break;
    default:
      sl_op_hue(im, f);
      break;
    }
  }
}

int sl_recipe_flip_commutes(const sl_recipe_draw *d) {
  if (d->blur)
    return 0;
  for (int i = 0; i < d->n_steps; i++) {
    double m[6];
    if (sl_policy_matrix(&d->steps[i], 2, 2, m))
      return 0;
  }
  return 1;
}

void sl_recipe_apply(const sl_aug_recipe *r, const sl_recipe_draw *d,
                     sl_image *im, int flip, sl_op_scratch *s) {
  if (flip)
    mirror(im, s);
  for (int i = 0; i < d->n_steps; i++)
    sl_policy_apply(im, &d->steps[i], r->policy.interp,
                    r->policy.has_fill ? r->policy.fill : NULL, s);
  if (d->jitter)
    color_jitter(r, d, im);
  if (d->grayscale)
    sl_op_grayscale(im);
  if (d->blur)
    sl_op_gaussian_blur(im, r->blur_kernel, r->blur_kernel, d->blur_sigma,
                        d->blur_sigma, s);
}
