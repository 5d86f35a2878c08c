/* libjpeg message hooks shared by sluice's decoder and rewriter: corrupt
 * data is an error, and nothing is printed.
 *
 * libjpeg reports corrupt-but-decodable data (bad Huffman codes, premature
 * end, extraneous bytes) as warnings and carries on with made-up pixels;
 * sluice wants a status instead. Install both on a jpeg_error_mgr whose
 * error_exit longjmps back to the caller. Thread safety: stateless. */
#ifndef SLUICE_CODECS_JPEG_STRICT_H
#define SLUICE_CODECS_JPEG_STRICT_H

#include <stdio.h>

#include <jpeglib.h>

/* emit_message: a warning (level -1) goes to the manager's error_exit;
 * the unknown-JFIF-revision notice (JWRN_JFIF_MAJOR) is not corruption
 * and is ignored. */
void sl_jpeg_emit_strict(j_common_ptr c, int level);
/* output_message: libraries do not print. */
void sl_jpeg_output_silent(j_common_ptr c);

#endif
