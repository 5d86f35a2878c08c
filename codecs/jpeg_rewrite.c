/* Lossless rewrite into the restart layout: see codecs/jpeg_rewrite.h.
 *
 * libjpeg reports errors by calling error_exit, which by default ends the
 * process: ours records the message and longjmps back to sl_jpeg_rewrite,
 * which aborts both objects (jpeg_abort_* keeps them usable), frees the
 * output and returns the status. The decompressor is made anew for each
 * input (tables must not carry over from one photo to the next). One error
 * manager serves both objects: only one of them runs at a time. */
#include "codecs/jpeg_rewrite.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jerror.h>
#include <jpeglib.h>

#include "codecs/jpeg_layout.h"
#include "codecs/jpeg_strict.h"

enum { MIN_OUT_CAP = 4096 };

typedef struct rw_err {
  struct jpeg_error_mgr pub;
  jmp_buf jb;
  sl_status status;
  char msg[JMSG_LENGTH_MAX];
} rw_err;

struct sl_jpeg_rewriter {
  struct jpeg_decompress_struct src;
  struct jpeg_compress_struct dst;
  rw_err je;
  struct jpeg_destination_mgr dest; /* writes into buf */
  uint8_t *buf;                     /* output being written, or NULL */
  size_t cap, used;
  uint64_t max_pixels;
  int interval; /* -1: the layout rule; 0: no restart markers; else MCUs */
  int src_live, dst_live;
};

static void jerr_exit(j_common_ptr c);
static void dest_init(j_compress_ptr c);
static boolean dest_empty(j_compress_ptr c);
static void dest_term(j_compress_ptr c);
static sl_status refuse(sl_jpeg_rewriter *rw, sl_status st, sl_err *err,
                        const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

sl_status sl_jpeg_rewriter_create(sl_jpeg_rewriter **out, uint64_t max_pixels,
                                  sl_err *err) {
  if (!out)
    return sl_err_set(err, SL_EINVAL, "jpeg rewrite: NULL rewriter pointer");
  *out = NULL;
  sl_jpeg_rewriter *rw = calloc(1, sizeof *rw);
  if (!rw)
    return sl_err_set(err, SL_ENOMEM, "jpeg rewrite: out of memory");
  rw->max_pixels = max_pixels;
  jpeg_std_error(&rw->je.pub);
  rw->je.pub.error_exit = jerr_exit;
  rw->je.pub.emit_message = sl_jpeg_emit_strict;
  rw->je.pub.output_message = sl_jpeg_output_silent;
  rw->interval = -1;
  rw->src.err = &rw->je.pub;
  rw->dst.err = &rw->je.pub;
  rw->dest.init_destination = dest_init;
  rw->dest.empty_output_buffer = dest_empty;
  rw->dest.term_destination = dest_term;
  if (setjmp(rw->je.jb)) {
    sl_err_set(err, SL_ENOMEM, "jpeg rewrite: %s", rw->je.msg);
    sl_jpeg_rewriter_destroy(rw);
    return SL_ENOMEM;
  }
  jpeg_create_decompress(&rw->src);
  rw->src_live = 1;
  jpeg_create_compress(&rw->dst);
  rw->dst_live = 1;
  *out = rw;
  return SL_OK;
}

void sl_jpeg_rewriter_destroy(sl_jpeg_rewriter *rw) {
  if (!rw)
    return;
  if (rw->dst_live)
    jpeg_destroy_compress(&rw->dst);
  if (rw->src_live)
    jpeg_destroy_decompress(&rw->src);
  free(rw->buf);
  free(rw);
}

void sl_jpeg_rewriter_set_interval(sl_jpeg_rewriter *rw, int mcus) {
  rw->interval = mcus < -1 ? -1 : mcus > 65535 ? 65535 : mcus;
}

/* Public (sluice.h): the layout rule for encoders that write it directly. */
int sl_restart_layout_interval(int width, int num_components, int max_h_samp) {
  int mcu_w = num_components == 1 ? 8 : 8 * (max_h_samp > 0 ? max_h_samp : 1);
  int mcus_per_row = (width + mcu_w - 1) / mcu_w;
  return sl_jpeg_restart_mcus(mcus_per_row < 1 ? 1 : mcus_per_row, mcu_w);
}

sl_status sl_jpeg_rewrite(sl_jpeg_rewriter *rw, const uint8_t *in, size_t len,
                          uint8_t **out, size_t *out_len, sl_err *err) {
  if (out)
    *out = NULL;
  if (out_len)
    *out_len = 0;
  if (!rw || !in || !out || !out_len)
    return sl_err_set(err, SL_EINVAL, "jpeg rewrite: NULL argument");
  if (len == 0)
    return sl_err_set(err, SL_EDECODE, "jpeg rewrite: empty input");
  if (len > SIZE_MAX / 2 - MIN_OUT_CAP)
    return sl_err_set(err, SL_ETOOBIG, "jpeg rewrite: input of %zu bytes", len);
  struct jpeg_decompress_struct *src = &rw->src;
  struct jpeg_compress_struct *dst = &rw->dst;
  rw->buf = NULL;
  rw->cap = len + len / 8 + MIN_OUT_CAP; /* allocated by dest_init */
  rw->used = 0;
  if (setjmp(rw->je.jb)) {
    jpeg_abort_compress(dst);
    jpeg_abort_decompress(src);
    free(rw->buf);
    rw->buf = NULL;
    return sl_err_set(err, rw->je.status, "jpeg rewrite: %s", rw->je.msg);
  }
  /* A fresh decompressor for every input: libjpeg keeps the tables one
   * image defined for the next (abbreviated streams), so an input missing
   * its DQT or DHT would borrow its predecessor's and pack differently with
   * the order a worker meets photos in. */
  jpeg_destroy_decompress(src);
  jpeg_create_decompress(src);
  jpeg_mem_src(src, in, (unsigned long)len);
  jpeg_read_header(src, TRUE);
  uint64_t px = (uint64_t)src->image_width * src->image_height;
  if (rw->max_pixels && px > rw->max_pixels)
    return refuse(rw, SL_ETOOBIG, err,
                  "%ux%u image exceeds the limit of %llu pixels",
                  src->image_width, src->image_height,
                  (unsigned long long)rw->max_pixels);
  if (src->num_components > MAX_COMPS_IN_SCAN)
    return refuse(rw, SL_EUNSUPPORTED, err,
                  "%d components (the restart layout needs one interleaved "
                  "scan of at most %d)",
                  src->num_components, MAX_COMPS_IN_SCAN);
  int max_h = 1, max_v = 1;
  for (int i = 0; i < src->num_components; i++) {
    if (src->comp_info[i].h_samp_factor > max_h)
      max_h = src->comp_info[i].h_samp_factor;
    if (src->comp_info[i].v_samp_factor > max_v)
      max_v = src->comp_info[i].v_samp_factor;
  }
  /* The coefficients copy whatever the header says, but libjpeg's
   * upsampler (and so the loader) decodes only sampling factors that
   * divide the largest: refuse what would pack but never decode. */
  for (int i = 0; i < src->num_components; i++)
    if (max_h % src->comp_info[i].h_samp_factor ||
        max_v % src->comp_info[i].v_samp_factor)
      return refuse(rw, SL_EUNSUPPORTED, err,
                    "component %d's sampling %dx%d does not divide the "
                    "largest, %dx%d (libjpeg cannot decode it)",
                    i, src->comp_info[i].h_samp_factor,
                    src->comp_info[i].v_samp_factor, max_h, max_v);
  jvirt_barray_ptr *coef = jpeg_read_coefficients(src);

  jpeg_copy_critical_parameters(src, dst);
  dst->optimize_coding = TRUE;
  dst->restart_in_rows = 0;
  dst->restart_interval =
      (unsigned int)(rw->interval >= 0 ? rw->interval
                                       : sl_restart_layout_interval(
                                             (int)src->image_width,
                                             src->num_components, max_h));
  if (src->num_components == 4)
    dst->write_Adobe_marker = src->saw_Adobe_marker;
  dst->dest = &rw->dest;
  jpeg_write_coefficients(dst, coef);
  jpeg_finish_compress(dst);
  jpeg_finish_decompress(src);

  *out_len = rw->used;
  *out = rw->buf;
  if (rw->cap - rw->used > MIN_OUT_CAP) { /* give back the slack */
    uint8_t *fit = realloc(rw->buf, rw->used);
    if (fit)
      *out = fit;
  }
  rw->buf = NULL;
  return SL_OK;
}

/* An error found outside libjpeg, after jpeg_read_header. */
static sl_status refuse(sl_jpeg_rewriter *rw, sl_status st, sl_err *err,
                        const char *fmt, ...) {
  jpeg_abort_decompress(&rw->src);
  char msg[JMSG_LENGTH_MAX + 64];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return sl_err_set(err, st, "jpeg rewrite: %s", msg);
}

static void jerr_exit(j_common_ptr c) {
  rw_err *e = (rw_err *)c->err;
  c->err->format_message(c, e->msg);
  switch (c->err->msg_code) {
  case JERR_OUT_OF_MEMORY:
    e->status = SL_ENOMEM;
    break;
  case JERR_SOF_UNSUPPORTED:
  case JERR_BAD_PRECISION:
  case JERR_NOTIMPL:
  case JERR_ARITH_NOTIMPL:
    e->status = SL_EUNSUPPORTED;
    break;
  default:
    e->status = SL_EDECODE;
    break;
  }
  longjmp(e->jb, 1);
}

/* The destination: one malloc'd buffer, doubled when full. */
static sl_jpeg_rewriter *rw_of(j_compress_ptr c) {
  return (sl_jpeg_rewriter *)((char *)c - offsetof(sl_jpeg_rewriter, dst));
}

static void dest_init(j_compress_ptr c) {
  sl_jpeg_rewriter *rw = rw_of(c);
  rw->buf = malloc(rw->cap);
  if (!rw->buf)
    ERREXIT1(c, JERR_OUT_OF_MEMORY, 100);
  rw->dest.next_output_byte = rw->buf;
  rw->dest.free_in_buffer = rw->cap;
}

static boolean dest_empty(j_compress_ptr c) {
  /* Called when the buffer is full; all of it is output so far. */
  sl_jpeg_rewriter *rw = rw_of(c);
  size_t used = rw->cap;
  if (rw->cap > SIZE_MAX / 2)
    ERREXIT1(c, JERR_OUT_OF_MEMORY, 101);
  uint8_t *b = realloc(rw->buf, rw->cap * 2);
  if (!b)
    ERREXIT1(c, JERR_OUT_OF_MEMORY, 102);
  rw->buf = b;
  rw->cap *= 2;
  rw->dest.next_output_byte = b + used;
  rw->dest.free_in_buffer = rw->cap - used;
  return TRUE;
}

static void dest_term(j_compress_ptr c) {
  sl_jpeg_rewriter *rw = rw_of(c);
  rw->used = rw->cap - rw->dest.free_in_buffer;
}
