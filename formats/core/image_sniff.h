/* What kind of image file a byte string is, and its size, from its first
 * bytes: the magic numbers and the JPEG SOF / PNG IHDR header. formats/
 * sits below codecs/, so foreign layouts (values that are image files)
 * fill their index with this instead of a decoder's probe; the loader's
 * decoder reads the same headers again and rejects what disagrees.
 *
 * Thread safety: a pure function. */
#ifndef SLUICE_FORMATS_IMAGE_SNIFF_H
#define SLUICE_FORMATS_IMAGE_SNIFF_H

#include <stddef.h>
#include <stdint.h>

typedef enum sl_sniff_kind {
  SL_SNIFF_NONE = 0, /* no image magic */
  SL_SNIFF_JPEG,
  SL_SNIFF_PNG,
  SL_SNIFF_WEBP,
  SL_SNIFF_BMP
} sl_sniff_kind;

typedef struct sl_sniff {
  sl_sniff_kind kind;
  uint32_t width, height; /* 0 when the header is not reached (BMP) */
  uint8_t channels;       /* 1 (gray) or 3 */
} sl_sniff;

/* Kind from the magic alone (needs 12 bytes for WebP). */
sl_sniff_kind sl_sniff_magic(const uint8_t *p, size_t n);
/* Kind, size and channels. Returns 0, or -1 when the magic is an image's
 * but its header is missing or malformed (width/height then 0). */
int sl_sniff_image(const uint8_t *p, size_t n, sl_sniff *out);
/* "JPEG", "PNG", "WebP", "BMP" or "not an image". */
const char *sl_sniff_name(sl_sniff_kind k);

#endif
