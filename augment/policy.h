/* Automatic augmentation policies with torchvision's op lists, magnitude
 * tables and signs (torchvision.transforms.autoaugment):
 *   trivial      TrivialAugmentWide: one op of 14, a magnitude bin drawn
 *                uniformly from `bins` (31), a random sign.
 *   randaugment  RandAugment: num_ops ops of 14, each at bin `magnitude`
 *                (of `bins`, 31), a random sign. With magnitude_std > 0
 *                the bin is drawn per op from N(magnitude, magnitude_std)
 *                and clipped to [0, bins - 1] (timm's mstd; timm's
 *                rand-m9-mstd0.5 is bins 11, magnitude 9, std 0.5 over
 *                torchvision's op list, which has Identity where timm has
 *                Invert and SolarizeAdd).
 *   autoaugment  AutoAugment's IMAGENET policy: one of 25 sub-policies,
 *                each op applied with its probability, at its bin of 10.
 * A fractional bin b means max * b / (bins - 1) (the tables are linear);
 * Posterize rounds b first.
 *
 * Draws come from the caller's stream; sl_policy_draw is a pure function
 * of its arguments and the stream's position. */
#ifndef SLUICE_AUGMENT_POLICY_H
#define SLUICE_AUGMENT_POLICY_H

#include "augment/ops.h"
#include "common/rng.h"

typedef enum sl_auto_policy {
  SL_AUTO_NONE,
  SL_AUTO_TRIVIAL,
  SL_AUTO_RANDAUGMENT,
  SL_AUTO_AUTOAUGMENT
} sl_auto_policy;

/* The ops, in the order of torchvision's _augmentation_space. */
typedef enum sl_policy_op {
  SL_POP_IDENTITY,
  SL_POP_SHEAR_X,
  SL_POP_SHEAR_Y,
  SL_POP_TRANSLATE_X,
  SL_POP_TRANSLATE_Y,
  SL_POP_ROTATE,
  SL_POP_BRIGHTNESS,
  SL_POP_COLOR,
  SL_POP_CONTRAST,
  SL_POP_SHARPNESS,
  SL_POP_POSTERIZE,
  SL_POP_SOLARIZE,
  SL_POP_AUTOCONTRAST,
  SL_POP_EQUALIZE,
  SL_POP_INVERT,
  SL_POP_COUNT
} sl_policy_op;

#define SL_POLICY_MAX_OPS 16

typedef struct sl_policy_params {
  sl_auto_policy policy;
  int num_ops;          /* randaugment: 1..SL_POLICY_MAX_OPS */
  int bins;             /* trivial, randaugment: 2..1000 */
  double magnitude;     /* randaugment: the bin, 0..bins - 1 */
  double magnitude_std; /* randaugment: 0 (fixed) or the spread of the bin */
  sl_interp interp;     /* of the geometric ops (torchvision: nearest) */
  int has_fill;         /* 0: outside pixels 0 (torchvision's fill=None) */
  double fill[3];       /* the policies' fill= (timm: the mean, 0..255) */
} sl_policy_params;

typedef struct sl_policy_step {
  sl_policy_op op;
  double magnitude; /* the value _apply_op receives, sign included */
} sl_policy_step;

/* "Identity", "ShearX", ... as torchvision names them; NULL outside. */
const char *sl_policy_op_name(sl_policy_op op);

/* Draws the ops for a w x h image; returns how many (0..num_ops). */
int sl_policy_draw(const sl_policy_params *p, int w, int h, sl_rng *r,
                   sl_policy_step out[SL_POLICY_MAX_OPS]);

/* The warp matrix of a geometric step (ShearX/Y, TranslateX/Y, Rotate) on
 * a w x h image: sl_op_warp's output-to-input matrix (ops.h), exactly what
 * sl_policy_apply warps with. Returns 1 and fills m for those ops, 0 (m
 * untouched) for the others, which move no pixel. */
int sl_policy_matrix(const sl_policy_step *step, int w, int h, double m[6]);

/* torchvision's _apply_op; fill NULL is its fill=None (outside pixels 0),
 * else fill[c] per channel. */
void sl_policy_apply(sl_image *im, const sl_policy_step *step, sl_interp interp,
                     const double *fill, sl_op_scratch *s);

#endif
