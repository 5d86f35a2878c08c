/* codecs/jpeg_window: reading the restart layout, building windows, and
 * the decoder's windowed path. The claim under test is exact: a window
 * decoded at m/8 has the same pixels as the whole image decoded at m/8,
 * over every MCU that keeps its margin; and a region decode gives the same
 * bytes from a file with the restart layout (windowed) as from the same
 * image without restart markers (whole stream). Damaged layouts never
 * crash and never give a window that reads outside the input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <turbojpeg.h>

#include "codecs/codec.h"
#include "codecs/jpeg_layout.h"
#include "codecs/jpeg_window.h"
#include "common/rng.h"
#include "support/synth_jpeg.h"
#include "tools/synth.h"

enum { k_cap = 4 << 20 };

static blob synth(uint64_t seed, int w, int h, sl_synth_color color,
                  int restart_mcus, int restart_rows, int progressive) {
  sl_synth_jpeg_opts o = sl_synth_jpeg_defaults();
  o.color = color;
  o.restart_mcus = restart_mcus;
  o.restart_rows = restart_rows;
  o.progressive = progressive;
  o.texture = 2;
  return sl_test_jpeg(seed, w, h, &o);
}

/* Full decode at m/8 with TurboJPEG (RGB, gray, or CMYK for 4
 * components), independent of sluice's decoder. */
static uint8_t *tj_decode(const uint8_t *p, size_t n, int m, int *w, int *h,
                          int *ch) {
  tjhandle t = tjInitDecompress();
  assert_non_null(t);
  int fw, fh, sub, cs;
  assert_int_equal(
      tjDecompressHeader3(t, p, (unsigned long)n, &fw, &fh, &sub, &cs), 0);
  tjscalingfactor sf = {m, 8};
  *w = TJSCALED(fw, sf);
  *h = TJSCALED(fh, sf);
  int pf = cs == TJCS_GRAY                      ? TJPF_GRAY
           : cs == TJCS_CMYK || cs == TJCS_YCCK ? TJPF_CMYK
                                                : TJPF_RGB;
  *ch = tjPixelSize[pf];
  uint8_t *out = malloc((size_t)*w * (size_t)*h * (size_t)*ch);
  assert_non_null(out);
  if (tjDecompress2(t, p, (unsigned long)n, out, *w, 0, *h, pf, 0) != 0)
    fail_msg("tjDecompress2: %s", tjGetErrorStr2(t));
  tjDestroy(t);
  return out;
}

/* ---- the layout ---- */

static void test_layout_read(void **state) {
  (void)state;
  sl_jpeg_grid lo;
  blob b = synth(1, 500, 375, SL_SYNTH_420, -1, 0, 0);
  assert_int_equal(sl_jpeg_grid_read(b.p, b.n, &lo), 1);
  assert_int_equal(lo.width, 500);
  assert_int_equal(lo.height, 375);
  assert_int_equal(lo.mcu_w, 16);
  assert_int_equal(lo.mcu_h, 16);
  assert_int_equal(lo.mcus_x, 32);
  assert_int_equal(lo.mcus_y, 24);
  assert_int_equal(lo.interval, sl_jpeg_restart_mcus(32, 16));
  assert_int_equal(lo.interval, 2);
  assert_int_equal(lo.seg_w, 2);
  assert_int_equal(lo.seg_rows, 1);
  assert_true(lo.entropy > lo.sof_dims && lo.entropy < b.n);
  free(b.p);

  b = synth(2, 120, 64, SL_SYNTH_444, 0, 2, 0); /* every 2 rows */
  assert_int_equal(sl_jpeg_grid_read(b.p, b.n, &lo), 1);
  assert_int_equal(lo.mcus_x, 15);
  assert_int_equal(lo.seg_w, 15);
  assert_int_equal(lo.seg_rows, 2);
  free(b.p);

  b = synth(3, 120, 64, SL_SYNTH_420, 0, 0, 0); /* no restarts */
  assert_int_equal(sl_jpeg_grid_read(b.p, b.n, &lo), 0);
  free(b.p);
  b = synth(3, 120, 64, SL_SYNTH_420, 3, 0, 0); /* 3 does not divide 8 */
  assert_int_equal(sl_jpeg_grid_read(b.p, b.n, &lo), 0);
  free(b.p);
  b = synth(3, 120, 64, SL_SYNTH_420, -1, 0, 1); /* progressive */
  assert_int_equal(sl_jpeg_grid_read(b.p, b.n, &lo), 0);
  free(b.p);

  /* The rule: a divisor of the row, segments at most 32 px wide. */
  assert_int_equal(sl_jpeg_restart_mcus(32, 16), 2);
  assert_int_equal(sl_jpeg_restart_mcus(31, 16), 1);
  assert_int_equal(sl_jpeg_restart_mcus(63, 8), 3);
  assert_int_equal(sl_jpeg_restart_mcus(64, 8), 4);
  assert_int_equal(sl_jpeg_restart_mcus(1, 16), 1);
  assert_int_equal(sl_jpeg_restart_mcus(4, 32), 1);
}

/* Every prefix and many one-byte changes of a header: read or refused,
 * never outside the bytes (ASan watches), and whatever is accepted has a
 * consistent geometry. */
static void test_layout_damage(void **state) {
  (void)state;
  blob b = synth(4, 96, 80, SL_SYNTH_422, -1, 0, 0);
  sl_jpeg_grid lo;
  assert_int_equal(sl_jpeg_grid_read(b.p, b.n, &lo), 1);
  size_t hdr = lo.entropy;
  for (size_t n = 0; n < hdr; n++) {
    uint8_t *cut = malloc(n ? n : 1);
    memcpy(cut, b.p, n);
    assert_int_equal(sl_jpeg_grid_read(cut, n, &lo), 0);
    free(cut);
  }
  sl_rng r = sl_rng_for(4, 0, 0);
  uint8_t *dam = malloc(b.n);
  for (int i = 0; i < 3000; i++) {
    memcpy(dam, b.p, b.n);
    size_t at = sl_rng_below(&r, hdr);
    dam[at] = (uint8_t)sl_rng_below(&r, 256);
    if (sl_jpeg_grid_read(dam, b.n, &lo)) {
      assert_true(lo.mcus_x >= 1 && lo.mcus_y >= 1 && lo.interval >= 1);
      assert_true(lo.mcus_x % lo.seg_w == 0);
      assert_true(lo.entropy <= b.n);
      uint8_t *out = malloc(k_cap);
      sl_jpeg_window win;
      (void)sl_jpeg_window_build(dam, b.n, &lo, 0, 0, lo.mcus_x, lo.mcus_y, out,
                                 k_cap, &win);
      free(out);
    }
  }
  free(dam);
  free(b.p);
}

/* ---- windows ---- */

typedef struct variant {
  sl_synth_color color;
  int w, h;
  int restart_mcus, restart_rows;
} variant;

static const variant k_variants[] = {
    {SL_SYNTH_420, 500, 375, -1, 0},  {SL_SYNTH_420, 375, 500, -1, 0},
    {SL_SYNTH_420, 497, 333, -1, 0}, /* 32 MCUs wide; odd height */
    {SL_SYNTH_420, 241, 97, -1, 0},  /* 16 MCUs; interval 2 */
    {SL_SYNTH_420, 209, 97, -1, 0},  /* 14 MCUs */
    {SL_SYNTH_420, 193, 65, -1, 0},  /* 13 MCUs: prime, interval 1 */
    {SL_SYNTH_422, 300, 200, -1, 0},  {SL_SYNTH_440, 300, 200, -1, 0},
    {SL_SYNTH_444, 300, 200, -1, 0},  {SL_SYNTH_GRAY, 300, 200, -1, 0},
    {SL_SYNTH_YCCK, 200, 120, -1, 0}, {SL_SYNTH_CMYK, 200, 120, -1, 0},
    {SL_SYNTH_420, 300, 200, 0, 1}, /* a marker every row */
    {SL_SYNTH_444, 300, 200, 0, 3}, /* every 3 rows */
    {SL_SYNTH_420, 17, 9, -1, 0},     {SL_SYNTH_420, 1, 1, -1, 0},
};

/* For random MCU rectangles: the window's pixels equal the whole decode's
 * over the rectangle, given the margin sl_jpeg_window_margin asks for. */
static void test_window_pixels(void **state) {
  (void)state;
  uint8_t *out = malloc(k_cap);
  sl_rng r = sl_rng_for(5, 0, 0);
  int nv = (int)(sizeof k_variants / sizeof k_variants[0]);
  for (int v = 0; v < nv; v++) {
    const variant *va = &k_variants[v];
    blob b = synth(100 + (uint64_t)v, va->w, va->h, va->color, va->restart_mcus,
                   va->restart_rows, 0);
    sl_jpeg_grid lo;
    assert_int_equal(sl_jpeg_grid_read(b.p, b.n, &lo), 1);
    for (int m = 1; m <= 8; m *= 2) {
      int fw, fh, ch;
      uint8_t *full = tj_decode(b.p, b.n, m, &fw, &fh, &ch);
      int gx, gy;
      sl_jpeg_window_margin(&lo, m, &gx, &gy);
      int sw = lo.mcu_w * m / 8, sh = lo.mcu_h * m / 8;
      for (int t = 0; t < 12; t++) {
        /* The inner rectangle whose pixels must match. */
        int ix0 = (int)sl_rng_below(&r, (uint64_t)lo.mcus_x);
        int ix1 = ix0 + 1 + (int)sl_rng_below(&r, (uint64_t)(lo.mcus_x - ix0));
        int iy0 = (int)sl_rng_below(&r, (uint64_t)lo.mcus_y);
        int iy1 = iy0 + 1 + (int)sl_rng_below(&r, (uint64_t)(lo.mcus_y - iy0));
        int mx0 = ix0 - gx < 0 ? 0 : ix0 - gx;
        int my0 = iy0 - gy < 0 ? 0 : iy0 - gy;
        int mx1 = ix1 + gx > lo.mcus_x ? lo.mcus_x : ix1 + gx;
        int my1 = iy1 + gy > lo.mcus_y ? lo.mcus_y : iy1 + gy;
        sl_jpeg_window win;
        assert_int_equal(sl_jpeg_window_build(b.p, b.n, &lo, mx0, my0, mx1, my1,
                                              out, k_cap, &win),
                         1);
        assert_true(win.mcu_x <= mx0 && win.mcu_y <= my0);
        assert_true(win.len < b.n + 64);
        int ww, wh, wch;
        uint8_t *wpx = tj_decode(out, win.len, m, &ww, &wh, &wch);
        assert_int_equal(wch, ch);
        assert_int_equal(ww, sl_scaled_side(win.width, m));
        assert_int_equal(wh, sl_scaled_side(win.height, m));
        int ox = win.mcu_x * sw, oy = win.mcu_y * sh;
        int px0 = ix0 * sw, px1 = ix1 * sw > fw ? fw : ix1 * sw;
        int py0 = iy0 * sh, py1 = iy1 * sh > fh ? fh : iy1 * sh;
        for (int y = py0; y < py1; y++) {
          const uint8_t *a = full + ((size_t)y * fw + px0) * ch;
          const uint8_t *c = wpx + ((size_t)(y - oy) * ww + (px0 - ox)) * ch;
          if (memcmp(a, c, (size_t)(px1 - px0) * ch) != 0)
            fail_msg("variant %d (%dx%d) at %d/8: MCUs x[%d,%d) y[%d,%d): "
                     "row %d differs",
                     v, va->w, va->h, m, ix0, ix1, iy0, iy1, y);
        }
        free(wpx);
      }
      free(full);
    }
    free(b.p);
  }
  free(out);
}

/* A window skips what it does not need: a small one is much smaller than
 * the file, and one that cannot fit its buffer is refused. */
static void test_window_size_and_room(void **state) {
  (void)state;
  blob b = synth(7, 500, 375, SL_SYNTH_420, -1, 0, 0);
  sl_jpeg_grid lo;
  assert_int_equal(sl_jpeg_grid_read(b.p, b.n, &lo), 1);
  uint8_t *out = malloc(k_cap);
  sl_jpeg_window win;
  assert_int_equal(
      sl_jpeg_window_build(b.p, b.n, &lo, 10, 10, 14, 14, out, k_cap, &win), 1);
  assert_true(win.len * 20 < b.n);
  assert_int_equal(win.mcu_x, 10);
  assert_int_equal(win.width, 64);
  assert_int_equal(win.height, 64);
  assert_int_equal(sl_jpeg_window_build(b.p, b.n, &lo, 10, 10, 14, 14, out,
                                        win.len - 1, &win),
                   0);
  assert_int_equal(
      sl_jpeg_window_build(b.p, b.n, &lo, 0, 0, 33, 1, out, k_cap, &win),
      0); /* outside the image */
  assert_int_equal(
      sl_jpeg_window_build(b.p, b.n, &lo, 3, 0, 3, 1, out, k_cap, &win), 0);
  free(out);
  free(b.p);
}

/* ---- the decoder's windowed path ---- */

static void copy_out(const sl_decoded *o, int ch, uint8_t *dst) {
  for (int r = 0; r < o->h; r++)
    memcpy(dst + (size_t)r * o->w * ch, o->pixels + r * o->stride,
           (size_t)o->w * ch);
}

/* The same image with the restart layout and without: every region decode
 * gives the same bytes, and the layout's small regions are windowed. */
static void test_decoder_same_bytes(void **state) {
  (void)state;
  static const variant vs[] = {
      {SL_SYNTH_420, 500, 375, -1, 0}, {SL_SYNTH_422, 333, 250, -1, 0},
      {SL_SYNTH_444, 250, 333, -1, 0}, {SL_SYNTH_GRAY, 200, 150, -1, 0},
      {SL_SYNTH_440, 200, 150, -1, 0}, {SL_SYNTH_YCCK, 160, 120, -1, 0},
      {SL_SYNTH_420, 300, 200, 0, 1},
  };
  sl_decoder *d;
  sl_err err;
  assert_int_equal(sl_decoder_create(&d, 1 << 24, 1024, 1024, &err), SL_OK);
  uint8_t *a = malloc(1024 * 1024 * 4), *c = malloc(1024 * 1024 * 4);
  sl_rng r = sl_rng_for(6, 0, 0);
  for (size_t v = 0; v < sizeof vs / sizeof vs[0]; v++) {
    blob laid = synth(200 + v, vs[v].w, vs[v].h, vs[v].color,
                      vs[v].restart_mcus, vs[v].restart_rows, 0);
    blob plain = synth(200 + v, vs[v].w, vs[v].h, vs[v].color, 0, 0, 0);
    sl_encoded el = {laid.p, laid.n, 1, 0, 0, 0};
    sl_encoded ep = {plain.p, plain.n, 1, 0, 0, 0};
    int windowed = 0, tries = 0;
    for (int t = 0; t < 60; t++) {
      int w = 1 + (int)sl_rng_below(&r, (uint64_t)vs[v].w);
      int h = 1 + (int)sl_rng_below(&r, (uint64_t)vs[v].h);
      int x = (int)sl_rng_below(&r, (uint64_t)(vs[v].w - w + 1));
      int y = (int)sl_rng_below(&r, (uint64_t)(vs[v].h - h + 1));
      int m = 1 << sl_rng_below(&r, 4);
      int ch = t % 5 == 4 ? 1 : 4;
      int mins = t % 3 == 0 ? 0 : 16 + (int)sl_rng_below(&r, 64);
      sl_decode_req req = {x, y, w, h, m, mins, mins, ch, 0};
      sl_decoded ol, op;
      assert_int_equal(sl_decoder_decode(d, &ep, &req, &op, &err), SL_OK);
      assert_false(op.windowed);
      copy_out(&op, ch, a);
      assert_int_equal(sl_decoder_decode(d, &el, &req, &ol, &err), SL_OK);
      copy_out(&ol, ch, c);
      assert_int_equal(ol.w, op.w);
      assert_int_equal(ol.h, op.h);
      if (memcmp(a, c, (size_t)ol.w * ol.h * ch) != 0)
        fail_msg("variant %zu: region %dx%d+%d+%d at %d/8 (min %d, ch %d, "
                 "windowed %d) differs",
                 v, w, h, x, y, m, mins, ch, ol.windowed);
      /* Small regions save well over a tenth of the work: with segments
       * across the rows, anywhere; with whole-row segments, below the
       * middle. */
      int rows_only = vs[v].restart_rows > 0;
      if (w * 2 < vs[v].w && h * 2 < vs[v].h &&
          (!rows_only || y * 2 > vs[v].h)) {
        tries++;
        windowed += ol.windowed;
      }
    }
    assert_int_equal(windowed, tries);
    assert_true(tries > 0);
    free(laid.p);
    free(plain.p);
  }
  free(a);
  free(c);
  sl_decoder_destroy(d);
}

/* Damage inside a restart-laid-out file: restart markers renumbered, bytes
 * changed, the data cut short. The decode fails with SL_EDECODE or succeeds
 * (damage outside the region, or libjpeg's tolerance), never crashes, and
 * the decoder keeps working. */
static void test_decoder_damage(void **state) {
  (void)state;
  blob b = synth(9, 320, 240, SL_SYNTH_420, -1, 0, 0);
  sl_jpeg_grid lo;
  assert_int_equal(sl_jpeg_grid_read(b.p, b.n, &lo), 1);
  sl_decoder *d;
  sl_err err;
  assert_int_equal(sl_decoder_create(&d, 1 << 24, 512, 512, &err), SL_OK);
  uint8_t *dam = malloc(b.n);
  sl_rng r = sl_rng_for(9, 0, 0);
  int failed = 0;
  for (int i = 0; i < 400; i++) {
    memcpy(dam, b.p, b.n);
    size_t n = b.n;
    size_t at = lo.entropy + sl_rng_below(&r, b.n - lo.entropy);
    if (i % 3 == 0) { /* renumber the next restart marker */
      for (size_t k = at; k + 1 < n; k++)
        if (dam[k] == 0xFF && dam[k + 1] >= 0xD0 && dam[k + 1] <= 0xD7) {
          dam[k + 1] = (uint8_t)(0xD0 + ((dam[k + 1] - 0xD0 + 3) & 7));
          break;
        }
    } else if (i % 3 == 1) {
      dam[at] ^= (uint8_t)(1 + sl_rng_below(&r, 255));
    } else {
      n = at;
    }
    sl_encoded e = {dam, n, 1, 0, 0, 0};
    sl_decode_req req = {40 + (int)sl_rng_below(&r, 200),
                         30 + (int)sl_rng_below(&r, 150),
                         64,
                         48,
                         4,
                         0,
                         0,
                         4,
                         0};
    sl_decoded o;
    sl_status st = sl_decoder_decode(d, &e, &req, &o, &err);
    assert_true(st == SL_OK || st == SL_EDECODE);
    failed += st != SL_OK;
  }
  assert_true(failed > 0);
  /* Still a working decoder. */
  sl_encoded e = {b.p, b.n, 1, 0, 0, 0};
  sl_decode_req req = {100, 100, 64, 48, 4, 0, 0, 4, 0};
  sl_decoded o;
  assert_int_equal(sl_decoder_decode(d, &e, &req, &o, &err), SL_OK);
  assert_true(o.windowed);
  free(dam);
  free(b.p);
  sl_decoder_destroy(d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_layout_read),
      cmocka_unit_test(test_layout_damage),
      cmocka_unit_test(test_window_pixels),
      cmocka_unit_test(test_window_size_and_room),
      cmocka_unit_test(test_decoder_same_bytes),
      cmocka_unit_test(test_decoder_damage),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
