/* The decoder object and the dispatch: probe and decode walk the codec
 * table (one const row per codec, each in its codec's file), check the
 * request, and read level records as their JPEGs. The codecs' shared
 * helpers lie below, in region.c and sink.c. */
#include <stdlib.h>
#include <string.h>

#include "codecs/codec_impl.h"
#include "common/mem.h"
#include "formats/levels.h"

enum { k_arena_extra = 512 * 1024 };

/* The codecs, each row naming the sl_image_codec values it reads. */
static const sl_codec_row *const k_codecs[] = {&sl_codec_jpeg, &sl_codec_png,
                                               &sl_codec_webp, &sl_codec_raw};

/* The row that reads codec, or NULL. */
static const sl_codec_row *codec_row(int codec) {
  if (codec < 0 || codec > 31)
    return NULL;
  for (size_t i = 0; i < sizeof k_codecs / sizeof k_codecs[0]; i++)
    if (k_codecs[i]->codecs & (1u << codec))
      return k_codecs[i];
  return NULL;
}

sl_status sl_decoder_create(sl_decoder **out, uint64_t max_pixels, int cap_w,
                            int cap_h, sl_err *err) {
  *out = NULL;
  if (max_pixels < 1 || cap_w < 1 || cap_h < 1 || cap_w > SL_CODEC_MAX_SIDE ||
      cap_h > SL_CODEC_MAX_SIDE)
    return sl_err_set(err, SL_EINVAL,
                      "decoder: bad caps %dx%d or max_pixels %llu", cap_w,
                      cap_h, (unsigned long long)max_pixels);
  sl_decoder *d = calloc(1, sizeof *d);
  if (!d)
    return sl_err_set(err, SL_ENOMEM, "decoder: out of memory");
  d->max_pixels = max_pixels;
  d->cap_w = cap_w;
  d->cap_h = cap_h;
  d->region_cap = (size_t)(cap_w + SL_CROP_PAD) * (size_t)cap_h * 4;
  d->region = sl_alloc_touched(d->region_cap, 64);
  d->row = sl_alloc_touched((size_t)SL_ROW_PIXELS * 4, 64);
  d->acc = sl_alloc_touched((size_t)(cap_w + 1) * 4 * sizeof(uint32_t), 64);
  d->rowptr = calloc((size_t)cap_h, sizeof(JSAMPROW));
  d->arena.cap = 2 * (size_t)SL_CODEC_MAX_SIDE * 8 + k_arena_extra;
  d->arena.base = sl_alloc_touched(d->arena.cap, 64);
  d->window = sl_alloc_touched(SL_WINDOW_BYTES, 64);
  d->strip_w = 2 * cap_w + 64;
  d->strip =
      sl_alloc_touched((size_t)3 * SL_STRIP_ROWS * (size_t)d->strip_w, 64);
  if (!d->region || !d->row || !d->acc || !d->rowptr || !d->arena.base ||
      !d->window || !d->strip) {
    size_t total = d->region_cap + d->arena.cap + SL_WINDOW_BYTES;
    sl_decoder_destroy(d);
    return sl_err_set(err, SL_ENOMEM,
                      "decoder: out of memory for %zu bytes of scratch", total);
  }
  *out = d;
  return SL_OK;
}

void sl_decoder_destroy(sl_decoder *d) {
  if (!d)
    return;
  if (d->jd_live)
    jpeg_destroy_decompress(&d->jd);
  sl_free_aligned(d->region);
  sl_free_aligned(d->row);
  sl_free_aligned(d->acc);
  sl_free_aligned(d->arena.base);
  sl_free_aligned(d->window);
  sl_free_aligned(d->strip);
  free(d->rowptr);
  free(d);
}

sl_status sl_decoder_levels(const sl_encoded *in, sl_levels *lv, sl_err *err) {
  const char *why = sl_levels_parse(in->bytes, in->len, lv);
  return why ? sl_err_set(err, SL_EDECODE, "jpeg levels: %s", why) : SL_OK;
}

sl_status sl_decoder_level(sl_decoder *d, const sl_encoded *in, int k,
                           sl_encoded *jp, sl_image_info *info, sl_err *err) {
  sl_levels lv;
  sl_status st = sl_decoder_levels(in, &lv, err);
  return st == SL_OK ? sl_decoder_level_of(d, &lv, k, jp, info, err) : st;
}

sl_status sl_decoder_level_of(sl_decoder *d, const sl_levels *lv, int k,
                              sl_encoded *jp, sl_image_info *info,
                              sl_err *err) {
  if (k < 0 || k >= lv->n)
    return sl_err_set(err, SL_EINVAL, "jpeg levels: level %d of %d", k, lv->n);
  sl_encoded e = {lv->level[k].bytes, lv->level[k].len, SL_IMAGE_JPEG, 0, 0, 0};
  *jp = e;
  sl_status st;
  if (d->pending == e.bytes && d->pending_len == e.len) {
    *info = d->pending_info;
  } else {
    st = sl_codec_jpeg.probe(d, jp, info, err);
    if (st != SL_OK)
      return sl_err_prefix(err, "jpeg levels: level %d: ", k);
  }
  if (info->width != lv->level[k].width || info->height != lv->level[k].height)
    return sl_err_set(err, SL_EDECODE,
                      "jpeg levels: level %d is a %dx%d JPEG, its record "
                      "says %ux%u (damaged level record)",
                      k, info->width, info->height, lv->level[k].width,
                      lv->level[k].height);
  return SL_OK;
}

sl_status sl_decoder_probe(sl_decoder *d, const sl_encoded *in,
                           sl_image_info *info, sl_err *err) {
  memset(info, 0, sizeof *info);
  if (!in->bytes && in->len)
    return sl_err_set(err, SL_EINVAL, "decoder: NULL input");
  if (in->codec == SL_IMAGE_JPEG_LEVELS) { /* a record of JPEGs: level 0 */
    sl_encoded jp;
    return sl_decoder_level(d, in, 0, &jp, info, err);
  }
  const sl_codec_row *c = codec_row(in->codec);
  if (!c)
    return sl_err_set(err, SL_EUNSUPPORTED, "decoder: unknown codec %d",
                      in->codec);
  return c->probe(d, in, info, err);
}

static sl_status check_request(const sl_decode_req *req,
                               const sl_image_info *info, sl_err *err) {
  if (req->w < 1 || req->h < 1 || req->x < 0 || req->y < 0 ||
      req->x > info->width - req->w || req->y > info->height - req->h)
    return sl_err_set(
        err, SL_EINVAL, "decoder: region %dx%d+%d+%d outside the %dx%d image",
        req->w, req->h, req->x, req->y, info->width, info->height);
  if (req->scale < 1 || req->scale > 8 || req->min_w < 0 || req->min_h < 0)
    return sl_err_set(err, SL_EINVAL, "decoder: scale %d/8 (1..8/8)",
                      req->scale);
  return SL_OK;
}

sl_status sl_decoder_decode(sl_decoder *d, const sl_encoded *in,
                            const sl_decode_req *req, sl_decoded *out,
                            sl_err *err) {
  memset(out, 0, sizeof *out);
  if (req->channels != 1 && req->channels != 4)
    return sl_err_set(err, SL_EINVAL, "decoder: channels %d (1 or 4)",
                      req->channels);
  if (!in->bytes && in->len)
    return sl_err_set(err, SL_EINVAL, "decoder: NULL input");
  /* Every codec's decode starts from the header and a request that fits
   * it: a level record decodes level 0's JPEG, and a header its codec's
   * probe kept for these bytes is not read again. */
  sl_encoded jp;
  sl_image_info info;
  sl_status st = SL_OK;
  if (in->codec == SL_IMAGE_JPEG_LEVELS) {
    st = sl_decoder_level(d, in, 0, &jp, &info, err);
    if (st != SL_OK)
      return st;
    in = &jp;
  }
  const sl_codec_row *c = codec_row(in->codec);
  if (in != &jp) {
    /* The probe refuses a codec with no row, so c is set past here. */
    if (c && c->forget && d->pending && d->pending == in->bytes &&
        d->pending_len == in->len)
      info = d->pending_info;
    else
      st = sl_decoder_probe(d, in, &info, err);
  }
  if (st == SL_OK)
    st = check_request(req, &info, err);
  if (st != SL_OK) {
    if (c && c->forget && d->pending)
      c->forget(d);
    return st;
  }
  return c->decode(d, in, &info, req, out, err);
}
