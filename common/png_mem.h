/* libpng's callbacks for a PNG in memory, one copy for the PNG codec
 * (codecs/png.c), the command's 16-bit PNG reader (tools/pack_image.c) and
 * the test-image writer (tools/synth.c): an error handler that keeps
 * libpng's message and longjmps to the caller's setjmp(png_jmpbuf(p)), a
 * warning handler that drops warnings, and a reader of the bytes.
 *
 * Header-only (static inline), as common/pread_full.h: the command links
 * libsluice, whose internal symbols are hidden, and common/ links no
 * libpng; an includer links libpng itself. */
#ifndef SLUICE_COMMON_PNG_MEM_H
#define SLUICE_COMMON_PNG_MEM_H

#include <png.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The error pointer (png_create_*_struct's error_ptr) and, for reading, the
 * I/O pointer (png_set_read_fn's io_ptr). libpng's messages are at most
 * about 200 bytes (PNG_MAX_ERROR_TEXT and a chunk name), so msg holds them
 * whole. */
typedef struct sl_png_mem {
  const uint8_t *bytes; /* reading: the file */
  size_t len, pos;
  char msg[256]; /* the error libpng gave, for the caller's message */
} sl_png_mem;

/* png_error_ptr: keeps msg and longjmps. */
static inline void sl_png_mem_error(png_structp p, png_const_charp msg) {
  sl_png_mem *m = png_get_error_ptr(p);
  snprintf(m->msg, sizeof m->msg, "%s", msg);
  png_longjmp(p, 1);
}

/* png_error_ptr for warnings: ignored (a warning never stops a read). */
static inline void sl_png_mem_warning(png_structp p, png_const_charp msg) {
  (void)p;
  (void)msg;
}

/* png_rw_ptr: the next n bytes, or "truncated file". */
static inline void sl_png_mem_read(png_structp p, png_bytep out, size_t n) {
  sl_png_mem *m = png_get_io_ptr(p);
  if (n > m->len - m->pos)
    png_error(p, "truncated file");
  memcpy(out, m->bytes + m->pos, n);
  m->pos += n;
}

#endif
