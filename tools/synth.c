/* Deterministic photo-like test images: see synth.h.
 *
 * Pixels are rendered row by row in float (background gradient + value
 * noise, then shapes clipped to their bounding boxes, then grain) and
 * quantised once, so memory is O(width). Encoders write to a growable
 * buffer owned here, so an error mid-encode frees everything. */
#include "tools/synth.h"

#include <math.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jerror.h>
#include <jpeglib.h>
#include <png.h>

#include "common/png_mem.h"
#include "common/rng.h"
#include "tools/grow.h"

#include <errno.h>
#include <stdarg.h>

enum { k_max_shapes = 80, k_max_side = 65500 };

typedef struct shape {
  int kind; /* 0 ellipse, 1 rotated rectangle, 2 band */
  float cx, cy, a, b, cs, sn, soft, opacity;
  float c0[3], c1[3];
  int x0, x1, y0, y1; /* bounding box, inclusive-exclusive */
} shape;

typedef struct scene {
  uint64_t key;
  int w, h, texture;
  float corner[4][3];
  float lo_cell[3], lo_amp[3]; /* low-frequency "lighting" octaves */
  float fine_cell[2], fine_amp[2];
  float grain;
  int nshapes;
  shape s[k_max_shapes];
} scene;

sl_status sl_synth_fail(sl_synth_err *err, int errnum, sl_status code,
                        const char *fmt, ...) {
  err->code = code;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(err->msg, sizeof err->msg, fmt, ap);
  va_end(ap);
  if (errnum && n >= 0 && (size_t)n < sizeof err->msg)
    snprintf(err->msg + n, sizeof err->msg - (size_t)n, ": %s",
             strerror(errnum));
  return code;
}

static float uni(sl_rng *r, float lo, float hi) {
  return lo + (hi - lo) * (float)sl_rng_uniform(r);
}

static void hsv(float h, float s, float v, float out[3]) {
  h = (h - floorf(h)) * 6.0f;
  int i = (int)h;
  float f = h - (float)i, p = v * (1 - s), q = v * (1 - s * f),
        t = v * (1 - s * (1 - f));
  float rgb[6][3] = {{v, t, p}, {q, v, p}, {p, v, t},
                     {p, q, v}, {t, p, v}, {v, p, q}};
  for (int c = 0; c < 3; c++)
    out[c] = 255.0f * rgb[i % 6][c];
}

static void scene_init(scene *sc, uint64_t seed, int label, int texture, int w,
                       int h) {
  memset(sc, 0, sizeof *sc);
  sl_rng r = sl_rng_for(seed, 0x5c3e, (uint64_t)(label + 1));
  sc->key = sl_rng_u64(&r);
  sc->w = w;
  sc->h = h;
  sc->texture = texture;
  float hue = label >= 0 ? (float)label * 0.618034f : uni(&r, 0, 1);
  for (int k = 0; k < 4; k++)
    hsv(hue + uni(&r, -0.08f, 0.08f), uni(&r, 0.2f, 0.8f), uni(&r, 0.3f, 0.95f),
        sc->corner[k]);
  float L = (float)(w > h ? w : h);
  const float lo_div[3] = {2.0f, 5.0f, 11.0f};
  for (int o = 0; o < 3; o++) {
    sc->lo_cell[o] = fmaxf(L / lo_div[o], 2.0f);
    sc->lo_amp[o] = uni(&r, 10.0f, 28.0f) / (float)(o + 1);
  }
  const float grain[4] = {0.0f, 2.5f, 16.0f, 22.0f};
  const float fine[4] = {0.0f, 7.0f, 40.0f, 50.0f};
  sc->fine_cell[0] = texture >= 2 ? uni(&r, 3.0f, 5.0f) : uni(&r, 5.0f, 9.0f);
  sc->fine_cell[1] = texture >= 2 ? uni(&r, 1.2f, 1.8f) : uni(&r, 2.0f, 3.5f);
  sc->fine_amp[0] = fine[texture];
  sc->fine_amp[1] = 0.6f * fine[texture];
  sc->grain = grain[texture];
  /* A few large shapes; with more texture, many small details as well. */
  int big = 3 + (int)sl_rng_below(&r, 12);
  sc->nshapes = big + (texture >= 2 ? 40 + (int)sl_rng_below(&r, 24) : 0);
  for (int i = 0; i < sc->nshapes; i++) {
    shape *s = &sc->s[i];
    float sz = i < big ? 1.0f : 0.2f;
    s->kind = (int)sl_rng_below(&r, i < big ? 3 : 2);
    s->cx = uni(&r, -0.1f, 1.1f) * (float)w;
    s->cy = uni(&r, -0.1f, 1.1f) * (float)h;
    s->a = uni(&r, 0.04f, 0.4f) * sz * L + 0.5f;
    s->b = uni(&r, 0.04f, 0.3f) * sz * L + 0.5f;
    float th = uni(&r, 0, 3.14159265f);
    s->cs = cosf(th);
    s->sn = sinf(th);
    s->soft = sl_rng_below(&r, 2) ? uni(&r, 0.7f, 1.5f) : uni(&r, 2.0f, 12.0f);
    s->opacity = uni(&r, 0.55f, 1.0f);
    float sh =
        sl_rng_below(&r, 2) ? hue + uni(&r, -0.15f, 0.15f) : uni(&r, 0, 1);
    hsv(sh, uni(&r, 0.1f, 0.9f), uni(&r, 0.15f, 1.0f), s->c0);
    hsv(sh + uni(&r, -0.1f, 0.1f), uni(&r, 0.1f, 0.9f), uni(&r, 0.15f, 1.0f),
        s->c1);
    float ext = (s->kind == 2 ? 2.0f * L : fmaxf(s->a, s->b) * 1.5f) + s->soft;
    s->x0 = (int)fmaxf(0.0f, floorf(s->cx - ext));
    s->x1 = (int)fminf((float)w, ceilf(s->cx + ext) + 1.0f);
    s->y0 = (int)fmaxf(0.0f, floorf(s->cy - ext));
    s->y1 = (int)fminf((float)h, ceilf(s->cy + ext) + 1.0f);
  }
}

/* Hash of a lattice point to [-1, 1]. */
static float lattice(uint64_t key, int oct, int gx, int gy) {
  uint64_t z = sl_mix64(key ^ sl_mix64(((uint64_t)(uint32_t)gx << 32) ^
                                       (uint32_t)gy ^ ((uint64_t)oct << 60)));
  return (float)(z >> 40) * (2.0f / 16777216.0f) - 1.0f;
}

/* Smooth value noise in [-1, 1] with the given cell size. */
static float vnoise(uint64_t key, int oct, float cell, float x, float y) {
  float fx = x / cell, fy = y / cell;
  int gx = (int)floorf(fx), gy = (int)floorf(fy);
  float tx = fx - (float)gx, ty = fy - (float)gy;
  tx = tx * tx * (3 - 2 * tx);
  ty = ty * ty * (3 - 2 * ty);
  float v00 = lattice(key, oct, gx, gy), v10 = lattice(key, oct, gx + 1, gy);
  float v01 = lattice(key, oct, gx, gy + 1);
  float v11 = lattice(key, oct, gx + 1, gy + 1);
  float top = v00 + (v10 - v00) * tx, bot = v01 + (v11 - v01) * tx;
  return top + (bot - top) * ty;
}

static void render_row(const scene *sc, int y, float *row /* w*3 */) {
  int w = sc->w;
  float fy = sc->h > 1 ? (float)y / (float)(sc->h - 1) : 0.5f;
  for (int x = 0; x < w; x++) {
    float fx = w > 1 ? (float)x / (float)(w - 1) : 0.5f;
    float lum = 0;
    for (int o = 0; o < 3; o++)
      lum += sc->lo_amp[o] *
             vnoise(sc->key, o, sc->lo_cell[o], (float)x, (float)y);
    for (int c = 0; c < 3; c++) {
      float top = sc->corner[0][c] + (sc->corner[1][c] - sc->corner[0][c]) * fx;
      float bot = sc->corner[2][c] + (sc->corner[3][c] - sc->corner[2][c]) * fx;
      row[3 * x + c] = top + (bot - top) * fy + lum;
    }
  }
  for (int i = 0; i < sc->nshapes; i++) {
    const shape *s = &sc->s[i];
    if (y < s->y0 || y >= s->y1)
      continue;
    for (int x = s->x0; x < s->x1; x++) {
      float dx = (float)x - s->cx, dy = (float)y - s->cy;
      float u = dx * s->cs + dy * s->sn, v = -dx * s->sn + dy * s->cs;
      float d;
      if (s->kind == 0) {
        float q = sqrtf((u / s->a) * (u / s->a) + (v / s->b) * (v / s->b));
        d = (q - 1.0f) * fminf(s->a, s->b);
      } else if (s->kind == 1) {
        d = fmaxf(fabsf(u) - s->a, fabsf(v) - s->b);
      } else {
        d = fabsf(v) - s->b;
      }
      float al = fminf(1.0f, fmaxf(0.0f, 0.5f - d / s->soft)) * s->opacity;
      if (al <= 0.0f)
        continue;
      float t = fminf(1.0f, fmaxf(0.0f, 0.5f + 0.5f * u / s->a));
      for (int c = 0; c < 3; c++) {
        float col = s->c0[c] + (s->c1[c] - s->c0[c]) * t;
        row[3 * x + c] += (col - row[3 * x + c]) * al;
      }
    }
  }
  if (sc->texture == 0)
    return;
  for (int x = 0; x < w; x++) {
    float t = sc->fine_amp[0] *
                  vnoise(sc->key, 4, sc->fine_cell[0], (float)x, (float)y) +
              sc->fine_amp[1] *
                  vnoise(sc->key, 5, sc->fine_cell[1], (float)x, (float)y);
    uint64_t z =
        sl_mix64(sc->key ^ ((uint64_t)y * 0x9e3779b97f4a7c15ULL) ^ (uint64_t)x);
    /* Triangular grain from two 8-bit uniforms; a little chroma grain too. */
    float g = ((float)(z & 255) + (float)((z >> 8) & 255) - 255.0f) / 255.0f;
    for (int c = 0; c < 3; c++) {
      float gc = ((float)((z >> (16 + 8 * c)) & 255) - 127.5f) / 127.5f;
      row[3 * x + c] += t + sc->grain * (g + 0.35f * gc);
    }
  }
}

static uint8_t q8(float v) {
  v = fminf(255.0f, fmaxf(0.0f, v));
  return (uint8_t)(int)(v + 0.5f);
}

static void quantise(const float *row, int w, int channels, uint8_t *out) {
  for (int x = 0; x < w; x++) {
    const float *p = row + 3 * x;
    if (channels == 1) {
      out[x] = q8(0.299f * p[0] + 0.587f * p[1] + 0.114f * p[2]);
    } else {
      for (int c = 0; c < 3; c++)
        out[3 * x + c] = q8(p[c]);
    }
  }
}

void sl_synth_pixels(uint64_t seed, int label, int texture, int w, int h,
                     int channels, uint8_t *out) {
  scene sc;
  if (texture < 0 || texture > 3)
    texture = 1;
  scene_init(&sc, seed, label, texture, w, h);
  float *row = malloc(sizeof(float) * 3 * (size_t)w);
  if (!row) { /* Degrade to a gradient rather than fail: never happens for
                 the sizes tests use, and keeps the function total. */
    memset(out, 128, (size_t)w * (size_t)h * (size_t)channels);
    return;
  }
  for (int y = 0; y < h; y++) {
    render_row(&sc, y, row);
    quantise(row, w, channels, out + (size_t)y * (size_t)w * (size_t)channels);
  }
  free(row);
}

/* ---- growable output buffer shared by the JPEG and PNG writers ---- */

typedef struct growbuf {
  uint8_t *p;
  size_t len, cap;
} growbuf;

static int grow(growbuf *g, size_t need) {
  uint8_t *p = sl_cli_grow(g->p, &g->cap, need, 1, 65536);
  if (!p)
    return 0;
  g->p = p;
  return 1;
}

/* ---- JPEG ---- */

typedef struct jerr {
  struct jpeg_error_mgr pub;
  jmp_buf jb;
  char msg[JMSG_LENGTH_MAX];
} jerr;

static void jerr_exit(j_common_ptr c) {
  jerr *e = (jerr *)c->err;
  c->err->format_message(c, e->msg);
  longjmp(e->jb, 1);
}

static void jerr_output(j_common_ptr c) {
  (void)c;
}

typedef struct jdst {
  struct jpeg_destination_mgr pub;
  growbuf g;
} jdst;

static void jdst_init(j_compress_ptr c) {
  jdst *d = (jdst *)c->dest;
  if (!grow(&d->g, 65536))
    ERREXIT1(c, JERR_OUT_OF_MEMORY, 0);
  d->pub.next_output_byte = d->g.p;
  d->pub.free_in_buffer = d->g.cap;
}

static boolean jdst_empty(j_compress_ptr c) {
  jdst *d = (jdst *)c->dest;
  size_t used = d->g.cap;
  if (!grow(&d->g, used * 2))
    ERREXIT1(c, JERR_OUT_OF_MEMORY, 1);
  d->pub.next_output_byte = d->g.p + used;
  d->pub.free_in_buffer = d->g.cap - used;
  return TRUE;
}

static void jdst_term(j_compress_ptr c) {
  jdst *d = (jdst *)c->dest;
  d->g.len = d->g.cap - d->pub.free_in_buffer;
}

sl_synth_jpeg_opts sl_synth_jpeg_defaults(void) {
  sl_synth_jpeg_opts o = {90, 0, SL_SYNTH_420, 0, -1, 1, 0};
  return o;
}

/* Adobe CMYK as Photoshop stores it: inverted, with K = 255 - max(R,G,B),
 * so that R = c*k/255 on the stored (inverted) values reproduces R. */
static void rgb_to_adobe_cmyk(const uint8_t *rgb, int w, uint8_t *out) {
  for (int x = 0; x < w; x++) {
    int r = rgb[3 * x], g = rgb[3 * x + 1], b = rgb[3 * x + 2];
    int m = r > g ? (r > b ? r : b) : (g > b ? g : b);
    uint8_t *o = out + 4 * x;
    if (m == 0) {
      o[0] = o[1] = o[2] = 255;
    } else {
      o[0] = (uint8_t)((r * 255 + m / 2) / m);
      o[1] = (uint8_t)((g * 255 + m / 2) / m);
      o[2] = (uint8_t)((b * 255 + m / 2) / m);
    }
    o[3] = (uint8_t)m;
  }
}

static void set_sampling(j_compress_ptr c, sl_synth_color color) {
  int hs = 1, vs = 1;
  if (color == SL_SYNTH_420) {
    hs = vs = 2;
  } else if (color == SL_SYNTH_422) {
    hs = 2;
  } else if (color == SL_SYNTH_440) {
    vs = 2;
  }
  if (color == SL_SYNTH_CMYK || color == SL_SYNTH_YCCK)
    hs = vs = 1;
  c->comp_info[0].h_samp_factor = hs;
  c->comp_info[0].v_samp_factor = vs;
  for (int i = 1; i < c->num_components; i++)
    c->comp_info[i].h_samp_factor = c->comp_info[i].v_samp_factor = 1;
  if (color == SL_SYNTH_YCCK) /* K is full resolution like Y */
    c->comp_info[3].h_samp_factor = c->comp_info[3].v_samp_factor = 1;
}

sl_status sl_synth_jpeg(uint64_t seed, int w, int h,
                        const sl_synth_jpeg_opts *o, uint8_t **buf, size_t *len,
                        sl_synth_err *err) {
  *buf = NULL;
  *len = 0;
  sl_synth_jpeg_opts opt = o ? *o : sl_synth_jpeg_defaults();
  if (w < 1 || h < 1 || w > k_max_side || h > k_max_side)
    return sl_synth_fail(err, 0, SL_EINVAL, "synth: bad JPEG size %dx%d", w, h);
  if (opt.quality < 0 || opt.quality > 100 || opt.color < SL_SYNTH_420 ||
      opt.color > SL_SYNTH_YCCK || opt.restart_rows < 0 ||
      opt.restart_mcus < -1 || opt.restart_mcus > 65535)
    return sl_synth_fail(err, 0, SL_EINVAL, "synth: bad JPEG options");
  int gray = opt.color == SL_SYNTH_GRAY;
  int cmyk = opt.color == SL_SYNTH_CMYK || opt.color == SL_SYNTH_YCCK;
  int in_ch = gray ? 1 : 3, enc_ch = gray ? 1 : cmyk ? 4 : 3;
  scene sc;
  scene_init(&sc, seed, opt.label,
             opt.texture >= 0 && opt.texture <= 3 ? opt.texture : 1, w, h);
  float *frow = malloc(sizeof(float) * 3 * (size_t)w);
  uint8_t *row = malloc((size_t)w * 4);
  uint8_t *crow = malloc((size_t)w * 4);
  if (!frow || !row || !crow) {
    free(frow);
    free(row);
    free(crow);
    return sl_synth_fail(err, 0, SL_ENOMEM, "synth: out of memory for %dx%d", w,
                         h);
  }
  struct jpeg_compress_struct c;
  jerr je;
  jdst dst;
  memset(&dst, 0, sizeof dst);
  c.err = jpeg_std_error(&je.pub);
  je.pub.error_exit = jerr_exit;
  je.pub.output_message = jerr_output;
  if (setjmp(je.jb)) {
    jpeg_destroy_compress(&c);
    free(dst.g.p);
    free(frow);
    free(row);
    free(crow);
    return sl_synth_fail(err, 0, SL_EIO, "synth: libjpeg: %s", je.msg);
  }
  jpeg_create_compress(&c);
  dst.pub.init_destination = jdst_init;
  dst.pub.empty_output_buffer = jdst_empty;
  dst.pub.term_destination = jdst_term;
  c.dest = &dst.pub;
  c.image_width = (JDIMENSION)w;
  c.image_height = (JDIMENSION)h;
  c.input_components = enc_ch;
  c.in_color_space = gray ? JCS_GRAYSCALE : cmyk ? JCS_CMYK : JCS_RGB;
  jpeg_set_defaults(&c);
  if (opt.color == SL_SYNTH_YCCK)
    jpeg_set_colorspace(&c, JCS_YCCK);
  jpeg_set_quality(&c, opt.quality ? opt.quality : 90, TRUE);
  set_sampling(&c, opt.color);
  c.restart_in_rows = opt.restart_rows;
  if (opt.restart_mcus != 0) {
    c.restart_in_rows = 0;
    c.restart_interval = (unsigned)opt.restart_mcus;
    if (opt.restart_mcus < 0) /* luma has the largest sampling factor */
      c.restart_interval = (unsigned)sl_restart_layout_interval(
          w, gray ? 1 : c.num_components, c.comp_info[0].h_samp_factor);
  }
  if (opt.progressive)
    jpeg_simple_progression(&c);
  jpeg_start_compress(&c, TRUE);
  while (c.next_scanline < c.image_height) {
    render_row(&sc, (int)c.next_scanline, frow);
    quantise(frow, w, in_ch, row);
    JSAMPROW rp = row;
    if (cmyk) {
      rgb_to_adobe_cmyk(row, w, crow);
      rp = crow;
    }
    jpeg_write_scanlines(&c, &rp, 1);
  }
  jpeg_finish_compress(&c);
  jpeg_destroy_compress(&c);
  free(frow);
  free(row);
  free(crow);
  *buf = dst.g.p;
  *len = dst.g.len;
  return SL_OK;
}

/* ---- PNG ---- */

/* io_ptr; m is the error_ptr (m.bytes unused: this writes). */
typedef struct pngctx {
  growbuf g;
  int oom;
  sl_png_mem m;
} pngctx;

static void png_write_fn(png_structp p, png_bytep data, size_t n) {
  pngctx *x = png_get_io_ptr(p);
  if (!grow(&x->g, x->g.len + n)) {
    x->oom = 1;
    png_error(p, "out of memory");
  }
  memcpy(x->g.p + x->g.len, data, n);
  x->g.len += n;
}

static void png_flush_fn(png_structp p) {
  (void)p;
}

sl_status sl_synth_png(uint64_t seed, int label, int w, int h, int channels,
                       uint8_t **buf, size_t *len, sl_synth_err *err) {
  *buf = NULL;
  *len = 0;
  if (w < 1 || h < 1 || w > k_max_side || h > k_max_side ||
      (channels != 1 && channels != 3 && channels != 4))
    return sl_synth_fail(err, 0, SL_EINVAL, "synth: bad PNG %dx%dx%d", w, h,
                         channels);
  scene sc;
  scene_init(&sc, seed, label, 1, w, h);
  float *frow = malloc(sizeof(float) * 3 * (size_t)w);
  uint8_t *row = malloc((size_t)w * 4);
  pngctx x;
  memset(&x, 0, sizeof x);
  png_structp p = NULL;
  png_infop info = NULL;
  if (frow && row)
    p = png_create_write_struct(PNG_LIBPNG_VER_STRING, &x.m, sl_png_mem_error,
                                sl_png_mem_warning);
  if (p)
    info = png_create_info_struct(p);
  if (!info) {
    png_destroy_write_struct(&p, NULL);
    free(frow);
    free(row);
    return sl_synth_fail(err, 0, SL_ENOMEM, "synth: out of memory for PNG");
  }
  if (setjmp(png_jmpbuf(p))) {
    png_destroy_write_struct(&p, &info);
    free(frow);
    free(row);
    free(x.g.p);
    return sl_synth_fail(err, 0, x.oom ? SL_ENOMEM : SL_EIO,
                         "synth: libpng: %s", x.m.msg);
  }
  png_set_write_fn(p, &x, png_write_fn, png_flush_fn);
  int type = channels == 1   ? PNG_COLOR_TYPE_GRAY
             : channels == 3 ? PNG_COLOR_TYPE_RGB
                             : PNG_COLOR_TYPE_RGBA;
  png_set_IHDR(p, info, (png_uint_32)w, (png_uint_32)h, 8, type,
               PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  png_write_info(p, info);
  for (int y = 0; y < h; y++) {
    render_row(&sc, y, frow);
    quantise(frow, w, channels == 1 ? 1 : 3, row);
    if (channels == 4) {
      for (int i = w - 1; i >= 0; i--) {
        row[4 * i + 3] = 255;
        for (int c = 2; c >= 0; c--)
          row[4 * i + c] = row[3 * i + c];
      }
    }
    png_write_row(p, row);
  }
  png_write_end(p, info);
  png_destroy_write_struct(&p, &info);
  free(frow);
  free(row);
  *buf = x.g.p;
  *len = x.g.len;
  return SL_OK;
}
