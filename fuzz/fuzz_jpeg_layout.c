/* libFuzzer target: what `sluice pack` and the region decoder do with a
 * photo's bytes before libjpeg decodes any pixel: the lossless rewrite into
 * the restart layout (codecs/jpeg_rewrite.c) and the window builder's
 * marker walk (codecs/jpeg_window.c), on the input as it comes and on the
 * rewrite's output. Seeds in fuzz/corpus_jpeg: baseline 4:2:0, 4:4:4, gray,
 * progressive, restart-laid-out, CMYK and odd sizes.
 *
 * Checked beyond ASan/UBSan: a refused rewrite says why and leaves nothing
 * allocated; a rewrite's output is a restart layout the window accepts
 * (sl_jpeg_grid_read), whose whole-image and corner windows build, and
 * whose windows libjpeg decodes at the window's size without an error or a
 * corrupt-data warning (what the region decoder relies on). The last
 * bytes of the input pick the window's MCU rectangle. Build and run:
 * fuzz/run.sh. */
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>

#include "codecs/jpeg_rewrite.h"
#include "codecs/jpeg_window.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A rectangle of MCUs picked by four bytes of the input. */
static void pick(const uint8_t *data, size_t size, const sl_jpeg_grid *lo,
                 int r[4]) {
  uint8_t b[4] = {0, 0, 0, 0};
  for (size_t i = 0; i < 4 && i < size; i++)
    b[i] = data[size - 1 - i];
  r[0] = b[0] % lo->mcus_x;
  r[1] = b[1] % lo->mcus_y;
  r[2] = r[0] + 1 + b[2] % (lo->mcus_x - r[0]);
  r[3] = r[1] + 1 + b[3] % (lo->mcus_y - r[1]);
}

typedef struct jerr {
  struct jpeg_error_mgr mgr;
  jmp_buf jb;
  int warnings;
} jerr;

static void jerr_exit(j_common_ptr c) {
  longjmp(((jerr *)c->err)->jb, 1);
}

static void jerr_emit(j_common_ptr c, int level) {
  if (level < 0)
    ((jerr *)c->err)->warnings++;
}

/* Decodes a whole JPEG with libjpeg; 1 when it decodes at w x h with no
 * error and no warning. */
static int decodes_cleanly(const uint8_t *bytes, size_t n, int w, int h) {
  struct jpeg_decompress_struct d;
  jerr je;
  d.err = jpeg_std_error(&je.mgr);
  je.mgr.error_exit = jerr_exit;
  je.mgr.emit_message = jerr_emit;
  je.warnings = 0;
  JSAMPLE *volatile row = NULL;
  if (setjmp(je.jb)) {
    jpeg_destroy_decompress(&d);
    free(row);
    return 0;
  }
  jpeg_create_decompress(&d);
  jpeg_mem_src(&d, bytes, (unsigned long)n);
  jpeg_read_header(&d, TRUE);
  d.out_color_space = d.num_components == 1   ? JCS_GRAYSCALE
                      : d.num_components == 3 ? JCS_RGB
                                              : d.jpeg_color_space;
  jpeg_start_decompress(&d);
  int ok = (int)d.output_width == w && (int)d.output_height == h;
  row = malloc((size_t)d.output_width * (size_t)d.output_components);
  if (!row)
    ok = 0;
  while (ok && d.output_scanline < d.output_height) {
    JSAMPROW rows[1] = {row};
    jpeg_read_scanlines(&d, rows, 1);
  }
  if (ok)
    jpeg_finish_decompress(&d);
  jpeg_destroy_decompress(&d);
  free(row);
  return ok && je.warnings == 0;
}

/* Builds the window r of bytes[0, n); 1 when it was built. When `must`, it
 * must build and decode cleanly at the window's size. */
static int window(const uint8_t *bytes, size_t n, const sl_jpeg_grid *lo,
                  const int r[4], int must) {
  size_t cap = n + 16; /* a window is never larger than its file */
  uint8_t *out = malloc(cap);
  if (!out)
    return 0;
  sl_jpeg_window win;
  int ok = sl_jpeg_window_build(bytes, n, lo, r[0], r[1], r[2], r[3], out, cap,
                                &win);
  if (ok && (win.len > cap || win.width <= 0 || win.height <= 0 ||
             win.width > lo->width || win.height > lo->height))
    abort();
  if (must && !ok)
    abort(); /* a rewrite's output must window */
  if (must && !decodes_cleanly(out, win.len, win.width, win.height))
    abort();
  free(out);
  return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static sl_jpeg_rewriter *rw;
  sl_err err = {0};
  if (!rw && sl_jpeg_rewriter_create(&rw, 1u << 18, &err) != SL_OK)
    abort();

  /* The input as it comes: the decoder windows any JPEG whose header says
   * restart layout, however its data looks. */
  sl_jpeg_grid lo;
  int r[4];
  if (sl_jpeg_grid_read(data, size, &lo)) {
    if (lo.mcus_x <= 0 || lo.mcus_y <= 0 || lo.seg_w <= 0 || lo.seg_rows <= 0 ||
        lo.entropy > size)
      abort();
    pick(data, size, &lo, r);
    window(data, size, &lo, r, 0);
  }

  uint8_t *out = (uint8_t *)data; /* must be reset on every return */
  size_t n = 1;
  sl_status st = sl_jpeg_rewrite(rw, data, size, &out, &n, &err);
  if (st != SL_OK) {
    if (out != NULL || n != 0 || err.msg[0] == '\0')
      abort(); /* a refusal says why and hands out nothing */
    return 0;
  }
  if (!sl_jpeg_grid_read(out, n, &lo))
    abort(); /* the rewrite's output is the restart layout */
  int all[4] = {0, 0, lo.mcus_x, lo.mcus_y};
  int corner[4] = {lo.mcus_x - 1, lo.mcus_y - 1, lo.mcus_x, lo.mcus_y};
  window(out, n, &lo, all, 1);
  window(out, n, &lo, corner, 1);
  pick(data, size, &lo, r);
  window(out, n, &lo, r, 1);
  free(out);
  return 0;
}
