/* PNG through libpng. The header is parsed by hand for probing; a decode
 * streams rows through libpng (all memory from the decoder's arena, so
 * nothing is allocated per image and a hostile file cannot grow it), keeps
 * the region's rows and stops after the last one. Interlaced PNGs would
 * need the whole image in memory and are refused. */
#include <string.h>

#include <png.h>

#include "codecs/codec_impl.h"
#include "common/endian.h"
#include "common/png_mem.h"

static const uint8_t k_sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

static sl_status probe(sl_decoder *d, const sl_encoded *in, sl_image_info *info,
                       sl_err *err) {
  const uint8_t *p = in->bytes;
  if (in->len < 33 || memcmp(p, k_sig, 8) != 0 ||
      memcmp(p + 12, "IHDR", 4) != 0 || sl_get_be32(p + 8) != 13)
    return sl_err_set(err, SL_EDECODE, "png: not a PNG file (%zu bytes)",
                      in->len);
  uint32_t w = sl_get_be32(p + 16), h = sl_get_be32(p + 20);
  int depth = p[24], type = p[25], interlace = p[28];
  static const int comps[7] = {1, 0, 3, 1, 2, 0, 4};
  if (w == 0 || h == 0 || type > 6 || comps[type] == 0 ||
      (depth != 1 && depth != 2 && depth != 4 && depth != 8 && depth != 16))
    return sl_err_set(err, SL_EDECODE,
                      "png: bad header (%ux%u, depth %d, colour type %d)", w, h,
                      depth, type);
  if (w > SL_CODEC_MAX_SIDE || h > SL_CODEC_MAX_SIDE ||
      (uint64_t)w * h > d->max_pixels)
    return sl_err_set(err, SL_ETOOBIG,
                      "png: %ux%u image exceeds decode.max_pixels = %llu", w, h,
                      (unsigned long long)d->max_pixels);
  info->width = (int)w;
  info->height = (int)h;
  info->components = comps[type];
  info->progressive = interlace != 0;
  info->color = (type & 2) || type == 3 ? SL_COLOR_RGB : SL_COLOR_GRAY;
  info->subsamp = info->color == SL_COLOR_GRAY ? SL_SUB_GRAY : SL_SUB_444;
  return SL_OK;
}

static png_voidp arena_malloc(png_structp p, png_alloc_size_t n) {
  sl_arena *a = png_get_mem_ptr(p);
  size_t need = (n + 15) & ~(size_t)15;
  if (need < n || need > a->cap - a->used)
    return NULL;
  void *r = a->base + a->used;
  a->used += need;
  return r;
}

static void arena_free(png_structp p, png_voidp ptr) {
  (void)p;
  (void)ptr;
}

/* Sets transforms so every row comes out as ch (1 or 4) 8-bit bytes. */
static void set_transforms(png_structp p, png_infop info, int ch) {
  int type = png_get_color_type(p, info);
  png_set_expand(p);   /* palette -> RGB, gray < 8 bits -> 8, tRNS -> alpha */
  png_set_scale_16(p); /* rounded v / 257: linear, no gamma */
  png_set_strip_alpha(p);
  if (ch == 4) {
    if (!(type & PNG_COLOR_MASK_COLOR))
      png_set_gray_to_rgb(p);
    png_set_filler(p, 0xff, PNG_FILLER_AFTER);
  } else if (type & PNG_COLOR_MASK_COLOR) {
    png_set_rgb_to_gray_fixed(p, 1, 29900, 58700); /* JPEG's luma */
  }
}

static sl_status decode_rows(png_structp p, png_infop pi, sl_decoder *d,
                             const sl_image_info *info,
                             const sl_decode_req *req, sl_decoded *out,
                             sl_err *err) {
  int ch = req->channels;
  sl_region g;
  sl_status st =
      sl_region_plan(d, "png", req, info->width, info->height, 8, &g, err);
  if (st != SL_OK)
    return st;
  int x0 = g.x0, y0 = g.y0, rw = g.rw, rh = g.rh, kx = g.kx, ky = g.ky;
  png_set_user_limits(p, SL_CODEC_MAX_SIDE, SL_CODEC_MAX_SIDE);
  png_set_chunk_malloc_max(p, 256 * 1024);
  png_read_info(p, pi);
  if (png_get_interlace_type(p, pi) != PNG_INTERLACE_NONE)
    return sl_err_set(err, SL_EUNSUPPORTED,
                      "png: interlaced PNG is not supported (re-encode it "
                      "without interlacing)");
  set_transforms(p, pi, ch);
  png_read_update_info(p, pi);
  if (png_get_rowbytes(p, pi) != (size_t)info->width * (size_t)ch)
    return sl_err_set(err, SL_EDECODE, "png: unexpected row size %zu",
                      (size_t)png_get_rowbytes(p, pi));
  sl_sink s;
  sl_sink_begin(&s, d, ch, rw, rh, kx, ky);
  for (int y = 0; y < y0 + rh; y++) {
    png_read_row(p, d->row, NULL);
    if (y >= y0)
      sl_sink_row(&s, d->row + (size_t)x0 * (size_t)ch);
  }
  sl_sink_end(&s, 8, out);
  return SL_OK;
}

static sl_status decode(sl_decoder *d, const sl_encoded *in,
                        const sl_image_info *info, const sl_decode_req *req,
                        sl_decoded *out, sl_err *err) {
  sl_png_mem x = {in->bytes, in->len, 0, ""};
  d->arena.used = 0;
  png_structp p = png_create_read_struct_2(PNG_LIBPNG_VER_STRING, &x,
                                           sl_png_mem_error, sl_png_mem_warning,
                                           &d->arena, arena_malloc, arena_free);
  png_infop pi = p ? png_create_info_struct(p) : NULL;
  if (!pi) {
    png_destroy_read_struct(&p, NULL, NULL);
    return sl_err_set(err, SL_ENOMEM, "png: out of scratch memory");
  }
  png_set_read_fn(p, &x, sl_png_mem_read);
  if (setjmp(png_jmpbuf(p))) {
    png_destroy_read_struct(&p, &pi, NULL);
    return sl_err_set(err, SL_EDECODE, "png: %s", x.msg);
  }
  sl_status st = decode_rows(p, pi, d, info, req, out, err);
  png_destroy_read_struct(&p, &pi, NULL);
  return st;
}

const sl_codec_row sl_codec_png = {
    .name = "png",
    .codecs = 1u << SL_IMAGE_PNG,
    .probe = probe,
    .decode = decode,
};
