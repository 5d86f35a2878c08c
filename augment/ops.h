/* Per-sample image ops on 8-bit pixels, each equal to torchvision's
 * functional op on a uint8 tensor (torchvision.transforms.functional, the
 * tensor path; v2 kept these semantics for tensors): the same parameters,
 * units, geometry, fill and rounding. Where torchvision truncates a float
 * result to uint8 (_blend, rgb_to_grayscale, autocontrast, adjust_hue) so
 * do these; where it rounds (the conv2d of gaussian_blur and sharpness,
 * grid_sample's result) they round half to even, as torch.round.
 *
 * Images are h rows of w pixels, tightly packed, of ch bytes each: 4
 * (R, G, B, X: the pipeline's decoded form; X is never read and the ops
 * may change it) or 1 (gray). Colour ops on a gray image follow torchvision's
 * 1-channel path: saturation, hue and grayscale leave it unchanged.
 *
 * Thread safety: none of these keeps state; an image and a scratch are
 * used by one thread at a time. Memory: nothing is allocated; the ops
 * that need room take an sl_op_scratch sized by sl_op_scratch_bytes. */
#ifndef SLUICE_AUGMENT_OPS_H
#define SLUICE_AUGMENT_OPS_H

#include <stddef.h>
#include <stdint.h>

typedef struct sl_image {
  uint8_t *px;
  int w, h;
  int ch; /* bytes per pixel: 4 (RGBX) or 1 (gray) */
} sl_image;

/* Room for the ops that cannot work in place: a second image, a float
 * plane for separable filters and two padded float rows. */
typedef struct sl_op_scratch {
  uint8_t *img;  /* pixels * 4 bytes */
  float *rows;   /* pixels * 4 floats */
  size_t pixels; /* capacity of both, in pixels */
  float *line;   /* sl_op_line_floats(line_w) floats */
  size_t line_w; /* widest image line holds */
} sl_op_scratch;

/* Floats of line for images up to max_w wide (kernels up to 255). */
size_t sl_op_line_floats(size_t max_w);
/* Bytes of scratch for images of up to `pixels` pixels and max_w wide:
 * 20 a pixel and 32 a column, plus 8 KiB. */
size_t sl_op_scratch_bytes(size_t pixels, size_t max_w);

/* ---- Colour (ops_color.c) ------------------------------------------------ */

/* factor >= 0 for brightness, contrast, saturation and sharpness;
 * hue_factor in [-0.5, 0.5]; bits in 0..8; threshold any value (pixels
 * >= threshold are inverted). */
void sl_op_brightness(sl_image *im, double factor);
void sl_op_contrast(sl_image *im, double factor);
void sl_op_saturation(sl_image *im, double factor);
void sl_op_hue(sl_image *im, double hue_factor);
void sl_op_posterize(sl_image *im, int bits);
void sl_op_solarize(sl_image *im, double threshold);
void sl_op_autocontrast(sl_image *im);
void sl_op_equalize(sl_image *im);
void sl_op_invert(sl_image *im);
/* rgb_to_grayscale with 3 output channels: R = G = B = the luma. */
void sl_op_grayscale(sl_image *im);

/* ---- Filters (ops_filter.c) ---------------------------------------------- */

/* adjust_sharpness: a blend with the 3x3 smoothed image (torchvision's
 * kernel [1 1 1; 1 5 1; 1 1 1] / 13, border pixels unsmoothed). Images of
 * 2 or fewer rows or columns are left as they are. s must hold im. */
void sl_op_sharpness(sl_image *im, double factor, sl_op_scratch *s);
/* gaussian_blur: odd kernel sizes kx, ky >= 1, sigmas > 0, reflect
 * padding (mirrored again for kernels wider than the image, where
 * torchvision refuses). s must hold im. */
void sl_op_gaussian_blur(sl_image *im, int kx, int ky, double sigma_x,
                         double sigma_y, sl_op_scratch *s);

/* ---- Geometry (ops_geometric.c) ------------------------------------------ */

typedef enum sl_interp {
  SL_INTERP_NEAREST = 0,
  SL_INTERP_BILINEAR = 1
} sl_interp;

/* F.affine's parameters on an image of w x h: the matrix above with
 * center (x, y) in pixel coordinates, or the image's center when
 * has_center is 0. */
void sl_affine_params(int w, int h, double angle, double tx, double ty,
                      double scale, double shear_x, double shear_y,
                      int has_center, double center_x, double center_y,
                      double m[6]);
/* Warps im through m (grid_sample, align_corners false, zero padding):
 * fill NULL leaves outside pixels 0 (torchvision's fill=None); otherwise
 * fill[c] per channel, with torchvision's mask blend for bilinear. s must
 * hold im; the result replaces im. */
void sl_op_warp(sl_image *im, const double m[6], sl_interp interp,
                const double *fill, sl_op_scratch *s);

/* ---- Erase --------------------------------------------------------------- */

/* F.erase with a constant: pixels [i, i + h) x [j, j + w) (clipped to the
 * image) set to v[c]. */
void sl_op_erase(sl_image *im, int i, int j, int h, int w, const uint8_t v[3]);

#endif
