/* Test images: see test_images.h. */
#include "test_images.h"

#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <turbojpeg.h>

void ti_pattern(int x, int y, int w, int h, uint8_t rgb[3]) {
  int right = x >= w / 2, bottom = y >= h / 2;
  static const uint8_t c[4][3] = {
      {230, 20, 20}, {20, 230, 20}, {20, 20, 230}, {240, 240, 240}};
  memcpy(rgb, c[bottom * 2 + right], 3);
}

int ti_write(const char *path, const void *data, size_t len) {
  FILE *f = fopen(path, "wb");
  if (!f)
    return -1;
  int rc = fwrite(data, 1, len, f) == len ? 0 : -1;
  if (fclose(f) != 0)
    rc = -1;
  return rc;
}

uint8_t *ti_read(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *b = malloc(n > 0 ? (size_t)n : 1);
  if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
    free(b);
    b = NULL;
  }
  fclose(f);
  *len = (size_t)n;
  return b;
}

static uint8_t *pattern(int w, int h, int ch) {
  uint8_t *p = malloc((size_t)w * h * ch);
  for (int y = 0; p && y < h; y++)
    for (int x = 0; x < w; x++) {
      uint8_t rgb[3];
      ti_pattern(x, y, w, h, rgb);
      if (ch == 1)
        p[(size_t)y * w + x] =
            (uint8_t)(40 + 60 * ((y >= h / 2) * 2 + (x >= w / 2)));
      else
        memcpy(p + ((size_t)y * w + x) * 3, rgb, 3);
    }
  return p;
}

static int encode(const char *path, const uint8_t *pix, int w, int h, int pf,
                  int samp, int quality, const uint8_t *app1, size_t app1_len) {
  tjhandle t = tjInitCompress();
  unsigned char *jpg = NULL;
  unsigned long jlen = 0;
  int rc =
      t ? tjCompress2(t, pix, w, 0, h, pf, &jpg, &jlen, samp, quality, 0) : -1;
  if (rc == 0 && app1) { /* splice APP1 right after SOI */
    uint8_t *b = malloc(jlen + app1_len);
    memcpy(b, jpg, 2);
    memcpy(b + 2, app1, app1_len);
    memcpy(b + 2 + app1_len, jpg + 2, jlen - 2);
    rc = ti_write(path, b, jlen + app1_len);
    free(b);
  } else if (rc == 0) {
    rc = ti_write(path, jpg, jlen);
  }
  tjFree(jpg);
  if (t)
    tjDestroy(t);
  return rc;
}

int ti_jpeg(const char *path, int w, int h, int gray, int quality) {
  uint8_t *p = pattern(w, h, gray ? 1 : 3);
  int rc = encode(path, p, w, h, gray ? TJPF_GRAY : TJPF_RGB,
                  gray ? TJSAMP_GRAY : TJSAMP_420, quality, NULL, 0);
  free(p);
  return rc;
}

/* The pattern as a camera stores it when its EXIF orientation is orient:
 * applying orient to the stored sw x sh pixels gives the upright w x h
 * pattern. malloc'd, RGB. */
static uint8_t *stored_pattern(int w, int h, int orient, int *sw_out,
                               int *sh_out) {
  int sw = orient >= 5 ? h : w, sh = orient >= 5 ? w : h;
  uint8_t *up = pattern(w, h, 3);
  uint8_t *st = malloc((size_t)sw * sh * 3);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      int sx, sy;
      switch (orient) {
      case 3:
        sx = sw - 1 - x, sy = sh - 1 - y;
        break;
      case 6: /* upright(x, y) = stored(y, sh - 1 - x) */
        sx = y, sy = sh - 1 - x;
        break;
      case 8: /* upright(x, y) = stored(sw - 1 - y, x) */
        sx = sw - 1 - y, sy = x;
        break;
      default:
        sx = x, sy = y;
        break;
      }
      memcpy(st + ((size_t)sy * sw + sx) * 3, up + ((size_t)y * w + x) * 3, 3);
    }
  free(up);
  *sw_out = sw;
  *sh_out = sh;
  return st;
}

enum { TIFF_BYTES = 26 };

/* A little-endian TIFF block whose IFD0 holds one entry: orientation. */
static void exif_tiff(int orient, uint8_t t[TIFF_BYTES]) {
  static const uint8_t head[TIFF_BYTES] = {
      'I',  'I',  42, 0, 8, 0, 0, 0,             /* header, IFD0 at 8 */
      1,    0,                                   /* one entry */
      0x12, 0x01, 3,  0, 1, 0, 0, 0, 0, 0, 0, 0, /* 0x0112 SHORT x1 */
      0,    0,    0,  0};                        /* no next IFD */
  memcpy(t, head, TIFF_BYTES);
  t[18] = (uint8_t)orient;
}

int ti_jpeg_exif(const char *path, int w, int h, int orient) {
  int sw, sh;
  uint8_t *st = stored_pattern(w, h, orient, &sw, &sh);
  /* APP1: "Exif\0\0" + the TIFF block. */
  uint8_t app1[4 + 6 + TIFF_BYTES] = {0xFF, 0xE1};
  size_t n = sizeof app1;
  app1[2] = (uint8_t)((n - 2) >> 8);
  app1[3] = (uint8_t)(n - 2);
  memcpy(app1 + 4, "Exif\0\0", 6);
  exif_tiff(orient, app1 + 10);
  int rc = encode(path, st, sw, sh, TJPF_RGB, TJSAMP_444, 95, app1, n);
  free(st);
  return rc;
}

static uint32_t crc32_png(const uint8_t *p, size_t n) {
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; i++) {
    c ^= p[i];
    for (int k = 0; k < 8; k++)
      c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
  }
  return c ^ 0xFFFFFFFFu;
}

static void be32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16);
  p[2] = (uint8_t)(v >> 8), p[3] = (uint8_t)v;
}

int ti_png_exif(const char *path, int w, int h, int orient) {
  int sw, sh;
  uint8_t *st = stored_pattern(w, h, orient, &sw, &sh);
  png_image img;
  memset(&img, 0, sizeof img);
  img.version = PNG_IMAGE_VERSION;
  img.width = (png_uint_32)sw;
  img.height = (png_uint_32)sh;
  img.format = PNG_FORMAT_RGB;
  png_alloc_size_t len = 0;
  int rc = -1;
  if (png_image_write_get_memory_size(img, len, 0, st, 0, NULL)) {
    uint8_t *png = malloc(len);
    if (png && png_image_write_to_memory(&img, png, &len, 0, st, 0, NULL)) {
      /* eXIf right after the signature (8) and IHDR (25 bytes). */
      enum { AT = 8 + 25, CHUNK = 12 + TIFF_BYTES };
      uint8_t *out = malloc(len + CHUNK);
      uint8_t *c = out + AT;
      memcpy(out, png, AT);
      be32(c, TIFF_BYTES);
      memcpy(c + 4, "eXIf", 4);
      exif_tiff(orient, c + 8);
      be32(c + 8 + TIFF_BYTES, crc32_png(c + 4, 4 + TIFF_BYTES));
      memcpy(out + AT + CHUNK, png + AT, len - AT);
      rc = ti_write(path, out, len + CHUNK);
      free(out);
    }
    free(png);
  }
  free(st);
  return rc;
}

int ti_jpeg_cmyk(const char *path, int w, int h) {
  uint8_t *p = malloc((size_t)w * h * 4);
  for (int i = 0; i < w * h; i++) {
    p[4 * i] = 200; /* inverted CMYK, as Adobe stores it */
    p[4 * i + 1] = 100;
    p[4 * i + 2] = 50;
    p[4 * i + 3] = 255;
  }
  int rc = encode(path, p, w, h, TJPF_CMYK, TJSAMP_444, 95, NULL, 0);
  free(p);
  return rc;
}

int ti_png(const char *path, int w, int h, int gray, int alpha) {
  int ch = (gray ? 1 : 3) + (alpha ? 1 : 0);
  uint8_t *base = pattern(w, h, gray ? 1 : 3);
  uint8_t *p = malloc((size_t)w * h * ch);
  for (int i = 0; i < w * h; i++) {
    memcpy(p + (size_t)i * ch, base + (size_t)i * (gray ? 1 : 3), gray ? 1 : 3);
    if (alpha)
      p[(size_t)i * ch + ch - 1] = 255;
  }
  png_image img;
  memset(&img, 0, sizeof img);
  img.version = PNG_IMAGE_VERSION;
  img.width = (png_uint_32)w;
  img.height = (png_uint_32)h;
  img.format = (gray ? PNG_FORMAT_GRAY : PNG_FORMAT_RGB) |
               (alpha ? PNG_FORMAT_FLAG_ALPHA : 0);
  int rc = png_image_write_to_file(&img, path, 0, p, 0, NULL) ? 0 : -1;
  free(p);
  free(base);
  return rc;
}

void ti_texture(int i, int side, int ch, uint8_t *out) {
  for (int y = 0; y < side; y++)
    for (int x = 0; x < side; x++)
      for (int c = 0; c < ch; c++)
        out[(y * side + x) * ch + c] =
            (uint8_t)((x * (7 + c) + y * (3 + 2 * c) + i * 40 + (x ^ y) * c) &
                      255);
}

int ti_jpeg_of(const char *path, const uint8_t *px, int side, int gray,
               int quality, uint8_t *ref_rgb) {
  tjhandle tc = tjInitCompress(), td = tjInitDecompress();
  unsigned char *out = NULL;
  unsigned long len = 0;
  int rc =
      tc && td &&
              tjCompress2(tc, px, side, 0, side, gray ? TJPF_GRAY : TJPF_RGB,
                          &out, &len, gray ? TJSAMP_GRAY : TJSAMP_420, quality,
                          0) == 0 &&
              ti_write(path, out, len) == 0 &&
              tjDecompress2(td, out, len, ref_rgb, side, 0, side, TJPF_RGB,
                            0) == 0
          ? 0
          : -1;
  tjFree(out);
  if (tc)
    tjDestroy(tc);
  if (td)
    tjDestroy(td);
  return rc;
}

int ti_png_of(const char *path, const uint8_t *px, int side, int gray,
              uint8_t *ref_rgb) {
  png_image img;
  memset(&img, 0, sizeof img);
  img.version = PNG_IMAGE_VERSION;
  img.width = (png_uint_32)side;
  img.height = (png_uint_32)side;
  img.format = gray ? PNG_FORMAT_GRAY : PNG_FORMAT_RGB;
  if (!png_image_write_to_file(&img, path, 0, px, 0, NULL))
    return -1;
  int ch = gray ? 1 : 3;
  for (int p = 0; p < side * side; p++)
    for (int c = 0; c < 3; c++)
      ref_rgb[p * 3 + c] = px[p * ch + (gray ? 0 : c)];
  return 0;
}
