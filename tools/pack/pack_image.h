/* `sluice pack`'s image work: probe, decode, orient, resize, encode.
 *
 * Rules (docs/FORMATS.md repeats them):
 *  - JPEG inputs that need no change (not larger than --max-side, EXIF
 *    orientation 1 or none, not CMYK/YCCK, --reencode not given) are
 *    rewritten losslessly into the restart layout (codecs/jpeg_layout.h,
 *    codecs/jpeg_rewrite.h): same DCT coefficients, so the same pixels;
 *    sequential Huffman with optimized tables; metadata dropped. With
 *    --keep-jpeg (keep_jpeg) they keep their original bytes instead. An
 *    input libjpeg cannot read cleanly is skipped, not packed: the rewrite
 *    reads every coefficient (warnings are errors) and the loader's decoder
 *    then decodes the result's first and last pixel; kept bytes are
 *    decoded once at 1/8 scale.
 *  - Otherwise the image is decoded, turned upright by its EXIF orientation
 *    (unless keep_orientation: `pack --coco/--voc`),
 *    resized with a box filter (libyuv) so its longer side is --max-side,
 *    encoded as JPEG at --quality (4:2:0 for colour) and rewritten into the
 *    restart layout (lossless), whatever keep_jpeg says.
 *  - PNG inputs are decoded (8-bit; 16-bit samples scaled linearly,
 *    rounded v / 257, no gamma curve; alpha composited onto white), turned
 *    upright by the orientation in their eXIf chunk, and encoded as JPEG
 *    the same way.
 *  - Grayscale stays grayscale (1 channel); everything else becomes RGB
 *    (3 channels). CMYK/YCCK JPEGs are read as Adobe-style inverted CMYK and
 *    converted with R = C*K/255 (and so on).
 *
 * One sl_pack_codec per thread (it holds TurboJPEG handles and a
 * rewriter). A rewrite holds the input's coefficients: ~2 bytes per pixel
 * per component, so at most 6 * MAX_PIXELS (256 Mpx) bytes per thread. */
#ifndef SLUICE_TOOLS_PACK_IMAGE_H
#define SLUICE_TOOLS_PACK_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct sl_pack_codec sl_pack_codec;

typedef struct sl_pack_opts {
  int max_side; /* 0: no limit */
  int quality;  /* 1..100 */
  bool reencode;
  bool keep_jpeg;  /* JPEGs needing no change keep their bytes */
  unsigned levels; /* sl_writer_options.levels: 0 none; excludes keep_jpeg */
  /* Pixels as the file stores them, EXIF orientation not applied: the
   * frame COCO's and VOC's boxes were drawn in (`pack --coco/--voc`). */
  bool keep_orientation;
} sl_pack_opts;

typedef struct sl_pack_result {
  uint8_t *data; /* payload; free with sl_pack_result_free */
  size_t len;
  bool tj_owned; /* data came from tjAlloc */
  uint16_t height, width;
  uint32_t src_height, src_width; /* the input's stored pixels (before any
                                     orientation or resize) */
  uint8_t channels, codec;
  bool reencoded;   /* decoded and encoded again */
  bool rewritten;   /* the input's coefficients in the restart layout;
                       neither: the original JPEG bytes */
  bool no_memory;   /* not packed for want of memory, which is no fault
                      of the input: the pack stops rather than skip it */
  uint8_t levels;   /* levels stored (codec SL_IMAGE_JPEG_LEVELS), or 0 */
  char reason[200]; /* why the input was skipped */
} sl_pack_result;

sl_pack_codec *sl_pack_codec_create(void);
void sl_pack_codec_destroy(sl_pack_codec *c);

/* Turns one input file's bytes into a payload. in is taken over (freed, or
 * kept as the payload). Returns 0, or -1 with r->reason set (skip it). */
int sl_pack_transcode(sl_pack_codec *c, uint8_t *in, size_t len,
                      const sl_pack_opts *o, sl_pack_result *r);
void sl_pack_result_free(sl_pack_result *r);

/* EXIF orientation (1..8) of a JPEG, 1 when it has none or it is bad. */
int sl_exif_orientation(const uint8_t *jpeg, size_t len);
/* The same from a PNG's eXIf chunk. */
int sl_png_exif_orientation(const uint8_t *png, size_t len);

#endif
