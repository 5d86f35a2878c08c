/* EXIF orientation from a JPEG's APP1 segment or a PNG's eXIf chunk,
 * bounds-checked throughout. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tools/pack/pack_image.h"

static uint32_t rd(const uint8_t *p, int n, int big) {
  uint32_t v = 0;
  for (int i = 0; i < n; i++)
    v |= (uint32_t)p[big ? i : n - 1 - i] << (8 * (n - 1 - i));
  return v;
}

/* The orientation tag (0x0112) of IFD0 of the TIFF block t[0..n). */
static int tiff_orientation(const uint8_t *t, size_t n) {
  if (n < 8)
    return 1;
  int big;
  if (t[0] == 'I' && t[1] == 'I')
    big = 0;
  else if (t[0] == 'M' && t[1] == 'M')
    big = 1;
  else
    return 1;
  if (rd(t + 2, 2, big) != 42)
    return 1;
  uint32_t ifd = rd(t + 4, 4, big);
  if (ifd > n - 2 || ifd < 8)
    return 1;
  uint32_t count = rd(t + ifd, 2, big);
  for (uint32_t i = 0; i < count; i++) {
    size_t e = ifd + 2 + 12 * (size_t)i;
    if (e + 12 > n)
      return 1;
    if (rd(t + e, 2, big) == 0x0112) {
      uint32_t type = rd(t + e + 2, 2, big);
      uint32_t v = type == 3 ? rd(t + e + 8, 2, big) : 0; /* SHORT */
      return v >= 1 && v <= 8 ? (int)v : 1;
    }
  }
  return 1;
}

int sl_exif_orientation(const uint8_t *j, size_t len) {
  if (len < 4 || j[0] != 0xFF || j[1] != 0xD8)
    return 1;
  size_t p = 2;
  while (p + 4 <= len) {
    if (j[p] != 0xFF)
      return 1;
    uint8_t m = j[p + 1];
    if (m == 0xFF) { /* fill byte */
      p++;
      continue;
    }
    if (m == 0xDA || m == 0xD9) /* start of scan, end of image */
      return 1;
    if ((m >= 0xD0 && m <= 0xD7) || m == 0x01) {
      p += 2;
      continue;
    }
    size_t seg = (size_t)j[p + 2] << 8 | j[p + 3];
    if (seg < 2 || p + 2 + seg > len)
      return 1;
    if (m == 0xE1 && seg >= 8 && memcmp(j + p + 4, "Exif\0\0", 6) == 0)
      return tiff_orientation(j + p + 10, seg - 8);
    p += 2 + seg;
  }
  return 1;
}

int sl_png_exif_orientation(const uint8_t *png, size_t len) {
  static const uint8_t sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  if (len < 8 || memcmp(png, sig, 8) != 0)
    return 1;
  /* Chunks: length, type, data, CRC. eXIf may come before or after IDAT. */
  for (size_t p = 8; p + 12 <= len;) {
    uint32_t n = rd(png + p, 4, 1);
    if (n > len - p - 12)
      return 1;
    const uint8_t *type = png + p + 4;
    if (memcmp(type, "eXIf", 4) == 0)
      return tiff_orientation(png + p + 8, n);
    if (memcmp(type, "IEND", 4) == 0)
      return 1;
    p += 12 + (size_t)n;
  }
  return 1;
}
