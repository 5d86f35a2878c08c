/* JPEG planes (augment.jpeg_planes, codecs/jpeg_planes.c, augment/ycc.c):
 * the colour conversion matches libjpeg's byte for byte, the raw luma is
 * libjpeg's, plane geometry covers every region (edges, 1-pixel crops,
 * odd sizes, restart windows), and the pixels stay within 0.5 dB of the
 * RGBX path's PSNR against the float reference at 224, 160 and 128 for
 * 4:2:0, 4:2:2, 4:4:4 and grayscale. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>

#include "augment/pipeline.h"
#include "augment/ycc.h"
#include "codecs/codec.h"
#include "codecs/img_util.h"
#include "support/aug_params.h"
#include "support/synth_jpeg.h"
#include "tools/synth.h"

enum { JPEG = 1 };

static blob jpeg(uint64_t seed, int w, int h, sl_synth_color c, int prog,
                 int restarts) {
  sl_synth_jpeg_opts o = sl_synth_jpeg_defaults();
  o.color = c;
  o.progressive = prog;
  o.texture = 2;
  o.restart_mcus = restarts ? -1 : 0;
  return sl_test_jpeg(seed, w, h, &o);
}

/* libjpeg's own decode of jpg at m/8 to out_cs (JCS_YCbCr, JCS_RGB or
 * JCS_GRAYSCALE), interleaved; malloc'd. */
static uint8_t *libjpeg_decode(const blob *b, int m, J_COLOR_SPACE out_cs,
                               int *w, int *h, int *nc) {
  struct jpeg_decompress_struct j;
  struct jpeg_error_mgr e;
  j.err = jpeg_std_error(&e);
  jpeg_create_decompress(&j);
  jpeg_mem_src(&j, b->p, (unsigned long)b->n);
  jpeg_read_header(&j, TRUE);
  j.out_color_space = out_cs;
  j.scale_num = (unsigned)m;
  j.scale_denom = 8;
  jpeg_start_decompress(&j);
  *w = (int)j.output_width, *h = (int)j.output_height;
  *nc = j.output_components;
  size_t stride = (size_t)*w * (size_t)*nc;
  uint8_t *px = malloc(stride * (size_t)*h);
  assert_non_null(px);
  while (j.output_scanline < j.output_height) {
    JSAMPROW r = px + j.output_scanline * stride;
    jpeg_read_scanlines(&j, &r, 1);
  }
  jpeg_finish_decompress(&j);
  jpeg_destroy_decompress(&j);
  return px;
}

static void test_ycc_matches_libjpeg(void **state) {
  (void)state;
  /* 4:4:4 at 8/8: no upsampling, so libjpeg's RGB is its converter's
   * output for the YCbCr it gives */
  blob b = jpeg(7, 301, 203, SL_SYNTH_444, 0, 0);
  int w, h, nc, w2, h2, nc2;
  uint8_t *ycc = libjpeg_decode(&b, 8, JCS_YCbCr, &w, &h, &nc);
  uint8_t *rgb = libjpeg_decode(&b, 8, JCS_RGB, &w2, &h2, &nc2);
  assert_int_equal(nc, 3);
  size_t n = (size_t)w * (size_t)h;
  uint8_t *pl = malloc(3 * n), *out = malloc(4 * n);
  for (size_t i = 0; i < n; i++)
    for (int c = 0; c < 3; c++)
      pl[(size_t)c * n + i] = ycc[3 * i + (size_t)c];
  sl_ycc_to_rgbx(pl, pl + n, pl + 2 * n, n, out);
  for (size_t i = 0; i < n; i++)
    for (int c = 0; c < 3; c++)
      if (out[4 * i + (size_t)c] != rgb[3 * i + (size_t)c])
        fail_msg("pixel %zu channel %d: %d, libjpeg %d", i, c,
                 out[4 * i + (size_t)c], rgb[3 * i + (size_t)c]);
  /* every (y, cb, cr): the AVX2 converter is the C one, X is 255 */
  enum { N = 65536 + 5 };
  uint8_t *y = malloc(N), *cb = malloc(N), *cr = malloc(N);
  uint8_t *o1 = malloc(4 * N), *o2 = malloc(4 * N);
  for (int yy = 0; yy < 256; yy++) {
    for (int i = 0; i < N; i++)
      y[i] = (uint8_t)yy, cb[i] = (uint8_t)(i & 255), cr[i] = (uint8_t)(i >> 8);
    sl_ycc_to_rgbx(y, cb, cr, N, o1);
    sl_ycc_to_rgbx_c(y, cb, cr, N, o2);
    assert_memory_equal(o1, o2, 4 * (size_t)N);
    for (int i = 0; i < N; i++)
      assert_int_equal(o1[4 * i + 3], 255);
  }
  sl_gray_to_rgbx(y, 3, o1);
  assert_int_equal(o1[0], 255);
  assert_int_equal(o1[5], 255);
  free(y), free(cb), free(cr), free(o1), free(o2);
  free(pl), free(out), free(ycc), free(rgb), free(b.p);
}

/* A region decoded to planes: the luma plane is libjpeg's Y at that
 * scale, and every plane covers the region. */
static void check_region(sl_decoder *d, const blob *b, const uint8_t *yfull,
                         int sw, int x, int y, int w, int h, int m, int *got) {
  sl_encoded in = {b->p, b->n, JPEG, 0, 0, 0};
  sl_decode_req req = {x, y, w, h, m, w * m / 8 + 1, h * m / 8 + 1, 4, 1};
  sl_decoded out;
  sl_err err;
  if (sl_decoder_decode(d, &in, &req, &out, &err) != SL_OK)
    fail_msg("%s", err.msg);
  if (out.planes.n == 0)
    return; /* decoded as RGBX: allowed (the cost test declined) */
  (*got)++;
  const sl_planes *p = &out.planes;
  double a0 = x * m / 8.0, a1 = (x + w) * m / 8.0;
  double b0 = y * m / 8.0, b1 = (y + h) * m / 8.0;
  for (int c = 0; c < p->n; c++) {
    assert_true(p->w[c] >= 1 && p->h[c] >= 1);
    assert_true(p->x0[c] * p->sub_x[c] <= a0 + 1e-9);
    assert_true(p->y0[c] * p->sub_y[c] <= b0 + 1e-9);
    assert_true((p->x0[c] + p->w[c]) * p->sub_x[c] >= a1 - 1e-9);
    assert_true((p->y0[c] + p->h[c]) * p->sub_y[c] >= b1 - 1e-9);
  }
  for (int r = 0; r < p->h[0]; r++)
    if (memcmp(p->px[0] + (size_t)r * p->stride[0],
               yfull + ((size_t)(p->y0[0] + r) * (size_t)sw + (size_t)p->x0[0]),
               (size_t)p->w[0]) != 0)
      fail_msg("luma row %d of region %dx%d+%d+%d at %d/8 differs", r, w, h, x,
               y, m);
}

static void test_plane_regions(void **state) {
  (void)state;
  static const sl_synth_color colors[] = {
      SL_SYNTH_420, SL_SYNTH_422, SL_SYNTH_444, SL_SYNTH_GRAY, SL_SYNTH_440};
  static const int sizes[][2] = {{1, 1}, {17, 13}, {250, 3}, {333, 199}};
  sl_decoder *d;
  sl_err err;
  assert_int_equal(sl_decoder_create(&d, 1 << 28, 1024, 1024, &err), SL_OK);
  int got = 0;
  for (size_t ci = 0; ci < sizeof colors / sizeof colors[0]; ci++)
    for (size_t si = 0; si < 4; si++)
      for (int rs = 0; rs < 2; rs++) {
        int W = sizes[si][0], H = sizes[si][1];
        blob b = jpeg(30 + si, W, H, colors[ci], 0, rs);
        for (int m = 1; m <= 8; m += m < 4 ? 1 : 2) { /* 1 2 3 4 6 8 */
          int sw, sh, nc;
          uint8_t *ycc = libjpeg_decode(
              &b, m, colors[ci] == SL_SYNTH_GRAY ? JCS_GRAYSCALE : JCS_YCbCr,
              &sw, &sh, &nc);
          uint8_t *yf = malloc((size_t)sw * (size_t)sh);
          for (size_t i = 0; i < (size_t)sw * (size_t)sh; i++)
            yf[i] = ycc[i * (size_t)nc];
          /* whole, 1-pixel corners, edge strips, an odd interior crop */
          int regions[][4] = {
              {0, 0, W, H},         {0, 0, 1, 1},
              {W - 1, H - 1, 1, 1}, {W - 1, 0, 1, H},
              {0, H - 1, W, 1},     {W / 3, H / 5, (W + 1) / 2, (H + 2) / 3}};
          for (int r = 0; r < 6; r++)
            check_region(d, &b, yf, sw, regions[r][0], regions[r][1],
                         regions[r][2], regions[r][3], m, &got);
          free(yf), free(ycc);
        }
        free(b.p);
      }
  print_message("%d of %d regions decoded to planes\n", got, 5 * 4 * 2 * 6 * 6);
  assert_true(got > 150);
  sl_decoder_destroy(d);
}

/* Mean PSNR against the float reference (test_augment's quality test)
 * of random-resized crops at res, with planes off (psnr[0]) and on
 * (psnr[1]); planes[k] gets how many decoded to planes. */
static void mean_psnr(sl_synth_color color, int res, double psnr[2],
                      int planes[2]) {
  sl_aug_params p = sl_test_aug_params(SL_LAYOUT_NHWC);
  p.flip = 0;
  sl_pipeline *pl[2];
  sl_err err;
  for (int k = 0; k < 2; k++) {
    p.jpeg_planes = k;
    assert_int_equal(sl_pipeline_create(&pl[k], &p, 256, &err), SL_OK);
  }
  static const int sizes[][2] = {{500, 375}, {375, 500}, {640, 480},
                                 {320, 240}, {391, 359}, {500, 333}};
  uint8_t *out = malloc((size_t)res * res * 3);
  float *ref = malloc(sizeof(float) * res * res * 3);
  double sum[2] = {0, 0};
  int n = 0;
  for (int i = 0; i < 8; i++) {
    int W = sizes[i % 6][0], H = sizes[i % 6][1];
    blob b = jpeg(200 + (uint64_t)i, W, H, color, i % 6 == 5, i % 2 == 0);
    int tw, th;
    uint8_t *full = tu_tj_decode(b.p, b.n, 3, &tw, &th);
    assert_non_null(full);
    for (int c = 0; c < 5; c++) {
      uint64_t idx = (uint64_t)(i * 5 + c);
      sl_crop_box box;
      int flip;
      sl_aug_sample_crop(&p, W, H, res, res, 5, 0, idx, &box, &flip);
      tu_area_resample(full, W, 3, box.x, box.y, box.w, box.h, res, res, ref);
      for (int k = 0; k < 2; k++) {
        if (sl_pipeline_run(pl[k], b.p, b.n, JPEG, 0, 0, 0, 5, 0, idx, res, res,
                            out, &err) != SL_OK)
          fail_msg("%s", err.msg);
        sum[k] += tu_psnr(out, ref, (size_t)res * res * 3);
      }
      n++;
    }
    free(full), free(b.p);
  }
  for (int k = 0; k < 2; k++) {
    sl_pipeline_times t;
    sl_pipeline_times_get(pl[k], &t);
    planes[k] = (int)t.jpeg_planes;
    psnr[k] = sum[k] / n;
    sl_pipeline_destroy(pl[k]);
  }
  free(out), free(ref);
}

static void test_planes_quality(void **state) {
  (void)state;
  static const sl_synth_color colors[] = {SL_SYNTH_420, SL_SYNTH_422,
                                          SL_SYNTH_444, SL_SYNTH_GRAY};
  static const char *names[] = {"4:2:0", "4:2:2", "4:4:4", "gray"};
  static const int res[] = {224, 160, 128};
  for (int c = 0; c < 4; c++)
    for (int r = 0; r < 3; r++) {
      double q[2];
      int np[2];
      mean_psnr(colors[c], res[r], q, np);
      print_message("%s at %d: RGBX %.2f dB, planes %.2f dB (%+.2f; %d of "
                    "40 crops as planes)\n",
                    names[c], res[r], q[0], q[1], q[1] - q[0], np[1]);
      assert_int_equal(np[0], 0);
      assert_true(np[1] > 0);
      if (q[1] < q[0] - 0.5)
        fail_msg("%s at %d: planes %.2f dB < RGBX %.2f dB - 0.5", names[c],
                 res[r], q[1], q[0]);
    }
}

/* Tiny and odd images, whole-image crops to tiny and odd outputs: the
 * planes path runs (no reads outside a plane: ASan) and agrees with the
 * RGBX path. */
static void test_planes_small(void **state) {
  (void)state;
  static const int sizes[][2] = {{1, 1}, {1, 9}, {9, 1}, {17, 13}, {33, 65}};
  static const int outs[] = {1, 7, 16};
  sl_aug_params p = sl_test_aug_params(SL_LAYOUT_NHWC);
  p.crop = SL_CROP_NONE;
  p.flip = 0;
  sl_pipeline *on, *off;
  sl_err err;
  p.jpeg_planes = 1;
  assert_int_equal(sl_pipeline_create(&on, &p, 64, &err), SL_OK);
  p.jpeg_planes = 0;
  assert_int_equal(sl_pipeline_create(&off, &p, 64, &err), SL_OK);
  uint8_t a[16 * 16 * 3], b2[16 * 16 * 3];
  for (int s = 0; s < 5; s++)
    for (int c = 0; c < 4; c++) {
      static const sl_synth_color colors[] = {SL_SYNTH_420, SL_SYNTH_422,
                                              SL_SYNTH_444, SL_SYNTH_GRAY};
      blob b =
          jpeg(50 + (uint64_t)s, sizes[s][0], sizes[s][1], colors[c], 0, 0);
      for (int o = 0; o < 3; o++) {
        int R = outs[o];
        assert_int_equal(sl_pipeline_run(on, b.p, b.n, JPEG, 0, 0, 0, 1, 0, 0,
                                         R, R, a, &err),
                         SL_OK);
        assert_int_equal(sl_pipeline_run(off, b.p, b.n, JPEG, 0, 0, 0, 1, 0, 0,
                                         R, R, b2, &err),
                         SL_OK);
        double q = tu_psnr_u8(a, b2, (size_t)R * R * 3);
        if (q < 28.0)
          fail_msg("%dx%d colour %d to %d: planes vs RGBX %.2f dB", sizes[s][0],
                   sizes[s][1], c, R, q);
      }
      free(b.p);
    }
  sl_pipeline_times t;
  sl_pipeline_times_get(on, &t);
  assert_true(t.jpeg_planes > 0);
  sl_pipeline_destroy(on);
  sl_pipeline_destroy(off);
  /* A pipeline for 1-pixel outputs: scratch too small for padded planes,
   * so the crops decode to RGBX instead (no error). */
  p.jpeg_planes = 1;
  p.crop = SL_CROP_RANDOM_RESIZED;
  assert_int_equal(sl_pipeline_create(&on, &p, 1, &err), SL_OK);
  blob b = jpeg(60, 40, 30, SL_SYNTH_420, 0, 1);
  for (uint64_t i = 0; i < 8; i++)
    if (sl_pipeline_run(on, b.p, b.n, JPEG, 0, 0, 0, 1, 0, i, 1, 1, a, &err) !=
        SL_OK)
      fail_msg("%s", err.msg);
  free(b.p);
  sl_pipeline_destroy(on);
}

/* A sample's pixels do not depend on what the pipeline decoded before
 * (each worker has its own: the same batches for any worker count). */
static void test_planes_history_free(void **state) {
  (void)state;
  sl_aug_params p = sl_test_aug_params(SL_LAYOUT_NHWC);
  p.jpeg_planes = 1;
  sl_pipeline *a, *b;
  sl_err err;
  assert_int_equal(sl_pipeline_create(&a, &p, 128, &err), SL_OK);
  assert_int_equal(sl_pipeline_create(&b, &p, 128, &err), SL_OK);
  static const sl_synth_color colors[] = {SL_SYNTH_420, SL_SYNTH_GRAY,
                                          SL_SYNTH_444, SL_SYNTH_422};
  blob im[4];
  for (int i = 0; i < 4; i++)
    im[i] = jpeg(70 + (uint64_t)i, 300 + 37 * i, 260 - 19 * i, colors[i], 0,
                 i % 2 == 0);
  static uint8_t o1[128 * 128 * 3], o2[128 * 128 * 3];
  for (int i = 0; i < 4; i++) {
    for (int j = 0; j < 4; j++) /* b decodes every other image first */
      if (j != i)
        assert_int_equal(sl_pipeline_run(b, im[j].p, im[j].n, JPEG, 0, 0, 0, 9,
                                         0, (uint64_t)j, 128, 128, o2, &err),
                         SL_OK);
    assert_int_equal(sl_pipeline_run(a, im[i].p, im[i].n, JPEG, 0, 0, 0, 9, 0,
                                     (uint64_t)i, 128, 128, o1, &err),
                     SL_OK);
    assert_int_equal(sl_pipeline_run(b, im[i].p, im[i].n, JPEG, 0, 0, 0, 9, 0,
                                     (uint64_t)i, 128, 128, o2, &err),
                     SL_OK);
    assert_memory_equal(o1, o2, sizeof o1);
  }
  for (int i = 0; i < 4; i++)
    free(im[i].p);
  sl_pipeline_destroy(a);
  sl_pipeline_destroy(b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ycc_matches_libjpeg),
      cmocka_unit_test(test_plane_regions),
      cmocka_unit_test(test_planes_quality),
      cmocka_unit_test(test_planes_small),
      cmocka_unit_test(test_planes_history_free),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
