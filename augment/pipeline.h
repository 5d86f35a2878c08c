/* The per-sample pipeline: encoded bytes in, one augmented sample out.
 *
 *   probe → choose crop (random-resized | center | none) → choose the DCT
 *   scale → decode the crop region at that scale → resize to out_h×out_w
 *   (libyuv) → flip → the recipe's u8 ops (augment/recipe.h) → convert
 *   (u8/fp16/bf16/fp32, mean/std, NCHW/NHWC) into the caller's destination
 *   (a batch slot) → the recipe's erasing.
 *
 * Every random draw comes from sl_rng_for(seed, epoch, sample_index), so a
 * sample's output depends only on (bytes, params, seed, epoch, index,
 * out_h, out_w, and its boxes for iou_crop), never on the thread or the
 * order. A sample's detection boxes (augment/boxes.h) move with its
 * pixels: sl_aug_sample_geom is the one record of where every pixel went,
 * and both the pixels and the boxes follow it.
 *
 * Thread safety: an sl_pipeline is one worker's scratch; use each from one
 * thread at a time. sl_aug_params is read-only and shared.
 *
 * Memory: sl_pipeline_create allocates all of sluice's scratch once, sized
 * from max_out_side S (the schedule's largest resolution): the decoder's
 * (codecs/codec.h: (2S + 32) * 2S * 4 bytes of region, 256 KiB of row,
 * 1.5 MiB of PNG arena, 1 MiB of JPEG window, 48 * (4S + 64) bytes of
 * plane strip) + 4*S^2 bytes for the resized crop + 6 KiB of conversion
 * tables + the area resampler of resolution levels ((2S + 80) * 8 bytes of
 * row, 32 * S bytes of weights): ~3.9 MiB at S = 224, ~8 MiB at S = 512;
 * with augment.jpeg_planes, 3 * S^2 bytes of resized planes and a 1-byte
 * resampler ((2S + 80) * 16 + 4S + 16 bytes, 32 * S of weights: 0.2 MiB
 * at 224); with the recipe's u8 ops, their
 * scratch (sl_op_scratch_bytes: 20 * S^2 + 32 * S bytes + 8 KiB: 1 MiB at
 * 224, 5 MiB at 512). sluice itself
 * allocates nothing per sample; the libraries do a little: libjpeg's
 * per-image pools (tens of KiB; for a progressive JPEG the whole coefficient
 * image, ~2 bytes per pixel and component, bounded through max_pixels) and
 * libyuv's row buffers, all freed before the call returns. */
#ifndef SLUICE_AUGMENT_PIPELINE_H
#define SLUICE_AUGMENT_PIPELINE_H

#include <stddef.h>
#include <stdint.h>

#include "augment/recipe.h"
#include "common/error.h"

/* The training crop (augment.crop). */
typedef enum sl_crop {
  SL_CROP_RANDOM_RESIZED,
  SL_CROP_CENTER,
  SL_CROP_NONE,
  SL_CROP_IOU,      /* torchvision v2's RandomIoUCrop (needs the boxes) */
  SL_CROP_LETTERBOX /* aspect kept, padded to the output (YOLO) */
} sl_crop;
/* The resize filter (augment.filter): libyuv's box or bilinear. */
typedef enum sl_filter { SL_FILTER_BOX, SL_FILTER_BILINEAR } sl_filter;

typedef struct sl_aug_params {
  sl_crop crop;
  double scale[2];     /* random_resized: area fraction range */
  double ratio[2];     /* random_resized: aspect range (w/h) */
  double flip;         /* probability */
  double center_ratio; /* center: crop = res / center_ratio of shorter side */
  int channels;        /* 3 (RGB) or 1 (gray); output channels */
  float mean[3];
  float std[3];
  sl_dtype dtype; /* include/sluice.h */
  sl_layout layout;
  sl_filter filter;
  uint64_t max_pixels;  /* decompression-bomb guard */
  sl_aug_recipe recipe; /* the recipe's ops after the resize (recipe.h) */
  double box_min_area;  /* boxes: drop below this fraction of the area
                           they would have unclipped (0..1) */
  int iou_all;          /* iou_crop: every box whose center is in the crop
                           meets the IoU drawn (mmdet's MinIoURandomCrop);
                           0: at least one does (torchvision) */
  int letterbox_fill;   /* letterbox: the pad's value, 0..255 */
  int jpeg_planes;      /* augment.jpeg_planes: JPEGs decode to planes
                           (libjpeg's raw YCbCr), each resized to the
                           output, colour converted there (RGB output, box
                           filter; others as RGBX) */
} sl_aug_params;

/* A crop in full-size image pixels. */
typedef struct sl_crop_box {
  int x, y, w, h;
} sl_crop_box;

/* The crop and flip of sample (seed, epoch, index) for an img_w x img_h
 * image and an out_h x out_w output. The stream's first draw decides the
 * flip (u < flip), the following ones the crop:
 *   random_resized: torchvision's RandomResizedCrop.get_params: up to 10
 *     tries of area = img area * U(scale), aspect = exp(U(log ratio)),
 *     w = round(sqrt(area * aspect)), h = round(sqrt(area / aspect))
 *     (round half to even, as Python), accepted when 0 < w <= img_w and
 *     0 < h <= img_h, then top = randint(0, img_h - h), left likewise;
 *     else the center crop of the whole image clamped to the ratio range.
 *   center: the image's shorter side resized to floor(min(out) /
 *     center_ratio) (256 for 224 at 0.875), then the central out_h x out_w;
 *     expressed here as the matching box of the full-size image.
 *   none: the whole image. */
void sl_aug_sample_crop(const sl_aug_params *p, int img_w, int img_h, int out_h,
                        int out_w, uint64_t seed, uint64_t epoch,
                        uint64_t index, sl_crop_box *box, int *flip);

/* RandomIoUCrop's settings, torchvision v2's defaults (SSD's). */
#define SL_IOU_MIN_SCALE 0.3
#define SL_IOU_MAX_SCALE 1.0
#define SL_IOU_MIN_ASPECT 0.5
#define SL_IOU_MAX_ASPECT 2.0
#define SL_IOU_TRIALS 40
/* Options drawn before giving up and keeping the whole image (torchvision
 * draws until one succeeds; the 1.0 option ends it with probability 1/7
 * a draw, so this bound is met with probability (6/7)^64 < 1e-4). */
#define SL_IOU_MAX_OPTION_DRAWS 64

/* Where one sample's pixels went: everything that moves a pixel, as the
 * pipeline uses it, for the boxes (augment/boxes.h) and for tests.
 *   crop      the region of the full-size image (level 0) decoded;
 *   place     where it lands in the out_w x out_h output: [x, x + w) x
 *             [y, y + h) (the whole output but for letterbox, whose pad
 *             is the rest);
 *   flip      mirrored about the output's vertical center line, after
 *             placing (the recipe's first op);
 *   warp      the recipe's geometric ops in order, each sl_op_warp's
 *             output-to-input matrix (ops.h) on the out_w x out_h image;
 *   min_iou   iou_crop: the option drawn (>= 1: the whole image kept, as
 *             torchvision's "leave as is"); -1 for the other crops;
 *   centers   1: boxes whose center is not strictly inside the crop are
 *             dropped (iou_crop's rule, as torchvision's
 *             is_within_crop_area);
 *   rd        everything the recipe drew (recipe.h), and its stream after
 *             the draws (recipe_rng). */
typedef struct sl_aug_geom {
  sl_crop_box crop;
  int place_x, place_y, place_w, place_h;
  int flip;
  int n_warps;
  double warp[SL_POLICY_MAX_OPS][6];
  double min_iou;
  int centers;
  sl_recipe_draw rd;
  sl_rng recipe_rng; /* the recipe's stream after rd (erasing's values) */
} sl_aug_geom;

/* The geometry of sample (seed, epoch, index) for an img_w x img_h image
 * and an out_h x out_w output, as sl_pipeline_run_boxes computes it (the
 * same function): the crop and flip of sl_aug_sample_crop (iou_crop also
 * reads the sample's n boxes, x0 y0 x1 y1 floats in full-size pixels, one
 * every stride bytes; NULL when n is 0), the placement, and the recipe's
 * draw at out_w x out_h with its warp matrices. Crops:
 *   iou_crop: torchvision v2's RandomIoUCrop._get_params with its
 *     defaults: an option drawn uniformly from {0, .1, .3, .5, .7, .9, 1}
 *     (1: no crop); then up to 40 trials of w = int(W * U(.3, 1)), h =
 *     int(H * U(.3, 1)) (two draws), kept when 0.5 <= w / h <= 2, left =
 *     int((W - w) * U), top = int((H - h) * U) (two draws), kept when some
 *     box has its center strictly inside and the largest IoU of those
 *     boxes with the crop is at least the option (with iou_all, the
 *     smallest); after 40 failed trials another option. Differences: a
 *     sample without boxes, or SL_IOU_MAX_OPTION_DRAWS options without a
 *     crop, keeps the whole image (torchvision raises or loops); w or h 0
 *     is a failed trial (torchvision divides by zero); draws are sluice's
 *     stream, not torch's.
 *   letterbox: the whole image resized by r = min(out_w / W, out_h / H) to
 *     round(W r) x round(H r) (at least 1) and placed at left = round(dw -
 *     0.1), top = round(dh - 0.1), dw and dh half the spare width and
 *     height (ultralytics' LetterBox, round half to even as Python's);
 *     the pad is letterbox_fill. */
void sl_aug_sample_geom(const sl_aug_params *p, const float *boxes,
                        size_t stride, uint32_t n, int img_w, int img_h,
                        int out_h, int out_w, uint64_t seed, uint64_t epoch,
                        uint64_t index, sl_aug_geom *g);

/* The JPEG DCT scale M (of M/8): among 1, 2, 3, 4, 5, 6, 8 at which the
 * crop still covers out_w x out_h in both dimensions (never an upscale in
 * the IDCT), the one of least estimated decode+resize cost (crop.c's cost
 * model, constants measured by `bench_decode --scale-costs`); 8 when even
 * 8/8 does not cover. Scales 3/8, 5/8 and 6/8 run plain-C IDCTs in
 * libjpeg-turbo, so e.g. 4/8 often beats 3/8 and 8/8 beats 6/8; once the
 * decode reads only the crop's restart segments (codecs/jpeg_window.h) a
 * smaller region still often pays for them. 7/8 is not used (see
 * crop.c). A pure function of its arguments. */
int sl_aug_dct_scale(int crop_w, int crop_h, int out_w, int out_h);

/* For an image stored at n resolution levels (lw[k] x lh[k], largest
 * first, lw[0] x lh[0] = img_w x img_h): the smallest level at which the
 * crop, mapped by lw[k] / img_w and lh[k] / img_h, still covers out_w x
 * out_h in both dimensions (level 0 when none does), then the DCT scale
 * sl_aug_dct_scale would choose for the mapped (fractional) crop there.
 * The cover tests use exact integer arithmetic, the cost model doubles: a
 * pure function of its arguments. At level 0 the scale is
 * sl_aug_dct_scale's. */
void sl_aug_level_plan(const sl_crop_box *b, int img_w, int img_h,
                       const int *lw, const int *lh, int n, int out_w,
                       int out_h, int *level, int *scale);

/* Bytes one sample occupies at out_h × out_w in params' dtype. */
size_t sl_aug_sample_bytes(const sl_aug_params *p, int out_h, int out_w);

typedef struct sl_pipeline sl_pipeline;

/* A pipeline for outputs up to max_out_side (1..8192) on each side.
 * Errors: SL_EINVAL (bad params: channels not 1 or 3, a zero std, ...),
 * SL_ENOMEM. */
sl_status sl_pipeline_create(sl_pipeline **out, const sl_aug_params *p,
                             int max_out_side, sl_err *err);
void sl_pipeline_destroy(sl_pipeline *pl);

/* Runs the whole pipeline on one sample. A level record
 * (SL_IMAGE_JPEG_LEVELS) takes its crop in level 0's coordinates, then
 * decodes it from the level sl_aug_level_plan picks; below level 0 an
 * area resampler (augment/resample.h, in place of libyuv) places the
 * crop's exact fractional edges, so the output shows the same region of
 * the scene from any level. and writes sl_aug_sample_bytes()
 * bytes to dst. codec is an sl_image_codec (sluice.h); for SL_IMAGE_RAW,
 * raw_h/raw_w/raw_c give the array's shape (ignored otherwise). Errors:
 * SL_EDECODE (corrupt data: the codec's message), SL_ETOOBIG (over
 * max_pixels), SL_EUNSUPPORTED, SL_EINVAL (out_h/out_w outside
 * 1..max_out_side); the pipeline stays usable after any error. On error
 * dst may have been partly written. */
sl_status sl_pipeline_run(sl_pipeline *pl, const uint8_t *bytes, size_t len,
                          int codec, int raw_h, int raw_w, int raw_c,
                          uint64_t seed, uint64_t epoch, uint64_t sample_index,
                          int out_h, int out_w, void *dst, sl_err *err);

/* A sample's detection boxes through sl_pipeline_run_boxes: the n input
 * boxes (x0 y0 x1 y1 floats in full-size pixels, one every stride bytes:
 * sizeof(sl_box) for the dataset's) and where the kept ones go: out
 * (cap x 4 floats, output pixels) and src (cap: each kept box's input
 * index, for its label; may be NULL). The pipeline sets kept (boxes that
 * survived the transforms) and n_out = min(kept, cap): the first n_out
 * kept boxes, in input order, are written. */
typedef struct sl_aug_boxes {
  const float *in;
  size_t stride;
  uint32_t n;
  float *out;
  uint32_t *src;
  uint32_t cap;
  uint32_t kept, n_out;
} sl_aug_boxes;

/* sl_pipeline_run, with the sample's boxes moved as its pixels
 * (augment/boxes.h's sl_boxes_map through sl_aug_sample_geom's record);
 * bx may be NULL (then exactly sl_pipeline_run). On error bx's outputs
 * are unspecified. */
sl_status sl_pipeline_run_boxes(sl_pipeline *pl, const uint8_t *bytes,
                                size_t len, int codec, int raw_h, int raw_w,
                                int raw_c, uint64_t seed, uint64_t epoch,
                                uint64_t sample_index, int out_h, int out_w,
                                void *dst, sl_aug_boxes *bx, sl_err *err);

/* sl_pipeline_run_boxes on a level record (SL_IMAGE_JPEG_LEVELS) of which
 * only the header, the directory and level `view` were read, each at its
 * own offset of bytes[0..len) (formats/core/levels.h's sl_levels_parse_view;
 * the reader chose the level with sl_aug_levels_pick). view < 0, or
 * another codec: the whole payload, as sl_pipeline_run_boxes. The crop
 * then picks level `view` (the same function of the same facts); if it
 * did not, SL_ESTATE, never a decode of bytes that were not read. */
sl_status sl_pipeline_run_view(sl_pipeline *pl, const uint8_t *bytes,
                               size_t len, int codec, int view, int raw_h,
                               int raw_w, int raw_c, uint64_t seed,
                               uint64_t epoch, uint64_t sample_index, int out_h,
                               int out_w, void *dst, sl_aug_boxes *bx,
                               sl_err *err);

/* The level sl_pipeline_run_boxes decodes a level record's sample from,
 * from its parsed directory alone (lv: sl_levels_parse_dir) and the
 * sample's boxes as sl_aug_sample_geom takes them: the crop of the
 * sample's stream (seed, epoch, index), placed at out_h x out_w, through
 * sl_aug_level_plan. A pure function: a reader calls it before the read
 * to fetch only that level's bytes. */
struct sl_levels;
int sl_aug_levels_pick(const sl_aug_params *p, const struct sl_levels *lv,
                       const float *boxes, size_t stride, uint32_t n,
                       uint64_t seed, uint64_t epoch, uint64_t index, int out_h,
                       int out_w);

/* Per-stage nanoseconds accumulated by this pipeline (for loader stats). */
typedef struct sl_pipeline_times {
  uint64_t decode_ns;
  uint64_t augment_ns;
  uint64_t jpeg_decodes;  /* JPEG samples decoded */
  uint64_t jpeg_windowed; /* of which only the crop's restart segments */
  uint64_t jpeg_planes;   /* of which decoded to planes (jpeg_planes) */
  uint64_t
      level_decodes[SL_LEVELS_MAX_PUBLIC]; /* level-record samples, by level */
} sl_pipeline_times;
void sl_pipeline_times_get(const sl_pipeline *pl, sl_pipeline_times *out);

#endif
