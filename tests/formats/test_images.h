/* Small test images written with TurboJPEG and libpng (for the pack and
 * foreign-format tests).
 * Pixel (x, y) of the pattern: a colour per quadrant, so orientation can be
 * checked: top-left red, top-right green, bottom-left blue, bottom-right
 * white (gray images: 40, 100, 160, 220). */
#ifndef SLUICE_TESTS_FORMATS_TEST_IMAGES_H
#define SLUICE_TESTS_FORMATS_TEST_IMAGES_H

#include <stddef.h>
#include <stdint.h>

/* Each returns 0 on success. */
int ti_jpeg(const char *path, int w, int h, int gray, int quality);
/* A JPEG of the pattern whose EXIF orientation is orient: the stored
 * pixels are the pattern transformed so that applying orient makes it
 * upright again (w x h is the upright size). */
int ti_jpeg_exif(const char *path, int w, int h, int orient);
int ti_jpeg_cmyk(const char *path, int w, int h);
int ti_png(const char *path, int w, int h, int gray, int alpha);
/* An RGB PNG of the pattern stored for EXIF orientation orient, with an
 * eXIf chunk saying so (w x h is the upright size). */
int ti_png_exif(const char *path, int w, int h, int orient);
int ti_write(const char *path, const void *data, size_t len);
/* The whole file in a malloc'd buffer, NULL on failure. */
uint8_t *ti_read(const char *path, size_t *len);
/* The upright pattern's colour at (x, y) of a w x h image. */
void ti_pattern(int x, int y, int w, int h, uint8_t rgb[3]);

/* The texture the foreign-format tests encode as image i: side x side
 * pixels of ch (1 or 3) channels, into out. */
void ti_texture(int i, int side, int ch, uint8_t *out);
/* px (side x side, gray or RGB) as a JPEG of quality (4:2:0 colour, or
 * gray) at path; ref_rgb gets TurboJPEG's RGB decode of that file. */
int ti_jpeg_of(const char *path, const uint8_t *px, int side, int gray,
               int quality, uint8_t *ref_rgb);
/* px (side x side, gray or RGB) as a PNG at path; ref_rgb gets its pixels
 * as RGB (gray repeated). */
int ti_png_of(const char *path, const uint8_t *px, int side, int gray,
              uint8_t *ref_rgb);

#endif
