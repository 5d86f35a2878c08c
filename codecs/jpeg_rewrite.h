/* Lossless JPEG rewrite into sluice's restart layout (codecs/jpeg_layout.h).
 *
 * What: reads a JPEG's quantized DCT coefficients (libjpeg's transcoding
 * API, no inverse DCT) and writes them again as a sequential Huffman JPEG
 * with optimized Huffman tables and a restart marker every
 * sl_jpeg_restart_mcus(mcus_per_row, mcu_w) MCUs, where mcu_w is 8 times the
 * largest horizontal sampling factor (8 for a one-component image) and
 * mcus_per_row = ceil(width / mcu_w). The coefficients and quantization
 * tables are unchanged, so the output decodes to exactly the pixels of the
 * input. A progressive input becomes sequential (the same coefficients in
 * one scan); an arithmetic-coded input becomes Huffman-coded (libjpeg
 * decodes arithmetic coding; the coefficients are again unchanged).
 *
 * Why: with every MCU row cut into segments of about SL_JPEG_SEGMENT_PX
 * pixels, the region decoder (codecs/jpeg_window.h) finds the segments a
 * crop needs by scanning for markers and Huffman-decodes only those.
 *
 * Markers: no APPn or COM marker of the input is kept (EXIF, ICC, XMP,
 * comments are dropped); only what libjpeg writes itself: JFIF for YCbCr
 * and gray (with the input's density), Adobe for RGB, CMYK and YCCK
 * (written for 4-component images only when the input had one, so an
 * inverted CMYK stays inverted and a plain one plain).
 *
 * Refused: images larger than the rewriter's max_pixels (SL_ETOOBIG,
 * before any large allocation); more than 4 components (no single
 * interleaved scan; SL_EUNSUPPORTED); what libjpeg-turbo cannot read, such
 * as lossless (SOF3) or 12-bit JPEGs (SL_EUNSUPPORTED). Corrupt input is
 * SL_EDECODE with libjpeg's message; libjpeg's corrupt-data warnings
 * (premature end, bad Huffman code, extraneous bytes) are errors too.
 *
 * Thread safety: a rewriter is used by one thread at a time; use one per
 * thread. Rewriters share nothing.
 *
 * Memory: libjpeg holds the whole coefficient image while rewriting: about
 * 2 bytes per pixel per component at that component's resolution (4:2:0
 * colour: 3 bytes per pixel; 4:4:4: 6), so at most 6 * max_pixels bytes,
 * freed before sl_jpeg_rewrite returns; plus the output, about the input's
 * size. Between calls a rewriter holds only libjpeg's small structs. */
#ifndef SLUICE_CODECS_JPEG_REWRITE_H
#define SLUICE_CODECS_JPEG_REWRITE_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

typedef struct sl_jpeg_rewriter sl_jpeg_rewriter;

/* Creates a rewriter that refuses images of more than max_pixels pixels
 * (0: no limit other than JPEG's 65535 x 65535). Errors: SL_ENOMEM. */
sl_status sl_jpeg_rewriter_create(sl_jpeg_rewriter **out, uint64_t max_pixels,
                                  sl_err *err);

/* Frees the rewriter; NULL is allowed. */
void sl_jpeg_rewriter_destroy(sl_jpeg_rewriter *rw);

/* Overrides the restart interval of later rewrites: mcus > 0 writes a
 * restart marker every mcus MCUs (at most 65535), 0 writes none, -1 goes
 * back to the layout rule (the default). For measurements and tests: only
 * the layout rule gives files the region decoder can window. */
void sl_jpeg_rewriter_set_interval(sl_jpeg_rewriter *rw, int mcus);

/* Rewrites the JPEG in[0, len) into the restart layout. On SL_OK *out is a
 * malloc'd buffer of *out_len bytes that the caller frees with free(); on
 * error *out is NULL, *out_len 0 and nothing is left allocated. The input
 * is only read. The rewriter is usable again after any error.
 * Errors: SL_EDECODE (corrupt or not a JPEG), SL_EUNSUPPORTED, SL_ETOOBIG,
 * SL_ENOMEM, SL_EINVAL (NULL arguments). */
sl_status sl_jpeg_rewrite(sl_jpeg_rewriter *rw, const uint8_t *in, size_t len,
                          uint8_t **out, size_t *out_len, sl_err *err);

/* The restart interval a rewrite writes: sl_restart_layout_interval
 * (sluice.h). */

#endif
