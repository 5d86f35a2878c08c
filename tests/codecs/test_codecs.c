/* codecs/: probe and region decode of JPEG, PNG and raw arrays; the test
 * image generator; every kind of bad input is an error, and the decoder
 * keeps working afterwards. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codecs/codec.h"
#include "codecs/img_util.h"
#include "support/synth_jpeg.h"
#include "tools/synth.h"

enum { JPEG = 1, PNG = 2, RAW = 3 };

static blob make_jpeg(uint64_t seed, int w, int h, sl_synth_color color,
                      int progressive, int restart) {
  sl_synth_jpeg_opts o = sl_synth_jpeg_defaults();
  o.color = color;
  o.progressive = progressive;
  o.restart_rows = restart;
  return sl_test_jpeg(seed, w, h, &o);
}

static sl_decoder *new_decoder(uint64_t max_pixels, int cap) {
  sl_decoder *d;
  sl_err err;
  assert_int_equal(sl_decoder_create(&d, max_pixels, cap, cap, &err), SL_OK);
  return d;
}

/* Decodes the region into a tight malloc'd buffer of w*h*ch bytes. */
static uint8_t *decode(sl_decoder *d, const sl_encoded *in, int x, int y, int w,
                       int h, int scale, int min_w, int min_h, int ch,
                       sl_decoded *out, sl_status *st, sl_err *err) {
  sl_decode_req req = {x, y, w, h, scale, min_w, min_h, ch, 0};
  *st = sl_decoder_decode(d, in, &req, out, err);
  if (*st != SL_OK)
    return NULL;
  uint8_t *buf = malloc((size_t)out->w * out->h * ch);
  for (int r = 0; r < out->h; r++)
    memcpy(buf + (size_t)r * out->w * ch, out->pixels + r * out->stride,
           (size_t)out->w * ch);
  return buf;
}

static uint8_t *rgbx_to_rgb(const uint8_t *p, size_t npx) {
  uint8_t *o = malloc(npx * 3);
  for (size_t i = 0; i < npx; i++)
    memcpy(o + 3 * i, p + 4 * i, 3);
  return o;
}

/* ---- the generator ---- */

static void test_synth_deterministic(void **state) {
  (void)state;
  blob a = make_jpeg(5, 97, 61, SL_SYNTH_420, 1, 2);
  blob b = make_jpeg(5, 97, 61, SL_SYNTH_420, 1, 2);
  blob c = make_jpeg(6, 97, 61, SL_SYNTH_420, 1, 2);
  assert_int_equal(a.n, b.n);
  assert_memory_equal(a.p, b.p, a.n);
  assert_true(a.n != c.n || memcmp(a.p, c.p, a.n) != 0);
  free(a.p), free(b.p), free(c.p);
  sl_synth_folder_opts fo = {0};
  sl_synth_folder_defaults(&fo);
  int w, h, gray = 0, prog = 0, rst = 0, tiny = 0, big = 0;
  sl_synth_jpeg_opts jo;
  uint64_t seed;
  char rel[64];
  for (int i = 0; i < fo.count; i++) {
    sl_synth_folder_item(&fo, i, &w, &h, &jo, &seed, rel);
    gray += jo.color == SL_SYNTH_GRAY;
    prog += jo.progressive;
    rst += jo.restart_rows > 0;
    tiny += w * h < 64;
    big += w * h > 2000000;
    assert_true(strncmp(rel, "class_", 6) == 0);
  }
  assert_true(gray > 0 && prog > 0 && rst > 0 && tiny > 0 && big > 0);
  /* Content is photo-like: a 256x256 q90 file is far smaller than raw. */
  blob p = make_jpeg(7, 256, 256, SL_SYNTH_420, 0, 0);
  assert_true(p.n < 256 * 256 * 3 / 5);
  assert_true(p.n > 256 * 256 * 3 / 200);
  free(p.p);
}

static void test_synth_folder_writes(void **state) {
  (void)state;
  const char *tmp = getenv("SLUICE_TEST_TMP");
  char dir[1024];
  /* A fresh folder per run, so files from an earlier run cannot pass. */
  snprintf(dir, sizeof dir, "%s/codecs_synth_%ld", tmp ? tmp : "/tmp",
           (long)getpid());
  sl_synth_folder_opts fo = {.count = 6, .classes = 3, .seed = 9};
  sl_synth_err err;
  assert_int_equal(sl_synth_folder(dir, &fo, &err), SL_OK);
  sl_synth_folder_defaults(&fo);
  for (int i = 0; i < fo.count; i++) { /* every image, where item() says */
    int w, h;
    sl_synth_jpeg_opts jo;
    uint64_t seed;
    char rel[64], path[1100];
    sl_synth_folder_item(&fo, i, &w, &h, &jo, &seed, rel);
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    FILE *f = fopen(path, "rb");
    if (!f)
      fail_msg("%s missing", path);
    uint8_t soi[2] = {0};
    assert_int_equal(fread(soi, 1, 2, f), 2);
    assert_true(soi[0] == 0xFF && soi[1] == 0xD8);
    fclose(f);
    assert_int_equal(unlink(path), 0);
  }
  for (int c = 0; c < fo.classes; c++) {
    char sub[1100];
    snprintf(sub, sizeof sub, "%s/class_%03d", dir, c);
    assert_int_equal(rmdir(sub), 0); /* empty: nothing else was written */
  }
  assert_int_equal(rmdir(dir), 0);
  assert_int_equal(sl_synth_folder("/proc/no/such/dir", &fo, &err), SL_EIO);
  assert_non_null(strstr(err.msg, "/proc/no/such/dir"));
}

/* ---- JPEG ---- */

static void test_jpeg_probe_variants(void **state) {
  (void)state;
  static const struct {
    sl_synth_color c;
    sl_subsamp sub;
    sl_color_model model;
  } v[] = {{SL_SYNTH_420, SL_SUB_420, SL_COLOR_RGB},
           {SL_SYNTH_422, SL_SUB_422, SL_COLOR_RGB},
           {SL_SYNTH_444, SL_SUB_444, SL_COLOR_RGB},
           {SL_SYNTH_440, SL_SUB_440, SL_COLOR_RGB},
           {SL_SYNTH_GRAY, SL_SUB_GRAY, SL_COLOR_GRAY},
           {SL_SYNTH_CMYK, SL_SUB_444, SL_COLOR_CMYK},
           {SL_SYNTH_YCCK, SL_SUB_444, SL_COLOR_YCCK}};
  sl_decoder *d = new_decoder(100000000, 512);
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
    for (int prog = 0; prog < 2; prog++) {
      blob b = make_jpeg(i, 123, 45, v[i].c, prog, 0);
      sl_encoded in = {b.p, b.n, JPEG, 0, 0, 0};
      sl_image_info info;
      sl_err err;
      assert_int_equal(sl_decoder_probe(d, &in, &info, &err), SL_OK);
      assert_int_equal(info.width, 123);
      assert_int_equal(info.height, 45);
      assert_int_equal(info.progressive, prog);
      assert_int_equal(info.subsamp, v[i].sub);
      assert_int_equal(info.color, v[i].model);
      assert_int_equal(info.inverted, v[i].model >= SL_COLOR_CMYK);
      free(b.p);
    }
  }
  sl_decoder_destroy(d);
}

/* Full decode of every variant is close to the generated pixels; CMYK and
 * YCCK (Adobe, inverted) come back as the RGB they were made from. */
static void test_jpeg_full_decode_quality(void **state) {
  (void)state;
  sl_synth_color colors[] = {SL_SYNTH_420, SL_SYNTH_422,  SL_SYNTH_444,
                             SL_SYNTH_440, SL_SYNTH_GRAY, SL_SYNTH_CMYK,
                             SL_SYNTH_YCCK};
  sl_decoder *d = new_decoder(100000000, 512);
  int W = 161, H = 119;
  uint8_t *rgb = malloc((size_t)W * H * 3), *gray = malloc((size_t)W * H);
  sl_synth_pixels(11, -1, 1, W, H, 3, rgb);
  sl_synth_pixels(11, -1, 1, W, H, 1, gray);
  for (size_t i = 0; i < sizeof colors / sizeof colors[0]; i++) {
    for (int mode = 0; mode < 3; mode++) { /* baseline, progressive, RST */
      blob b = make_jpeg(11, W, H, colors[i], mode == 1, mode == 2 ? 1 : 0);
      sl_encoded in = {b.p, b.n, JPEG, 0, 0, 0};
      sl_decoded out;
      sl_status st;
      sl_err err;
      uint8_t *px = decode(d, &in, 0, 0, W, H, 8, 0, 0, 4, &out, &st, &err);
      assert_int_equal(st, SL_OK);
      assert_int_equal(out.w, W);
      assert_int_equal(out.h, H);
      uint8_t *p3 = rgbx_to_rgb(px, (size_t)W * H);
      if (colors[i] == SL_SYNTH_GRAY) {
        for (int k = 0; k < W * H; k++) { /* replicated to 3 channels */
          assert_int_equal(p3[3 * k], p3[3 * k + 1]);
          assert_int_equal(p3[3 * k], p3[3 * k + 2]);
        }
        uint8_t *g = decode(d, &in, 0, 0, W, H, 8, 0, 0, 1, &out, &st, &err);
        assert_true(tu_psnr_u8(g, gray, (size_t)W * H) > 34.0);
        free(g);
      } else {
        double q = tu_psnr_u8(p3, rgb, (size_t)W * H * 3);
        if (q < 30.0)
          fail_msg("variant %zu mode %d: PSNR %.2f", i, mode, q);
      }
      free(px), free(p3), free(b.p);
    }
  }
  free(rgb), free(gray);
  sl_decoder_destroy(d);
}

/* A region decode (crop + skip + early stop) matches the same pixels of a
 * full decode: exactly for 4:4:4 and gray, and up to the fancy
 * upsampler's edge columns for subsampled chroma. */
static void test_jpeg_region_matches_full(void **state) {
  (void)state;
  sl_decoder *d = new_decoder(100000000, 1024);
  int W = 333, H = 251;
  sl_synth_color colors[] = {SL_SYNTH_444, SL_SYNTH_GRAY, SL_SYNTH_420,
                             SL_SYNTH_422, SL_SYNTH_CMYK};
  int boxes[][4] = {{0, 0, 333, 251}, {37, 21, 100, 90},  {1, 1, 1, 1},
                    {332, 250, 1, 1}, {200, 5, 133, 246}, {16, 16, 16, 16}};
  for (size_t c = 0; c < sizeof colors / sizeof colors[0]; c++) {
    for (int prog = 0; prog < 2; prog++) {
      blob b = make_jpeg(3 + c, W, H, colors[c], prog, prog ? 0 : 3);
      sl_encoded in = {b.p, b.n, JPEG, 0, 0, 0};
      sl_decoded out;
      sl_status st;
      sl_err err;
      uint8_t *full = decode(d, &in, 0, 0, W, H, 8, 0, 0, 4, &out, &st, &err);
      assert_int_equal(st, SL_OK);
      for (size_t k = 0; k < sizeof boxes / sizeof boxes[0]; k++) {
        int *bx = boxes[k];
        uint8_t *r = decode(d, &in, bx[0], bx[1], bx[2], bx[3], 8, 0, 0, 4,
                            &out, &st, &err);
        assert_int_equal(st, SL_OK);
        assert_int_equal(out.w, bx[2]);
        assert_int_equal(out.h, bx[3]);
        int maxd = 0;
        for (int y = 0; y < bx[3]; y++)
          for (int x = 0; x < bx[2]; x++)
            for (int ch = 0; ch < 3; ch++) {
              int a = r[((size_t)y * bx[2] + x) * 4 + ch];
              int e = full[(((size_t)(y + bx[1])) * W + x + bx[0]) * 4 + ch];
              maxd = abs(a - e) > maxd ? abs(a - e) : maxd;
            }
        int exact = colors[c] == SL_SYNTH_444 || colors[c] == SL_SYNTH_GRAY ||
                    colors[c] == SL_SYNTH_CMYK;
        if (maxd > (exact ? 0 : 12))
          fail_msg("colour %zu prog %d box %zu: max diff %d", c, prog, k, maxd);
        free(r);
      }
      free(full), free(b.p);
    }
  }
  sl_decoder_destroy(d);
}

/* DCT-scaled decodes have libjpeg's sizes and look like an area average of
 * the full decode; the box reduction keeps outputs under 2x the minimum. */
static void test_jpeg_scaled_and_reduced(void **state) {
  (void)state;
  sl_decoder *d = new_decoder(100000000, 600);
  int W = 1203, H = 901;
  blob b = make_jpeg(21, W, H, SL_SYNTH_420, 0, 0);
  sl_encoded in = {b.p, b.n, JPEG, 0, 0, 0};
  int tw, th;
  uint8_t *ref = tu_tj_decode(b.p, b.n, 3, &tw, &th);
  assert_non_null(ref);
  for (int m = 1; m <= 8; m++) {
    for (int min = 0; min <= 150; min += min ? 110 : 40) {
      sl_decoded out;
      sl_status st;
      sl_err err;
      int bx = 101, by = 57, bw = 600, bh = 500;
      uint8_t *px =
          decode(d, &in, bx, by, bw, bh, m, min, min, 4, &out, &st, &err);
      if (st != SL_OK)
        fail_msg("m=%d: %s", m, err.msg);
      int sw =
          (int)(((int64_t)(bx + bw) * m + 4) / 8 - ((int64_t)bx * m + 4) / 8);
      assert_int_equal(out.scale, m);
      assert_int_equal(out.w, (sw + out.kx - 1) / out.kx);
      if (min) { /* reduced to [min, 2 min), or left alone below 2 min */
        assert_true(out.w < 2 * min && out.h < 2 * min);
        assert_true(out.w >= (sw < min ? sw : min));
      }
      if (min == 150 && m == 4)
        assert_int_equal(out.kx, 2); /* 300 wide */
      uint8_t *p3 = rgbx_to_rgb(px, (size_t)out.w * out.h);
      float *exp = malloc(sizeof(float) * out.w * out.h * 3);
      tu_area_resample(ref, W, 3, bx, by, bw, bh, out.w, out.h, exp);
      double q = tu_psnr(p3, exp, (size_t)out.w * out.h * 3);
      if (q < 30.0)
        fail_msg("m=%d (%dx%d k=%d,%d): PSNR %.2f", m, out.w, out.h, out.kx,
                 out.ky, q);
      free(px), free(p3), free(exp);
    }
  }
  /* The region must fit the caps when no reduction is asked for. */
  sl_decode_req big = {0, 0, W, H, 8, 0, 0, 4, 0};
  sl_decoded out;
  sl_err err;
  assert_int_equal(sl_decoder_decode(d, &in, &big, &out, &err), SL_ETOOBIG);
  free(ref), free(b.p);
  sl_decoder_destroy(d);
}

/* Gray output of every colour model matches the luma of the RGB output,
 * on the direct path and on the box-reduced one. */
static void test_jpeg_gray_output(void **state) {
  (void)state;
  sl_synth_color colors[] = {SL_SYNTH_420, SL_SYNTH_444, SL_SYNTH_GRAY,
                             SL_SYNTH_CMYK, SL_SYNTH_YCCK};
  sl_decoder *d = new_decoder(100000000, 256);
  for (size_t i = 0; i < sizeof colors / sizeof colors[0]; i++) {
    blob b = make_jpeg(60 + i, 150, 101, colors[i], 0, 0);
    sl_encoded in = {b.p, b.n, JPEG, 0, 0, 0};
    for (int min = 0; min <= 30; min += 30) {
      sl_decoded o4, o1;
      sl_status st;
      sl_err err;
      uint8_t *c4 =
          decode(d, &in, 3, 5, 140, 90, 8, min, min, 4, &o4, &st, &err);
      assert_int_equal(st, SL_OK);
      uint8_t *c1 =
          decode(d, &in, 3, 5, 140, 90, 8, min, min, 1, &o1, &st, &err);
      assert_int_equal(st, SL_OK);
      assert_int_equal(o1.w, o4.w);
      assert_int_equal(o1.h, o4.h);
      assert_int_equal(o1.kx, min ? 4 : 1);
      double diff = 0;
      for (int k = 0; k < o1.w * o1.h; k++) {
        const uint8_t *q = c4 + 4 * k;
        double y = 0.299 * q[0] + 0.587 * q[1] + 0.114 * q[2];
        diff += fabs(y - c1[k]);
      }
      diff /= o1.w * o1.h;
      if (diff > 1.5)
        fail_msg("colour %zu min %d: mean |luma - gray| %.2f", i, min, diff);
      free(c4), free(c1);
    }
    free(b.p);
  }
  sl_decoder_destroy(d);
}

/* ---- PNG and raw ---- */

static void test_png_and_raw_exact(void **state) {
  (void)state;
  sl_decoder *d = new_decoder(100000000, 256);
  int W = 77, H = 53;
  uint8_t *rgb = malloc((size_t)W * H * 3), *gray = malloc((size_t)W * H);
  sl_synth_pixels(4, 2, 1, W, H, 3, rgb);
  sl_synth_pixels(4, 2, 1, W, H, 1, gray);
  for (int ch = 1; ch <= 4; ch++) {
    if (ch == 2)
      continue;
    blob b;
    sl_err err;
    assert_int_equal(
        sl_synth_png(4, 2, W, H, ch, &b.p, &b.n, &(sl_synth_err){0}), SL_OK);
    sl_encoded in = {b.p, b.n, PNG, 0, 0, 0};
    sl_image_info info;
    assert_int_equal(sl_decoder_probe(d, &in, &info, &err), SL_OK);
    assert_int_equal(info.width, W);
    assert_int_equal(info.components, ch);
    sl_decoded out;
    sl_status st;
    uint8_t *px = decode(d, &in, 5, 7, 30, 20, 8, 0, 0, 4, &out, &st, &err);
    if (st != SL_OK)
      fail_msg("png %d: %s", ch, err.msg);
    for (int y = 0; y < 20; y++)
      for (int x = 0; x < 30; x++)
        for (int c = 0; c < 3; c++) {
          size_t s = (size_t)(y + 7) * W + x + 5;
          int e = ch == 1 ? gray[s] : rgb[s * 3 + c];
          assert_int_equal(px[((size_t)y * 30 + x) * 4 + c], e);
        }
    free(px), free(b.p);
  }
  /* Raw arrays, 1/3/4 channels; gray output of RGB is the JPEG luma. */
  uint8_t *rgba = malloc((size_t)W * H * 4);
  for (int i = 0; i < W * H; i++) {
    memcpy(rgba + 4 * i, rgb + 3 * i, 3);
    rgba[4 * i + 3] = (uint8_t)i;
  }
  const uint8_t *srcs[] = {gray, rgb, rgba};
  int chans[] = {1, 3, 4};
  for (int k = 0; k < 3; k++) {
    sl_encoded in = {srcs[k], (size_t)W * H * chans[k], RAW, H, W, chans[k]};
    sl_decoded out;
    sl_status st;
    sl_err err;
    uint8_t *px = decode(d, &in, 0, 0, W, H, 8, 0, 0, 4, &out, &st, &err);
    assert_int_equal(st, SL_OK);
    for (int i = 0; i < W * H; i++)
      for (int c = 0; c < 3; c++)
        assert_int_equal(px[4 * i + c], k == 0 ? gray[i] : rgb[3 * i + c]);
    free(px);
    uint8_t *g = decode(d, &in, 0, 0, W, H, 8, 0, 0, 1, &out, &st, &err);
    assert_int_equal(st, SL_OK);
    for (int i = 0; i < W * H && k == 0; i++)
      assert_int_equal(g[i], gray[i]);
    free(g);
    in.len--; /* wrong size */
    assert_int_equal(
        sl_decoder_decode(d, &in, &(sl_decode_req){0, 0, W, H, 8, 0, 0, 4, 0},
                          &out, &err),
        SL_EDECODE);
  }
  /* A region larger than the decoder's scratch (and not reduced): PNG and
   * raw refuse it as JPEG does, naming the codec. */
  sl_decoder *tiny = new_decoder(100000000, 16);
  sl_decode_req whole = {0, 0, W, H, 8, 0, 0, 4, 0};
  sl_decoded out;
  sl_err err;
  blob p;
  assert_int_equal(sl_synth_png(4, 2, W, H, 3, &p.p, &p.n, &(sl_synth_err){0}),
                   SL_OK);
  sl_encoded pin = {p.p, p.n, PNG, 0, 0, 0};
  assert_int_equal(sl_decoder_decode(tiny, &pin, &whole, &out, &err),
                   SL_ETOOBIG);
  assert_non_null(strstr(err.msg, "png: region 77x53"));
  sl_encoded rin = {rgb, (size_t)W * H * 3, RAW, H, W, 3};
  assert_int_equal(sl_decoder_decode(tiny, &rin, &whole, &out, &err),
                   SL_ETOOBIG);
  assert_non_null(strstr(err.msg, "raw: region 77x53"));
  whole.min_w = whole.min_h = 10; /* box-reduced to fit: fine */
  assert_int_equal(sl_decoder_decode(tiny, &rin, &whole, &out, &err), SL_OK);
  sl_decoder_destroy(tiny);
  free(p.p);
  free(rgb), free(gray), free(rgba);
  sl_decoder_destroy(d);
}

/* The box reduction is exact: every (kx, ky) path against sums computed
 * here with the same rounding. */
static void test_box_reduction_exact(void **state) {
  (void)state;
  sl_decoder *d = new_decoder(100000000, 256);
  int W = 77, H = 53;
  uint8_t *rgb = malloc((size_t)W * H * 3), *gray = malloc((size_t)W * H);
  sl_synth_pixels(12, -1, 3, W, H, 3, rgb);
  sl_synth_pixels(12, -1, 3, W, H, 1, gray);
  static const int mins[][2] = {{30, 20}, {77, 10}, {20, 53}, {11, 7}};
  for (int k = 0; k < 4; k++)
    for (int ch = 1; ch <= 4; ch += 3) {
      sl_encoded in = {
          ch == 1 ? gray : rgb, (size_t)W * H * (ch == 1 ? 1 : 3), RAW, H, W,
          ch == 1 ? 1 : 3};
      sl_decoded out;
      sl_status st;
      sl_err err;
      uint8_t *px = decode(d, &in, 1, 2, W - 1, H - 2, 8, mins[k][0],
                           mins[k][1], ch, &out, &st, &err);
      assert_int_equal(st, SL_OK);
      int kx = out.kx, ky = out.ky, rw = W - 1, rh = H - 2;
      assert_int_equal(kx, rw >= 2 * mins[k][0] ? rw / mins[k][0] : 1);
      assert_int_equal(ky, rh >= 2 * mins[k][1] ? rh / mins[k][1] : 1);
      for (int oy = 0; oy < out.h; oy++)
        for (int ox = 0; ox < out.w; ox++)
          for (int c = 0; c < (ch == 1 ? 1 : 3); c++) {
            uint64_t sum = 0, n = 0;
            for (int y = oy * ky; y < (oy + 1) * ky && y < rh; y++)
              for (int x = ox * kx; x < (ox + 1) * kx && x < rw; x++, n++)
                sum += ch == 1 ? gray[(size_t)(y + 2) * W + x + 1]
                               : rgb[((size_t)(y + 2) * W + x + 1) * 3 + c];
            uint64_t mul = ((1ull << 24) + n / 2) / n;
            int e = (int)((sum * mul + (1u << 23)) >> 24);
            int got = px[((size_t)oy * out.w + ox) * ch + c];
            if (got != e)
              fail_msg("k=%d ch=%d (%d,%d): %d != %d", k, ch, ox, oy, got, e);
          }
      free(px);
    }
  free(rgb), free(gray);
  sl_decoder_destroy(d);
}

/* ---- bad input ---- */

static blob good_jpeg(void) {
  return make_jpeg(99, 64, 48, SL_SYNTH_420, 0, 0);
}

/* After an error the decoder still decodes a good image exactly as a
 * fresh one does. */
static void assert_still_works(sl_decoder *d, const uint8_t *expect) {
  blob g = good_jpeg();
  sl_encoded in = {g.p, g.n, JPEG, 0, 0, 0};
  sl_decoded out;
  sl_status st;
  sl_err err;
  uint8_t *px = decode(d, &in, 0, 0, 64, 48, 8, 0, 0, 4, &out, &st, &err);
  assert_int_equal(st, SL_OK);
  assert_memory_equal(px, expect, 64 * 48 * 4);
  free(px), free(g.p);
}

static sl_status decode_all(sl_decoder *d, const uint8_t *p, size_t n,
                            int codec, sl_err *err) {
  sl_encoded in = {p, n, codec, 0, 0, 0};
  sl_image_info info;
  sl_status st = sl_decoder_probe(d, &in, &info, err);
  if (st != SL_OK)
    return st;
  sl_decode_req req = {0, 0, info.width, info.height, 8, 16, 16, 4, 0};
  sl_decoded out;
  return sl_decoder_decode(d, &in, &req, &out, err);
}

static void test_bad_jpeg(void **state) {
  (void)state;
  sl_decoder *d = new_decoder(1000000, 256);
  blob g = good_jpeg();
  sl_encoded gin = {g.p, g.n, JPEG, 0, 0, 0};
  sl_decoded out;
  sl_status st;
  sl_err err;
  uint8_t *expect = decode(d, &gin, 0, 0, 64, 48, 8, 0, 0, 4, &out, &st, &err);
  assert_int_equal(st, SL_OK);
  /* Truncated anywhere before the EOI marker: an error. */
  blob p = make_jpeg(98, 64, 48, SL_SYNTH_444, 1, 0);
  blob pieces[2] = {g, p};
  for (int k = 0; k < 2; k++) {
    for (size_t cut = 0; cut + 2 < pieces[k].n; cut += 1 + cut / 16) {
      st = decode_all(d, pieces[k].p, cut, JPEG, &err);
      if (st == SL_OK)
        fail_msg("file %d cut at %zu of %zu decoded", k, cut, pieces[k].n);
      assert_true(st == SL_EDECODE);
      assert_true(strncmp(err.msg, "jpeg: ", 6) == 0);
    }
    assert_still_works(d, expect);
  }
  free(p.p);
  /* Bad Huffman table: code counts summing past 256. */
  uint8_t *bad = malloc(g.n);
  memcpy(bad, g.p, g.n);
  size_t dht = 0;
  for (size_t i = 0; i + 1 < g.n; i++)
    if (bad[i] == 0xff && bad[i + 1] == 0xc4) {
      dht = i;
      break;
    }
  assert_true(dht > 0);
  memset(bad + dht + 5, 0xff, 16);
  assert_int_equal(decode_all(d, bad, g.n, JPEG, &err), SL_EDECODE);
  assert_non_null(strstr(err.msg, "Huffman"));
  assert_still_works(d, expect);
  /* Corrupt entropy data: a bad Huffman code is a warning -> error. */
  memcpy(bad, g.p, g.n);
  size_t sos = 0;
  for (size_t i = 0; i + 1 < g.n; i++)
    if (bad[i] == 0xff && bad[i + 1] == 0xda)
      sos = i;
  for (size_t i = sos + 14; i < g.n - 2; i += 3)
    bad[i] = 0xff, bad[i + 1] = 0x00; /* garbage, properly stuffed */
  st = decode_all(d, bad, g.n, JPEG, &err);
  assert_int_equal(st, SL_EDECODE);
  assert_still_works(d, expect);
  /* Absurd dimensions in the SOF: over max_pixels, or zero. */
  size_t sof = 0;
  for (size_t i = 0; i + 1 < g.n; i++)
    if (bad[i] == 0xff && (bad[i + 1] == 0xc0 || bad[i + 1] == 0xc2)) {
      sof = i;
      break;
    }
  assert_true(sof > 0);
  memcpy(bad, g.p, g.n);
  bad[sof + 5] = bad[sof + 7] = 0x7f; /* 32767 x 32767 */
  bad[sof + 6] = bad[sof + 8] = 0xff;
  assert_int_equal(decode_all(d, bad, g.n, JPEG, &err), SL_ETOOBIG);
  assert_non_null(strstr(err.msg, "max_pixels"));
  assert_still_works(d, expect);
  bad[sof + 5] = bad[sof + 6] = 0;
  assert_int_equal(decode_all(d, bad, g.n, JPEG, &err), SL_EDECODE);
  assert_still_works(d, expect);
  /* Zero bytes, all zeros, text, a PNG fed as JPEG, NULL. */
  memset(bad, 0, g.n);
  assert_int_equal(decode_all(d, bad, 0, JPEG, &err), SL_EDECODE);
  assert_int_equal(decode_all(d, bad, g.n, JPEG, &err), SL_EDECODE);
  assert_non_null(strstr(err.msg, "Not a JPEG"));
  const char *text = "hello, I am not an image at all";
  assert_int_equal(
      decode_all(d, (const uint8_t *)text, strlen(text), JPEG, &err),
      SL_EDECODE);
  blob png;
  assert_int_equal(
      sl_synth_png(1, 0, 8, 8, 3, &png.p, &png.n, &(sl_synth_err){0}), SL_OK);
  assert_int_equal(decode_all(d, png.p, png.n, JPEG, &err), SL_EDECODE);
  assert_int_equal(decode_all(d, NULL, 0, JPEG, &err), SL_EDECODE);
  assert_int_equal(decode_all(d, g.p, g.n, 77, &err), SL_EUNSUPPORTED);
  /* A region outside the image, a bad scale: SL_EINVAL. */
  sl_decode_req r1 = {60, 0, 10, 10, 8, 0, 0, 4, 0};
  assert_int_equal(sl_decoder_decode(d, &gin, &r1, &out, &err), SL_EINVAL);
  sl_decode_req r2 = {0, 0, 10, 10, 9, 0, 0, 4, 0};
  assert_int_equal(sl_decoder_decode(d, &gin, &r2, &out, &err), SL_EINVAL);
  sl_decode_req r3 = {0, 0, 10, 10, 8, 0, 0, 3, 0};
  assert_int_equal(sl_decoder_decode(d, &gin, &r3, &out, &err), SL_EINVAL);
  assert_still_works(d, expect);
  /* The decompression-bomb guard. */
  sl_decoder *small = new_decoder(64 * 48 - 1, 256);
  assert_int_equal(decode_all(small, g.p, g.n, JPEG, &err), SL_ETOOBIG);
  sl_decoder_destroy(small);
  free(bad), free(png.p), free(g.p), free(expect);
  sl_decoder_destroy(d);
}

/* The decoder refuses a JPEG without its quantization tables after
 * decoding a complete one as it does alone (libjpeg keeps one image's
 * tables for the next in the same object): otherwise a damaged sample
 * decodes with the tables of whichever sample its worker met before. */
static void test_jpeg_tables_do_not_carry_over(void **state) {
  (void)state;
  sl_decoder *d = new_decoder(1u << 20, 256);
  blob good = make_jpeg(4, 64, 48, SL_SYNTH_420, 0, 0);
  blob bare = sl_test_jpeg_without(&good, 0xDB);
  sl_encoded g = {good.p, good.n, JPEG, 0, 0, 0};
  sl_encoded b = {bare.p, bare.n, JPEG, 0, 0, 0};
  sl_decoded out;
  sl_status st;
  sl_err err;
  for (int round = 0; round < 2; round++) {
    free(decode(d, &g, 0, 0, 64, 48, 8, 0, 0, 4, &out, &st, &err));
    if (st != SL_OK)
      fail_msg("%s", err.msg);
    assert_null(decode(d, &b, 0, 0, 64, 48, 8, 0, 0, 4, &out, &st, &err));
    assert_int_equal(st, SL_EDECODE);
    if (!strstr(err.msg, "Quantization table"))
      fail_msg("%s", err.msg);
  }
  free(bare.p);
  free(good.p);
  sl_decoder_destroy(d);
}

/* A decoder that decoded image A gives image B exactly the pixels a fresh
 * decoder gives it, whatever tables A defined: A progressive (optimized
 * Huffman tables per scan) at quality 30, B baseline at quality 95 with its
 * tables, and B without its DHT segments (libjpeg-turbo then decodes with
 * the standard Huffman tables, which B's encoder used; a decompressor
 * reused without re-reading every table would decode it with A's). Full
 * decodes and windowed regions at 8/8 and 4/8. Guards the decoder against
 * the carry-over bug should it ever keep one decompressor per worker. */
static void test_jpeg_reused_decoder_gives_b_exact_pixels(void **state) {
  (void)state;
  sl_synth_jpeg_opts oa = sl_synth_jpeg_defaults(), ob = oa;
  oa.quality = 30;
  oa.progressive = 1;
  ob.quality = 95;
  ob.restart_mcus = -1; /* the packed layout: windowed decodes too */
  blob a = sl_test_jpeg(11, 96, 80, &oa);
  blob b = sl_test_jpeg(12, 96, 80, &ob);
  blob b_std = sl_test_jpeg_without(&b, 0xC4);
  assert_true(b_std.n < b.n);
  sl_encoded ea = {a.p, a.n, JPEG, 0, 0, 0};
  const sl_encoded eb[2] = {{b.p, b.n, JPEG, 0, 0, 0},
                            {b_std.p, b_std.n, JPEG, 0, 0, 0}};
  static const int region[3][5] = {
      {0, 0, 96, 80, 8}, {33, 17, 40, 48, 8}, {20, 8, 64, 64, 4}};
  sl_decoded out;
  sl_status st;
  sl_err err;
  for (int k = 0; k < 2; k++)
    for (int g = 0; g < 3; g++) {
      const int *q = region[g];
      sl_decoder *fresh = new_decoder(1u << 20, 256);
      uint8_t *want = decode(fresh, &eb[k], q[0], q[1], q[2], q[3], q[4], 0, 0,
                             4, &out, &st, &err);
      if (!want)
        fail_msg("fresh, image B %d: %s", k, err.msg);
      int w = out.w, h = out.h;
      sl_decoder_destroy(fresh);
      sl_decoder *d = new_decoder(1u << 20, 256);
      for (int round = 0; round < 2; round++) {
        free(decode(d, &ea, q[0], q[1], q[2], q[3], q[4], 0, 0, 4, &out, &st,
                    &err));
        if (st != SL_OK)
          fail_msg("image A: %s", err.msg);
        uint8_t *got = decode(d, &eb[k], q[0], q[1], q[2], q[3], q[4], 0, 0, 4,
                              &out, &st, &err);
        if (!got)
          fail_msg("after A, image B %d: %s", k, err.msg);
        assert_int_equal(out.w, w);
        assert_int_equal(out.h, h);
        if (memcmp(got, want, (size_t)w * h * 4) != 0)
          fail_msg("image B %d region %d: pixels differ after image A", k, g);
        free(got);
      }
      sl_decoder_destroy(d);
      free(want);
    }
  free(a.p), free(b.p), free(b_std.p);
}

static void test_bad_png(void **state) {
  (void)state;
  sl_decoder *d = new_decoder(1000000, 256);
  blob png;
  sl_err err;
  assert_int_equal(
      sl_synth_png(8, 1, 40, 30, 3, &png.p, &png.n, &(sl_synth_err){0}), SL_OK);
  assert_int_equal(decode_all(d, png.p, png.n, PNG, &err), SL_OK);
  /* Truncated before the image data ends: an error (the IEND chunk and
   * the last IDAT's CRC are not needed once every row is in). */
  for (size_t cut = 0; cut + 24 < png.n; cut += 1 + cut / 32) {
    sl_status st = decode_all(d, png.p, cut, PNG, &err);
    if (st == SL_OK)
      fail_msg("PNG cut at %zu of %zu decoded", cut, png.n);
  }
  uint8_t *bad = malloc(png.n);
  /* A flipped bit anywhere in IHDR or IDAT: CRC or header error. */
  for (size_t i = 8; i + 12 < png.n; i += 7) {
    memcpy(bad, png.p, png.n);
    bad[i] ^= 0x10;
    sl_status st = decode_all(d, bad, png.n, PNG, &err);
    if (st == SL_OK)
      fail_msg("PNG with byte %zu flipped decoded", i);
  }
  /* JPEG fed as PNG, zeros, nothing. */
  blob g = good_jpeg();
  assert_int_equal(decode_all(d, g.p, g.n, PNG, &err), SL_EDECODE);
  memset(bad, 0, png.n);
  assert_int_equal(decode_all(d, bad, png.n, PNG, &err), SL_EDECODE);
  assert_int_equal(decode_all(d, bad, 0, PNG, &err), SL_EDECODE);
  /* Absurd size in IHDR (CRC fixed up is not needed: probe refuses it
   * first). */
  memcpy(bad, png.p, png.n);
  bad[16] = bad[17] = 0x7f;
  assert_int_equal(decode_all(d, bad, png.n, PNG, &err), SL_ETOOBIG);
  assert_int_equal(decode_all(d, png.p, png.n, PNG, &err), SL_OK);
  free(bad), free(png.p), free(g.p);
  sl_decoder_destroy(d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_synth_deterministic),
      cmocka_unit_test(test_synth_folder_writes),
      cmocka_unit_test(test_jpeg_probe_variants),
      cmocka_unit_test(test_jpeg_full_decode_quality),
      cmocka_unit_test(test_jpeg_region_matches_full),
      cmocka_unit_test(test_jpeg_scaled_and_reduced),
      cmocka_unit_test(test_jpeg_gray_output),
      cmocka_unit_test(test_png_and_raw_exact),
      cmocka_unit_test(test_box_reduction_exact),
      cmocka_unit_test(test_bad_jpeg),
      cmocka_unit_test(test_jpeg_tables_do_not_carry_over),
      cmocka_unit_test(test_jpeg_reused_decoder_gives_b_exact_pixels),
      cmocka_unit_test(test_bad_png),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
