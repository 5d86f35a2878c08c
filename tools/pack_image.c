/* `sluice pack`'s transcoding: see tools/pack_image.h for the rules. */
#include "tools/pack_image.h"

#include <libyuv/scale.h>
#include <libyuv/scale_rgb.h>
#include <png.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <turbojpeg.h>

#include "common/png_mem.h"
#include "sluice.h"

#define MAX_PIXELS (1ull << 28) /* 256 Mpx: larger inputs are skipped */
/* Why: an input is decoded whole before it is resized, so --max-side does
 * not lift the limit. */
#define TOO_LARGE                                                              \
  "%s of %llux%llu (%.0f Mpx) is over pack's limit of %llu pixels, which "     \
  "--max-side does not lift (an image is decoded whole before it is "          \
  "resized): downscale it with another tool first"

struct sl_pack_codec {
  tjhandle dec, enc;
  sl_transcoder *tc; /* the restart-layout rewrite, checked by the loader's
                        decoder */
};

static int fail(sl_pack_result *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int no_memory(sl_pack_result *r);
static int dec_fail(sl_pack_codec *c, sl_pack_result *r, const char *what);
static int check_eighth(sl_pack_codec *c, const uint8_t *jpg, size_t len, int w,
                        int h, int pf, sl_pack_result *r);
static int rewrite(sl_pack_codec *c, const uint8_t *jpg, size_t len,
                   sl_pack_result *r);
static int add_levels(sl_pack_codec *c, const sl_pack_opts *o,
                      sl_pack_result *r);
static int finish(sl_pack_codec *c, uint8_t *pix, int w, int h, int ch,
                  int orient, const sl_pack_opts *o, sl_pack_result *r);

sl_pack_codec *sl_pack_codec_create(void) {
  sl_pack_codec *c = calloc(1, sizeof *c);
  if (!c)
    return NULL;
  c->dec = tjInitDecompress();
  c->enc = tjInitCompress();
  if (!c->dec || !c->enc || sl_transcoder_create(&c->tc) != SL_OK) {
    sl_pack_codec_destroy(c);
    return NULL;
  }
  return c;
}

void sl_pack_codec_destroy(sl_pack_codec *c) {
  if (!c)
    return;
  if (c->dec)
    tjDestroy(c->dec);
  if (c->enc)
    tjDestroy(c->enc);
  sl_transcoder_destroy(c->tc);
  free(c);
}

void sl_pack_result_free(sl_pack_result *r) {
  if (r->tj_owned)
    tjFree(r->data);
  else
    free(r->data);
  r->data = NULL;
  r->len = 0;
}

/* The size w x h takes when its longer side is limited to max_side. */
static void fit(int max_side, int *w, int *h) {
  if (max_side <= 0 || (*w <= max_side && *h <= max_side))
    return;
  if (*w >= *h) {
    int nh = (int)(((long long)*h * max_side + *w / 2) / *w);
    *h = nh < 1 ? 1 : nh;
    *w = max_side;
  } else {
    int nw = (int)(((long long)*w * max_side + *h / 2) / *h);
    *w = nw < 1 ? 1 : nw;
    *h = max_side;
  }
}

static int transcode_jpeg(sl_pack_codec *c, uint8_t *in, size_t len,
                          const sl_pack_opts *o, sl_pack_result *r) {
  /* A fresh decompressor for every photo: TurboJPEG's libjpeg object keeps
   * the tables one image defined for the next, so a photo missing its DQT
   * or DHT would borrow its predecessor's (and pack differently with
   * --threads) instead of being skipped. */
  tjhandle fresh = tjInitDecompress();
  if (!fresh)
    return no_memory(r);
  tjDestroy(c->dec);
  c->dec = fresh;
  int w, h, ss, cs;
  if (tjDecompressHeader3(c->dec, in, (unsigned long)len, &w, &h, &ss, &cs))
    return dec_fail(c, r, "bad JPEG header");
  if (w <= 0 || h <= 0 || (unsigned long long)w * h > MAX_PIXELS)
    return fail(r, TOO_LARGE, "JPEG", (unsigned long long)w,
                (unsigned long long)h, (double)w * h / 1e6, MAX_PIXELS);
  int orient = o->keep_orientation ? 1 : sl_exif_orientation(in, len);
  r->src_width = (uint32_t)w;
  r->src_height = (uint32_t)h;
  bool cmyk = cs == TJCS_CMYK || cs == TJCS_YCCK, gray = cs == TJCS_GRAY;
  int ow = orient >= 5 ? h : w, oh = orient >= 5 ? w : h;
  int tw = ow, th = oh;
  fit(o->max_side, &tw, &th);
  bool resize = tw != ow || th != oh;
  int pf = gray ? TJPF_GRAY : cmyk ? TJPF_CMYK : TJPF_RGB;
  if (!o->reencode && !resize && orient == 1 && !cmyk) {
    if (o->keep_jpeg) { /* the bytes as they are, if they decode */
      if (check_eighth(c, in, len, w, h, pf, r))
        return -1;
      r->data = in;
      r->len = len;
    } else { /* same coefficients in the restart layout */
      /* No decode check: the rewrite has read every coefficient with
       * libjpeg's corrupt-data warnings as errors. */
      if (rewrite(c, in, len, r))
        return -1;
      r->rewritten = true;
    }
    r->width = (uint16_t)w;
    r->height = (uint16_t)h;
    r->channels = gray ? 1 : 3;
    r->codec = SL_IMAGE_JPEG;
    return 0;
  }
  /* Decode at the smallest DCT scale that still covers the target. */
  int tws = orient >= 5 ? th : tw, ths = orient >= 5 ? tw : th;
  int nsf, sw = w, sh = h;
  tjscalingfactor *sf = tjGetScalingFactors(&nsf);
  for (int i = 0; resize && sf && i < nsf; i++) {
    int a = TJSCALED(w, sf[i]), b = TJSCALED(h, sf[i]);
    if (a >= tws && b >= ths && a < sw)
      sw = a, sh = b;
  }
  uint8_t *pix = malloc((size_t)sw * sh * tjPixelSize[pf]);
  if (!pix)
    return no_memory(r);
  if (tjDecompress2(c->dec, in, (unsigned long)len, pix, sw, 0, sh, pf,
                    TJFLAG_STOPONWARNING)) {
    free(pix);
    return dec_fail(c, r, "corrupt JPEG");
  }
  if (cmyk) { /* Adobe inverted CMYK → RGB, in place (3 <= 4 bytes). */
    size_t n = (size_t)sw * sh;
    for (size_t i = 0; i < n; i++) {
      unsigned k = pix[4 * i + 3];
      uint8_t rr = (uint8_t)((pix[4 * i] * k + 127) / 255);
      uint8_t gg = (uint8_t)((pix[4 * i + 1] * k + 127) / 255);
      uint8_t bb = (uint8_t)((pix[4 * i + 2] * k + 127) / 255);
      pix[3 * i] = rr;
      pix[3 * i + 1] = gg;
      pix[3 * i + 2] = bb;
    }
  }
  return finish(c, pix, sw, sh, gray ? 1 : 3, orient, o, r);
}

/* Decodes a 16-bit PNG's stored values to 8 bits linearly, rounded v / 257
 * (png_set_scale_16), as the loader's PNG codec does. The simplified API is
 * not used here: it takes a 16-bit file without a gAMA chunk as linear
 * light and applies the sRGB curve when converting to 8 bits, which
 * brightens every image that was simply written with 16-bit samples.
 * Alpha is composited onto white, as for 8-bit PNGs. */
static int png16_pixels(const uint8_t *in, size_t len, uint32_t w, uint32_t h,
                        bool gray, uint8_t **out, sl_pack_result *r) {
  sl_png_mem m = {in, len, 0, ""};
  uint8_t *volatile img = NULL;
  png_bytep *volatile rows = NULL;
  png_structp p = png_create_read_struct(PNG_LIBPNG_VER_STRING, &m,
                                         sl_png_mem_error, sl_png_mem_warning);
  png_infop info = p ? png_create_info_struct(p) : NULL;
  if (!info) {
    png_destroy_read_struct(&p, NULL, NULL);
    return no_memory(r);
  }
  if (setjmp(png_jmpbuf(p))) {
    png_destroy_read_struct(&p, &info, NULL);
    free(img);
    free(rows);
    return r->no_memory ? no_memory(r) : fail(r, "corrupt PNG: %s", m.msg);
  }
  png_set_read_fn(p, &m, sl_png_mem_read);
  png_set_user_limits(p, 0x7fffffff, 0x7fffffff);
  png_read_info(p, info);
  png_set_expand(p); /* tRNS -> alpha */
  png_set_scale_16(p);
  if (!gray && !(png_get_color_type(p, info) & PNG_COLOR_MASK_COLOR))
    png_set_gray_to_rgb(p);
  png_set_interlace_handling(p);
  png_read_update_info(p, info);
  size_t nch = png_get_channels(p, info), rb = png_get_rowbytes(p, info);
  size_t ch = gray ? 1 : 3;
  if (png_get_image_width(p, info) != w || png_get_image_height(p, info) != h ||
      png_get_bit_depth(p, info) != 8 || nch < ch || nch > ch + 1 ||
      rb != (size_t)w * nch)
    png_error(p, "unexpected layout after conversion to 8 bits");
  img = malloc((size_t)h * rb);
  rows = malloc((size_t)h * sizeof *rows);
  if (!img || !rows) {
    r->no_memory = true;
    png_error(p, "out of memory");
  }
  for (uint32_t y = 0; y < h; y++)
    rows[y] = img + (size_t)y * rb;
  png_read_image(p, rows);
  png_read_end(p, NULL);
  png_destroy_read_struct(&p, &info, NULL);
  free(rows);
  uint8_t *px = img;
  if (nch == ch + 1) { /* composite onto white, then drop alpha */
    size_t n = (size_t)w * h;
    for (size_t i = 0; i < n; i++) {
      unsigned a = px[i * nch + ch];
      for (size_t k = 0; k < ch; k++)
        px[i * ch + k] =
            (uint8_t)((px[i * nch + k] * a + 255u * (255u - a) + 127u) / 255u);
    }
  }
  *out = px;
  return 0;
}

static int transcode_png(sl_pack_codec *c, const uint8_t *in, size_t len,
                         const sl_pack_opts *o, sl_pack_result *r) {
  png_image img;
  memset(&img, 0, sizeof img);
  img.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(&img, in, len))
    return fail(r, "bad PNG: %s", img.message);
  if ((unsigned long long)img.width * img.height > MAX_PIXELS) {
    png_image_free(&img);
    return fail(r, TOO_LARGE, "PNG", (unsigned long long)img.width,
                (unsigned long long)img.height,
                (double)img.width * img.height / 1e6, MAX_PIXELS);
  }
  bool gray = !(img.format & PNG_FORMAT_FLAG_COLOR);
  int orient = o->keep_orientation ? 1 : sl_png_exif_orientation(in, len);
  r->src_width = img.width;
  r->src_height = img.height;
  if (img.format & PNG_FORMAT_FLAG_LINEAR) { /* 16-bit samples */
    uint32_t w = img.width, h = img.height;
    png_image_free(&img);
    uint8_t *pix;
    if (png16_pixels(in, len, w, h, gray, &pix, r))
      return -1;
    return finish(c, pix, (int)w, (int)h, gray ? 1 : 3, orient, o, r);
  }
  img.format = gray ? PNG_FORMAT_GRAY : PNG_FORMAT_RGB;
  uint8_t *pix = malloc(PNG_IMAGE_SIZE(img));
  if (!pix) {
    png_image_free(&img);
    return no_memory(r);
  }
  png_color white = {255, 255, 255};
  if (!png_image_finish_read(&img, &white, pix, 0, NULL)) {
    free(pix);
    png_image_free(&img);
    return fail(r, "corrupt PNG: %s", img.message);
  }
  return finish(c, pix, (int)img.width, (int)img.height, gray ? 1 : 3, orient,
                o, r);
}

int sl_pack_transcode(sl_pack_codec *c, uint8_t *in, size_t len,
                      const sl_pack_opts *o, sl_pack_result *r) {
  memset(r, 0, sizeof *r);
  static const uint8_t png_sig[8] = {0x89, 'P',  'N',  'G',
                                     '\r', '\n', 0x1a, '\n'};
  int rc;
  if (len >= 3 && in[0] == 0xFF && in[1] == 0xD8 && in[2] == 0xFF) {
    rc = transcode_jpeg(c, in, len, o, r);
    if (rc == 0 && r->data == in)
      return 0; /* kept: in is the payload now */
  } else if (len >= 8 && memcmp(in, png_sig, 8) == 0) {
    rc = transcode_png(c, in, len, o, r);
  } else {
    rc = fail(r, "not a JPEG or PNG file");
  }
  free(in);
  if (rc == 0 && o->levels && r->codec == SL_IMAGE_JPEG)
    rc = add_levels(c, o, r);
  return rc;
}

/* Replaces r's restart-layout JPEG by its level record (or leaves it when
 * the image is too small for any level). */
static int add_levels(sl_pack_codec *c, const sl_pack_opts *o,
                      sl_pack_result *r) {
  uint8_t *out;
  size_t out_len;
  if (sl_transcoder_levels(c->tc, r->data, r->len, o->levels, o->quality, &out,
                           &out_len) != SL_OK) {
    sl_pack_result_free(r);
    return fail(r, "levels: %s", sl_transcoder_errmsg(c->tc));
  }
  sl_pack_result_free(r);
  r->data = out;
  r->len = out_len;
  r->tj_owned = false;
  int n = sl_image_level(out, out_len, 0, NULL, NULL, NULL, NULL);
  if (n > 0) {
    r->codec = SL_IMAGE_JPEG_LEVELS;
    r->levels = (uint8_t)n;
  }
  return 0;
}

/* Pixel (x, y) of the upright image comes from source pixel (sx, sy) of
 * the stored w x h image, for EXIF orientations 1..8. */
static void source_xy(int orient, int w, int h, int x, int y, int *sx,
                      int *sy) {
  switch (orient) {
  case 2:
    *sx = w - 1 - x, *sy = y;
    break;
  case 3:
    *sx = w - 1 - x, *sy = h - 1 - y;
    break;
  case 4:
    *sx = x, *sy = h - 1 - y;
    break;
  case 5:
    *sx = y, *sy = x;
    break;
  case 6:
    *sx = y, *sy = h - 1 - x;
    break;
  case 7:
    *sx = w - 1 - y, *sy = h - 1 - x;
    break;
  case 8:
    *sx = w - 1 - y, *sy = x;
    break;
  default:
    *sx = x, *sy = y;
    break;
  }
}

/* Orients, resizes and encodes pix (w x h x ch, freed here). */
static int finish(sl_pack_codec *c, uint8_t *pix, int w, int h, int ch,
                  int orient, const sl_pack_opts *o, sl_pack_result *r) {
  if (orient != 1) {
    int ow = orient >= 5 ? h : w, oh = orient >= 5 ? w : h;
    uint8_t *up = malloc((size_t)w * h * ch);
    if (!up) {
      free(pix);
      return no_memory(r);
    }
    for (int y = 0; y < oh; y++)
      for (int x = 0; x < ow; x++) {
        int sx, sy;
        source_xy(orient, w, h, x, y, &sx, &sy);
        memcpy(up + ((size_t)y * ow + x) * ch, pix + ((size_t)sy * w + sx) * ch,
               (size_t)ch);
      }
    free(pix);
    pix = up;
    w = ow;
    h = oh;
  }
  int tw = w, th = h;
  fit(o->max_side, &tw, &th);
  if (tw > 65535 || th > 65535) {
    free(pix);
    return fail(r, "%dx%d is larger than 65535 pixels (use --max-side)", w, h);
  }
  if (tw != w || th != h) {
    uint8_t *small = malloc((size_t)tw * th * ch);
    if (!small) {
      free(pix);
      return no_memory(r);
    }
    if (ch == 1)
      ScalePlane(pix, w, w, h, small, tw, tw, th, kFilterBox);
    else if (RGBScale(pix, w * 3, w, h, small, tw * 3, tw, th, kFilterBox)) {
      free(small);
      free(pix);
      return fail(r, "resize %dx%d -> %dx%d failed", w, h, tw, th);
    }
    free(pix);
    pix = small;
    w = tw;
    h = th;
  }
  unsigned char *jpg = NULL;
  unsigned long jlen = 0;
  int rc =
      tjCompress2(c->enc, pix, w, 0, h, ch == 1 ? TJPF_GRAY : TJPF_RGB, &jpg,
                  &jlen, ch == 1 ? TJSAMP_GRAY : TJSAMP_420, o->quality, 0);
  free(pix);
  if (rc) {
    tjFree(jpg);
    return fail(r, "JPEG encode failed: %s", tjGetErrorStr2(c->enc));
  }
  /* Into the restart layout (lossless: TurboJPEG's coefficients). */
  rc = rewrite(c, jpg, jlen, r);
  tjFree(jpg);
  if (rc)
    return -1;
  r->width = (uint16_t)w;
  r->height = (uint16_t)h;
  r->channels = (uint8_t)ch;
  r->codec = SL_IMAGE_JPEG;
  r->reencoded = true;
  return 0;
}

/* Decodes a JPEG at 1/8 scale (warnings are errors) to be sure it decodes:
 * every block is still Huffman-decoded. */
static int check_eighth(sl_pack_codec *c, const uint8_t *jpg, size_t len, int w,
                        int h, int pf, sl_pack_result *r) {
  tjscalingfactor eighth = {1, 8};
  int sw = TJSCALED(w, eighth), sh = TJSCALED(h, eighth);
  uint8_t *tmp = malloc((size_t)sw * sh * tjPixelSize[pf]);
  if (!tmp)
    return no_memory(r);
  int rc = tjDecompress2(c->dec, jpg, (unsigned long)len, tmp, sw, 0, sh, pf,
                         TJFLAG_STOPONWARNING);
  free(tmp);
  return rc ? dec_fail(c, r, "corrupt JPEG") : 0;
}

/* Rewrites a JPEG into the restart layout (sl_transcoder_jpeg, which also
 * checks that the loader's decoder takes the result): sets r->data
 * (malloc'd) and r->len, or r->reason. */
static int rewrite(sl_pack_codec *c, const uint8_t *jpg, size_t len,
                   sl_pack_result *r) {
  uint8_t *out;
  size_t out_len;
  sl_status st = sl_transcoder_jpeg(c->tc, jpg, len, &out, &out_len);
  if (st != SL_OK) {
    static const char prefix[] = "jpeg rewrite: ";
    const char *msg = sl_transcoder_errmsg(c->tc);
    if (strncmp(msg, prefix, sizeof prefix - 1) == 0)
      msg += sizeof prefix - 1;
    r->no_memory = st == SL_ENOMEM;
    return fail(r, "%s JPEG: %s",
                st == SL_EUNSUPPORTED ? "unsupported"
                : st == SL_ENOMEM     ? "out of memory for"
                : st == SL_ETOOBIG    ? "too large"
                                      : "corrupt",
                msg);
  }
  r->data = out;
  r->len = out_len;
  r->tj_owned = false;
  return 0;
}

/* After a failed decode a TurboJPEG handle is not reliably reusable (2.1:
 * later headers fail with "Bogus Huffman table definition"), so the reason
 * is recorded and the handle replaced. */
static int dec_fail(sl_pack_codec *c, sl_pack_result *r, const char *what) {
  fail(r, "%s: %s", what, tjGetErrorStr2(c->dec));
  tjDestroy(c->dec);
  c->dec = tjInitDecompress();
  return -1;
}

static int no_memory(sl_pack_result *r) {
  r->no_memory = true;
  return fail(r, "out of memory");
}

static int fail(sl_pack_result *r, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->reason, sizeof r->reason, fmt, ap);
  va_end(ap);
  return -1;
}
