/* sl_transcoder (sluice.h): the restart-layout rewrite of a JPEG, checked
 * with the loader's own decoder, and the test that a JPEG already has that
 * layout (so a writer stores what a transcoder made as it is). */
#include <stdlib.h>
#include <string.h>

#include "codecs/codec.h"
#include "codecs/jpeg_layout.h"
#include "codecs/jpeg_levels.h"
#include "codecs/jpeg_rewrite.h"
#include "codecs/jpeg_window.h"
#include "dataset/transcoder.h"
#include "formats/core/levels.h"
#include "sluice.h"

struct sl_transcoder {
  sl_jpeg_rewriter *rw;
  sl_decoder *dec; /* the loader's decoder, for a check of the result */
  sl_err err;
};

sl_status sl_transcoder_create(sl_transcoder **out) {
  if (!out)
    return SL_EINVAL;
  sl_transcoder *t = *out = calloc(1, sizeof *t);
  if (!t)
    return SL_ENOMEM;
  sl_err err;
  if (sl_jpeg_rewriter_create(&t->rw, SL_TRANSCODE_MAX_PIXELS, &err) != SL_OK ||
      sl_decoder_create(&t->dec, SL_TRANSCODE_MAX_PIXELS, 16, 16, &err) !=
          SL_OK) {
    sl_transcoder_destroy(t);
    *out = NULL;
    return SL_ENOMEM;
  }
  return SL_OK;
}

void sl_transcoder_destroy(sl_transcoder *t) {
  if (!t)
    return;
  sl_jpeg_rewriter_destroy(t->rw);
  sl_decoder_destroy(t->dec);
  free(t);
}

const char *sl_transcoder_errmsg(const sl_transcoder *t) {
  return t ? t->err.msg : "no transcoder";
}

sl_status sl_transcode_jpeg(sl_transcoder *t, const uint8_t *in, size_t len,
                            uint8_t **out, size_t *out_len, sl_err *err) {
  *out = NULL;
  *out_len = 0;
  sl_status st = sl_jpeg_rewrite(t->rw, in, len, out, out_len, err);
  if (st != SL_OK)
    return st;
  /* The rewrite read every coefficient (warnings as errors); what is left
   * to check is that the loader's decoder takes the result: its first and
   * last pixel, through the restart windows (a few segments, microseconds;
   * this also runs libjpeg's output setup, which refuses sampling it cannot
   * upsample). */
  sl_encoded e = {*out, *out_len, SL_IMAGE_JPEG, 0, 0, 0};
  sl_image_info info;
  st = sl_decoder_probe(t->dec, &e, &info, err);
  for (int corner = 0; st == SL_OK && corner < 2; corner++) {
    sl_decode_req q = {corner ? info.width - 1 : 0,
                       corner ? info.height - 1 : 0,
                       1,
                       1,
                       8,
                       0,
                       0,
                       4,
                       0};
    sl_decoded d;
    st = sl_decoder_decode(t->dec, &e, &q, &d, err);
  }
  if (st != SL_OK) {
    sl_err_prefix(err, "the loader cannot decode the rewritten JPEG: ");
    free(*out);
    *out = NULL;
    *out_len = 0;
  }
  return st;
}

sl_status sl_transcoder_jpeg(sl_transcoder *t, const void *in, size_t len,
                             uint8_t **out, size_t *out_len) {
  if (!t || !in || !out || !out_len) {
    if (t)
      sl_err_set(&t->err, SL_EINVAL, "sl_transcoder_jpeg: NULL argument");
    return SL_EINVAL;
  }
  return sl_transcode_jpeg(t, in, len, out, out_len, &t->err);
}

sl_status sl_transcode_levels(sl_transcoder *t, const uint8_t *in, size_t len,
                              uint32_t scales, int quality, uint8_t **out,
                              size_t *out_len, sl_err *err) {
  *out = NULL;
  *out_len = 0;
  uint8_t *l0 = NULL;
  size_t l0_len = 0;
  sl_status st;
  if (sl_jpeg_in_restart_layout(in, len)) {
    if (!(l0 = malloc(len ? len : 1)))
      return sl_err_set(err, SL_ENOMEM, "no memory for a %zu-byte JPEG", len);
    memcpy(l0, in, len);
    l0_len = len;
    st = SL_OK;
  } else {
    st = sl_transcode_jpeg(t, in, len, &l0, &l0_len, err);
  }
  if (st != SL_OK)
    return st;
  uint8_t *rec = NULL;
  size_t rec_len = 0;
  st = sl_jpeg_levels_make(l0, l0_len, scales, quality, SL_TRANSCODE_MAX_PIXELS,
                           &rec, &rec_len, err);
  if (st != SL_OK) {
    free(l0);
    return st;
  }
  if (rec) {
    free(l0);
    *out = rec;
    *out_len = rec_len;
  } else {
    *out = l0;
    *out_len = l0_len;
  }
  return SL_OK;
}

sl_status sl_transcoder_levels(sl_transcoder *t, const void *in, size_t len,
                               uint32_t scales, int quality, uint8_t **out,
                               size_t *out_len) {
  if (!t || !in || !out || !out_len) {
    if (t)
      sl_err_set(&t->err, SL_EINVAL, "sl_transcoder_levels: NULL argument");
    return SL_EINVAL;
  }
  return sl_transcode_levels(t, in, len, scales, quality, out, out_len,
                             &t->err);
}

int sl_image_level(const void *bytes, size_t len, uint32_t level,
                   const uint8_t **jpeg, size_t *jpeg_len, uint32_t *width,
                   uint32_t *height) {
  sl_levels lv;
  if (!bytes || sl_levels_parse(bytes, len, &lv) || level >= (uint32_t)lv.n)
    return 0;
  if (jpeg)
    *jpeg = lv.level[level].bytes;
  if (jpeg_len)
    *jpeg_len = lv.level[level].len;
  if (width)
    *width = lv.level[level].width;
  if (height)
    *height = lv.level[level].height;
  return lv.n;
}

bool sl_jpeg_in_restart_layout(const uint8_t *bytes, size_t len) {
  sl_jpeg_grid lo;
  return sl_jpeg_grid_read(bytes, len, &lo) &&
         lo.interval == sl_jpeg_restart_mcus(lo.mcus_x, lo.mcu_w);
}

/* What the region decoder itself asks (codecs/jpeg.c windows a JPEG when
 * sl_jpeg_grid_read accepts it), so any usable restart interval counts;
 * sl_jpeg_in_restart_layout also wants the writer's own interval. */
int sl_image_has_restart_layout(const void *bytes, size_t len) {
  sl_jpeg_grid lo;
  return bytes && sl_jpeg_grid_read(bytes, len, &lo) ? 1 : 0;
}
