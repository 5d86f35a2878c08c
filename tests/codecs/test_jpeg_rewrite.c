/* codecs/jpeg_rewrite: the rewritten JPEG decodes to exactly the input's
 * pixels (baseline, progressive, arithmetic; every subsampling; odd sizes),
 * is sequential Huffman, carries the restart interval of
 * codecs/jpeg_layout.h (parsed here from the bytes) with markers where the
 * rule puts them and is taken by the region decoder's layout reader, drops
 * metadata, and every bad input is an error after which the rewriter still
 * works. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <turbojpeg.h>

#include "codecs/jpeg_layout.h"
#include "codecs/jpeg_rewrite.h"
#include "codecs/jpeg_window.h"
#include "support/synth_jpeg.h"
#include "tools/synth.h"

static blob make_jpeg(uint64_t seed, int w, int h, sl_synth_color color,
                      int progressive, int restart_rows) {
  sl_synth_jpeg_opts o = sl_synth_jpeg_defaults();
  o.color = color;
  o.progressive = progressive;
  o.restart_rows = restart_rows;
  o.texture = 2;
  return sl_test_jpeg(seed, w, h, &o);
}

static sl_jpeg_rewriter *new_rewriter(uint64_t max_pixels) {
  sl_jpeg_rewriter *rw;
  sl_err err;
  assert_int_equal(sl_jpeg_rewriter_create(&rw, max_pixels, &err), SL_OK);
  return rw;
}

/* Full-size TurboJPEG decode in pixel format pf (warnings are errors);
 * malloc'd. */
static uint8_t *tj_decode(const blob *b, int pf, int *w, int *h) {
  tjhandle t = tjInitDecompress();
  assert_non_null(t);
  int sub, cs;
  assert_int_equal(
      tjDecompressHeader3(t, b->p, (unsigned long)b->n, w, h, &sub, &cs), 0);
  uint8_t *px = malloc((size_t)*w * *h * tjPixelSize[pf]);
  assert_non_null(px);
  if (tjDecompress2(t, b->p, (unsigned long)b->n, px, *w, 0, *h, pf,
                    TJFLAG_STOPONWARNING) != 0)
    fail_msg("decode: %s", tjGetErrorStr2(t));
  tjDestroy(t);
  return px;
}

/* What the marker walk finds in a JPEG. */
typedef struct layout {
  int sof;       /* SOFn marker byte (0xC0 ...) */
  int dri;       /* restart interval, -1 when there is no DRI */
  int rst;       /* RSTn markers in the scan(s) */
  int rst_order; /* 1 when they cycle RST0..RST7 in order */
  int scans, app, com;
  int width, height, ncomp, max_h, max_v;
} layout;

static int be16(const uint8_t *p) {
  return p[0] << 8 | p[1];
}

/* Walks the marker segments of b (asserting the structure is sound). */
static layout parse(const blob *b) {
  layout l = {.dri = -1, .rst_order = 1};
  const uint8_t *p = b->p, *end = b->p + b->n;
  assert_true(b->n >= 4 && p[0] == 0xFF && p[1] == 0xD8);
  p += 2;
  for (;;) {
    assert_true(p + 2 <= end && p[0] == 0xFF);
    int m = p[1];
    if (m == 0xD9)
      break;
    assert_true(p + 4 <= end);
    int seg = be16(p + 2);
    assert_true(seg >= 2 && p + 2 + seg <= end);
    const uint8_t *s = p + 4;
    if (m >= 0xE0 && m <= 0xEF)
      l.app++;
    if (m == 0xFE)
      l.com++;
    if (m == 0xDD) {
      assert_int_equal(seg, 4);
      l.dri = be16(s);
    }
    if (m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC) {
      l.sof = m;
      l.height = be16(s + 1);
      l.width = be16(s + 3);
      l.ncomp = s[5];
      for (int c = 0; c < l.ncomp; c++) {
        int hv = s[6 + 3 * c + 1];
        if ((hv >> 4) > l.max_h)
          l.max_h = hv >> 4;
        if ((hv & 15) > l.max_v)
          l.max_v = hv & 15;
      }
    }
    p += 2 + seg;
    if (m != 0xDA)
      continue;
    /* Entropy-coded data: count RSTn up to the next other marker. */
    l.scans++;
    int next = 0;
    while (p + 1 < end) {
      if (p[0] != 0xFF || p[1] == 0x00 || p[1] == 0xFF) {
        p++;
        continue;
      }
      if (p[1] >= 0xD0 && p[1] <= 0xD7) {
        l.rst_order &= p[1] - 0xD0 == next;
        next = (next + 1) & 7;
        l.rst++;
        p += 2;
        continue;
      }
      break;
    }
  }
  return l;
}

/* Rewrites src and checks everything the header promises; returns the
 * output (free it). */
static blob rewrite_ok(sl_jpeg_rewriter *rw, const blob *src) {
  blob out;
  sl_err err = {0};
  sl_status st = sl_jpeg_rewrite(rw, src->p, src->n, &out.p, &out.n, &err);
  if (st != SL_OK)
    fail_msg("rewrite: %s", err.msg);
  layout a = parse(src), b = parse(&out);
  /* Same frame, sequential Huffman, one scan. */
  assert_int_equal(b.width, a.width);
  assert_int_equal(b.height, a.height);
  assert_int_equal(b.ncomp, a.ncomp);
  assert_true(b.sof == 0xC0 || b.sof == 0xC1);
  assert_int_equal(b.scans, 1);
  assert_int_equal(b.com, 0);
  /* The rule, worked out here from the frame header. */
  int mcu_w = b.ncomp == 1 ? 8 : 8 * b.max_h;
  int mcu_h = b.ncomp == 1 ? 8 : 8 * b.max_v;
  int per_row = (b.width + mcu_w - 1) / mcu_w;
  int rows = (b.height + mcu_h - 1) / mcu_h;
  int want = sl_jpeg_restart_mcus(per_row, mcu_w);
  assert_int_equal(per_row % want, 0);
  assert_true(want * mcu_w <= SL_JPEG_SEGMENT_PX || want == 1);
  assert_int_equal(b.dri, want);
  assert_int_equal(b.rst, per_row / want * rows - 1);
  assert_true(b.rst_order);
  /* The region decoder takes it, with the same reading of the rule. */
  sl_jpeg_grid lo;
  assert_int_equal(sl_jpeg_grid_read(out.p, out.n, &lo), 1);
  assert_int_equal(lo.interval, want);
  assert_int_equal(lo.mcu_w, mcu_w);
  assert_int_equal(lo.mcus_x, per_row);
  assert_int_equal(lo.mcus_y, rows);
  assert_int_equal(lo.seg_rows, 1);
  /* Bit-identical pixels. */
  int pf = a.ncomp == 1 ? TJPF_GRAY : a.ncomp == 4 ? TJPF_CMYK : TJPF_RGB;
  int w0, h0, w1, h1;
  uint8_t *p0 = tj_decode(src, pf, &w0, &h0);
  uint8_t *p1 = tj_decode(&out, pf, &w1, &h1);
  assert_int_equal(w0, w1);
  assert_int_equal(h0, h1);
  assert_memory_equal(p0, p1, (size_t)w0 * h0 * tjPixelSize[pf]);
  free(p0);
  free(p1);
  return out;
}

static void test_variants(void **state) {
  (void)state;
  static const sl_synth_color colors[] = {
      SL_SYNTH_420, SL_SYNTH_422, SL_SYNTH_444, SL_SYNTH_440, SL_SYNTH_GRAY};
  /* Odd and tiny sizes, ImageNet's two shapes, and widths whose MCU count
   * is prime (13 x 16 = 208, 7 x 8 = 56, 211), odd with small divisors
   * (9 x 8 = 72, 15 x 16 = 240) or highly divisible (96, 512). */
  static const int sizes[][2] = {{1, 1},     {17, 9},   {500, 375}, {375, 500},
                                 {208, 40},  {56, 17},  {211, 23},  {72, 72},
                                 {240, 33},  {96, 100}, {512, 24},  {8, 300},
                                 {2000, 16}, {33, 1}};
  sl_jpeg_rewriter *rw = new_rewriter(0);
  int n = 0;
  for (int prog = 0; prog < 2; prog++)
    for (size_t c = 0; c < sizeof colors / sizeof *colors; c++)
      for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        blob in = make_jpeg(1000 + (uint64_t)n, sizes[s][0], sizes[s][1],
                            colors[c], prog, 0);
        blob out = rewrite_ok(rw, &in);
        if (prog && sizes[s][0] == 500) /* 500x375 */
          assert_true(parse(&in).sof == 0xC2);
        free(in.p);
        free(out.p);
        n++;
      }
  sl_jpeg_rewriter_destroy(rw);
}

/* An input with its own restart markers gets the rule's instead; the
 * rewrite is deterministic and a second rewrite gives the same bytes. */
static void test_restarts_and_repeat(void **state) {
  (void)state;
  sl_jpeg_rewriter *rw = new_rewriter(0);
  blob in = make_jpeg(7, 500, 375, SL_SYNTH_420, 0, 1);
  assert_true(parse(&in).dri > 0);
  blob a = rewrite_ok(rw, &in);
  blob b = rewrite_ok(rw, &in);
  assert_int_equal(a.n, b.n);
  assert_memory_equal(a.p, b.p, a.n);
  blob c = rewrite_ok(rw, &a);
  assert_int_equal(a.n, c.n);
  assert_memory_equal(a.p, c.p, a.n);
  /* 500 px of 16 px MCUs: 32 per row, 2 per segment. */
  assert_int_equal(parse(&a).dri, 2);
  free(in.p);
  free(a.p);
  free(b.p);
  free(c.p);
  sl_jpeg_rewriter_destroy(rw);
}

/* The interval override: none, a fixed one, then back to the rule; the
 * coefficients (hence the pixels) are the same every time. */
static void test_interval_override(void **state) {
  (void)state;
  sl_jpeg_rewriter *rw = new_rewriter(0);
  blob in = make_jpeg(11, 500, 375, SL_SYNTH_420, 0, 1);
  sl_err err = {0};
  blob none, fixed;
  sl_jpeg_rewriter_set_interval(rw, 0);
  assert_int_equal(sl_jpeg_rewrite(rw, in.p, in.n, &none.p, &none.n, &err),
                   SL_OK);
  sl_jpeg_rewriter_set_interval(rw, 5);
  assert_int_equal(sl_jpeg_rewrite(rw, in.p, in.n, &fixed.p, &fixed.n, &err),
                   SL_OK);
  layout a = parse(&none), b = parse(&fixed);
  assert_int_equal(a.dri, -1);
  assert_int_equal(a.rst, 0);
  assert_int_equal(b.dri, 5);
  assert_int_equal(b.rst, (32 * 24 + 4) / 5 - 1); /* 768 MCUs */
  assert_true(b.rst_order);
  sl_jpeg_grid lo; /* 5 neither divides nor is a multiple of 32 */
  assert_int_equal(sl_jpeg_grid_read(none.p, none.n, &lo), 0);
  assert_int_equal(sl_jpeg_grid_read(fixed.p, fixed.n, &lo), 0);
  int w0, h0, w1, h1, w2, h2;
  uint8_t *p0 = tj_decode(&in, TJPF_RGB, &w0, &h0);
  uint8_t *p1 = tj_decode(&none, TJPF_RGB, &w1, &h1);
  uint8_t *p2 = tj_decode(&fixed, TJPF_RGB, &w2, &h2);
  assert_memory_equal(p0, p1, (size_t)w0 * h0 * 3);
  assert_memory_equal(p0, p2, (size_t)w0 * h0 * 3);
  sl_jpeg_rewriter_set_interval(rw, -1);
  blob back = rewrite_ok(rw, &in); /* asserts the rule's interval */
  free(p0), free(p1), free(p2);
  free(in.p), free(none.p), free(fixed.p), free(back.p);
  sl_jpeg_rewriter_destroy(rw);
}

/* Transcodes b losslessly with libjpeg, arithmetic-coded (and progressive
 * when asked). */
static blob to_arith(const blob *b, int progressive) {
  struct jpeg_decompress_struct d;
  struct jpeg_compress_struct c;
  struct jpeg_error_mgr e1, e2;
  d.err = jpeg_std_error(&e1);
  c.err = jpeg_std_error(&e2);
  jpeg_create_decompress(&d);
  jpeg_create_compress(&c);
  jpeg_mem_src(&d, b->p, (unsigned long)b->n);
  jpeg_read_header(&d, TRUE);
  jvirt_barray_ptr *coef = jpeg_read_coefficients(&d);
  jpeg_copy_critical_parameters(&d, &c);
  c.arith_code = TRUE;
  if (progressive)
    jpeg_simple_progression(&c);
  unsigned char *buf = NULL;
  unsigned long len = 0;
  jpeg_mem_dest(&c, &buf, &len);
  jpeg_write_coefficients(&c, coef);
  jpeg_finish_compress(&c);
  jpeg_finish_decompress(&d);
  jpeg_destroy_compress(&c);
  jpeg_destroy_decompress(&d);
  blob out = {buf, len};
  return out;
}

static void test_arithmetic(void **state) {
  (void)state;
  sl_jpeg_rewriter *rw = new_rewriter(0);
  for (int prog = 0; prog < 2; prog++) {
    blob in = make_jpeg(11, 123, 77, SL_SYNTH_420, 0, 0);
    blob ar = to_arith(&in, prog);
    assert_int_equal(parse(&ar).sof, prog ? 0xCA : 0xC9);
    blob out = rewrite_ok(rw, &ar);
    free(in.p);
    free(ar.p);
    free(out.p);
  }
  sl_jpeg_rewriter_destroy(rw);
}

/* CMYK keeps its Adobe marker (so it stays inverted) and its pixels. */
static void test_cmyk(void **state) {
  (void)state;
  sl_jpeg_rewriter *rw = new_rewriter(0);
  blob in = make_jpeg(3, 45, 31, SL_SYNTH_CMYK, 0, 0);
  blob out = rewrite_ok(rw, &in);
  static const uint8_t adobe[] = {0xFF, 0xEE, 0x00, 0x0E, 'A', 'd', 'o', 'b'};
  assert_non_null(memmem(out.p, out.n, adobe, sizeof adobe));
  free(in.p);
  free(out.p);
  sl_jpeg_rewriter_destroy(rw);
}

/* EXIF (APP1) and COM segments are not copied. */
static void test_drops_metadata(void **state) {
  (void)state;
  blob in = make_jpeg(5, 64, 48, SL_SYNTH_420, 0, 0);
  static const uint8_t extra[] = {0xFF, 0xE1, 0x00, 0x10, 'E',  'x',  'i',
                                  'f',  0,    0,    'M',  'M',  0,    42,
                                  0,    0,    0,    8,    0xFF, 0xFE, 0x00,
                                  0x07, 'h',  'e',  'l',  'l',  'o'};
  blob x = {malloc(in.n + sizeof extra), in.n + sizeof extra};
  memcpy(x.p, in.p, 2);
  memcpy(x.p + 2, extra, sizeof extra);
  memcpy(x.p + 2 + sizeof extra, in.p + 2, in.n - 2);
  layout l = parse(&x);
  assert_int_equal(l.com, 1);
  sl_jpeg_rewriter *rw = new_rewriter(0);
  blob out = rewrite_ok(rw, &x);
  assert_int_equal(parse(&out).app, 1); /* JFIF only */
  assert_null(memmem(out.p, out.n, "Exif", 4));
  assert_null(memmem(out.p, out.n, "hello", 5));
  free(in.p);
  free(x.p);
  free(out.p);
  sl_jpeg_rewriter_destroy(rw);
}

/* Every bad input is an error with nothing returned, and the rewriter
 * still works afterwards. */
/* libjpeg keeps the tables one image defined for the next one read by the
 * same object: a JPEG without its quantization tables must be refused
 * after a complete one as it is alone, not rewritten with the previous
 * photo's tables. */
static void test_tables_do_not_carry_over(void **state) {
  (void)state;
  sl_jpeg_rewriter *rw = new_rewriter(0);
  blob good = make_jpeg(3, 64, 48, SL_SYNTH_420, 0, 0);
  blob bare = sl_test_jpeg_without(&good, 0xDB);
  assert_true(bare.n < good.n);
  uint8_t *out;
  size_t n;
  sl_err err;
  for (int round = 0; round < 2; round++) {
    assert_int_equal(sl_jpeg_rewrite(rw, good.p, good.n, &out, &n, &err),
                     SL_OK);
    free(out);
    assert_int_equal(sl_jpeg_rewrite(rw, bare.p, bare.n, &out, &n, &err),
                     SL_EDECODE);
    assert_null(out);
    if (!strstr(err.msg, "Quantization table"))
      fail_msg("%s", err.msg);
  }
  free(bare.p);
  free(good.p);
  sl_jpeg_rewriter_destroy(rw);
}

/* Sampling factors that do not divide the largest (3x1 beside 2x1): the
 * coefficients would copy, but no libjpeg decodes the result. Found by
 * fuzz_jpeg_layout; a 33x7 progressive JPEG. */
static void test_fractional_sampling(void **state) {
  (void)state;
  static const uint8_t head[] = {0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a,
                                 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00,
                                 0x00, 0x01, 0x00, 0x01, 0x00, 0x40};
  static const uint8_t tail[] = {
      0xff, 0xc2, 0x00, 0x11, 0x08, 0x00, 0x07, 0x00, 0x21, 0x03, 0x01, 0x21,
      0x00, 0x02, 0x31, 0x01, 0x03, 0x11, 0x01, 0xff, 0xc4, 0x00, 0x16, 0x01,
      0x01, 0x01, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
      0x00, 0x00, 0x00, 0x00, 0x01, 0x02, 0x03, 0xff, 0xda, 0x00, 0x0c, 0x03,
      0x01, 0x00, 0x02, 0x10, 0x03, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
      0x00, 0x00, 0x00, 0x00, 0xbf, 0xff, 0xd9};
  uint8_t jpg[sizeof head + 2 * 69 + sizeof tail];
  size_t n = 0;
  memcpy(jpg, head, sizeof head);
  n += sizeof head;
  for (int t = 0; t < 2; t++) { /* DQT 0 and 1, all 16 */
    const uint8_t dqt[5] = {0xff, 0xdb, 0x00, 0x43, (uint8_t)t};
    memcpy(jpg + n, dqt, 5);
    memset(jpg + n + 5, 16, 64);
    n += 69;
  }
  memcpy(jpg + n, tail, sizeof tail);
  n += sizeof tail;
  sl_jpeg_rewriter *rw = new_rewriter(0);
  uint8_t *out;
  size_t len;
  sl_err err;
  sl_status st = sl_jpeg_rewrite(rw, jpg, n, &out, &len, &err);
  assert_null(out);
  if (st != SL_EUNSUPPORTED || !strstr(err.msg, "does not divide"))
    fail_msg("%d: %s", st, err.msg);
  sl_jpeg_rewriter_destroy(rw);
}

static void test_bad_input(void **state) {
  (void)state;
  sl_jpeg_rewriter *rw = new_rewriter(100000);
  blob good = make_jpeg(9, 200, 150, SL_SYNTH_420, 0, 0);
  blob prog = make_jpeg(9, 200, 150, SL_SYNTH_420, 1, 0);
  typedef struct bad {
    const char *what;
    blob b;
    sl_status want;
    const char *msg;
  } bad;
  bad cases[12];
  int n = 0;
  uint8_t *cut = malloc(good.n);
  memcpy(cut, good.p, good.n);
  cases[n++] = (bad){"truncated", {cut, good.n - 30}, SL_EDECODE, "Premature"};
  uint8_t *pcut = malloc(prog.n);
  memcpy(pcut, prog.p, prog.n);
  cases[n++] = (bad){
      "progressive truncated", {pcut, prog.n / 2}, SL_EDECODE, "Premature"};
  uint8_t *scr = malloc(good.n);
  memcpy(scr, good.p, good.n);
  for (size_t k = good.n / 2; k < good.n - 4; k++)
    scr[k] = (uint8_t)(k * 13);
  cases[n++] = (bad){"scrambled scan", {scr, good.n}, SL_EDECODE, NULL};
  uint8_t *zeros = calloc(1, 4096);
  cases[n++] = (bad){"zeros", {zeros, 4096}, SL_EDECODE, "Not a JPEG"};
  uint8_t *text = malloc(5);
  memcpy(text, "hello", 5);
  cases[n++] = (bad){"text", {text, 5}, SL_EDECODE, NULL};
  uint8_t *soi = malloc(2);
  soi[0] = 0xFF, soi[1] = 0xD8;
  cases[n++] = (bad){"SOI only", {soi, 2}, SL_EDECODE, NULL};
  uint8_t *hdr = malloc(good.n);
  memcpy(hdr, good.p, good.n);
  uint8_t *sof = memmem(hdr, good.n, "\xFF\xC0", 2);
  assert_non_null(sof);
  cases[n++] =
      (bad){"headers only", {hdr, (size_t)(sof - hdr) + 10}, SL_EDECODE, NULL};
  /* SOF0 -> SOF3 (lossless), then 12-bit precision. */
  uint8_t *sof3 = malloc(good.n);
  memcpy(sof3, good.p, good.n);
  sof3[sof - hdr + 1] = 0xC3;
  cases[n++] = (bad){"lossless", {sof3, good.n}, SL_EUNSUPPORTED, "SOF type"};
  uint8_t *p12 = malloc(good.n);
  memcpy(p12, good.p, good.n);
  p12[sof - hdr + 4] = 12;
  cases[n++] = (bad){"12-bit", {p12, good.n}, SL_EUNSUPPORTED, "precision"};
  /* 30000 x 30000 claimed: refused before any large allocation. */
  uint8_t *huge = malloc(good.n);
  memcpy(huge, good.p, good.n);
  static const uint8_t dims[4] = {0x75, 0x30, 0x75, 0x30};
  memcpy(huge + (sof - hdr) + 5, dims, 4);
  cases[n++] = (bad){"huge", {huge, good.n}, SL_ETOOBIG, "30000x30000"};
  /* Data after a DHT that makes no sense. */
  uint8_t *dht = malloc(good.n);
  memcpy(dht, good.p, good.n);
  uint8_t *h = memmem(dht, good.n, "\xFF\xC4", 2);
  assert_non_null(h);
  memset(h + 5, 0xFF, 16); /* 16 x 255 code counts */
  cases[n++] = (bad){"bad Huffman table", {dht, good.n}, SL_EDECODE, NULL};
  for (int i = 0; i < n; i++) {
    uint8_t *out = (uint8_t *)1;
    size_t out_len = 1;
    sl_err err = {0};
    sl_status st =
        sl_jpeg_rewrite(rw, cases[i].b.p, cases[i].b.n, &out, &out_len, &err);
    if (st != cases[i].want)
      fail_msg("%s: status %d, want %d (%s)", cases[i].what, (int)st,
               (int)cases[i].want, err.msg);
    assert_null(out);
    assert_int_equal(out_len, 0);
    assert_non_null(strstr(err.msg, "jpeg rewrite: "));
    if (cases[i].msg && !strstr(err.msg, cases[i].msg))
      fail_msg("%s: message '%s' lacks '%s'", cases[i].what, err.msg,
               cases[i].msg);
    /* Still usable. */
    blob ok = rewrite_ok(rw, &good);
    free(ok.p);
    free(cases[i].b.p);
  }
  /* Empty input and NULL arguments. */
  uint8_t *out;
  size_t out_len;
  sl_err err = {0};
  assert_int_equal(sl_jpeg_rewrite(rw, good.p, 0, &out, &out_len, &err),
                   SL_EDECODE);
  assert_int_equal(sl_jpeg_rewrite(rw, NULL, 10, &out, &out_len, &err),
                   SL_EINVAL);
  assert_int_equal(sl_jpeg_rewrite(rw, good.p, good.n, NULL, &out_len, &err),
                   SL_EINVAL);
  assert_int_equal(sl_jpeg_rewrite(NULL, good.p, good.n, &out, &out_len, &err),
                   SL_EINVAL);
  /* The pixel limit: 200x150 = 30000 fits 100000; 500x375 does not. */
  blob big = make_jpeg(9, 500, 375, SL_SYNTH_420, 0, 0);
  assert_int_equal(sl_jpeg_rewrite(rw, big.p, big.n, &out, &out_len, &err),
                   SL_ETOOBIG);
  assert_non_null(strstr(err.msg, "500x375"));
  free(big.p);
  free(good.p);
  free(prog.p);
  sl_jpeg_rewriter_destroy(rw);
  sl_jpeg_rewriter_destroy(NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_variants),
      cmocka_unit_test(test_restarts_and_repeat),
      cmocka_unit_test(test_interval_override),
      cmocka_unit_test(test_arithmetic),
      cmocka_unit_test(test_cmyk),
      cmocka_unit_test(test_drops_metadata),
      cmocka_unit_test(test_bad_input),
      cmocka_unit_test(test_tables_do_not_carry_over),
      cmocka_unit_test(test_fractional_sampling),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
