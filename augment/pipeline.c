/* The per-sample pipeline (see pipeline.h): probe, crop, DCT scale,
 * region decode, libyuv resize, convert. */
#include "augment/pipeline.h"

#include <stdlib.h>
#include <time.h>

#include <libyuv/scale.h>
#include <libyuv/scale_argb.h>

#include "augment/convert.h"
#include "codecs/codec.h"
#include "common/clock.h"
#include "common/mem.h"

enum { k_max_side = 8192 };

struct sl_pipeline {
  sl_aug_params p;
  int max_side;
  int ch; /* bytes per decoded pixel: 4 (RGBX) or 1 (gray) */
  sl_decoder *dec;
  uint8_t *resized; /* max_side^2 * ch */
  sl_convert_tables tables;
  sl_pipeline_times times;
};

static sl_status check_params(const sl_aug_params *p, sl_err *err) {
  if (p->channels != 1 && p->channels != 3)
    return sl_err_set(err, SL_EINVAL, "augment: channels %d (1 or 3)",
                      p->channels);
  if ((unsigned)p->dtype > SL_DTYPE_FP32 ||
      (unsigned)p->layout > SL_LAYOUT_NHWC ||
      (unsigned)p->filter > SL_FILTER_BILINEAR ||
      (unsigned)p->crop > SL_CROP_NONE)
    return sl_err_set(err, SL_EINVAL, "augment: bad dtype/layout/filter/crop");
  if (!(p->scale[0] > 0 && p->scale[0] <= p->scale[1] && p->scale[1] <= 1) ||
      !(p->ratio[0] > 0 && p->ratio[0] <= p->ratio[1]))
    return sl_err_set(err, SL_EINVAL,
                      "augment: scale (%g, %g) or ratio (%g, %g) out of range",
                      p->scale[0], p->scale[1], p->ratio[0], p->ratio[1]);
  if (!(p->center_ratio > 0 && p->center_ratio <= 1) || !(p->flip >= 0) ||
      p->max_pixels < 1)
    return sl_err_set(err, SL_EINVAL,
                      "augment: bad center_ratio, flip or max_pixels");
  for (int c = 0; c < 3; c++)
    if (!(p->std[c] != 0))
      return sl_err_set(err, SL_EINVAL, "augment: std[%d] is zero", c);
  return SL_OK;
}

sl_status sl_pipeline_create(sl_pipeline **out, const sl_aug_params *p,
                             int max_out_side, sl_err *err) {
  *out = NULL;
  sl_status st = check_params(p, err);
  if (st != SL_OK)
    return st;
  if (max_out_side < 1 || max_out_side > k_max_side)
    return sl_err_set(err, SL_EINVAL, "augment: max_out_side %d (1..%d)",
                      max_out_side, k_max_side);
  sl_pipeline *pl = calloc(1, sizeof *pl);
  if (!pl)
    return sl_err_set(err, SL_ENOMEM, "augment: out of memory");
  pl->p = *p;
  pl->max_side = max_out_side;
  pl->ch = p->channels == 1 ? 1 : 4;
  st = sl_decoder_create(&pl->dec, p->max_pixels, 2 * max_out_side,
                         2 * max_out_side, err);
  if (st != SL_OK) {
    free(pl);
    return st;
  }
  size_t n = (size_t)max_out_side * (size_t)max_out_side * (size_t)pl->ch;
  pl->resized = sl_alloc_touched(n, 64);
  if (!pl->resized) {
    sl_pipeline_destroy(pl);
    return sl_err_set(err, SL_ENOMEM, "augment: out of memory for %zu bytes",
                      n);
  }
  sl_convert_tables_init(&pl->tables, p);
  *out = pl;
  return SL_OK;
}

void sl_pipeline_destroy(sl_pipeline *pl) {
  if (!pl)
    return;
  sl_decoder_destroy(pl->dec);
  sl_free_aligned(pl->resized);
  free(pl);
}

sl_status sl_pipeline_run(sl_pipeline *pl, const uint8_t *bytes, size_t len,
                          int codec, int raw_h, int raw_w, int raw_c,
                          uint64_t seed, uint64_t epoch, uint64_t sample_index,
                          int out_h, int out_w, void *dst, sl_err *err) {
  if (out_h < 1 || out_w < 1 || out_h > pl->max_side || out_w > pl->max_side ||
      !dst)
    return sl_err_set(err, SL_EINVAL,
                      "augment: output %dx%d outside 1..%d (or no dst)", out_w,
                      out_h, pl->max_side);
  uint64_t t0 = sl_now_ns();
  sl_encoded in = {bytes, len, codec, raw_h, raw_w, raw_c};
  sl_image_info info;
  sl_status st = sl_decoder_probe(pl->dec, &in, &info, err);
  if (st != SL_OK)
    return st;
  sl_crop_box box;
  int flip;
  sl_aug_sample_crop(&pl->p, info.width, info.height, out_h, out_w, seed, epoch,
                     sample_index, &box, &flip);
  sl_decode_req req = {box.x, box.y, box.w, box.h, 8, out_w, out_h, pl->ch};
  if (codec == SL_CODEC_JPEG)
    req.scale = sl_aug_dct_scale(box.w, box.h, out_w, out_h);
  sl_decoded dec;
  st = sl_decoder_decode(pl->dec, &in, &req, &dec, err);
  if (st != SL_OK)
    return st;
  uint64_t t1 = sl_now_ns();
  enum FilterMode f =
      pl->p.filter == SL_FILTER_BOX ? kFilterBox : kFilterBilinear;
  if (pl->ch == 4) {
    if (ARGBScale(dec.pixels, (int)dec.stride, dec.w, dec.h, pl->resized,
                  out_w * 4, out_w, out_h, f) != 0)
      return sl_err_set(err, SL_EINVAL,
                        "augment: libyuv cannot scale %dx%d "
                        "to %dx%d",
                        dec.w, dec.h, out_w, out_h);
  } else {
    ScalePlane(dec.pixels, (int)dec.stride, dec.w, dec.h, pl->resized, out_w,
               out_w, out_h, f);
  }
  sl_convert_out(&pl->tables, &pl->p, pl->resized, pl->ch, out_h, out_w, flip,
                 dst);
  uint64_t t2 = sl_now_ns();
  pl->times.decode_ns += t1 - t0;
  if (codec == SL_CODEC_JPEG) {
    pl->times.jpeg_decodes++;
    pl->times.jpeg_windowed += (uint64_t)dec.windowed;
  }
  pl->times.augment_ns += t2 - t1;
  return SL_OK;
}

void sl_pipeline_times_get(const sl_pipeline *pl, sl_pipeline_times *out) {
  *out = pl->times;
}
