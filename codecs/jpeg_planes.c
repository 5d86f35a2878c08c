/* JPEG to planes: libjpeg's raw output (raw_data_out, jpeg_read_raw_data)
 * at the DCT scale, before chroma upsampling and colour conversion, so the
 * caller can resize each plane to the output size and convert colour
 * there (issue 24: at 128 px the output has 3-5x fewer pixels than the
 * decoded region).
 *
 * Raw output has no jpeg_crop_scanline and no jpeg_skip_scanlines (libjpeg
 * refuses both outside its scanline state), so every iMCU row from the top
 * of the stream is decoded at its full width. That is cheap inside a
 * restart-segment window (codecs/jpeg_window.h), which already holds only
 * the region's MCUs, and for crops that cover most of the image; anything
 * else decodes to RGBX as before (sl_jpeg_planes_plan's cost test). */
#include <string.h>

#include "codecs/codec_impl.h"

/* Largest raw decode, in luma pixels, per pixel of the region, for which
 * planes are used: above it the column crop and row skip of the RGBX path
 * save more than the planes path's smaller resize and conversion. */
static const double k_planes_max_waste = 1.5;

/* Scaled pixels per plane pixel along one axis: luma's samples per iMCU
 * over the component's, when that is 1 or 2; else 0. */
static int sub_factor(int max_samp, int min_size, int samp, int size) {
  int a = max_samp * min_size, b = samp * size;
  if (b <= 0 || a % b != 0)
    return 0;
  int f = a / b;
  return f == 1 || f == 2 ? f : 0;
}

int sl_jpeg_planes_plan(sl_decoder *d, const sl_region *g, int m, int windowed,
                        sl_planes_plan *pp) {
  struct jpeg_decompress_struct *j = &d->jd;
  int nc = j->num_components;
  if (g->kx != 1 || g->ky != 1)
    return 0;
  if (!((nc == 3 && j->jpeg_color_space == JCS_YCbCr) ||
        (nc == 1 && j->jpeg_color_space == JCS_GRAYSCALE)))
    return 0;
  j->raw_data_out = TRUE;
  j->scale_num = (unsigned)m;
  j->scale_denom = 8;
  jpeg_calc_output_dimensions(j);
  memset(pp, 0, sizeof *pp);
  pp->n = nc;
  pp->lines = j->max_v_samp_factor * j->min_DCT_scaled_size;
  int ok = pp->lines <= SL_STRIP_ROWS;
  for (int c = 0; c < nc && ok; c++) {
    const jpeg_component_info *cp = &j->comp_info[c];
    pp->rows[c] = cp->v_samp_factor * cp->DCT_scaled_size;
    pp->width[c] = (int)cp->width_in_blocks * cp->DCT_scaled_size;
    pp->sub_x[c] = sub_factor(j->max_h_samp_factor, j->min_DCT_scaled_size,
                              cp->h_samp_factor, cp->DCT_scaled_size);
    pp->sub_y[c] = sub_factor(j->max_v_samp_factor, j->min_DCT_scaled_size,
                              cp->v_samp_factor, cp->DCT_scaled_size);
    ok = pp->sub_x[c] && pp->sub_y[c] && pp->rows[c] <= SL_STRIP_ROWS &&
         pp->width[c] <= d->strip_w &&
         (c > 0 || (pp->sub_x[0] == 1 && pp->sub_y[0] == 1));
    if (!ok)
      break;
    /* The region in plane pixels: every plane pixel that touches it. */
    int sx = pp->sub_x[c], sy = pp->sub_y[c];
    pp->cx0[c] = g->x0 / sx;
    pp->cy0[c] = g->y0 / sy;
    pp->cx1[c] = (g->x0 + g->rw + sx - 1) / sx;
    pp->cy1[c] = (g->y0 + g->rh + sy - 1) / sy;
    if (pp->cx1[c] > (int)cp->downsampled_width)
      pp->cx1[c] = (int)cp->downsampled_width;
    if (pp->cy1[c] > (int)cp->downsampled_height)
      pp->cy1[c] = (int)cp->downsampled_height;
    ok = pp->cx0[c] < pp->cx1[c] && pp->cy0[c] < pp->cy1[c];
  }
  if (ok) { /* the planes' bytes, as sl_jpeg_planes_body lays them out */
    size_t used = 0;
    for (int c = 0; c < nc; c++)
      used += ((size_t)(pp->cx1[c] - pp->cx0[c]) + 63) / 64 * 64 *
              (size_t)(pp->cy1[c] - pp->cy0[c]);
    ok = used <= d->region_cap;
  }
  if (ok) {
    /* The raw decode: whole iMCU rows down to the region's last. */
    int imcu = (g->y0 + g->rh + pp->lines - 1) / pp->lines;
    double raw = (double)j->output_width * imcu * pp->lines;
    double region = (double)g->rw * g->rh;
    ok = raw <= k_planes_max_waste * region || (windowed && raw <= 4 * region);
  }
  if (!ok)
    j->raw_data_out = FALSE;
  return ok;
}

sl_status sl_jpeg_planes_body(sl_decoder *d, const sl_region *g,
                              const sl_planes_plan *pp, int m, sl_decoded *out,
                              sl_err *err) {
  struct jpeg_decompress_struct *j = &d->jd;
  jpeg_start_decompress(j);
  JSAMPROW rows[3][SL_STRIP_ROWS];
  JSAMPARRAY bufs[3];
  uint8_t *dst[3];
  size_t stride[3];
  size_t used = 0, off[3];
  for (int c = 0; c < pp->n; c++) {
    for (int r = 0; r < pp->rows[c]; r++)
      rows[c][r] = d->strip +
                   ((size_t)c * SL_STRIP_ROWS + (size_t)r) * (size_t)d->strip_w;
    bufs[c] = rows[c];
    /* Rows 64-byte aligned, in the region buffer ((cap_w + 32) * cap_h * 4
     * bytes; sl_jpeg_planes_plan declined planes that would not fit). */
    stride[c] = ((size_t)(pp->cx1[c] - pp->cx0[c]) + 63) / 64 * 64;
    off[c] = used;
    used += stride[c] * (size_t)(pp->cy1[c] - pp->cy0[c]);
  }
  if (used > d->region_cap)
    return sl_err_set(err, SL_ETOOBIG, "jpeg: planes of %dx%d exceed scratch",
                      g->rw, g->rh);
  for (int c = 0; c < pp->n; c++)
    dst[c] = d->region + off[c];
  for (int k = 0;; k++) {
    int more = 0;
    for (int c = 0; c < pp->n; c++)
      more |= k * pp->rows[c] < pp->cy1[c];
    if (!more)
      break;
    if (jpeg_read_raw_data(j, bufs, (JDIMENSION)pp->lines) == 0)
      return sl_err_set(err, SL_EDECODE, "jpeg: no raw rows after iMCU row %d",
                        k);
    for (int c = 0; c < pp->n; c++)
      for (int r = 0; r < pp->rows[c]; r++) {
        int y = k * pp->rows[c] + r;
        if (y >= pp->cy0[c] && y < pp->cy1[c])
          memcpy(dst[c] + (size_t)(y - pp->cy0[c]) * stride[c],
                 rows[c][r] + pp->cx0[c], (size_t)(pp->cx1[c] - pp->cx0[c]));
      }
  }
  sl_planes *p = &out->planes;
  p->n = pp->n;
  for (int c = 0; c < pp->n; c++) {
    p->px[c] = dst[c];
    p->stride[c] = stride[c];
    p->w[c] = pp->cx1[c] - pp->cx0[c];
    p->h[c] = pp->cy1[c] - pp->cy0[c];
    p->x0[c] = pp->cx0[c];
    p->y0[c] = pp->cy0[c];
    p->sub_x[c] = pp->sub_x[c];
    p->sub_y[c] = pp->sub_y[c];
  }
  out->pixels = dst[0];
  out->stride = stride[0];
  out->w = p->w[0];
  out->h = p->h[0];
  out->scale = m;
  out->kx = out->ky = 1;
  return SL_OK;
}
