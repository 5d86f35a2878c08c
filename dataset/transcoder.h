/* Inside sl_transcoder: what the writer API shares with it. */
#ifndef SLUICE_DATASET_TRANSCODER_H
#define SLUICE_DATASET_TRANSCODER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

/* Largest image a rewrite takes (its coefficients: up to 6 bytes a pixel). */
#define SL_TRANSCODE_MAX_PIXELS (1ull << 28)

/* sl_transcoder_jpeg with the error into err instead of the transcoder. */
sl_status sl_transcode_jpeg(sl_transcoder *t, const uint8_t *in, size_t len,
                            uint8_t **out, size_t *out_len, sl_err *err);

/* sl_transcoder_levels with the error into err. */
sl_status sl_transcode_levels(sl_transcoder *t, const uint8_t *in, size_t len,
                              uint32_t scales, int quality, uint8_t **out,
                              size_t *out_len, sl_err *err);

/* True when the JPEG already has the layout a rewrite gives it: the region
 * decoder can window it and its restart interval is the layout rule's. */
bool sl_jpeg_in_restart_layout(const uint8_t *bytes, size_t len);

#endif
