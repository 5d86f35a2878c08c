/* Pixel codecs: probe an encoded image and decode a region of it.
 *
 * One small interface for JPEG (libjpeg API of libjpeg-turbo), PNG (libpng)
 * WebP (libwebp: crop and scale inside the decoder) and raw u8 arrays (HWC,
 * or CHW planes in RGB or BGR order). A decode names a
 * region of the full-size image, a DCT scale M/8 (JPEG only: libjpeg's scaled
 * IDCT, so a 1/2-size decode costs a quarter of the work) and a minimum output
 * size; when the scaled region is still at least twice that size in a
 * dimension, it is further box-averaged by an integer factor in that dimension
 * while rows stream in (to between 1x and 2x the minimum). JPEG decodes only
 * the rows and iMCU columns that hold the region (jpeg_crop_scanline,
 * jpeg_skip_scanlines, and it stops after the last needed row). When the file's
 * restart markers cut its MCU rows into segments (codecs/jpeg_layout.h, what
 * `sluice pack` writes), it also Huffman-decodes only the segments under the
 * region instead of every row above it and the full width of each row: same
 * pixels, less work.
 *
 * Output is 8-bit RGBX (4 bytes per pixel, X = 255: the layout libyuv's
 * ARGB functions take) or gray (1 byte). Grayscale sources are replicated to
 * RGB; CMYK/YCCK JPEGs (Adobe-inverted or not) are converted to RGB; PNG
 * palettes, low bit depths and 16-bit samples are expanded or reduced to
 * 8 bits, alpha is dropped (as PIL's convert("RGB") does).
 *
 * Thread safety: a decoder is one worker's scratch; use each from one
 * thread at a time. Different decoders are independent.
 *
 * Memory, all allocated by sl_decoder_create and never grown:
 *   region buffer  (cap_w + 32) * cap_h * 4 bytes
 *   one row        65568 * 4 bytes, plus cap_w * 16 bytes of sums
 *   PNG arena      2 * 65535 * 8 + 512 KiB (libpng and zlib state)
 *   JPEG window    1 MiB (a larger window falls back to the whole stream)
 *   plane strip    3 * 16 * (2 * cap_w + 64) bytes: one iMCU row of each
 *                  component for planes (wider images decode to RGBX)
 * libjpeg's own working memory comes from its allocator: small tables, plus
 * for progressive JPEGs the coefficients of the whole image (about 2 bytes
 * per pixel and component), bounded through max_pixels. Decoding is
 * refused before any big allocation when a header claims more than
 * max_pixels pixels or a side over 65535. */
#ifndef SLUICE_CODECS_CODEC_H
#define SLUICE_CODECS_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

/* How a sample's payload is encoded: sluice.h's sl_image_codec, whose
 * values are the codec byte of the dataset files (formats/core/layout.h). To
 * the codecs: SL_IMAGE_RAW is a u8 HWC array of height*width*channels bytes;
 * SL_IMAGE_RAW_CHW and _BGR u8 planes (channels 1 or 3) of height*width
 * bytes each, as Caffe's raw Datums hold them, in R, G, B or B, G, R order;
 * SL_IMAGE_WEBP lossy or lossless WebP (libwebp), alpha dropped;
 * SL_IMAGE_JPEG_LEVELS one image at several resolutions, each a JPEG (the
 * level record, formats/core/levels.h): probe and decode read level 0, and
 * sl_decoder_level gives the others as plain JPEGs. */

/* Chroma subsampling of a JPEG (others report SL_SUB_444 or SL_SUB_GRAY). */
typedef enum sl_subsamp {
  SL_SUB_GRAY = 0,
  SL_SUB_444,
  SL_SUB_422,
  SL_SUB_420,
  SL_SUB_440,
  SL_SUB_411,
  SL_SUB_OTHER
} sl_subsamp;

/* Colour model of the stored data. */
typedef enum sl_color_model {
  SL_COLOR_GRAY = 0,
  SL_COLOR_RGB, /* YCbCr or RGB JPEG, RGB(A)/palette PNG, 3/4-channel raw */
  SL_COLOR_CMYK,
  SL_COLOR_YCCK
} sl_color_model;

typedef struct sl_image_info {
  int width, height;
  int components;  /* stored components: 1..4 */
  int progressive; /* JPEG progressive, or PNG interlaced */
  int inverted;    /* CMYK/YCCK JPEG with an Adobe marker: stored inverted */
  sl_subsamp subsamp;
  sl_color_model color;
} sl_image_info;

/* One encoded input. codec is an sl_image_codec; raw_h/raw_w/raw_c give a raw
 * array's shape (raw_c 1, 3 or 4) and are ignored otherwise. */
typedef struct sl_encoded {
  const uint8_t *bytes;
  size_t len;
  int codec;
  int raw_h, raw_w, raw_c;
} sl_encoded;

typedef struct sl_decode_req {
  int x, y, w, h;   /* region of the full-size image; inside it, w,h >= 1 */
  int scale;        /* M of the DCT scale M/8, 1..8; non-JPEG ignore it */
  int min_w, min_h; /* box-reduce while the output stays >= this;
                       0: never reduce */
  int channels;     /* output bytes per pixel: 4 (RGBX) or 1 (gray) */
  int planes;       /* JPEG, channels 4: may answer with planes (sl_decoded
                       nplanes) instead of RGBX, where they fit */
} sl_decode_req;

/* A decoded region as planes: libjpeg's raw output (jpeg_read_raw_data),
 * before chroma upsampling and colour conversion. Plane c's pixel i covers
 * pixels [(x0[c] + i) * sub_x[c], (x0[c] + i + 1) * sub_x[c]) of the image
 * scaled by scale/8 (the luma plane: sub 1), rows likewise: the box model
 * of JFIF's centred chroma. */
typedef struct sl_planes {
  int n;                  /* 1 (gray: Y) or 3 (Y, Cb, Cr) */
  const uint8_t *px[3];   /* first pixel of each plane */
  size_t stride[3];       /* bytes from one row to the next */
  int w[3], h[3];         /* pixels of each plane */
  int x0[3], y0[3];       /* first pixel in the plane's own coordinates */
  int sub_x[3], sub_y[3]; /* scaled pixels per plane pixel: 1 or 2 */
} sl_planes;

/* Where the decoded region lies: valid until the decoder's next call. */
typedef struct sl_decoded {
  const uint8_t *pixels; /* the region's first pixel */
  size_t stride;         /* bytes from one row to the next */
  int w, h;              /* pixels after the DCT scale and box reduction */
  int scale;             /* the DCT scale used (8 for non-JPEG) */
  int kx, ky;            /* the box-reduction factors used */
  int windowed;          /* JPEG: only the region's restart segments were
                            read (codecs/jpeg_window.h) */
  int x0, y0;            /* JPEG: the region's first pixel in the image
                            scaled by scale/8 (before box reduction): the
                            output's pixel i covers scaled pixels
                            [x0 + i * kx, x0 + (i + 1) * kx) */
  sl_planes planes;      /* planes.n > 0: the region as planes (only when
                            req->planes); pixels, stride, w, h, x0, y0 then
                            describe the luma plane, kx = ky = 1 */
} sl_decoded;

typedef struct sl_decoder sl_decoder;

/* A decoder whose decoded regions may be up to cap_w x cap_h pixels
 * (before the +32 columns jpeg_crop_scanline may add on the left); larger
 * ones are SL_ETOOBIG. Requests with min_w/min_h get regions under
 * 2*min_w x 2*min_h, so cap = 2 * the largest output side suffices.
 * Errors: SL_EINVAL, SL_ENOMEM. */
sl_status sl_decoder_create(sl_decoder **out, uint64_t max_pixels, int cap_w,
                            int cap_h, sl_err *err);
void sl_decoder_destroy(sl_decoder *d);

/* Reads the header. For JPEG the parsed header is kept, so a decode of the
 * same input (same pointer and length, bytes unchanged) that follows reuses
 * it. Errors: SL_EDECODE (not this codec,
 * corrupt header: the library's message), SL_ETOOBIG (over max_pixels or a
 * side over 65535), SL_EUNSUPPORTED (unknown codec). */
sl_status sl_decoder_probe(sl_decoder *d, const sl_encoded *in,
                           sl_image_info *info, sl_err *err);

/* Decodes req's region. Errors: as probe, plus SL_EINVAL (region outside
 * the image, bad scale or channels), SL_ETOOBIG (the region does not fit
 * the decoder's caps), SL_EUNSUPPORTED (interlaced PNG). Corrupt-data
 * warnings are errors. The decoder is usable again after any error. */
sl_status sl_decoder_decode(sl_decoder *d, const sl_encoded *in,
                            const sl_decode_req *req, sl_decoded *out,
                            sl_err *err);

/* Parses a level record (SL_IMAGE_JPEG_LEVELS) into its JPEGs; the
 * levels' sizes come from its directory. Errors: SL_EDECODE naming what is
 * cut or damaged. */
struct sl_levels;
sl_status sl_decoder_levels(const sl_encoded *in, struct sl_levels *lv,
                            sl_err *err);
/* Level k of the level record in as a plain JPEG input (*jp), probed into
 * *info, its size checked against the record's directory. Errors: as
 * sl_decoder_levels and probe, SL_EDECODE for a level whose JPEG is not the
 * size the directory says, SL_EINVAL for k out of range. */
sl_status sl_decoder_level(sl_decoder *d, const sl_encoded *in, int k,
                           sl_encoded *jp, sl_image_info *info, sl_err *err);
/* As sl_decoder_level, from a record already parsed into lv (whole, or a
 * level view of level k: formats/core/levels.h's sl_levels_parse_view). */
sl_status sl_decoder_level_of(sl_decoder *d, const struct sl_levels *lv, int k,
                              sl_encoded *jp, sl_image_info *info, sl_err *err);

/* The scaled size libjpeg produces for a side of n pixels at M/8. */
static inline int sl_scaled_side(int n, int m) {
  return (int)(((int64_t)n * m + 7) / 8);
}

#endif
