/* Deterministic, photo-like test images (JPEG, PNG, raw pixels).
 *
 * The pixels are a pure function of (seed, label, width, height): a smooth
 * multi-colour gradient, low-frequency value noise, a handful of shapes
 * (ellipses, rectangles, bands) with soft or hard anti-aliased edges and
 * their own gradients, fine texture and mild sensor-like grain. They
 * compress like photographs, not like white noise. The same seed and options
 * give byte-identical files (libjpeg-turbo's encoder is deterministic).
 *
 * A label >= 0 tints the scene's dominant hue, so a classifier trained on a
 * synthetic folder can actually learn something.
 *
 * Thread safety: every function is reentrant; nothing is shared.
 * Memory: O(width) scratch per call plus the encoded output. */
#ifndef SLUICE_TOOLS_SYNTH_H
#define SLUICE_TOOLS_SYNTH_H

#include <stddef.h>
#include <stdint.h>

#include "sluice.h"

/* What a failing call says: a status of sluice.h and a message naming what
 * and where. synth is built on the public header alone, so it has its own
 * (the library's internal error has the same two fields). */
typedef struct sl_synth_err {
  sl_status code;
  char msg[512];
} sl_synth_err;

#if defined(__GNUC__)
#define SL_SYNTH_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define SL_SYNTH_PRINTF(f, a)
#endif

/* Fills err (code and message, with ": strerror(errnum)" when errnum is not
 * 0) and returns code. */
sl_status sl_synth_fail(sl_synth_err *err, int errnum, sl_status code,
                        const char *fmt, ...) SL_SYNTH_PRINTF(4, 5);

typedef enum sl_synth_color {
  SL_SYNTH_420 = 0,  /* YCbCr 4:2:0 */
  SL_SYNTH_422 = 1,  /* YCbCr 4:2:2 */
  SL_SYNTH_444 = 2,  /* YCbCr 4:4:4 */
  SL_SYNTH_GRAY = 3, /* one component */
  SL_SYNTH_440 = 4,  /* YCbCr 4:4:0 (vertical-only subsampling) */
  SL_SYNTH_CMYK = 5, /* Adobe (inverted) CMYK, as Photoshop writes it */
  SL_SYNTH_YCCK = 6  /* Adobe YCCK */
} sl_synth_color;

typedef struct sl_synth_jpeg_opts {
  int quality;          /* 1..100; 0 means 90 */
  int progressive;      /* nonzero: progressive (jpeg_simple_progression) */
  sl_synth_color color; /* colour space and subsampling */
  int restart_rows;     /* a restart marker every N MCU rows; 0: none */
  int label;            /* tints the content; -1: none */
  int texture;          /* 0..3: grain and fine texture (1 by default when
                           the whole struct is zeroed; 2 ~ ImageNet bytes) */
  int restart_mcus;     /* a restart marker every N MCUs (overrides
                           restart_rows); -1: the layout `sluice pack`
                           writes (codecs/jpeg_layout.h); 0: none */
} sl_synth_jpeg_opts;

/* Default options: q90 baseline 4:2:0, no restarts, no label, texture 1. */
sl_synth_jpeg_opts sl_synth_jpeg_defaults(void);

/* Writes w*h*channels bytes (channels 1 or 3, HWC) of photo-like pixels.
 * texture as in sl_synth_jpeg_opts. */
void sl_synth_pixels(uint64_t seed, int label, int texture, int w, int h,
                     int channels, uint8_t *out);

/* Encodes sl_synth_pixels(seed, o->label, o->texture, w, h, ...) as a JPEG.
 * *buf is malloc'd (free it); on error *buf is NULL. Errors: SL_EINVAL (bad
 * size or options), SL_ENOMEM, SL_EIO (libjpeg's message). */
sl_status sl_synth_jpeg(uint64_t seed, int w, int h,
                        const sl_synth_jpeg_opts *o, uint8_t **buf, size_t *len,
                        sl_synth_err *err);

/* Encodes the same kind of pixels as an 8-bit PNG with 1 (gray), 3 (RGB) or
 * 4 (RGBA, alpha 255) channels. *buf is malloc'd. */
sl_status sl_synth_png(uint64_t seed, int label, int w, int h, int channels,
                       uint8_t **buf, size_t *len, sl_synth_err *err);

/* A folder of JPEGs in class subfolders: DIR/class_KKK/img_NNNNN.jpg. */
typedef struct sl_synth_folder_opts {
  int count;   /* images; default 100 */
  int classes; /* subfolders; default 10 */
  uint64_t seed;
  int imagenet; /* nonzero: ImageNet-like files (mostly 500x375, some
                   375x500 / 500x333, q90 4:2:0 baseline, ~90 KB) */
  int max_side; /* largest width/height of the varied mode; default 2048 */
} sl_synth_folder_opts;

/* Fills unset (zero) fields with their defaults. */
void sl_synth_folder_defaults(sl_synth_folder_opts *o);

/* What image i of a folder is: its size, encoder options, class and the
 * path relative to the folder ("class_003/img_00042.jpg", < 64 bytes), and
 * the pixel seed. The varied mode cycles sizes from 1x1 and 7x5 up to
 * max_side, baseline/progressive, 4:2:0/4:2:2/4:4:4/4:4:0/gray, restart
 * markers and qualities 75..95. */
void sl_synth_folder_item(const sl_synth_folder_opts *o, int i, int *w, int *h,
                          sl_synth_jpeg_opts *jo, uint64_t *seed,
                          char relpath[64]);

/* Writes the folder (creating dir and its subfolders). Errors: SL_EIO
 * (message names the path), SL_ENOMEM, SL_EINVAL. */
sl_status sl_synth_folder(const char *dir, const sl_synth_folder_opts *o,
                          sl_synth_err *err);

#endif
