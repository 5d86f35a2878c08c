/* Making the resolution levels of a JPEG: see codecs/jpeg_levels.h. */
#include "codecs/jpeg_levels.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>

#include "codecs/jpeg_strict.h"
#include "formats/core/levels.h"
#include "sluice.h"

typedef struct lv_err {
  struct jpeg_error_mgr pub;
  jmp_buf jb;
  char msg[JMSG_LENGTH_MAX];
} lv_err;

typedef struct lv_img {
  uint8_t *px; /* w × h × ch */
  int w, h, ch;
} lv_img;

static void lv_exit(j_common_ptr c) {
  lv_err *e = (lv_err *)c->err;
  c->err->format_message(c, e->msg);
  longjmp(e->jb, 1);
}

static void lv_err_init(lv_err *e) {
  jpeg_std_error(&e->pub);
  e->pub.error_exit = lv_exit;
  e->pub.emit_message = sl_jpeg_emit_strict;
  e->pub.output_message = sl_jpeg_output_silent;
}

/* Decodes jpeg whole to RGB or gray. 1: CMYK/YCCK (no levels are made). */
static int decode_full(const uint8_t *jpeg, size_t len, uint64_t max_pixels,
                       lv_img *img, sl_err *err, sl_status *st) {
  struct jpeg_decompress_struct d;
  lv_err e;
  lv_err_init(&e);
  d.err = &e.pub;
  volatile int made = 0;
  if (setjmp(e.jb)) {
    if (made)
      jpeg_destroy_decompress(&d);
    free(img->px);
    img->px = NULL;
    *st = sl_err_set(err, SL_EDECODE, "jpeg levels: %s", e.msg);
    return -1;
  }
  jpeg_create_decompress(&d);
  made = 1;
  jpeg_mem_src(&d, jpeg, (unsigned long)len);
  jpeg_read_header(&d, TRUE);
  if (d.jpeg_color_space == JCS_CMYK || d.jpeg_color_space == JCS_YCCK) {
    jpeg_destroy_decompress(&d);
    return 1;
  }
  if ((uint64_t)d.image_width * d.image_height > max_pixels) {
    *st = sl_err_set(
        err, SL_ETOOBIG, "jpeg levels: %ux%u image exceeds %llu pixels",
        d.image_width, d.image_height, (unsigned long long)max_pixels);
    jpeg_destroy_decompress(&d);
    return -1;
  }
  d.out_color_space =
      d.jpeg_color_space == JCS_GRAYSCALE ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_start_decompress(&d);
  img->w = (int)d.output_width;
  img->h = (int)d.output_height;
  img->ch = d.output_components;
  size_t stride = (size_t)img->w * (size_t)img->ch;
  img->px = malloc(stride * (size_t)img->h);
  if (!img->px) {
    jpeg_destroy_decompress(&d);
    *st = sl_err_set(err, SL_ENOMEM, "jpeg levels: no memory for %dx%d", img->w,
                     img->h);
    return -1;
  }
  while (d.output_scanline < d.output_height) {
    JSAMPROW row = img->px + stride * d.output_scanline;
    jpeg_read_scanlines(&d, &row, 1);
  }
  jpeg_finish_decompress(&d);
  jpeg_destroy_decompress(&d);
  return 0;
}

/* Area weights of one axis: output o takes input pixels [first[o], ...)
 * with weights w[off[o] ..off[o + 1]) that sum to 1. */
typedef struct axis {
  int *first, *off;
  float *w;
} axis;

static void axis_free(axis *a) {
  free(a->first);
  free(a->off);
  free(a->w);
}

static int axis_make(axis *a, int n, int m) {
  /* Output o covers input [o * n / m, (o + 1) * n / m): at most
   * ceil(n / m) + 1 pixels. */
  int per = n / m + 2;
  a->first = malloc(sizeof(int) * (size_t)m);
  a->off = malloc(sizeof(int) * ((size_t)m + 1));
  a->w = malloc(sizeof(float) * (size_t)m * (size_t)per);
  if (!a->first || !a->off || !a->w)
    return -1;
  int k = 0;
  for (int o = 0; o < m; o++) {
    double lo = (double)o * n / m, hi = (double)(o + 1) * n / m;
    int i0 = (int)lo, i1 = (int)hi;
    if (i1 >= n || (double)i1 == hi)
      i1 = (double)i1 == hi ? i1 - 1 : n - 1;
    a->first[o] = i0;
    a->off[o] = k;
    double scale = (double)m / n;
    for (int i = i0; i <= i1; i++) {
      double a0 = i > lo ? i : lo, a1 = i + 1 < hi ? i + 1 : hi;
      a->w[k++] = (float)((a1 - a0) * scale);
    }
  }
  a->off[m] = k;
  return 0;
}

/* The area average of src at ow × oh. */
static int area_resize(const lv_img *src, int ow, int oh, uint8_t *dst) {
  axis ax = {0}, ay = {0};
  int ch = src->ch;
  float *tmp = malloc(sizeof(float) * (size_t)ow * (size_t)src->h * (size_t)ch);
  int rc = -1;
  if (tmp && axis_make(&ax, src->w, ow) == 0 &&
      axis_make(&ay, src->h, oh) == 0) {
    for (int y = 0; y < src->h; y++) {
      const uint8_t *in = src->px + (size_t)y * src->w * ch;
      float *o = tmp + (size_t)y * ow * ch;
      for (int x = 0; x < ow; x++)
        for (int c = 0; c < ch; c++) {
          float s = 0;
          for (int k = ax.off[x]; k < ax.off[x + 1]; k++)
            s += ax.w[k] * in[(size_t)(ax.first[x] + k - ax.off[x]) * ch + c];
          o[(size_t)x * ch + c] = s;
        }
    }
    for (int y = 0; y < oh; y++)
      for (size_t i = 0; i < (size_t)ow * ch; i++) {
        float s = 0;
        for (int k = ay.off[y]; k < ay.off[y + 1]; k++)
          s += ay.w[k] *
               tmp[(size_t)(ay.first[y] + k - ay.off[y]) * ow * ch + i];
        int v = (int)(s + 0.5f);
        dst[(size_t)y * ow * ch + i] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
      }
    rc = 0;
  }
  free(tmp);
  axis_free(&ax);
  axis_free(&ay);
  return rc;
}

/* Encodes w × h × ch pixels as a sequential JPEG in the restart layout. */
static sl_status encode(uint8_t *px, int w, int h, int ch, int quality,
                        uint8_t **out, size_t *out_len, sl_err *err) {
  struct jpeg_compress_struct c;
  lv_err e;
  lv_err_init(&e);
  c.err = &e.pub;
  unsigned char *buf = NULL;
  unsigned long size = 0;
  volatile int made = 0;
  if (setjmp(e.jb)) {
    if (made)
      jpeg_destroy_compress(&c);
    free(buf);
    return sl_err_set(err, SL_ENOMEM, "jpeg levels: encode: %s", e.msg);
  }
  jpeg_create_compress(&c);
  made = 1;
  jpeg_mem_dest(&c, &buf, &size);
  c.image_width = (JDIMENSION)w;
  c.image_height = (JDIMENSION)h;
  c.input_components = ch;
  c.in_color_space = ch == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(&c);
  jpeg_set_quality(&c, quality, TRUE);
  c.optimize_coding = TRUE;
  /* jpeg_set_defaults gives 2x2 luma sampling for colour: 4:2:0. */
  c.restart_in_rows = 0;
  c.restart_interval = (unsigned)sl_restart_layout_interval(
      w, ch, ch == 1 ? 1 : c.comp_info[0].h_samp_factor);
  jpeg_start_compress(&c, TRUE);
  while (c.next_scanline < c.image_height) {
    JSAMPROW row = px + (size_t)c.next_scanline * w * ch;
    jpeg_write_scanlines(&c, &row, 1);
  }
  jpeg_finish_compress(&c);
  jpeg_destroy_compress(&c);
  *out = buf;
  *out_len = size;
  return SL_OK;
}

sl_status sl_jpeg_levels_make(const uint8_t *jpeg, size_t len, unsigned scales,
                              int quality, uint64_t max_pixels, uint8_t **out,
                              size_t *out_len, sl_err *err) {
  *out = NULL;
  *out_len = 0;
  if (scales & ~0x7Fu || quality < 1 || quality > 100)
    return sl_err_set(err, SL_EINVAL,
                      "jpeg levels: scales 0x%x (bits for 1/8..7/8) or "
                      "quality %d (1..100)",
                      scales, quality);
  int ms[SL_LEVELS_MAX - 1], nm = 0;
  for (int m = 7; m >= 1; m--)
    if (scales & (1u << (m - 1))) {
      if (nm == SL_LEVELS_MAX - 1)
        return sl_err_set(err, SL_EINVAL, "jpeg levels: more than %d levels",
                          SL_LEVELS_MAX - 1);
      ms[nm++] = m;
    }
  if (len > UINT32_MAX)
    return sl_err_set(err, SL_ETOOBIG, "jpeg levels: %zu-byte JPEG", len);
  lv_img img = {0};
  sl_status st = SL_OK;
  int rc = nm ? decode_full(jpeg, len, max_pixels, &img, err, &st) : 1;
  if (rc != 0)
    return rc > 0 ? SL_OK : st;
  uint8_t *enc[SL_LEVELS_MAX] = {0};
  size_t elen[SL_LEVELS_MAX] = {0};
  int lw[SL_LEVELS_MAX] = {img.w}, lh[SL_LEVELS_MAX] = {img.h}, n = 1;
  for (int i = 0; i < nm && st == SL_OK; i++) {
    int w = sl_level_side(img.w, ms[i]), h = sl_level_side(img.h, ms[i]);
    if ((w < h ? w : h) < SL_LEVEL_MIN_SIDE || w >= lw[n - 1] || h >= lh[n - 1])
      continue;
    uint8_t *px = malloc((size_t)w * (size_t)h * (size_t)img.ch);
    if (!px || area_resize(&img, w, h, px) != 0)
      st = sl_err_set(err, SL_ENOMEM, "jpeg levels: no memory for %dx%d", w, h);
    else
      st = encode(px, w, h, img.ch, quality, &enc[n], &elen[n], err);
    free(px);
    if (st == SL_OK)
      lw[n] = w, lh[n] = h, n++;
  }
  free(img.px);
  size_t total = SL_LEVELS_HDR + (size_t)n * SL_LEVELS_ENTRY + len;
  for (int k = 1; k < n; k++)
    total += elen[k];
  uint8_t *rec = NULL;
  if (st == SL_OK && n > 1 && total <= UINT32_MAX && !(rec = malloc(total)))
    st = sl_err_set(err, SL_ENOMEM, "jpeg levels: no memory");
  if (st == SL_OK && n > 1 && rec) {
    memcpy(rec, SL_LEVELS_MAGIC, 4);
    rec[4] = (uint8_t)n;
    rec[5] = rec[6] = rec[7] = 0;
    size_t off = SL_LEVELS_HDR + (size_t)n * SL_LEVELS_ENTRY;
    for (int k = 0; k < n; k++) {
      uint8_t *e = rec + SL_LEVELS_HDR + (size_t)k * SL_LEVELS_ENTRY;
      const uint8_t *b = k ? enc[k] : jpeg;
      size_t l = k ? elen[k] : len;
      sl_put_le32(e, (uint32_t)l);
      sl_put_le16(e + 4, (uint16_t)lh[k]);
      sl_put_le16(e + 6, (uint16_t)lw[k]);
      memcpy(rec + off, b, l);
      off += l;
    }
    *out = rec;
    *out_len = total;
  }
  for (int k = 1; k < SL_LEVELS_MAX; k++)
    free(enc[k]);
  return st;
}
