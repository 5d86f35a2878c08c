/* Inside the codecs stage: the decoder's scratch, the codec table's row,
 * and the helpers every codec calls (region.c, sink.c): the region plan
 * and the row sink that crops and box-reduces streaming rows. */
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
  uint8_t *strip;  /* 3 * SL_STRIP_ROWS * strip_w: planes' iMCU row */
  int strip_w;     /* 2 * cap_w + 64 */
};

/* Rows of one component in one iMCU row of a raw decode: v_samp *
 * DCT_scaled_size, at most 2 * 8 for luma and 1 * 16 for 4:2:0 chroma at
 * 5/8..7/8 (libjpeg-turbo decodes it at twice the scale). */
enum { SL_STRIP_ROWS = 16 };

/* A planes decode's geometry, from sl_jpeg_planes_plan. */
typedef struct sl_planes_plan {
  int n;
  int lines; /* luma rows per jpeg_read_raw_data */
  int rows[3], width[3], sub_x[3], sub_y[3];
  int cx0[3], cx1[3], cy0[3], cy1[3]; /* the region in plane pixels */
} sl_planes_plan;

/* The region [x0,x0+rw) x [y0,y0+rh) of the image scaled by M/8, and the
 * box factors kx, ky that reduce it for min_w/min_h. */
typedef struct sl_region {
  int x0, y0, rw, rh, kx, ky;
} sl_region;

/* The region of req (full-size coordinates) in an img_w x img_h image at
 * M/8. SL_ETOOBIG (message starting with codec) when the region, after box
 * reduction, does not fit the decoder's scratch. (region.c) */
sl_status sl_region_plan(const sl_decoder *d, const char *codec,
                         const sl_decode_req *req, int img_w, int img_h, int m,
                         sl_region *r, sl_err *err);

/* The row sink (sink.c). */
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

/* One codec: a const row in the codec's own file, which decoder.c's table
 * lists. The probe reads the header into *info; a decode gets the probed
 * *info and a request the dispatch has checked against it (inside the
 * image, scale 1..8, channels 1 or 4). */
typedef struct sl_codec_row {
  const char *name;
  uint32_t codecs; /* bit c set for each sl_image_codec value c it reads */
  sl_status (*probe)(sl_decoder *d, const sl_encoded *in, sl_image_info *info,
                     sl_err *err);
  sl_status (*decode)(sl_decoder *d, const sl_encoded *in,
                      const sl_image_info *info, const sl_decode_req *req,
                      sl_decoded *out, sl_err *err);
  /* Drops the header the probe keeps in d (d->pending: reused by a decode
   * of the same bytes that follows); NULL when the probe keeps none. */
  void (*forget)(sl_decoder *d);
} sl_codec_row;

extern const sl_codec_row sl_codec_jpeg; /* jpeg.c */
extern const sl_codec_row sl_codec_png;  /* png.c */
extern const sl_codec_row sl_codec_webp; /* webp.c */
extern const sl_codec_row sl_codec_raw;  /* raw.c: RAW, RAW_CHW, _BGR */

/* Whether region g at m/8 of the JPEG whose header d->jd holds decodes to
 * planes (codecs/jpeg_planes.c): 3-component YCbCr with a chroma
 * subsampling of 1 or 2 per axis, or grayscale, unreduced, the iMCU rows
 * within the strip, and the raw decode (no column crop, no row skip) not
 * much more work than the region. 1 with *pp filled and d->jd set for raw
 * output; 0 with d->jd as it was. Called with the longjmp target set. */
int sl_jpeg_planes_plan(sl_decoder *d, const sl_region *g, int m, int windowed,
                        sl_planes_plan *pp);
/* Decodes the region to planes in d->region (after sl_jpeg_planes_plan
 * said 1). Called with the longjmp target set. */
sl_status sl_jpeg_planes_body(sl_decoder *d, const sl_region *g,
                              const sl_planes_plan *pp, int m, sl_decoded *out,
                              sl_err *err);

#endif
