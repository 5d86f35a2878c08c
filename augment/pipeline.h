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
 * out_h, out_w), never on the thread or the order.
 *
 * Thread safety: an sl_pipeline is one worker's scratch; use each from one
 * thread at a time. sl_aug_params is read-only and shared.
 *
 * Memory: sl_pipeline_create allocates all of sluice's scratch once, sized
 * from max_out_side S (the schedule's largest resolution): the decoder's
 * (codecs/codec.h: (2S + 32) * 2S * 4 bytes of region, 256 KiB of row,
 * 1.5 MiB of PNG arena, 1 MiB of JPEG window) + 4*S^2 bytes for the
 * resized crop + 6 KiB of conversion tables + the area resampler of
 * resolution levels ((2S + 80) * 8 bytes of row, 32 * S bytes of weights):
 * ~3.9 MiB at S = 224, ~8 MiB at S = 512; with the recipe's u8 ops, their
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
  SL_CROP_NONE
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

/* Per-stage nanoseconds accumulated by this pipeline (for loader stats). */
typedef struct sl_pipeline_times {
  uint64_t decode_ns;
  uint64_t augment_ns;
  uint64_t jpeg_decodes;  /* JPEG samples decoded */
  uint64_t jpeg_windowed; /* of which only the crop's restart segments */
  uint64_t
      level_decodes[SL_LEVELS_MAX_PUBLIC]; /* level-record samples, by level */
} sl_pipeline_times;
void sl_pipeline_times_get(const sl_pipeline *pl, sl_pipeline_times *out);

#endif
