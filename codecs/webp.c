/* WebP through libwebp (lossy and lossless, alpha dropped). A decode asks
 * libwebp for the region only (WebPDecoderConfig.options.use_cropping) and,
 * when the request allows a reduction, for its reduced size straight away
 * (use_scaling: libwebp's area-averaging rescaler), so a random-resized
 * crop decodes only its region, as JPEG's does. The output lands in the
 * decoder's region buffer (external memory): nothing is allocated per
 * image beyond libwebp's own decoding state. A crop without reduction is
 * widened by a margin of 2 pixels (to even coordinates) and the margin
 * skipped: lossy WebP's chroma upsampling reads the neighbours of a crop's
 * edge rows and columns, so without it a crop's edges would differ from
 * the same pixels of the whole image. */
#include <stdbool.h>
#include <string.h>

#include <webp/decode.h>

#include "codecs/codec_impl.h"

static sl_status probe(sl_decoder *d, const sl_encoded *in, sl_image_info *info,
                       sl_err *err) {
  WebPBitstreamFeatures f;
  VP8StatusCode rc = WebPGetFeatures(in->bytes, in->len, &f);
  if (rc != VP8_STATUS_OK)
    return sl_err_set(err, SL_EDECODE,
                      "webp: not a WebP file or a bad header (status %d, "
                      "%zu bytes)",
                      (int)rc, in->len);
  if (f.has_animation)
    return sl_err_set(err, SL_EUNSUPPORTED, "webp: animated WebP");
  if (f.width < 1 || f.height < 1 || f.width > SL_CODEC_MAX_SIDE ||
      f.height > SL_CODEC_MAX_SIDE ||
      (uint64_t)f.width * (uint64_t)f.height > d->max_pixels)
    return sl_err_set(err, SL_ETOOBIG,
                      "webp: %dx%d image exceeds decode.max_pixels = %llu",
                      f.width, f.height, (unsigned long long)d->max_pixels);
  info->width = f.width;
  info->height = f.height;
  info->components = f.has_alpha ? 4 : 3;
  info->progressive = 0;
  info->color = SL_COLOR_RGB;
  info->subsamp = f.format == 2 ? SL_SUB_444 : SL_SUB_420; /* 2: lossless */
  return SL_OK;
}

static sl_status decode(sl_decoder *d, const sl_encoded *in,
                        const sl_image_info *info, const sl_decode_req *req,
                        sl_decoded *out, sl_err *err) {
  sl_region g;
  sl_status st =
      sl_region_plan(d, "webp", req, info->width, info->height, 8, &g, err);
  if (st != SL_OK)
    return st;
  int nx = (g.rw + g.kx - 1) / g.kx, ny = (g.rh + g.ky - 1) / g.ky;
  bool scaled = g.kx > 1 || g.ky > 1;
  /* The decoded crop [cx, cx + cw) x [cy, cy + ch_): the region itself
   * when scaled (an even origin moves a scaled box by under one output
   * pixel), else the region and its margin, unless that does not fit. */
  int cx = g.x0 & ~1, cy = g.y0 & ~1;
  int cw = g.x0 + g.rw - cx, ch_ = g.y0 + g.rh - cy;
  if (!scaled) {
    int mx = (g.x0 - 2 > 0 ? g.x0 - 2 : 0) & ~1;
    int my = (g.y0 - 2 > 0 ? g.y0 - 2 : 0) & ~1;
    int ex = g.x0 + g.rw + 2 < info->width ? g.x0 + g.rw + 2 : info->width;
    int ey = g.y0 + g.rh + 2 < info->height ? g.y0 + g.rh + 2 : info->height;
    if ((size_t)(ex - mx) * 4 * (size_t)(ey - my) <= d->region_cap)
      cx = mx, cy = my, cw = ex - mx, ch_ = ey - my;
  }
  int ow = scaled ? nx : cw, oh = scaled ? ny : ch_;
  size_t stride = (size_t)ow * 4;
  if (stride * (size_t)oh > d->region_cap)
    return sl_err_set(err, SL_ETOOBIG,
                      "webp: a %dx%d region does not fit the decoder's %zu "
                      "bytes",
                      ow, oh, d->region_cap);
  WebPDecoderConfig cfg;
  if (!WebPInitDecoderConfig(&cfg))
    return sl_err_set(err, SL_EUNSUPPORTED, "webp: libwebp ABI mismatch");
  cfg.options.use_cropping = 1;
  cfg.options.crop_left = cx;
  cfg.options.crop_top = cy;
  cfg.options.crop_width = cw;
  cfg.options.crop_height = ch_;
  if (scaled) {
    cfg.options.use_scaling = 1;
    cfg.options.scaled_width = ow;
    cfg.options.scaled_height = oh;
  }
  cfg.output.colorspace = MODE_RGBA;
  cfg.output.is_external_memory = 1;
  cfg.output.u.RGBA.rgba = d->region;
  cfg.output.u.RGBA.stride = (int)stride;
  cfg.output.u.RGBA.size = stride * (size_t)oh;
  VP8StatusCode rc = WebPDecode(in->bytes, in->len, &cfg);
  WebPFreeDecBuffer(&cfg.output); /* external memory: frees nothing else */
  if (rc != VP8_STATUS_OK)
    return sl_err_set(err, SL_EDECODE, "webp: decode failed (status %d)",
                      (int)rc);
  uint8_t *first = d->region;
  if (!scaled)
    first += (size_t)(g.y0 - cy) * stride + (size_t)(g.x0 - cx) * 4;
  /* RGBA to RGBX or gray, in place, row by row. */
  for (int y = 0; y < ny; y++) {
    uint8_t *row = first + (size_t)y * stride;
    if (req->channels == 4)
      for (int x = 0; x < nx; x++)
        row[4 * x + 3] = 255;
    else
      sl_convert_row(row, SL_PIX_RGBX, nx, row, 1);
  }
  out->pixels = first;
  out->stride = stride;
  out->w = nx;
  out->h = ny;
  out->scale = 8;
  out->kx = g.kx;
  out->ky = g.ky;
  return SL_OK;
}

const sl_codec_row sl_codec_webp = {
    .name = "webp",
    .codecs = 1u << SL_IMAGE_WEBP,
    .probe = probe,
    .decode = decode,
};
