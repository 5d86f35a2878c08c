/* JPEG through libjpeg-turbo's libjpeg API: header probe, and a region
 * decode at a DCT scale that touches only the rows and iMCU columns the
 * region needs.
 *
 * libjpeg reports errors by calling error_exit, which by default ends the
 * process:
 * ours longjmps back to the entry point, which aborts the decompressor
 * (jpeg_abort_decompress keeps the object usable) and returns SL_EDECODE
 * with libjpeg's message. Warnings (corrupt data: bad Huffman codes,
 * premature end, extraneous bytes) are errors too. */
#include <string.h>

#include "codecs/codec_impl.h"
#include "codecs/jpeg_strict.h"

static void jerr_exit(j_common_ptr c) {
  sl_jpeg_err *e = (sl_jpeg_err *)c->err;
  c->err->format_message(c, e->msg);
  longjmp(e->jb, 1);
}

static sl_status fail(sl_decoder *d, sl_err *err) {
  jpeg_abort_decompress(&d->jd);
  d->pending = NULL;
  return sl_err_set(err, SL_EDECODE, "jpeg: %s", d->je.msg);
}

static sl_status ensure_jd(sl_decoder *d, sl_err *err) {
  if (d->jd_live)
    return SL_OK;
  memset(&d->jd, 0, sizeof d->jd);
  d->jd.err = jpeg_std_error(&d->je.pub);
  d->je.pub.error_exit = jerr_exit;
  d->je.pub.emit_message = sl_jpeg_emit_strict;
  d->je.pub.output_message = sl_jpeg_output_silent;
  if (setjmp(d->je.jb)) {
    jpeg_destroy_decompress(&d->jd);
    return sl_err_set(err, SL_ENOMEM, "jpeg: %s", d->je.msg);
  }
  jpeg_create_decompress(&d->jd);
  d->jd_live = 1;
  return SL_OK;
}

static sl_subsamp subsampling(const struct jpeg_decompress_struct *j) {
  if (j->num_components == 1)
    return SL_SUB_GRAY;
  for (int i = 1; i < j->num_components; i++)
    if (j->comp_info[i].h_samp_factor != 1 ||
        j->comp_info[i].v_samp_factor != 1)
      return SL_SUB_OTHER;
  if (j->num_components == 4 && (j->comp_info[3].h_samp_factor != 1 ||
                                 j->comp_info[3].v_samp_factor != 1))
    return SL_SUB_OTHER;
  int h = j->comp_info[0].h_samp_factor, v = j->comp_info[0].v_samp_factor;
  if (h == 1 && v == 1)
    return SL_SUB_444;
  if (h == 2 && v == 1)
    return SL_SUB_422;
  if (h == 2 && v == 2)
    return SL_SUB_420;
  if (h == 1 && v == 2)
    return SL_SUB_440;
  if (h == 4 && v == 1)
    return SL_SUB_411;
  return SL_SUB_OTHER;
}

/* Parses the header into d->jd; called with the longjmp target set. */
static sl_status read_header(sl_decoder *d, const sl_encoded *in,
                             sl_image_info *info, sl_err *err) {
  struct jpeg_decompress_struct *j = &d->jd;
  jpeg_mem_src(j, in->bytes, (unsigned long)in->len);
  jpeg_read_header(j, TRUE);
  info->width = (int)j->image_width;
  info->height = (int)j->image_height;
  info->components = j->num_components;
  info->progressive = j->progressive_mode ? 1 : 0;
  info->subsamp = subsampling(j);
  switch (j->jpeg_color_space) {
  case JCS_GRAYSCALE:
    info->color = SL_COLOR_GRAY;
    break;
  case JCS_CMYK:
    info->color = SL_COLOR_CMYK;
    break;
  case JCS_YCCK:
    info->color = SL_COLOR_YCCK;
    break;
  default:
    info->color = SL_COLOR_RGB;
    break;
  }
  info->inverted = info->components == 4 && j->saw_Adobe_marker;
  uint64_t px = (uint64_t)info->width * (uint64_t)info->height;
  if (px > d->max_pixels || info->width > SL_CODEC_MAX_SIDE ||
      info->height > SL_CODEC_MAX_SIDE)
    return sl_err_set(
        err, SL_ETOOBIG, "jpeg: %dx%d image exceeds decode.max_pixels = %llu",
        info->width, info->height, (unsigned long long)d->max_pixels);
  return SL_OK;
}

static sl_status probe(sl_decoder *d, const sl_encoded *in, sl_image_info *info,
                       sl_err *err) {
  /* A fresh decompressor for every image: libjpeg keeps the tables one
   * image defined for the next (abbreviated streams; libjpeg-turbo fills
   * in the standard Huffman tables only where none is set), so a sample
   * missing its DQT or DHT would borrow those of whichever sample this
   * worker decoded before, and decode differently with the number of
   * workers instead of failing. It costs ~1,700 instructions an image,
   * 0.04-0.08% of a decode+augment (callgrind, BENCHMARKS.md "Instruction
   * counts"); jpeg_make_d_derived_tbl runs at every jpeg_start_decompress
   * whether or not the object is reused. */
  d->pending = NULL;
  if (d->jd_live) {
    jpeg_destroy_decompress(&d->jd);
    d->jd_live = 0;
  }
  sl_status st = ensure_jd(d, err);
  if (st != SL_OK)
    return st;
  if (setjmp(d->je.jb))
    return fail(d, err);
  st = read_header(d, in, info, err);
  if (st != SL_OK) {
    jpeg_abort_decompress(&d->jd);
    return st;
  }
  d->pending = in->bytes;
  d->pending_len = in->len;
  d->pending_info = *info;
  d->pending_windowable =
      !info->progressive &&
      sl_jpeg_grid_read(in->bytes, in->len, &d->pending_grid);
  return SL_OK;
}

/* The decode proper, of region g at m/8 of the image whose header d->jd
 * holds; errors inside libjpeg longjmp to decode(). */
static sl_status decode_body(sl_decoder *d, const sl_image_info *info,
                             const sl_region *g, int m, int ch, sl_decoded *out,
                             sl_err *err) {
  struct jpeg_decompress_struct *j = &d->jd;
  int x0 = g->x0, y0 = g->y0, rw = g->rw, rh = g->rh, kx = g->kx, ky = g->ky;
  int convert = info->color == SL_COLOR_CMYK || info->color == SL_COLOR_YCCK;
  sl_pixfmt fmt = info->inverted ? SL_PIX_CMYK_INV : SL_PIX_CMYK;
  if (convert)
    j->out_color_space = JCS_CMYK;
  else if (j->jpeg_color_space == JCS_GRAYSCALE ||
           j->jpeg_color_space == JCS_YCbCr || j->jpeg_color_space == JCS_RGB)
    j->out_color_space = ch == 4 ? JCS_EXT_RGBA : JCS_GRAYSCALE;
  else
    return sl_err_set(err, SL_EUNSUPPORTED,
                      "jpeg: %d-component colour space %d is not supported",
                      info->components, (int)j->jpeg_color_space);
  j->scale_num = (unsigned)m;
  j->scale_denom = 8;
  jpeg_start_decompress(j);
  JDIMENSION xoff = (JDIMENSION)x0, cw = (JDIMENSION)rw;
  if (cw < j->output_width)
    jpeg_crop_scanline(j, &xoff, &cw);
  int dx = x0 - (int)xoff, bpp = j->output_components;
  if (dx < 0 || dx >= SL_CROP_PAD || (int)cw < rw + dx ||
      (int)cw > SL_ROW_PIXELS)
    return sl_err_set(err, SL_EDECODE, "jpeg: unexpected crop %u+%u for %d+%d",
                      (unsigned)cw, (unsigned)xoff, rw, x0);
  if (y0 > 0 && jpeg_skip_scanlines(j, (JDIMENSION)y0) != (JDIMENSION)y0)
    return sl_err_set(err, SL_EDECODE, "jpeg: cannot skip to row %d", y0);
  out->scale = m;
  out->kx = kx;
  out->ky = ky;
  if (kx == 1 && ky == 1) {
    size_t stride = (size_t)cw * (size_t)bpp;
    for (int r = 0; r < rh; r++)
      d->rowptr[r] = d->region + (size_t)r * stride;
    for (int got = 0; got < rh;) {
      JDIMENSION n =
          jpeg_read_scanlines(j, d->rowptr + got, (JDIMENSION)(rh - got));
      if (n == 0)
        return sl_err_set(err, SL_EDECODE, "jpeg: no rows after row %d",
                          y0 + got);
      if (convert)
        for (JDIMENSION r = 0; r < n; r++)
          sl_convert_row(d->rowptr[got + (int)r], fmt, (int)cw,
                         d->rowptr[got + (int)r], ch);
      got += (int)n;
    }
    out->pixels = d->region + (size_t)dx * (size_t)ch;
    out->stride = stride;
    out->w = rw;
    out->h = rh;
    return SL_OK;
  }
  sl_sink s;
  sl_sink_begin(&s, d, ch, rw, rh, kx, ky);
  for (int r = 0; r < rh; r++) {
    JSAMPROW rp = d->row;
    if (jpeg_read_scanlines(j, &rp, 1) != 1)
      return sl_err_set(err, SL_EDECODE, "jpeg: no rows after row %d", y0 + r);
    if (convert)
      sl_convert_row(d->row, fmt, (int)cw, d->row, ch);
    sl_sink_row(&s, d->row + (size_t)dx * (size_t)ch);
  }
  sl_sink_end(&s, m, out);
  return SL_OK;
}

/* Switches d->jd from the whole stream to a window of g's segments when
 * the file's restart layout allows one and it saves work (see
 * codecs/jpeg_window.h). Returns 1 with the window's header read. Called
 * with the longjmp target set. */
static int open_window(sl_decoder *d, const sl_encoded *in, const sl_region *g,
                       int m, sl_jpeg_window *win) {
  const sl_jpeg_grid *lo = &d->pending_grid;
  int sw = lo->mcu_w * m / 8, sh = lo->mcu_h * m / 8, gx, gy;
  sl_jpeg_window_margin(lo, m, &gx, &gy);
  int mx0 = g->x0 / sw - gx, mx1 = (g->x0 + g->rw + sw - 1) / sw + gx;
  int my0 = g->y0 / sh - gy, my1 = (g->y0 + g->rh + sh - 1) / sh + gy;
  mx0 = mx0 < 0 ? 0 : mx0;
  my0 = my0 < 0 ? 0 : my0;
  mx1 = mx1 > lo->mcus_x ? lo->mcus_x : mx1;
  my1 = my1 > lo->mcus_y ? lo->mcus_y : my1;
  /* The whole-stream decode reads every MCU of rows [0, my1); a window
   * (rounded out to whole segments) that saves under a tenth of that is
   * not worth its copy. */
  int wx0 = mx0 / lo->seg_w * lo->seg_w,
      wy0 = my0 / lo->seg_rows * lo->seg_rows;
  int wx1 = ((mx1 - 1) / lo->seg_w + 1) * lo->seg_w;
  int64_t part = (int64_t)(wx1 - wx0) * (my1 - wy0);
  if (part * 10 > (int64_t)lo->mcus_x * my1 * 9)
    return 0;
  if (!sl_jpeg_window_build(in->bytes, in->len, lo, mx0, my0, mx1, my1,
                            d->window, SL_WINDOW_BYTES, win))
    return 0;
  jpeg_abort_decompress(&d->jd);
  jpeg_mem_src(&d->jd, d->window, (unsigned long)win->len);
  jpeg_read_header(&d->jd, TRUE);
  return 1;
}

/* The region for planes: every scaled pixel the request touches (the
 * caller resamples the exact crop from it), box factors as g's. */
static sl_region planes_region(const sl_region *g, const sl_decode_req *req,
                               const sl_image_info *info, int m) {
  sl_region r = *g;
  int sw = sl_scaled_side(info->width, m), sh = sl_scaled_side(info->height, m);
  int x1 = (int)(((int64_t)(req->x + req->w) * m + 7) / 8);
  int y1 = (int)(((int64_t)(req->y + req->h) * m + 7) / 8);
  r.x0 = (int)((int64_t)req->x * m / 8);
  r.y0 = (int)((int64_t)req->y * m / 8);
  r.x0 = r.x0 > sw - 1 ? sw - 1 : r.x0;
  r.y0 = r.y0 > sh - 1 ? sh - 1 : r.y0;
  r.rw = (x1 > sw ? sw : x1) - r.x0;
  r.rh = (y1 > sh ? sh : y1) - r.y0;
  r.rw = r.rw < 1 ? 1 : r.rw;
  r.rh = r.rh < 1 ? 1 : r.rh;
  return r;
}

/* Drops the pending header (the decompressor is aborted). */
static void forget(sl_decoder *d) {
  jpeg_abort_decompress(&d->jd);
  d->pending = NULL;
}

static sl_status decode(sl_decoder *d, const sl_encoded *in,
                        const sl_image_info *info, const sl_decode_req *req,
                        sl_decoded *out, sl_err *err) {
  sl_region g;
  int m = req->scale;
  sl_status st =
      sl_region_plan(d, "jpeg", req, info->width, info->height, m, &g, err);
  if (st == SL_OK) {
    if (setjmp(d->je.jb))
      return fail(d, err);
    int planes = req->planes && req->channels == 4;
    sl_region gp = planes ? planes_region(&g, req, info, m) : g;
    sl_jpeg_window win;
    /* gp contains g: a window for it serves both */
    int windowed = d->pending_windowable && open_window(d, in, &gp, m, &win);
    int offx = 0, offy = 0; /* the window's origin in scaled pixels */
    if (windowed) {
      const sl_jpeg_grid *lo = &d->pending_grid;
      offx = win.mcu_x * (lo->mcu_w * m / 8);
      offy = win.mcu_y * (lo->mcu_h * m / 8);
      g.x0 -= offx, g.y0 -= offy;
      gp.x0 -= offx, gp.y0 -= offy;
    }
    sl_planes_plan pp;
    if (planes && sl_jpeg_planes_plan(d, &gp, m, windowed, &pp)) {
      st = sl_jpeg_planes_body(d, &gp, &pp, m, out, err);
      g = gp;
      for (int c = 0; c < out->planes.n; c++) {
        out->planes.x0[c] += offx / out->planes.sub_x[c];
        out->planes.y0[c] += offy / out->planes.sub_y[c];
      }
    } else {
      st = decode_body(d, info, &g, m, req->channels, out, err);
    }
    out->windowed = windowed;
    out->x0 = g.x0 + offx;
    out->y0 = g.y0 + offy;
  }
  forget(d);
  return st;
}

const sl_codec_row sl_codec_jpeg = {
    .name = "jpeg",
    .codecs = 1u << SL_IMAGE_JPEG,
    .probe = probe,
    .decode = decode,
    .forget = forget,
};
