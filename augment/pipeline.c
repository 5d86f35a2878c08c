/* The per-sample pipeline (see pipeline.h): probe, crop, DCT scale,
 * region decode, libyuv resize, convert. */
#include "augment/pipeline.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libyuv/scale.h>
#include <libyuv/scale_argb.h>

#include "augment/boxes.h"
#include "augment/convert.h"
#include "augment/resample.h"
#include "augment/ycc.h"
#include "codecs/codec.h"
#include "common/clock.h"
#include "common/mem.h"
#include "formats/core/levels.h"

enum { k_max_side = 8192 };

struct sl_pipeline {
  sl_aug_params p;
  int max_side;
  int ch; /* bytes per decoded pixel: 4 (RGBX) or 1 (gray) */
  sl_decoder *dec;
  uint8_t *resized; /* max_side^2 * ch */
  sl_resampler *rs; /* crops of resolution levels */
  /* JPEG planes (augment.jpeg_planes): a 1-byte resampler and the three
   * resized planes, 3 * max_side^2 bytes; NULL without planes. */
  sl_resampler *rs1;
  uint8_t *planes;
  sl_convert_tables tables;
  sl_op_scratch ops; /* the recipe's u8 ops; empty without them */
  sl_pipeline_times times;
  sl_aug_geom geom; /* the current sample's (large for the stack) */
};

static int use_planes(const sl_pipeline *pl);

static sl_status check_params(const sl_aug_params *p, sl_err *err) {
  if (p->channels != 1 && p->channels != 3)
    return sl_err_set(err, SL_EINVAL, "augment: channels %d (1 or 3)",
                      p->channels);
  if ((unsigned)p->dtype > SL_DTYPE_FP32 ||
      (unsigned)p->layout > SL_LAYOUT_NHWC ||
      (unsigned)p->filter > SL_FILTER_BILINEAR ||
      (unsigned)p->crop > SL_CROP_LETTERBOX)
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
  if (!(p->box_min_area >= 0 && p->box_min_area <= 1) ||
      p->letterbox_fill < 0 || p->letterbox_fill > 255)
    return sl_err_set(err, SL_EINVAL,
                      "augment: box_min_area %g (0..1) or letterbox_fill %d "
                      "(0..255)",
                      p->box_min_area, p->letterbox_fill);
  for (int c = 0; c < 3; c++)
    if (!(p->std[c] != 0))
      return sl_err_set(err, SL_EINVAL, "augment: std[%d] is zero", c);
  return sl_recipe_check(&p->recipe, err);
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
  pl->rs = sl_resampler_create(max_out_side, 2 * max_out_side + 64, pl->ch);
  int want_planes = use_planes(pl);
  if (want_planes) {
    pl->rs1 = sl_resampler_create(max_out_side, 2 * max_out_side + 64, 1);
    pl->planes = sl_alloc_touched(3 * (size_t)max_out_side * max_out_side, 64);
  }
  if (sl_recipe_has_pixel_ops(&p->recipe)) {
    pl->ops.pixels = (size_t)max_out_side * (size_t)max_out_side;
    pl->ops.img = sl_alloc_touched(pl->ops.pixels * 4, 64);
    pl->ops.rows = sl_alloc_touched(pl->ops.pixels * 4 * sizeof(float), 64);
    pl->ops.line_w = (size_t)max_out_side;
    pl->ops.line =
        sl_alloc_touched(sl_op_line_floats(pl->ops.line_w) * sizeof(float), 64);
  }
  if (!pl->resized || !pl->rs || (want_planes && (!pl->rs1 || !pl->planes)) ||
      (pl->ops.pixels && (!pl->ops.img || !pl->ops.rows || !pl->ops.line))) {
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
  sl_free_aligned(pl->ops.img);
  sl_free_aligned(pl->ops.rows);
  sl_free_aligned(pl->ops.line);
  sl_resampler_destroy(pl->rs);
  sl_resampler_destroy(pl->rs1);
  sl_free_aligned(pl->planes);
  free(pl);
}

/* JPEGs may decode to planes: RGB output with the box (area) filter. */
static int use_planes(const sl_pipeline *pl) {
  return pl->p.jpeg_planes && pl->ch == 4 && pl->p.filter == SL_FILTER_BOX;
}

/* Resizes a planes decode (dec->planes) so that the crop [X0, X1) x [Y0,
 * Y1) of the image it was decoded from (full-size pixels; the DCT scale
 * dec->scale/8) fills tw x th, each plane by the area resampler from its
 * own pixels (chroma through its subsampling, the box model of JFIF's
 * centred chroma), then converts to RGBX at the output size. */
static sl_status resize_planes(sl_pipeline *pl, const sl_decoded *dec,
                               double X0, double X1, double Y0, double Y1,
                               int tw, int th, sl_err *err) {
  const sl_planes *p = &dec->planes;
  double k = dec->scale / 8.0;
  size_t n = (size_t)tw * (size_t)th;
  for (int c = 0; c < p->n; c++) {
    double sx = p->sub_x[c], sy = p->sub_y[c];
    if (sl_resample_area(pl->rs1, p->px[c], p->stride[c], p->w[c], p->h[c],
                         X0 * k / sx - p->x0[c], X1 * k / sx - p->x0[c],
                         Y0 * k / sy - p->y0[c], Y1 * k / sy - p->y0[c],
                         pl->planes + (size_t)c * n, tw, th) != 0)
      return sl_err_set(err, SL_EINVAL,
                        "augment: cannot resample plane %d (%dx%d) to %dx%d", c,
                        p->w[c], p->h[c], tw, th);
  }
  if (p->n == 3)
    sl_ycc_to_rgbx(pl->planes, pl->planes + n, pl->planes + 2 * n, n,
                   pl->resized);
  else
    sl_gray_to_rgbx(pl->planes, n, pl->resized);
  return SL_OK;
}

/* The crop [c0, c1) of a level, in level pixels, as a coordinate of the
 * decoded region: scaled pixel j of the level at m/8 covers level pixels
 * [j * 8 / m, (j + 1) * 8 / m); decoded pixel i covers scaled pixels
 * [x0 + i * k, x0 + (i + 1) * k). */
static double to_decoded(double c, int m, int x0, int k) {
  return (c * m / 8.0 - x0) / k;
}

/* Resizes the decoded region to out_w x out_h so that its decoded
 * coordinates [u0, u1) x [v0, v1) fill the output exactly (the area
 * resampler, augment/resample.h); a window it cannot take is resized from
 * the nearest whole-pixel sub-region by libyuv instead. */
static sl_status resize_exact(sl_pipeline *pl, const sl_decoded *dec, double u0,
                              double u1, double v0, double v1, int out_w,
                              int out_h, enum FilterMode f, sl_err *err) {
  if (sl_resample_area(pl->rs, dec->pixels, dec->stride, dec->w, dec->h, u0, u1,
                       v0, v1, pl->resized, out_w, out_h) == 0)
    return SL_OK;
  long x0 = lround(u0), x1 = lround(u1), y0 = lround(v0), y1 = lround(v1);
  x0 = x0 < 0 ? 0 : x0 > dec->w - 1 ? dec->w - 1 : x0;
  y0 = y0 < 0 ? 0 : y0 > dec->h - 1 ? dec->h - 1 : y0;
  x1 = x1 <= x0 ? x0 + 1 : x1 > dec->w ? dec->w : x1;
  y1 = y1 <= y0 ? y0 + 1 : y1 > dec->h ? dec->h : y1;
  const uint8_t *src =
      dec->pixels + (size_t)y0 * dec->stride + (size_t)x0 * (size_t)pl->ch;
  if (pl->ch == 4) {
    if (ARGBScale(src, (int)dec->stride, (int)(x1 - x0), (int)(y1 - y0),
                  pl->resized, out_w * 4, out_w, out_h, f) != 0)
      return sl_err_set(err, SL_EINVAL,
                        "augment: libyuv cannot scale %ldx%ld "
                        "to %dx%d",
                        x1 - x0, y1 - y0, out_w, out_h);
  } else {
    ScalePlane(src, (int)dec->stride, (int)(x1 - x0), (int)(y1 - y0),
               pl->resized, out_w, out_w, out_h, f);
  }
  return SL_OK;
}

/* A level record's sample: the crop of level 0 (box) decoded from the
 * level sl_aug_level_plan picks and resized to out_w x out_h. */
static sl_status run_levels(sl_pipeline *pl, const sl_levels *lv, int view,
                            const sl_crop_box *box, int out_h, int out_w,
                            enum FilterMode f, sl_decoded *dec, int *level,
                            sl_err *err) {
  int lw[SL_LEVELS_MAX], lh[SL_LEVELS_MAX];
  for (int k = 0; k < lv->n; k++)
    lw[k] = lv->level[k].width, lh[k] = lv->level[k].height;
  int W = lw[0], H = lh[0], m;
  sl_aug_level_plan(box, W, H, lw, lh, lv->n, out_w, out_h, level, &m);
  int k = *level;
  if (view >= 0 && k != view) /* the reader chose from other facts: a bug */
    return sl_err_set(err, SL_ESTATE,
                      "jpeg levels: the reader read level %d, the crop "
                      "needs level %d",
                      view, k);
  sl_encoded jp;
  sl_image_info info;
  sl_status st = sl_decoder_level_of(pl->dec, lv, k, &jp, &info, err);
  if (st != SL_OK)
    return st;
  if (k == 0) { /* as a plain JPEG: the same pixels as without levels */
    sl_decode_req req = {box->x, box->y, box->w, box->h,        m,
                         out_w,  out_h,  pl->ch, use_planes(pl)};
    st = sl_decoder_decode(pl->dec, &jp, &req, dec, err);
    if (st != SL_OK)
      return st;
    if (dec->planes.n > 0) {
      st = resize_planes(pl, dec, box->x, box->x + box->w, box->y,
                         box->y + box->h, out_w, out_h, err);
    } else if (pl->ch == 1) {
      ScalePlane(dec->pixels, (int)dec->stride, dec->w, dec->h, pl->resized,
                 out_w, out_w, out_h, f);
    } else if (ARGBScale(dec->pixels, (int)dec->stride, dec->w, dec->h,
                         pl->resized, out_w * 4, out_w, out_h, f) != 0) {
      st = sl_err_set(err, SL_EINVAL, "augment: libyuv cannot scale %dx%d",
                      dec->w, dec->h);
    }
    return st;
  }
  double X0 = (double)box->x * lw[k] / W,
         X1 = (double)(box->x + box->w) * lw[k] / W;
  double Y0 = (double)box->y * lh[k] / H,
         Y1 = (double)(box->y + box->h) * lh[k] / H;
  int rx0 = (int)floor(X0), ry0 = (int)floor(Y0);
  int rx1 = (int)ceil(X1), ry1 = (int)ceil(Y1);
  rx1 = rx1 > lw[k] ? lw[k] : rx1 <= rx0 ? rx0 + 1 : rx1;
  ry1 = ry1 > lh[k] ? lh[k] : ry1 <= ry0 ? ry0 + 1 : ry1;
  sl_decode_req req = {rx0,   ry0,   rx1 - rx0, ry1 - ry0,     m,
                       out_w, out_h, pl->ch,    use_planes(pl)};
  st = sl_decoder_decode(pl->dec, &jp, &req, dec, err);
  if (st != SL_OK)
    return st;
  if (dec->planes.n > 0)
    return resize_planes(pl, dec, X0, X1, Y0, Y1, out_w, out_h, err);
  return resize_exact(
      pl, dec, to_decoded(X0, m, dec->x0, dec->kx),
      to_decoded(X1, m, dec->x0, dec->kx), to_decoded(Y0, m, dec->y0, dec->ky),
      to_decoded(Y1, m, dec->y0, dec->ky), out_w, out_h, f, err);
}

/* Letterbox: moves the tw x th image at the start of pl->resized to
 * (x, y) of an out_w x out_h image and fills the rest with v. Rows move
 * from the last: each lands at or after where it was, past the rows not
 * yet moved. */
static void place(sl_pipeline *pl, int x, int y, int tw, int th, int out_w,
                  int out_h, uint8_t v) {
  size_t ch = (size_t)pl->ch, stride = (size_t)out_w * ch;
  size_t row = (size_t)tw * ch;
  uint8_t *px = pl->resized;
  for (int r = th - 1; r >= 0; r--)
    memmove(px + (size_t)(y + r) * stride + (size_t)x * ch,
            px + (size_t)r * row, row);
  memset(px, v, (size_t)y * stride);
  memset(px + (size_t)(y + th) * stride, v, (size_t)(out_h - y - th) * stride);
  for (int r = y; r < y + th; r++) {
    memset(px + (size_t)r * stride, v, (size_t)x * ch);
    memset(px + (size_t)r * stride + (size_t)(x + tw) * ch, v,
           (size_t)(out_w - x - tw) * ch);
  }
}

sl_status sl_pipeline_run(sl_pipeline *pl, const uint8_t *bytes, size_t len,
                          int codec, int raw_h, int raw_w, int raw_c,
                          uint64_t seed, uint64_t epoch, uint64_t sample_index,
                          int out_h, int out_w, void *dst, sl_err *err) {
  return sl_pipeline_run_boxes(pl, bytes, len, codec, raw_h, raw_w, raw_c, seed,
                               epoch, sample_index, out_h, out_w, dst, NULL,
                               err);
}

int sl_aug_levels_pick(const sl_aug_params *p, const sl_levels *lv,
                       const float *boxes, size_t stride, uint32_t n,
                       uint64_t seed, uint64_t epoch, uint64_t index, int out_h,
                       int out_w) {
  int lw[SL_LEVELS_MAX], lh[SL_LEVELS_MAX], k, m;
  for (int i = 0; i < lv->n; i++)
    lw[i] = lv->level[i].width, lh[i] = lv->level[i].height;
  sl_aug_geom g;
  sl_aug_sample_geom(p, boxes, stride, n, lw[0], lh[0], out_h, out_w, seed,
                     epoch, index, &g);
  sl_aug_level_plan(&g.crop, lw[0], lh[0], lw, lh, lv->n, g.place_w, g.place_h,
                    &k, &m);
  return k;
}

sl_status sl_pipeline_run_boxes(sl_pipeline *pl, const uint8_t *bytes,
                                size_t len, int codec, int raw_h, int raw_w,
                                int raw_c, uint64_t seed, uint64_t epoch,
                                uint64_t sample_index, int out_h, int out_w,
                                void *dst, sl_aug_boxes *bx, sl_err *err) {
  return sl_pipeline_run_view(pl, bytes, len, codec, -1, raw_h, raw_w, raw_c,
                              seed, epoch, sample_index, out_h, out_w, dst, bx,
                              err);
}

sl_status sl_pipeline_run_view(sl_pipeline *pl, const uint8_t *bytes,
                               size_t len, int codec, int view, int raw_h,
                               int raw_w, int raw_c, uint64_t seed,
                               uint64_t epoch, uint64_t sample_index, int out_h,
                               int out_w, void *dst, sl_aug_boxes *bx,
                               sl_err *err) {
  if (out_h < 1 || out_w < 1 || out_h > pl->max_side || out_w > pl->max_side ||
      !dst)
    return sl_err_set(err, SL_EINVAL,
                      "augment: output %dx%d outside 1..%d (or no dst)", out_w,
                      out_h, pl->max_side);
  uint64_t t0 = sl_now_ns();
  sl_encoded in = {bytes, len, codec, raw_h, raw_w, raw_c};
  enum FilterMode f =
      pl->p.filter == SL_FILTER_BOX ? kFilterBox : kFilterBilinear;
  int level = 0, W, H;
  sl_decoded dec;
  sl_status st;
  sl_levels lv;
  if (codec == SL_IMAGE_JPEG_LEVELS) {
    const char *why = sl_levels_parse_view(bytes, len, view, &lv);
    st = why ? sl_err_set(err, SL_EDECODE, "jpeg levels: %s", why) : SL_OK;
    W = lv.n > 0 ? lv.level[0].width : 0, H = lv.n > 0 ? lv.level[0].height : 0;
  } else {
    sl_image_info info;
    st = sl_decoder_probe(pl->dec, &in, &info, err);
    W = info.width, H = info.height;
  }
  if (st != SL_OK)
    return st;
  sl_aug_geom *g = &pl->geom;
  sl_aug_sample_geom(&pl->p, bx ? bx->in : NULL, bx ? bx->stride : 0,
                     bx ? bx->n : 0, W, H, out_h, out_w, seed, epoch,
                     sample_index, g);
  const sl_crop_box box = g->crop;
  int tw = g->place_w, th = g->place_h; /* the crop's size in the output */
  uint64_t t1;
  if (codec == SL_IMAGE_JPEG_LEVELS) {
    st = run_levels(pl, &lv, view, &box, th, tw, f, &dec, &level, err);
    if (st != SL_OK)
      return st;
    t1 = sl_now_ns();
  } else {
    sl_decode_req req = {box.x, box.y, box.w, box.h, 8, tw, th, pl->ch, 0};
    if (codec == SL_IMAGE_JPEG) {
      req.scale = sl_aug_dct_scale(box.w, box.h, tw, th);
      req.planes = use_planes(pl);
    }
    st = sl_decoder_decode(pl->dec, &in, &req, &dec, err);
    if (st != SL_OK)
      return st;
    t1 = sl_now_ns();
    if (dec.planes.n > 0) {
      st = resize_planes(pl, &dec, box.x, box.x + box.w, box.y, box.y + box.h,
                         tw, th, err);
      if (st != SL_OK)
        return st;
    } else if (pl->ch == 4) {
      if (ARGBScale(dec.pixels, (int)dec.stride, dec.w, dec.h, pl->resized,
                    tw * 4, tw, th, f) != 0)
        return sl_err_set(err, SL_EINVAL,
                          "augment: libyuv cannot scale %dx%d "
                          "to %dx%d",
                          dec.w, dec.h, tw, th);
    } else {
      ScalePlane(dec.pixels, (int)dec.stride, dec.w, dec.h, pl->resized, tw, tw,
                 th, f);
    }
  }
  if (tw != out_w || th != out_h)
    place(pl, g->place_x, g->place_y, tw, th, out_w, out_h,
          (uint8_t)pl->p.letterbox_fill);
  const sl_aug_recipe *rc = &pl->p.recipe;
  int flip = g->flip;
  if (pl->ops.pixels) { /* the flip first, as torchvision's recipes */
    sl_image im = {pl->resized, out_w, out_h, pl->ch};
    int late = sl_recipe_flip_commutes(&g->rd); /* same bytes, one pass less */
    sl_recipe_apply(rc, &g->rd, &im, flip && !late, &pl->ops);
    flip = flip && late;
  }
  sl_convert_out(&pl->tables, &pl->p, pl->resized, pl->ch, out_h, out_w, flip,
                 dst);
  if (g->rd.erase.on)
    sl_convert_erase(&pl->p, dst, out_h, out_w, &g->rd.erase,
                     rc->erasing_random, &g->recipe_rng);
  if (bx) {
    bx->kept = sl_boxes_map(g, out_w, out_h, pl->p.box_min_area, bx->in,
                            bx->stride, bx->n, bx->out, bx->src, bx->cap);
    bx->n_out = bx->kept < bx->cap ? bx->kept : bx->cap;
  }
  uint64_t t2 = sl_now_ns();
  pl->times.decode_ns += t1 - t0;
  if (codec == SL_IMAGE_JPEG || codec == SL_IMAGE_JPEG_LEVELS) {
    pl->times.jpeg_decodes++;
    pl->times.jpeg_windowed += (uint64_t)dec.windowed;
    pl->times.jpeg_planes += dec.planes.n > 0;
  }
  if (codec == SL_IMAGE_JPEG_LEVELS)
    pl->times.level_decodes[level]++;
  pl->times.augment_ns += t2 - t1;
  return SL_OK;
}

void sl_pipeline_times_get(const sl_pipeline *pl, sl_pipeline_times *out) {
  *out = pl->times;
}
