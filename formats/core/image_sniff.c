/* Image magic numbers and header sizes (formats/core/image_sniff.h). */
#include "formats/core/image_sniff.h"

#include <string.h>

static uint32_t be16(const uint8_t *p) {
  return (uint32_t)p[0] << 8 | p[1];
}
static uint32_t be32(const uint8_t *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
         p[3];
}

sl_sniff_kind sl_sniff_magic(const uint8_t *p, size_t n) {
  if (n >= 3 && p[0] == 0xFF && p[1] == 0xD8 && p[2] == 0xFF)
    return SL_SNIFF_JPEG;
  if (n >= 8 && memcmp(p, "\x89PNG\r\n\x1a\n", 8) == 0)
    return SL_SNIFF_PNG;
  if (n >= 12 && memcmp(p, "RIFF", 4) == 0 && memcmp(p + 8, "WEBP", 4) == 0)
    return SL_SNIFF_WEBP;
  if (n >= 2 && p[0] == 'B' && p[1] == 'M')
    return SL_SNIFF_BMP;
  return SL_SNIFF_NONE;
}

const char *sl_sniff_name(sl_sniff_kind k) {
  switch (k) {
  case SL_SNIFF_JPEG:
    return "JPEG";
  case SL_SNIFF_PNG:
    return "PNG";
  case SL_SNIFF_WEBP:
    return "WebP";
  case SL_SNIFF_BMP:
    return "BMP";
  default:
    return "not an image";
  }
}

/* Walks the JPEG markers to the first SOFn. */
static int jpeg_size(const uint8_t *p, size_t n, sl_sniff *out) {
  size_t i = 2;
  while (i + 4 <= n) {
    if (p[i] != 0xFF)
      return -1;
    uint8_t m = p[i + 1];
    if (m == 0xFF) { /* fill byte */
      i++;
      continue;
    }
    if (m == 0xD8 || (m >= 0xD0 && m <= 0xD7) || m == 0x01) {
      i += 2;
      continue;
    }
    if (m == 0xD9 || m == 0xDA)
      return -1; /* no frame header before the scan */
    size_t len = be16(p + i + 2);
    if (len < 2 || len > n - i - 2)
      return -1;
    int sof = m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC;
    if (sof) {
      if (len < 8)
        return -1;
      out->height = be16(p + i + 5);
      out->width = be16(p + i + 7);
      out->channels = p[i + 9] == 1 ? 1 : 3;
      return out->width && out->height ? 0 : -1;
    }
    i += 2 + len;
  }
  return -1;
}

static uint32_t le24(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16;
}

/* The canvas size from the first chunk: VP8X, VP8 (lossy key frame) or
 * VP8L (lossless). */
static int webp_size(const uint8_t *p, size_t n, sl_sniff *out) {
  out->channels = 3; /* alpha is dropped */
  if (n >= 30 && memcmp(p + 12, "VP8X", 4) == 0) {
    out->width = le24(p + 24) + 1;
    out->height = le24(p + 27) + 1;
  } else if (n >= 30 && memcmp(p + 12, "VP8 ", 4) == 0) {
    if (p[23] != 0x9d || p[24] != 0x01 || p[25] != 0x2a)
      return -1;
    out->width = (p[26] | (uint32_t)p[27] << 8) & 0x3fff;
    out->height = (p[28] | (uint32_t)p[29] << 8) & 0x3fff;
  } else if (n >= 25 && memcmp(p + 12, "VP8L", 4) == 0) {
    if (p[20] != 0x2f)
      return -1;
    uint32_t b = (uint32_t)p[21] | (uint32_t)p[22] << 8 |
                 (uint32_t)p[23] << 16 | (uint32_t)p[24] << 24;
    out->width = (b & 0x3fff) + 1;
    out->height = ((b >> 14) & 0x3fff) + 1;
  } else {
    return -1;
  }
  return out->width && out->height ? 0 : -1;
}

int sl_sniff_image(const uint8_t *p, size_t n, sl_sniff *out) {
  memset(out, 0, sizeof *out);
  out->kind = sl_sniff_magic(p, n);
  switch (out->kind) {
  case SL_SNIFF_JPEG:
    return jpeg_size(p, n, out);
  case SL_SNIFF_PNG:
    if (n < 33 || memcmp(p + 12, "IHDR", 4) != 0)
      return -1;
    out->width = be32(p + 16);
    out->height = be32(p + 20);
    out->channels = p[25] == 0 || p[25] == 4 ? 1 : 3;
    return out->width && out->height ? 0 : -1;
  case SL_SNIFF_WEBP:
    return webp_size(p, n, out);
  case SL_SNIFF_NONE:
    return -1;
  default:
    return 0; /* recognised, size not read: no codec for it here */
  }
}
