/* TrivialAugmentWide, RandAugment and AutoAugment (policy.h): the op
 * tables of torchvision.transforms.autoaugment and its _apply_op. */
#include "augment/policy.h"

#include <math.h>

static const char *const k_names[SL_POP_COUNT] = {
    "Identity",  "ShearX",     "ShearY",       "TranslateX", "TranslateY",
    "Rotate",    "Brightness", "Color",        "Contrast",   "Sharpness",
    "Posterize", "Solarize",   "AutoContrast", "Equalize",   "Invert"};

const char *sl_policy_op_name(sl_policy_op op) {
  return (unsigned)op < SL_POP_COUNT ? k_names[op] : NULL;
}

/* The policies' magnitude ranges: _augmentation_space's linspace(0, max)
 * of each op; posterize_div is the divisor of its bin index ((bins - 1) /
 * 6 for trivial, / 4 otherwise). */
typedef struct space {
  double shear, translate_x, translate_y, rotate, enhance;
  double posterize_div;
} space;

static space space_for(const sl_policy_params *p, int bins, int w, int h) {
  space s;
  if (p->policy == SL_AUTO_TRIVIAL) {
    s.shear = 0.99, s.translate_x = s.translate_y = 32.0, s.rotate = 135.0;
    s.enhance = 0.99, s.posterize_div = (double)(bins - 1) / 6.0;
  } else {
    s.shear = 0.3, s.rotate = 30.0, s.enhance = 0.9;
    s.translate_x = 150.0 / 331.0 * (double)w;
    s.translate_y = 150.0 / 331.0 * (double)h;
    s.posterize_div = (double)(bins - 1) / 4.0;
  }
  return s;
}

/* torch.linspace(start, end, steps)[b] in float32 (ATen fills the first
 * half from start and the second from end); b may be fractional. */
static double linspace_at(double start, double end, int steps, double b) {
  if (steps < 2)
    return start;
  float fs = (float)start, fe = (float)end;
  float step = (fe - fs) / (float)(steps - 1);
  float v = b < (double)(steps / 2)
                ? fs + step * (float)b
                : fe - step * (float)((double)(steps - 1) - b);
  return (double)v;
}

static int signed_op(sl_policy_op op) {
  return op >= SL_POP_SHEAR_X && op <= SL_POP_SHARPNESS;
}

/* The magnitude of op at bin b (before the sign). */
static double magnitude_at(const space *s, sl_policy_op op, int bins,
                           double b) {
  switch (op) {
  case SL_POP_SHEAR_X:
  case SL_POP_SHEAR_Y:
    return linspace_at(0.0, s->shear, bins, b);
  case SL_POP_TRANSLATE_X:
    return linspace_at(0.0, s->translate_x, bins, b);
  case SL_POP_TRANSLATE_Y:
    return linspace_at(0.0, s->translate_y, bins, b);
  case SL_POP_ROTATE:
    return linspace_at(0.0, s->rotate, bins, b);
  case SL_POP_BRIGHTNESS:
  case SL_POP_COLOR:
  case SL_POP_CONTRAST:
  case SL_POP_SHARPNESS:
    return linspace_at(0.0, s->enhance, bins, b);
  case SL_POP_POSTERIZE: /* 8 - (arange(bins) / div).round().int() */
    return 8.0 - nearbyintf((float)nearbyint(b) / (float)s->posterize_div);
  case SL_POP_SOLARIZE:
    return linspace_at(255.0, 0.0, bins, b);
  default:
    return 0.0;
  }
}

/* torchvision's TrivialAugmentWide / RandAugment op list. */
static const sl_policy_op k_wide[] = {
    SL_POP_IDENTITY,     SL_POP_SHEAR_X,     SL_POP_SHEAR_Y,
    SL_POP_TRANSLATE_X,  SL_POP_TRANSLATE_Y, SL_POP_ROTATE,
    SL_POP_BRIGHTNESS,   SL_POP_COLOR,       SL_POP_CONTRAST,
    SL_POP_SHARPNESS,    SL_POP_POSTERIZE,   SL_POP_SOLARIZE,
    SL_POP_AUTOCONTRAST, SL_POP_EQUALIZE};
enum { k_nwide = sizeof k_wide / sizeof k_wide[0] };

/* AutoAugmentPolicy.IMAGENET: (op, probability, bin; -1: no magnitude). */
typedef struct sub_op {
  sl_policy_op op;
  double p;
  int bin;
} sub_op;

#define P_(o) SL_POP_##o
static const sub_op k_imagenet[25][2] = {
    {{P_(POSTERIZE), 0.4, 8}, {P_(ROTATE), 0.6, 9}},
    {{P_(SOLARIZE), 0.6, 5}, {P_(AUTOCONTRAST), 0.6, -1}},
    {{P_(EQUALIZE), 0.8, -1}, {P_(EQUALIZE), 0.6, -1}},
    {{P_(POSTERIZE), 0.6, 7}, {P_(POSTERIZE), 0.6, 6}},
    {{P_(EQUALIZE), 0.4, -1}, {P_(SOLARIZE), 0.2, 4}},
    {{P_(EQUALIZE), 0.4, -1}, {P_(ROTATE), 0.8, 8}},
    {{P_(SOLARIZE), 0.6, 3}, {P_(EQUALIZE), 0.6, -1}},
    {{P_(POSTERIZE), 0.8, 5}, {P_(EQUALIZE), 1.0, -1}},
    {{P_(ROTATE), 0.2, 3}, {P_(SOLARIZE), 0.6, 8}},
    {{P_(EQUALIZE), 0.6, -1}, {P_(POSTERIZE), 0.4, 6}},
    {{P_(ROTATE), 0.8, 8}, {P_(COLOR), 0.4, 0}},
    {{P_(ROTATE), 0.4, 9}, {P_(EQUALIZE), 0.6, -1}},
    {{P_(EQUALIZE), 0.0, -1}, {P_(EQUALIZE), 0.8, -1}},
    {{P_(INVERT), 0.6, -1}, {P_(EQUALIZE), 1.0, -1}},
    {{P_(COLOR), 0.6, 4}, {P_(CONTRAST), 1.0, 8}},
    {{P_(ROTATE), 0.8, 8}, {P_(COLOR), 1.0, 2}},
    {{P_(COLOR), 0.8, 8}, {P_(SOLARIZE), 0.8, 7}},
    {{P_(SHARPNESS), 0.4, 7}, {P_(INVERT), 0.6, -1}},
    {{P_(SHEAR_X), 0.6, 5}, {P_(EQUALIZE), 1.0, -1}},
    {{P_(COLOR), 0.4, 0}, {P_(EQUALIZE), 0.6, -1}},
    {{P_(EQUALIZE), 0.4, -1}, {P_(SOLARIZE), 0.2, 4}},
    {{P_(SOLARIZE), 0.6, 5}, {P_(AUTOCONTRAST), 0.6, -1}},
    {{P_(INVERT), 0.6, -1}, {P_(EQUALIZE), 1.0, -1}},
    {{P_(COLOR), 0.6, 4}, {P_(CONTRAST), 1.0, 8}},
    {{P_(EQUALIZE), 0.8, -1}, {P_(EQUALIZE), 0.6, -1}},
};
#undef P_

static double signed_draw(sl_policy_op op, double m, sl_rng *r) {
  /* one sign draw per signed op, as torch.randint(2) */
  if (signed_op(op) && sl_rng_below(r, 2))
    return -m;
  return m;
}

int sl_policy_draw(const sl_policy_params *p, int w, int h, sl_rng *r,
                   sl_policy_step out[SL_POLICY_MAX_OPS]) {
  if (p->policy == SL_AUTO_AUTOAUGMENT) {
    space s = space_for(p, 10, w, h);
    const sub_op *sub = k_imagenet[sl_rng_below(r, 25)];
    double u[2] = {sl_rng_uniform(r), sl_rng_uniform(r)};
    int neg[2] = {sl_rng_below(r, 2) == 0, sl_rng_below(r, 2) == 0};
    int n = 0;
    for (int i = 0; i < 2; i++) {
      if (!(u[i] <= sub[i].p))
        continue;
      double m =
          sub[i].bin < 0 ? 0.0 : magnitude_at(&s, sub[i].op, 10, sub[i].bin);
      if (signed_op(sub[i].op) && neg[i])
        m = -m;
      out[n].op = sub[i].op;
      out[n++].magnitude = m;
    }
    return n;
  }
  if (p->policy != SL_AUTO_TRIVIAL && p->policy != SL_AUTO_RANDAUGMENT)
    return 0;
  int bins = p->bins < 2 ? 2 : p->bins;
  space s = space_for(p, bins, w, h);
  int nops = p->policy == SL_AUTO_TRIVIAL ? 1 : p->num_ops;
  nops = nops < 0 ? 0 : nops > SL_POLICY_MAX_OPS ? SL_POLICY_MAX_OPS : nops;
  for (int i = 0; i < nops; i++) {
    sl_policy_op op = k_wide[sl_rng_below(r, k_nwide)];
    int scalar = op == SL_POP_IDENTITY || op == SL_POP_AUTOCONTRAST ||
                 op == SL_POP_EQUALIZE;
    double b = 0.0;
    if (p->policy == SL_AUTO_TRIVIAL) {
      if (!scalar)
        b = (double)sl_rng_below(r, (uint64_t)bins);
    } else {
      b = p->magnitude;
      if (p->magnitude_std > 0) {
        b += p->magnitude_std * sl_rng_normal(r);
        b = b < 0 ? 0 : b > bins - 1 ? bins - 1 : b;
      }
    }
    double m = scalar ? 0.0 : magnitude_at(&s, op, bins, b);
    out[i].op = op;
    out[i].magnitude = signed_draw(op, m, r);
  }
  return nops;
}

int sl_policy_matrix(const sl_policy_step *step, int w, int h, double m[6]) {
  double v = step->magnitude;
  switch (step->op) {
  case SL_POP_SHEAR_X: /* about the top-left corner (center = [0, 0]) */
    sl_affine_params(w, h, 0.0, 0, 0, 1.0, atan(v) * (180.0 / M_PI), 0.0, 1,
                     0.0, 0.0, m);
    return 1;
  case SL_POP_SHEAR_Y:
    sl_affine_params(w, h, 0.0, 0, 0, 1.0, 0.0, atan(v) * (180.0 / M_PI), 1,
                     0.0, 0.0, m);
    return 1;
  case SL_POP_TRANSLATE_X: /* int(magnitude): whole pixels */
    sl_affine_params(w, h, 0.0, trunc(v), 0, 1.0, 0.0, 0.0, 0, 0, 0, m);
    return 1;
  case SL_POP_TRANSLATE_Y:
    sl_affine_params(w, h, 0.0, 0, trunc(v), 1.0, 0.0, 0.0, 0, 0, 0, m);
    return 1;
  case SL_POP_ROTATE: /* F.rotate passes -angle to the matrix */
    sl_affine_params(w, h, -v, 0, 0, 1.0, 0.0, 0.0, 0, 0, 0, m);
    return 1;
  default:
    return 0;
  }
}

void sl_policy_apply(sl_image *im, const sl_policy_step *step, sl_interp interp,
                     const double *fill, sl_op_scratch *s) {
  double m = step->magnitude, mat[6];
  if (sl_policy_matrix(step, im->w, im->h, mat)) {
    sl_op_warp(im, mat, interp, fill, s);
    return;
  }
  switch (step->op) {
  case SL_POP_BRIGHTNESS:
    sl_op_brightness(im, 1.0 + m);
    break;
  case SL_POP_COLOR:
    sl_op_saturation(im, 1.0 + m);
    break;
  case SL_POP_CONTRAST:
    sl_op_contrast(im, 1.0 + m);
    break;
  case SL_POP_SHARPNESS:
    sl_op_sharpness(im, 1.0 + m, s);
    break;
  case SL_POP_POSTERIZE:
    sl_op_posterize(im, (int)m);
    break;
  case SL_POP_SOLARIZE:
    sl_op_solarize(im, m);
    break;
  case SL_POP_AUTOCONTRAST:
    sl_op_autocontrast(im);
    break;
  case SL_POP_EQUALIZE:
    sl_op_equalize(im);
    break;
  case SL_POP_INVERT:
    sl_op_invert(im);
    break;
  default:
    break;
  }
}
