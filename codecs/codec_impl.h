/* Inside the codecs stage: the decoder's scratch, the row sink that crops
 * and box-reduces streaming rows, and the per-codec entry points. */
#ifndef SLUICE_CODECS_CODEC_IMPL_H
#define SLUICE_CODECS_CODEC_IMPL_H

#include <setjmp.h>
#include <stdio.h>

#include <jpeglib.h>

#include "codecs/codec.h"
#include "codecs/jpeg_window.h"

enum {
  SL_CODEC_MAX_SIDE = 65535, /* JPEG's own limit, and sl_sample_info's */
  SL_CROP_PAD = 32,          /* jpeg_crop_scanline widens by < 32 px */
  SL_ROW_PIXELS = SL_CODEC_MAX_SIDE + SL_CROP_PAD + 1,
  /* Room for a restart-segment window (codecs/jpeg_window.h): a crop of a
   * photo of up to ~4 MP at q90. A larger window is decoded from the whole
   * stream instead, which gives the same pixels. */
  SL_WINDOW_BYTES = 1 << 20
};

/* Stored pixel formats a row can come in. */
typedef enum sl_pixfmt {
  SL_PIX_GRAY,
  SL_PIX_RGB,
  SL_PIX_RGBX,
  SL_PIX_CMYK,    /* plain: 0 = no ink */
  SL_PIX_CMYK_INV /* Adobe: stored inverted, 255 = no ink */
} sl_pixfmt;

typedef struct sl_jpeg_err {
  struct jpeg_error_mgr pub;
  jmp_buf jb;
  char msg[JMSG_LENGTH_MAX];
} sl_jpeg_err;

/* A bump allocator for libpng and zlib, reset per image. */
typedef struct sl_arena {
  uint8_t *base;
  size_t cap, used;
} sl_arena;

/* Rows of a region, cropped and box-reduced as they stream in. */
typedef struct sl_sink {
  uint8_t *out;
  size_t stride;
  int ch, rw, rh, kx, ky, nx, ny;
  int in_rows, oy, acc_rows;
  uint32_t *acc; /* nx * ch sums */
} sl_sink;

struct sl_decoder {
  uint64_t max_pixels;
  int cap_w, cap_h;
  uint8_t *region; /* (cap_w + SL_CROP_PAD) * cap_h * 4 */
  size_t region_cap;
  uint8_t *row; /* SL_ROW_PIXELS * 4 */
  uint32_t *acc;
  JSAMPROW *rowptr; /* cap_h row pointers */
  sl_arena arena;
  /* JPEG: one decompressor for the decoder's life. */
  struct jpeg_decompress_struct jd;
  sl_jpeg_err je;
  int jd_live;
  const uint8_t *pending; /* input whose header jd holds, or NULL */
  size_t pending_len;
  sl_image_info pending_info;
  int pending_windowable; /* pending_grid is usable for windows */
  sl_jpeg_grid pending_grid;
  uint8_t *window; /* SL_WINDOW_BYTES */
};

/* The region [x0,x0+rw) x [y0,y0+rh) of the image scaled by M/8, and the
 * box factors kx, ky that reduce it for min_w/min_h. */
typedef struct sl_region {
  int x0, y0, rw, rh, kx, ky;
} sl_region;

/* The region of req (full-size coordinates) in an img_w x img_h image at
 * M/8. SL_ETOOBIG (message starting with codec) when the region, after box
 * reduction, does not fit the decoder's scratch. */
sl_status sl_region_plan(const sl_decoder *d, const char *codec,
                         const sl_decode_req *req, int img_w, int img_h, int m,
                         sl_region *r, sl_err *err);
sl_status sl_check_request(const sl_decoder *d, const sl_decode_req *req,
                           const sl_image_info *info, sl_err *err);

void sl_sink_begin(sl_sink *s, sl_decoder *d, int ch, int rw, int rh, int kx,
                   int ky);
/* One input row of rw pixels of s->ch bytes. */
void sl_sink_row(sl_sink *s, const uint8_t *px);
/* Describes the sink's finished output in out: its pixels, stride and size,
 * the DCT scale m/8 it was decoded at and its box factors. */
void sl_sink_end(const sl_sink *s, int m, sl_decoded *out);
/* Converts n pixels from fmt to 4 (RGBX) or 1 (gray) bytes per pixel.
 * in and out may be the same buffer when fmt has 4 bytes per pixel or when
 * out_ch is 1. */
void sl_convert_row(const uint8_t *in, sl_pixfmt fmt, int n, uint8_t *out,
                    int out_ch);

/* The codecs' entry points. A probe reads the header into *info (a JPEG's
 * stays in the decoder, pending, for the decode of the same bytes). A
 * decode gets the probed *info and a request sl_check_request accepted:
 * sl_decoder_decode does both first, for every codec. */
sl_status sl_jpeg_probe(sl_decoder *d, const sl_encoded *in,
                        sl_image_info *info, sl_err *err);
sl_status sl_jpeg_decode(sl_decoder *d, const sl_encoded *in,
                         const sl_image_info *info, const sl_decode_req *req,
                         sl_decoded *out, sl_err *err);
/* Drops the pending header (the decompressor is aborted). */
void sl_jpeg_forget(sl_decoder *d);
sl_status sl_png_probe(const sl_decoder *d, const sl_encoded *in,
                       sl_image_info *info, sl_err *err);
sl_status sl_png_decode(sl_decoder *d, const sl_encoded *in,
                        const sl_image_info *info, const sl_decode_req *req,
                        sl_decoded *out, sl_err *err);
sl_status sl_webp_probe(const sl_decoder *d, const sl_encoded *in,
                        sl_image_info *info, sl_err *err);
sl_status sl_webp_decode(sl_decoder *d, const sl_encoded *in,
                         const sl_image_info *info, const sl_decode_req *req,
                         sl_decoded *out, sl_err *err);
sl_status sl_raw_probe(const sl_decoder *d, const sl_encoded *in,
                       sl_image_info *info, sl_err *err);
sl_status sl_raw_decode(sl_decoder *d, const sl_encoded *in,
                        const sl_image_info *info, const sl_decode_req *req,
                        sl_decoded *out, sl_err *err);

#endif
