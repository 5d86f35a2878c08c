/* The decoder object, request checks, and the row helpers shared by the
 * codecs: pixel-format conversion and the cropping/box-reducing sink. */
#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "codecs/codec_impl.h"
#include "common/mem.h"
#include "formats/levels.h"

enum { k_arena_extra = 512 * 1024 };

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
    st = sl_jpeg_probe(d, jp, info, err);
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
  switch (in->codec) {
  case SL_IMAGE_JPEG:
    return sl_jpeg_probe(d, in, info, err);
  case SL_IMAGE_JPEG_LEVELS: {
    sl_encoded jp;
    return sl_decoder_level(d, in, 0, &jp, info, err);
  }
  case SL_IMAGE_PNG:
    return sl_png_probe(d, in, info, err);
  case SL_IMAGE_WEBP:
    return sl_webp_probe(d, in, info, err);
  case SL_IMAGE_RAW:
  case SL_IMAGE_RAW_CHW:
  case SL_IMAGE_RAW_CHW_BGR:
    return sl_raw_probe(d, in, info, err);
  default:
    return sl_err_set(err, SL_EUNSUPPORTED, "decoder: unknown codec %d",
                      in->codec);
  }
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
   * it: a level record decodes level 0's JPEG, and a JPEG just probed is
   * not read again. */
  sl_encoded jp;
  sl_image_info info;
  sl_status st;
  if (in->codec == SL_IMAGE_JPEG_LEVELS) {
    st = sl_decoder_level(d, in, 0, &jp, &info, err);
    if (st != SL_OK)
      return st;
    in = &jp;
  } else if (in->codec == SL_IMAGE_JPEG && d->pending &&
             d->pending == in->bytes && d->pending_len == in->len) {
    info = d->pending_info;
    st = SL_OK;
  } else {
    st = sl_decoder_probe(d, in, &info, err);
  }
  if (st == SL_OK)
    st = sl_check_request(d, req, &info, err);
  if (st != SL_OK) {
    if (in->codec == SL_IMAGE_JPEG && d->pending)
      sl_jpeg_forget(d);
    return st;
  }
  switch (in->codec) {
  case SL_IMAGE_JPEG:
    return sl_jpeg_decode(d, in, &info, req, out, err);
  case SL_IMAGE_PNG:
    return sl_png_decode(d, in, &info, req, out, err);
  case SL_IMAGE_WEBP:
    return sl_webp_decode(d, in, &info, req, out, err);
  default: /* the probe refused any other codec */
    return sl_raw_decode(d, in, &info, req, out, err);
  }
}

sl_status sl_check_request(const sl_decoder *d, const sl_decode_req *req,
                           const sl_image_info *info, sl_err *err) {
  if (req->w < 1 || req->h < 1 || req->x < 0 || req->y < 0 ||
      req->x > info->width - req->w || req->y > info->height - req->h)
    return sl_err_set(
        err, SL_EINVAL, "decoder: region %dx%d+%d+%d outside the %dx%d image",
        req->w, req->h, req->x, req->y, info->width, info->height);
  if (req->scale < 1 || req->scale > 8 || req->min_w < 0 || req->min_h < 0)
    return sl_err_set(err, SL_EINVAL, "decoder: scale %d/8 (1..8/8)",
                      req->scale);
  (void)d;
  return SL_OK;
}

static int plan_axis(int pos, int len, int side, int m, int *p0) {
  int s = sl_scaled_side(side, m);
  int a = (int)(((int64_t)pos * m + 4) / 8);
  int b = (int)(((int64_t)(pos + len) * m + 4) / 8);
  if (b > s)
    b = s;
  if (a > s - 1)
    a = s - 1;
  if (b <= a)
    b = a + 1;
  *p0 = a;
  return b - a;
}

/* The box factor for a scaled region side r: 1 below 2 * min (or when
 * min is 0), else floor(r / min), which leaves the side in [min, 2 * min).
 * A pure function of the request, so outputs never depend on the caps. */
static int reduce_factor(int r, int min) {
  return min > 0 && r >= 2 * min ? r / min : 1;
}

sl_status sl_region_plan(const sl_decoder *d, const char *codec,
                         const sl_decode_req *req, int img_w, int img_h, int m,
                         sl_region *r, sl_err *err) {
  r->rw = plan_axis(req->x, req->w, img_w, m, &r->x0);
  r->rh = plan_axis(req->y, req->h, img_h, m, &r->y0);
  r->kx = reduce_factor(r->rw, req->min_w);
  r->ky = reduce_factor(r->rh, req->min_h);
  int nx = (r->rw + r->kx - 1) / r->kx, ny = (r->rh + r->ky - 1) / r->ky;
  if (nx > d->cap_w || ny > d->cap_h)
    return sl_err_set(err, SL_ETOOBIG,
                      "%s: region %dx%d at %d/8 exceeds the decoder's %dx%d "
                      "scratch",
                      codec, nx, ny, m, d->cap_w, d->cap_h);
  return SL_OK;
}

/* ---- rows ---- */

static inline uint8_t div255(uint32_t v) {
  v += 128;
  return (uint8_t)((v + (v >> 8)) >> 8);
}

static inline uint8_t luma(uint32_t r, uint32_t g, uint32_t b) {
  return (uint8_t)((r * 77 + g * 150 + b * 29 + 128) >> 8);
}

void sl_convert_row(const uint8_t *in, sl_pixfmt fmt, int n, uint8_t *out,
                    int out_ch) {
  for (int i = 0; i < n; i++) {
    uint32_t r, g, b;
    switch (fmt) {
    case SL_PIX_GRAY:
      r = g = b = in[i];
      break;
    case SL_PIX_RGB:
      r = in[3 * i], g = in[3 * i + 1], b = in[3 * i + 2];
      break;
    case SL_PIX_RGBX:
      r = in[4 * i], g = in[4 * i + 1], b = in[4 * i + 2];
      break;
    case SL_PIX_CMYK_INV: {
      uint32_t k = in[4 * i + 3];
      r = div255(in[4 * i] * k), g = div255(in[4 * i + 1] * k);
      b = div255(in[4 * i + 2] * k);
      break;
    }
    default: { /* SL_PIX_CMYK */
      uint32_t k = 255u - in[4 * i + 3];
      r = div255((255u - in[4 * i]) * k);
      g = div255((255u - in[4 * i + 1]) * k);
      b = div255((255u - in[4 * i + 2]) * k);
      break;
    }
    }
    if (out_ch == 1) {
      out[i] = fmt == SL_PIX_GRAY ? (uint8_t)r : luma(r, g, b);
    } else {
      out[4 * i] = (uint8_t)r, out[4 * i + 1] = (uint8_t)g;
      out[4 * i + 2] = (uint8_t)b, out[4 * i + 3] = 255;
    }
  }
}

void sl_sink_begin(sl_sink *s, sl_decoder *d, int ch, int rw, int rh, int kx,
                   int ky) {
  s->ch = ch;
  s->rw = rw;
  s->rh = rh;
  s->kx = kx;
  s->ky = ky;
  s->nx = (rw + kx - 1) / kx;
  s->ny = (rh + ky - 1) / ky;
  s->out = d->region;
  s->stride = (size_t)s->nx * (size_t)ch;
  s->acc = d->acc;
  s->in_rows = s->oy = s->acc_rows = 0;
  if (kx > 1 || ky > 1)
    memset(s->acc, 0, sizeof(uint32_t) * (size_t)s->nx * (size_t)ch);
}

void sl_sink_end(const sl_sink *s, int m, sl_decoded *out) {
  out->pixels = s->out;
  out->stride = s->stride;
  out->w = s->nx;
  out->h = s->ny;
  out->scale = m;
  out->kx = s->kx;
  out->ky = s->ky;
}

/* Divides the sums of an output row by their pixel counts (a rounded
 * fixed-point reciprocal per count) and clears them. */
static void sink_emit(sl_sink *s) {
  uint8_t *o = s->out + (size_t)s->oy * s->stride;
  int ch = s->ch, full = s->rw / s->kx;
  uint64_t n = (uint64_t)s->kx * (uint64_t)s->acc_rows;
  uint64_t mul = ((1ull << 24) + n / 2) / n;
  size_t nfull = (size_t)full * (size_t)ch;
  for (size_t i = 0; i < nfull; i++) {
    o[i] = (uint8_t)((s->acc[i] * mul + (1u << 23)) >> 24);
    s->acc[i] = 0;
  }
  if (full < s->nx) { /* the last, narrower column */
    n = (uint64_t)(s->rw - full * s->kx) * (uint64_t)s->acc_rows;
    mul = ((1ull << 24) + n / 2) / n;
    for (int c = 0; c < ch; c++) {
      uint32_t *a = &s->acc[nfull + (size_t)c];
      o[nfull + (size_t)c] = (uint8_t)((*a * mul + (1u << 23)) >> 24);
      *a = 0;
    }
  }
  s->oy++;
  s->acc_rows = 0;
}

/* a[i] += p[i] for n values, in fixed blocks of 16 so that the compiler
 * vectorises the body even under -O2's very-cheap cost model. */
static void acc_add(uint32_t *restrict a, const uint8_t *restrict p, size_t n) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int j = 0; j < 16; j++)
      a[i + j] += p[i + j];
  for (; i < n; i++)
    a[i] += p[i];
}

/* Horizontal pairs of RGBX pixels: a[4o + c] += p[8o + c] + p[8o + 4 + c].
 * SSE2 (every x86-64) for blocks of four outputs, scalar otherwise. */
static void acc_add_pairs(uint32_t *restrict a, const uint8_t *restrict p,
                          int pairs) {
  int o = 0;
#if defined(__SSE2__)
  const __m128i z = _mm_setzero_si128();
  for (; o + 4 <= pairs; o += 4, a += 16, p += 32) {
    for (int h = 0; h < 2; h++) { /* 4 input pixels -> 2 outputs */
      __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * h));
      __m128i lo = _mm_unpacklo_epi8(v, z), hi = _mm_unpackhi_epi8(v, z);
      __m128i sum =
          _mm_add_epi16(_mm_unpacklo_epi64(lo, hi), _mm_unpackhi_epi64(lo, hi));
      __m128i *d = (__m128i *)(void *)(a + 8 * h);
      _mm_storeu_si128(
          d, _mm_add_epi32(_mm_loadu_si128(d), _mm_unpacklo_epi16(sum, z)));
      _mm_storeu_si128(d + 1, _mm_add_epi32(_mm_loadu_si128(d + 1),
                                            _mm_unpackhi_epi16(sum, z)));
    }
  }
#endif
  for (; o < pairs; o++, a += 4, p += 8)
    for (int c = 0; c < 4; c++)
      a[c] += (uint32_t)p[c] + p[4 + c];
}

void sl_sink_row(sl_sink *s, const uint8_t *px) {
  if (s->in_rows >= s->rh)
    return;
  s->in_rows++;
  if (s->kx == 1 && s->ky == 1) {
    memcpy(s->out + (size_t)s->oy++ * s->stride, px, s->stride);
    return;
  }
  int ch = s->ch, kx = s->kx, full = s->rw / kx;
  uint32_t *a = s->acc;
  if (kx == 1) {
    acc_add(a, px, (size_t)s->rw * (size_t)ch);
  } else if (ch == 4 && kx == 2) { /* the common case: pairs */
    acc_add_pairs(a, px, full);
    if (full * 2 < s->rw)
      acc_add(a + 4 * full, px + 8 * full, 4);
  } else if (ch == 4) {
    for (int ox = 0; ox < full; ox++, a += 4) {
      uint32_t r = 0, g = 0, b = 0, x = 0;
      for (int i = 0; i < kx; i++, px += 4)
        r += px[0], g += px[1], b += px[2], x += px[3];
      a[0] += r, a[1] += g, a[2] += b, a[3] += x;
    }
    for (int i = full * kx; i < s->rw; i++, px += 4)
      a[0] += px[0], a[1] += px[1], a[2] += px[2], a[3] += px[3];
  } else {
    for (int ox = 0; ox < full; ox++, a++) {
      uint32_t v = 0;
      for (int i = 0; i < kx; i++)
        v += *px++;
      a[0] += v;
    }
    for (int i = full * kx; i < s->rw; i++)
      a[0] += *px++;
  }
  if (++s->acc_rows == s->ky || s->in_rows == s->rh)
    sink_emit(s);
}
