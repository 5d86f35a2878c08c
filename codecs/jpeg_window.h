/* A window onto a restart-laid-out JPEG: the crop's segments as a small
 * JPEG of their own, so that libjpeg Huffman-decodes only them.
 *
 * Huffman decoding is about two thirds of a q90 JPEG decode, and libjpeg
 * must do it for every row above a crop and for the full width of every
 * row it outputs. When the file's restart interval divides its MCU rows
 * (codecs/jpeg_layout.h; `sluice pack` writes that layout), each MCU row is
 * a run of independent segments. The window copies the header (with SOF's
 * size patched), then the segments of the wanted MCU rectangle, rounded out
 * to whole segments, renumbering their RST markers, and ends with EOI. The
 * result is a valid baseline JPEG whose MCUs are exactly the original's
 * MCUs of that rectangle: decoded at the same scale it gives the same
 * pixels, as long as the caller keeps one MCU of margin wherever libjpeg
 * upsamples chroma from neighbouring samples (sl_jpeg_window_margin).
 *
 * Everything here only reads within the given bytes; anything unexpected
 * (a marker out of sequence, data that ends early, no room) makes the
 * window unusable and the caller decodes the whole stream instead, where
 * libjpeg reports the damage.
 *
 * Thread safety: pure functions of their arguments. Memory: none; the
 * caller gives the output buffer. */
#ifndef SLUICE_CODECS_JPEG_WINDOW_H
#define SLUICE_CODECS_JPEG_WINDOW_H

#include <stddef.h>
#include <stdint.h>

/* A JPEG's MCU grid and restart segments, as its markers give them (the
 * file's restart layout, codecs/jpeg_layout.h, read back). */
typedef struct sl_jpeg_grid {
  int width, height;  /* pixels, from SOF */
  int mcu_w, mcu_h;   /* pixels per MCU */
  int mcus_x, mcus_y; /* MCUs per row, MCU rows */
  int interval;       /* restart interval (DRI), in MCUs */
  int seg_w;          /* MCUs per segment across a row */
  int seg_rows;       /* MCU rows per segment: 1, or interval / mcus_x */
  int comps;          /* components */
  int h_samp[4], v_samp[4], h_max, v_max;
  size_t sof_dims; /* offset of SOF's 16-bit height (width follows) */
  size_t entropy;  /* first byte of the entropy-coded data */
} sl_jpeg_grid;

/* Reads the marker structure of bytes[0, len). Returns 1 when the window
 * can be used on it: 8-bit sequential Huffman (SOF0/SOF1), one scan with
 * every component, a restart interval that divides the MCU row or is a
 * whole number of rows; 0 otherwise (including any malformed header). */
int sl_jpeg_grid_read(const uint8_t *bytes, size_t len, sl_jpeg_grid *lo);

/* The MCUs of margin to keep around a region decoded at DCT scale m/8, in
 * x and y: 1 where libjpeg upsamples some component's chroma at that scale
 * (its fancy upsampling reads the neighbouring samples, and at a window's
 * edge it would read replicated ones instead), 0 where every component is
 * decoded at full resolution by IDCT scaling. */
void sl_jpeg_window_margin(const sl_jpeg_grid *lo, int m, int *mx, int *my);

/* The window actually built: MCU origin, size in pixels, bytes written. */
typedef struct sl_jpeg_window {
  int mcu_x, mcu_y;  /* the window's first MCU column and row */
  int width, height; /* pixels */
  size_t len;
} sl_jpeg_window;

/* Writes into out[0, cap) a JPEG of the MCU columns [mx0, mx1) and rows
 * [my0, my1) (0 <= mx0 < mx1 <= mcus_x, likewise for rows), widened left and
 * right to whole segments and upward to a segment's first row. Returns 1
 * with *win filled, or 0 when the window cannot be built (no room, or the
 * data is not laid out as the header says). */
int sl_jpeg_window_build(const uint8_t *bytes, size_t len,
                         const sl_jpeg_grid *lo, int mx0, int my0, int mx1,
                         int my1, uint8_t *out, size_t cap,
                         sl_jpeg_window *win);

#endif
