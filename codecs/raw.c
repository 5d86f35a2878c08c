/* Raw u8 arrays: HWC (1 = gray, 3 = RGB, 4 = RGBA) or CHW planes (1 or 3,
 * in RGB or BGR order: Caffe's raw Datums). The region's rows are gathered,
 * converted and streamed through the same sink as the other codecs. */
#include <stdbool.h>

#include "codecs/codec_impl.h"

static sl_status probe(sl_decoder *d, const sl_encoded *in, sl_image_info *info,
                       sl_err *err) {
  int h = in->raw_h, w = in->raw_w, c = in->raw_c;
  bool planar = in->codec != SL_IMAGE_RAW;
  if (h < 1 || w < 1 || (c != 1 && c != 3 && (c != 4 || planar)))
    return sl_err_set(err, SL_EDECODE, "raw: bad shape %dx%dx%d", h, w, c);
  if (w > SL_CODEC_MAX_SIDE || h > SL_CODEC_MAX_SIDE ||
      (uint64_t)w * (uint64_t)h > d->max_pixels)
    return sl_err_set(err, SL_ETOOBIG,
                      "raw: %dx%d image exceeds decode.max_pixels = %llu", w, h,
                      (unsigned long long)d->max_pixels);
  uint64_t need = (uint64_t)h * (uint64_t)w * (uint64_t)c;
  if (in->len != need)
    return sl_err_set(err, SL_EDECODE,
                      "raw: %zu bytes for a %dx%dx%d array (%llu expected)",
                      in->len, h, w, c, (unsigned long long)need);
  info->width = w;
  info->height = h;
  info->components = c;
  info->progressive = 0;
  info->color = c == 1 ? SL_COLOR_GRAY : SL_COLOR_RGB;
  info->subsamp = c == 1 ? SL_SUB_GRAY : SL_SUB_444;
  return SL_OK;
}

static sl_status decode(sl_decoder *d, const sl_encoded *in,
                        const sl_image_info *info, const sl_decode_req *req,
                        sl_decoded *out, sl_err *err) {
  int ch = req->channels, c = in->raw_c;
  sl_region g;
  sl_status st =
      sl_region_plan(d, "raw", req, info->width, info->height, 8, &g, err);
  if (st != SL_OK)
    return st;
  int x0 = g.x0, y0 = g.y0, rw = g.rw, rh = g.rh, kx = g.kx, ky = g.ky;
  sl_pixfmt fmt = c == 1 ? SL_PIX_GRAY : c == 3 ? SL_PIX_RGB : SL_PIX_RGBX;
  sl_sink s;
  sl_sink_begin(&s, d, ch, rw, rh, kx, ky);
  if (in->codec != SL_IMAGE_RAW && c == 3) {
    size_t plane = (size_t)info->width * (size_t)info->height;
    bool bgr = in->codec == SL_IMAGE_RAW_CHW_BGR;
    const uint8_t *pr = in->bytes + (bgr ? 2 : 0) * plane,
                  *pg = in->bytes + plane,
                  *pb = in->bytes + (bgr ? 0 : 2) * plane;
    uint8_t *r = d->row;
    for (int y = y0; y < y0 + rh; y++) {
      size_t o = (size_t)y * (size_t)info->width + (size_t)x0;
      if (ch == 4)
        for (int x = 0; x < rw; x++) {
          r[4 * x] = pr[o + x];
          r[4 * x + 1] = pg[o + x];
          r[4 * x + 2] = pb[o + x];
          r[4 * x + 3] = 255;
        }
      else {
        for (int x = 0; x < rw; x++) {
          r[3 * x] = pr[o + x];
          r[3 * x + 1] = pg[o + x];
          r[3 * x + 2] = pb[o + x];
        }
        sl_convert_row(r, SL_PIX_RGB, rw, r, 1);
      }
      sl_sink_row(&s, r);
    }
    sl_sink_end(&s, 8, out);
    return SL_OK;
  }
  /* HWC, or one plane (which is HWC with C = 1). */
  size_t stride = (size_t)info->width * (size_t)c;
  for (int y = y0; y < y0 + rh; y++) {
    const uint8_t *src = in->bytes + (size_t)y * stride + (size_t)x0 * c;
    sl_convert_row(src, fmt, rw, d->row, ch);
    sl_sink_row(&s, d->row);
  }
  sl_sink_end(&s, 8, out);
  return SL_OK;
}

const sl_codec_row sl_codec_raw = {
    .name = "raw",
    .codecs = 1u << SL_IMAGE_RAW | 1u << SL_IMAGE_RAW_CHW |
              1u << SL_IMAGE_RAW_CHW_BGR,
    .probe = probe,
    .decode = decode,
};
