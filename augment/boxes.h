/* Detection boxes through a sample's geometry (pipeline.h's sl_aug_geom):
 * the same crop, resize, placement, flip and warps as its pixels.
 *
 * A box is four floats x0 y0 x1 y1 in pixel-edge coordinates: pixel (i, j)
 * covers [i, i + 1) x [j, j + 1), so the whole w x h image is [0, w] x
 * [0, h] (torchvision's XYXY BoundingBoxes). A box goes, in the
 * pipeline's order:
 *   1. crop and resize: x -> place_x + (x - crop.x) * place_w / crop.w
 *      (y alike), then clipped to the placed region (torchvision's F.crop
 *      clamps boxes to the crop; letterbox's are inside already);
 *   2. flip: x0, x1 -> out_w - x1, out_w - x0;
 *   3. each warp: the enclosing axis-aligned box of its four corners
 *      mapped by the inverse of the warp's matrix (the warp's matrix maps
 *      output to input pixels about the image's center, ops.h; its
 *      inverse is where a point of the input lands), clipped to the output
 *      (torchvision v2's affine on BoundingBoxes: the same matrix, the
 *      same enclosing box, clamped);
 *   4. dropped when its width or height in output pixels is under 1
 *      (SanitizeBoundingBoxes' min_size = 1), when its clipped area is
 *      below min_area times the area the same steps give without any
 *      clipping, or, with the geometry's centers rule (iou_crop), when its
 *      center in the full-size image is not strictly inside the crop.
 *
 * Thread safety: pure functions. Memory: none allocated. */
#ifndef SLUICE_AUGMENT_BOXES_H
#define SLUICE_AUGMENT_BOXES_H

#include <stddef.h>
#include <stdint.h>

#include "augment/pipeline.h"

/* Step 2 on b for an out_w wide output. */
void sl_box_flip(double b[4], int out_w);
/* Step 3's mapping (no clipping): b becomes the enclosing box of its
 * corners through the inverse of warp matrix m on a w x h image. */
void sl_box_warp(double b[4], const double m[6], int w, int h);
/* Clips b to [x0, x1] x [y0, y1]. */
void sl_box_clip(double b[4], double x0, double y0, double x1, double y1);

/* Maps n boxes (x0 y0 x1 y1 floats in full-size pixels, one every stride
 * bytes) through g onto the out_w x out_h output, steps 1 to 4. The kept
 * boxes are compacted in input order: the first min(kept, cap) are written
 * to out (4 floats each) and, when src is not NULL, their input indices to
 * src. Returns the number kept (which may exceed cap). */
uint32_t sl_boxes_map(const sl_aug_geom *g, int out_w, int out_h,
                      double min_area, const float *in, size_t stride,
                      uint32_t n, float *out, uint32_t *src, uint32_t cap);

#endif
