/* The public augmentation calls (include/sluice.h): one named op on one
 * image or on boxes, and the ops a config's policy draws for a sample. Both run
 * the code the workers run (augment/ops.h, augment/policy.h). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "augment/boxes.h"
#include "augment/ops.h"
#include "augment/policy.h"
#include "augment/recipe.h"
#include "loader/settings.h"

enum { k_max_side = 1 << 15 };

/* The ops sl_augment_apply knows, one row each, in their public order
 * (sl_augment_op_get): X(kind, name, params, moves_boxes). params are
 * torchvision's keyword parameters, space-separated, "keyword:field" where
 * the sl_augment_args field is named otherwise; moves_boxes: sl_augment_boxes
 * takes the op too. The kind enum, the names, the error messages' lists and,
 * through sl_augment_op_get, Python's sluice.augment.OPS and BOX_OPS all
 * come from these rows. */
#define GEOMETRY "interpolation fill"
#define AUGMENT_OPS(X)                                                         \
  X(OP_ROTATE, "rotate", "angle center " GEOMETRY, 1)                          \
  X(OP_AFFINE, "affine", "angle translate scale shear center " GEOMETRY, 1)    \
  X(OP_SHEAR_X, "shear_x", "shear " GEOMETRY, 1)                               \
  X(OP_SHEAR_Y, "shear_y", "shear " GEOMETRY, 1)                               \
  X(OP_TRANSLATE_X, "translate_x", "translate " GEOMETRY, 1)                   \
  X(OP_TRANSLATE_Y, "translate_y", "translate " GEOMETRY, 1)                   \
  X(OP_BRIGHTNESS, "adjust_brightness", "brightness_factor:factor", 0)         \
  X(OP_CONTRAST, "adjust_contrast", "contrast_factor:factor", 0)               \
  X(OP_SATURATION, "adjust_saturation", "saturation_factor:factor", 0)         \
  X(OP_HUE, "adjust_hue", "hue_factor:factor", 0)                              \
  X(OP_SHARPNESS, "adjust_sharpness", "sharpness_factor:factor", 0)            \
  X(OP_POSTERIZE, "posterize", "bits", 0)                                      \
  X(OP_SOLARIZE, "solarize", "threshold", 0)                                   \
  X(OP_AUTOCONTRAST, "autocontrast", "", 0)                                    \
  X(OP_EQUALIZE, "equalize", "", 0)                                            \
  X(OP_INVERT, "invert", "", 0)                                                \
  X(OP_GRAYSCALE, "rgb_to_grayscale", "", 0)                                   \
  X(OP_HFLIP, "hflip", "", 1)                                                  \
  X(OP_BLUR, "gaussian_blur", "kernel_size sigma", 0)                          \
  X(OP_ERASE, "erase", "i j h w v:value", 0)

typedef enum op_kind {
#define OP_KIND(kind, name, params, boxes) kind,
  AUGMENT_OPS(OP_KIND)
#undef OP_KIND
      OP_COUNT
} op_kind;

static const struct op_row {
  const char *name;
  const char *params;
  int moves_boxes;
} k_ops[OP_COUNT] = {
#define OP_ROW(kind, name, params, boxes) {name, params, boxes},
    AUGMENT_OPS(OP_ROW)
#undef OP_ROW
};

/* The row named op, or OP_COUNT. */
static op_kind op_find(const char *op) {
  int k = 0;
  while (k < OP_COUNT && strcmp(k_ops[k].name, op) != 0)
    k++;
  return (op_kind)k;
}

/* The names of the ops (all, or those that move boxes), ", " between. */
static void op_list(char *list, size_t cap, int boxes_only) {
  size_t at = 0;
  list[0] = '\0';
  for (int i = 0; i < OP_COUNT && at < cap; i++)
    if (!boxes_only || k_ops[i].moves_boxes)
      at += (size_t)snprintf(list + at, cap - at, "%s%s", at ? ", " : "",
                             k_ops[i].name);
}

int sl_augment_op_get(uint32_t i, sl_augment_op_info *out) {
  if (!out || i >= OP_COUNT)
    return 0;
  memset(out, 0, sizeof *out);
  out->name = k_ops[i].name;
  out->params = k_ops[i].params;
  out->moves_boxes = k_ops[i].moves_boxes;
  return 1;
}

static sl_status fail(char *msg, size_t len, sl_status st, const char *fmt, ...)
    SL_PRINTF(4, 5);
static sl_status fail(char *msg, size_t len, sl_status st, const char *fmt,
                      ...) {
  if (msg && len) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, len, fmt, ap);
    va_end(ap);
  }
  return st;
}

/* The geometry and the factors must be finite numbers: a NaN or an
 * infinity has no pixel to sample and no byte to truncate to. */
static sl_status check_finite(op_kind k, const sl_augment_args *a, char *msg,
                              size_t len) {
  const struct {
    const char *name;
    double v;
  } v[] = {{"angle", a->angle},
           {"translate", a->translate[0]},
           {"translate", a->translate[1]},
           {"scale", a->scale},
           {"shear", a->shear[0]},
           {"shear", a->shear[1]},
           {"center", a->center[0]},
           {"center", a->center[1]},
           {"fill", a->fill[0]},
           {"fill", a->fill[1]},
           {"fill", a->fill[2]},
           {"factor", a->factor}};
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
    if (!isfinite(v[i].v))
      return fail(msg, len, SL_EINVAL, "%s: %s %g is not a finite number",
                  k_ops[k].name, v[i].name, v[i].v);
  return SL_OK;
}

static sl_status check_args(op_kind k, const sl_augment_args *a, char *msg,
                            size_t len) {
  sl_status st = check_finite(k, a, msg, len);
  if (st != SL_OK)
    return st;
  if ((unsigned)a->interpolation > SL_INTERP_BILINEAR)
    return fail(msg, len, SL_EINVAL,
                "%s: interpolation %d (0 nearest, 1 "
                "bilinear)",
                k_ops[k].name, a->interpolation);
  switch (k) {
  case OP_BRIGHTNESS:
  case OP_CONTRAST:
  case OP_SATURATION:
  case OP_SHARPNESS:
    if (!(a->factor >= 0))
      return fail(msg, len, SL_EINVAL, "%s: factor %g is negative",
                  k_ops[k].name, a->factor);
    break;
  case OP_HUE:
    if (!(a->factor >= -0.5 && a->factor <= 0.5))
      return fail(msg, len, SL_EINVAL,
                  "adjust_hue: factor %g outside "
                  "[-0.5, 0.5]",
                  a->factor);
    break;
  case OP_POSTERIZE:
    if (a->bits < 0 || a->bits > 8)
      return fail(msg, len, SL_EINVAL, "posterize: bits %d (0..8)", a->bits);
    break;
  case OP_AFFINE:
    if (!(a->scale >= 0))
      return fail(msg, len, SL_EINVAL, "affine: scale %g is negative",
                  a->scale);
    break;
  case OP_BLUR:
    for (int d = 0; d < 2; d++) {
      if (a->kernel_size[d] < 1 || a->kernel_size[d] > 255 ||
          a->kernel_size[d] % 2 == 0)
        return fail(msg, len, SL_EINVAL,
                    "gaussian_blur: kernel_size %d (odd, 1..255)",
                    a->kernel_size[d]);
      if (!(a->sigma[d] > 0))
        return fail(msg, len, SL_EINVAL, "gaussian_blur: sigma %g (> 0)",
                    a->sigma[d]);
    }
    break;
  case OP_ERASE:
    if (a->h < 0 || a->w < 0)
      return fail(msg, len, SL_EINVAL, "erase: h %d, w %d (>= 0)", a->h, a->w);
    for (int c = 0; c < 3; c++)
      if (!(a->value[c] >= 0 && a->value[c] <= 255))
        return fail(msg, len, SL_EINVAL, "erase: value %g (0..255)",
                    a->value[c]);
    break;
  default:
    break;
  }
  return SL_OK;
}

/* The warp matrix of a geometric op on a w x h image (ops.h). */
static void warp_matrix(op_kind k, const sl_augment_args *a, int w, int h,
                        double m[6]) {
  double scale = a->scale == 0 ? 1.0 : a->scale;
  switch (k) {
  case OP_ROTATE: /* F.rotate hands -angle to the matrix */
    sl_affine_params(w, h, -a->angle, 0, 0, 1.0, 0, 0, a->has_center,
                     a->center[0], a->center[1], m);
    break;
  case OP_AFFINE:
    sl_affine_params(w, h, a->angle, a->translate[0], a->translate[1], scale,
                     a->shear[0], a->shear[1], a->has_center, a->center[0],
                     a->center[1], m);
    break;
  case OP_SHEAR_X:
    sl_affine_params(w, h, 0, 0, 0, 1.0, a->shear[0], 0, 1, 0, 0, m);
    break;
  case OP_SHEAR_Y:
    sl_affine_params(w, h, 0, 0, 0, 1.0, 0, a->shear[1], 1, 0, 0, m);
    break;
  case OP_TRANSLATE_X:
    sl_affine_params(w, h, 0, a->translate[0], 0, 1.0, 0, 0, 0, 0, 0, m);
    break;
  default: /* OP_TRANSLATE_Y */
    sl_affine_params(w, h, 0, 0, a->translate[1], 1.0, 0, 0, 0, 0, 0, m);
    break;
  }
}

static void warp(op_kind k, const sl_augment_args *a, sl_image *im,
                 sl_op_scratch *s) {
  double m[6], fill[3];
  for (int c = 0; c < 3; c++)
    fill[c] = a->fill[c];
  warp_matrix(k, a, im->w, im->h, m);
  sl_op_warp(im, m, (sl_interp)a->interpolation, a->has_fill ? fill : NULL, s);
}

static void run(op_kind k, const sl_augment_args *a, sl_image *im,
                sl_op_scratch *s) {
  switch (k) {
  case OP_ROTATE:
  case OP_AFFINE:
  case OP_SHEAR_X:
  case OP_SHEAR_Y:
  case OP_TRANSLATE_X:
  case OP_TRANSLATE_Y:
    warp(k, a, im, s);
    break;
  case OP_BRIGHTNESS:
    sl_op_brightness(im, a->factor);
    break;
  case OP_CONTRAST:
    sl_op_contrast(im, a->factor);
    break;
  case OP_SATURATION:
    sl_op_saturation(im, a->factor);
    break;
  case OP_HUE:
    sl_op_hue(im, a->factor);
    break;
  case OP_SHARPNESS:
    sl_op_sharpness(im, a->factor, s);
    break;
  case OP_POSTERIZE:
    sl_op_posterize(im, a->bits);
    break;
  case OP_SOLARIZE:
    sl_op_solarize(im, a->threshold);
    break;
  case OP_AUTOCONTRAST:
    sl_op_autocontrast(im);
    break;
  case OP_EQUALIZE:
    sl_op_equalize(im);
    break;
  case OP_INVERT:
    sl_op_invert(im);
    break;
  case OP_GRAYSCALE:
    sl_op_grayscale(im);
    break;
  case OP_HFLIP: { /* x -> w - 1 - x through the warp's exact path */
    double m[6] = {-1, 0, 0, 0, 1, 0};
    sl_op_warp(im, m, SL_INTERP_NEAREST, NULL, s);
    break;
  }
  case OP_BLUR:
    sl_op_gaussian_blur(im, a->kernel_size[0], a->kernel_size[1], a->sigma[0],
                        a->sigma[1], s);
    break;
  default: { /* OP_ERASE */
    uint8_t v[3];
    for (int c = 0; c < 3; c++)
      v[c] = (uint8_t)(a->value[c] + 0.5);
    sl_op_erase(im, a->i, a->j, a->h, a->w, v);
    break;
  }
  }
}

sl_status sl_augment_apply(const char *op, const sl_augment_args *args,
                           uint8_t *pixels, uint32_t height, uint32_t width,
                           uint32_t channels, char *msg, size_t msg_len) {
  if (msg && msg_len)
    msg[0] = '\0';
  if (!op || !args || !pixels)
    return fail(msg, msg_len, SL_EINVAL, "augment: NULL argument");
  op_kind k = op_find(op);
  if (k == OP_COUNT) {
    char list[512];
    op_list(list, sizeof list, 0);
    return fail(msg, msg_len, SL_EINVAL, "augment: unknown op '%s' (%s)", op,
                list);
  }
  if (channels != 1 && channels != 3)
    return fail(msg, msg_len, SL_EINVAL, "%s: %u channels (1 or 3)", op,
                channels);
  if (height < 1 || width < 1 || height > k_max_side || width > k_max_side)
    return fail(msg, msg_len, SL_EINVAL, "%s: image %ux%u (1..%d a side)", op,
                width, height, k_max_side);
  sl_status st = check_args(k, args, msg, msg_len);
  if (st != SL_OK)
    return st;
  /* The ops work on RGBX or gray, as in the pipeline. */
  size_t n = (size_t)width * (size_t)height;
  int ch = channels == 3 ? 4 : 1;
  uint8_t *img = malloc(n * (size_t)ch);
  sl_op_scratch s = {malloc(n * 4), malloc(n * 4 * sizeof(float)), n,
                     malloc(sl_op_line_floats(width) * sizeof(float)), width};
  if (!img || !s.img || !s.rows || !s.line) {
    free(img);
    free(s.img);
    free(s.rows);
    free(s.line);
    return fail(msg, msg_len, SL_ENOMEM, "%s: out of memory for %zu pixels", op,
                n);
  }
  for (size_t i = 0; i < n; i++) {
    if (ch == 1) {
      img[i] = pixels[i];
    } else {
      memcpy(img + 4 * i, pixels + 3 * i, 3);
      img[4 * i + 3] = 255;
    }
  }
  sl_image im = {img, (int)width, (int)height, ch};
  run(k, args, &im, &s);
  for (size_t i = 0; i < n; i++) {
    if (ch == 1)
      pixels[i] = img[i];
    else
      memcpy(pixels + 3 * i, img + 4 * i, 3);
  }
  free(img);
  free(s.img);
  free(s.rows);
  free(s.line);
  return SL_OK;
}

sl_status sl_augment_boxes(const char *op, const sl_augment_args *args,
                           float *boxes, uint32_t n, uint32_t height,
                           uint32_t width, char *msg, size_t msg_len) {
  if (msg && msg_len)
    msg[0] = '\0';
  if (!op || !args || (n && !boxes))
    return fail(msg, msg_len, SL_EINVAL, "augment: NULL argument");
  op_kind k = op_find(op);
  if (k == OP_COUNT || !k_ops[k].moves_boxes) {
    char list[256];
    op_list(list, sizeof list, 1);
    return fail(msg, msg_len, SL_EINVAL,
                "augment: '%s' does not move boxes (%s do)", op, list);
  }
  if (height < 1 || width < 1 || height > k_max_side || width > k_max_side)
    return fail(msg, msg_len, SL_EINVAL, "%s: image %ux%u (1..%d a side)", op,
                width, height, k_max_side);
  sl_status st = check_args(k, args, msg, msg_len);
  if (st != SL_OK)
    return st;
  double m[6];
  if (k != OP_HFLIP)
    warp_matrix(k, args, (int)width, (int)height, m);
  for (uint32_t i = 0; i < n; i++) {
    float *f = boxes + (size_t)i * 4;
    double b[4] = {f[0], f[1], f[2], f[3]};
    if (k == OP_HFLIP)
      sl_box_flip(b, (int)width);
    else
      sl_box_warp(b, m, (int)width, (int)height);
    sl_box_clip(b, 0, 0, width, height);
    for (int c = 0; c < 4; c++)
      f[c] = (float)b[c];
  }
  return SL_OK;
}

sl_status sl_augment_policy_draw(const sl_config *cfg, uint64_t epoch,
                                 uint64_t index, uint32_t width,
                                 uint32_t height, sl_augment_step *out,
                                 uint32_t *n) {
  if (!cfg || !out || !n)
    return SL_EINVAL;
  *n = 0;
  /* The policy's steps are the first draws of the recipe's stream. */
  sl_augment_draw d;
  sl_status st = sl_augment_recipe_draw(cfg, epoch, index, width, height, &d);
  if (st != SL_OK)
    return st;
  memcpy(out, d.steps, sizeof *out * d.n_steps);
  *n = d.n_steps;
  return SL_OK;
}

sl_status sl_augment_recipe_draw(const sl_config *cfg, uint64_t epoch,
                                 uint64_t index, uint32_t width,
                                 uint32_t height, sl_augment_draw *out) {
  if (!cfg || !out)
    return SL_EINVAL;
  memset(out, 0, sizeof *out);
  sl_err err;
  sl_settings s;
  sl_status st = sl_settings_from_config(&s, cfg, &err);
  if (st != SL_OK)
    return st;
  sl_rng r = sl_recipe_rng(s.sampler.seed, epoch, index);
  sl_recipe_draw d;
  sl_recipe_draw_all(&s.aug.recipe, &r, (int)width, (int)height, &d);
  for (int i = 0; i < d.n_steps && i < SL_AUGMENT_MAX_STEPS; i++) {
    snprintf(out->steps[i].op, sizeof out->steps[i].op, "%s",
             sl_policy_op_name(d.steps[i].op));
    out->steps[i].magnitude = d.steps[i].magnitude;
  }
  out->n_steps =
      (uint32_t)(d.n_steps < SL_AUGMENT_MAX_STEPS ? d.n_steps
                                                  : SL_AUGMENT_MAX_STEPS);
  out->jitter = d.jitter;
  for (int k = 0; k < 4; k++) {
    out->jitter_order[k] = d.jitter_order[k];
    out->jitter_factor[k] = d.jitter_factor[k];
  }
  out->grayscale = d.grayscale;
  out->blur = d.blur;
  out->blur_sigma = d.blur_sigma;
  out->erase = d.erase.on;
  out->erase_i = d.erase.i;
  out->erase_j = d.erase.j;
  out->erase_h = d.erase.h;
  out->erase_w = d.erase.w;
  return SL_OK;
}
