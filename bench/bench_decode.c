/* Decode+augment throughput against a plain full decode, one thread.
 *
 *   bench_decode [--images N] [--rounds R] [--seed S] [--texture T]
 *                [--scale-costs]
 *
 * Generates N ImageNet-like JPEGs (500x375, q90, 4:2:0, ~90 KB with the
 * default texture 2; texture 1 gives smoother ~40 KB files) from
 * tools/synth in memory (the "original" files), and the same files as
 * `sluice pack` stores them (sl_jpeg_rewrite: the same coefficients with
 * restart markers cut into ~32 px segments, codecs/jpeg_layout.h). Then
 * alternates rounds of
 *   (a)  tjDecompress2 full-size decode of the originals to RGB, as
 *        PIL/torchvision and FFCV's decoder do before they crop;
 *   (a') the same on the packed files (the layout's own cost);
 *   (a'') the same on the packed coefficients rewritten without restart
 *        markers: a''/a' is what the markers cost a full decode (with any
 *        restart interval libjpeg-turbo 2.1 takes its slower Huffman path);
 *   (b)  sl_pipeline_run on the packed files: random-resized-crop + flip +
 *        u8 NCHW at 224, 160 and 128 (windowed region decode at a DCT
 *        scale, libyuv resize);
 *   (s)  the same on the originals (`pack --keep-jpeg`: no restart
 *        markers, so the decode reads every row above the crop);
 *   (L)  the same as (b) on level records (`sluice pack --levels 1/2`,
 *        sl_jpeg_levels_make at q90 from the packed file): each crop is
 *        decoded from the smallest level that covers it; (L') the same
 *        with levels 3/4 and 1/2. Both print the level mix, the bytes per
 *        image and the time to make the levels (the pack cost);
 *   (P)  (b), (s) and (L1) with augment.jpeg_planes (decode to YCbCr
 *        planes, resize each, convert at the output size) in the same
 *        rounds; P/b is the planes path's speed-up over RGBX (the other
 *        rows run with planes off, the RGBX path);
 *   (h)  the same crops as (b), decoded (windowed) at 1/8 scale with no
 *        resize: the entropy decoding and per-image costs alone, with
 *        almost no inverse DCT, colour conversion or resize. h/a is the
 *        most (b) could reach with this libjpeg-turbo if everything after
 *        Huffman decoding were free;
 * each round over all N images (fresh crops per round). Reports the median
 * images per thread-CPU-second of each and the medians of the per-round
 * ratios. The goal is b/a >= 1.2 at 224 and >= 2.0 at 128. Not a
 * test: no thresholds, and it never fails on speed.
 *
 * --profile rgbx|planes|both [--res N] runs only (b) at N px (128), with
 * the RGBX path, the planes path or both in alternating rounds (then the
 * median of the per-round ratios planes/rgbx), for perf record/stat.
 *
 * --scale-costs measures instead the constants of the DCT scale cost model
 * (augment/crop.c): the random-resized crops of (b) at each resolution,
 * decoded (windowed, with the pipeline's box reduction) at every scale
 * m in 1..6, 8 in rotating order within each round, then resized to the
 * output as the pipeline does. It prints per scale the decode cost above
 * 1/8 per 8x8 luma block of the crop, unreduced (IDCT of luma and chroma,
 * upsampling, colour conversion; entropy decoding is the same at every
 * scale and cancels), the extra cost per scaled pixel when the decoder
 * box-reduces (row-by-row reads and the box filter), and the resize cost
 * per resampler input pixel (least squares over the scales: input pixels
 * vary with m, output pixels not). Then it times the pipeline's decode
 * and resize of the same crops at sl_aug_dct_scale's choice against the
 * smallest covering scale, in alternating rounds (RESULT scale_model:
 * ratio = model / smallest, images per CPU-second).
 *
 * Output: human lines, plus `RESULT {json}` lines (bench/sluice_cases.py):
 *   tj_full, tj_full_packed, tj_full_norst (ratio = a''/a'), sluice_aug
 *   (res, ratio = b/a), sluice_stream (res, ratio = s/a), huffman_floor
 *   (res, ratio = h/a), sluice_levels / sluice_levels34 (res, ratio = L/a,
 *   L'/a), size (original, packed and level-record mean bytes). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libyuv/scale_argb.h>
#include <turbojpeg.h>

#include "augment/pipeline.h"
#include "codecs/codec.h"
#include "codecs/jpeg_levels.h"
#include "codecs/jpeg_rewrite.h"
#include "support/aug_params.h"
#include "tools/synth.h"

enum { k_max_rounds = 99, k_nres = 4, k_nlv = 4 };
static const int k_res[k_nres] = {224, 192, 160, 128};
/* The level sets measured. */
static const unsigned k_lv_scales[k_nlv] = {
    SL_LEVEL_SCALE(4), SL_LEVEL_SCALE(6) | SL_LEVEL_SCALE(4),
    SL_LEVEL_SCALE(6) | SL_LEVEL_SCALE(4) | SL_LEVEL_SCALE(3),
    SL_LEVEL_SCALE(5) | SL_LEVEL_SCALE(3)};
static const char *const k_lv_name[k_nlv] = {"1/2", "3/4+1/2", "3/4+1/2+3/8",
                                             "5/8+3/8"};
static const char *const k_lv_case[k_nlv] = {"", "34", "34_38", "58_38"};

/* Thread CPU time: on a shared machine, preemption by other processes
 * does not count against either side. */
static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static int parse_int(const char *s, int lo, int hi, int *out) {
  char *end;
  long v = strtol(s, &end, 10);
  if (end == s || *end || v < lo || v > hi)
    return 0;
  *out = (int)v;
  return 1;
}

/* One round of full decodes; images per CPU-second, or -1 on error. */
static double tj_round(tjhandle tj, uint8_t **jpg, const size_t *len, int n,
                       uint8_t *rgb) {
  double t0 = now_s();
  for (int i = 0; i < n; i++)
    if (tjDecompress2(tj, jpg[i], (unsigned long)len[i], rgb, 500, 0, 375,
                      TJPF_RGB, 0) != 0) {
      fprintf(stderr, "bench_decode: tjDecompress2: %s\n", tjGetErrorStr2(tj));
      return -1;
    }
  return n / (now_s() - t0);
}

/* One round of sluice's pipeline at res; crops fresh per round. */
static double sluice_round(sl_pipeline *pl, uint8_t **jpg, const size_t *len,
                           int n, int round, int seed, int res, uint8_t *out,
                           int codec) {
  sl_err err;
  double t0 = now_s();
  for (int i = 0; i < n; i++) {
    uint64_t idx = (uint64_t)round * (uint64_t)n + (uint64_t)i;
    if (sl_pipeline_run(pl, jpg[i], len[i], codec, 0, 0, 0, (uint64_t)seed, 0,
                        idx, res, res, out, &err) != SL_OK) {
      fprintf(stderr, "bench_decode: %s\n", err.msg);
      return -1;
    }
  }
  return n / (now_s() - t0);
}

/* One round of (h): the crops sluice_round makes at res (the same RNG
 * keys), decoded at 1/8. */
static double floor_round(sl_decoder *dec, const sl_aug_params *p,
                          uint8_t **jpg, const size_t *len, int n, int round,
                          int seed, int res) {
  sl_err err;
  double t0 = now_s();
  for (int i = 0; i < n; i++) {
    uint64_t idx = (uint64_t)round * (uint64_t)n + (uint64_t)i;
    sl_encoded in = {jpg[i], len[i], 1, 0, 0, 0};
    sl_image_info info;
    sl_crop_box box;
    sl_decoded out;
    int flip;
    if (sl_decoder_probe(dec, &in, &info, &err) != SL_OK)
      goto fail;
    sl_aug_sample_crop(p, info.width, info.height, res, res, (uint64_t)seed, 0,
                       idx, &box, &flip);
    sl_decode_req req = {box.x, box.y, box.w, box.h, 1, 0, 0, 4, 0};
    if (sl_decoder_decode(dec, &in, &req, &out, &err) != SL_OK)
      goto fail;
  }
  return n / (now_s() - t0);
fail:
  fprintf(stderr, "bench_decode: %s\n", err.msg);
  return -1;
}

/* The scale the pipeline chose before the cost model: the smallest of
 * 1..6 (else 8) whose decode covers the output. */
static int smallest_cover(int cw, int ch, int res) {
  for (int m = 1; m <= 6; m++)
    if (cw * m >= 8 * res && ch * m >= 8 * res)
      return m;
  return 8;
}

/* One round of the pipeline's decode (box-reduced to res) and resize of
 * the crops of (b), at the scale of sl_aug_dct_scale (model 1) or the
 * smallest that covers (model 0); images per CPU-second, or -1. */
static double policy_round(sl_decoder *dec, const sl_aug_params *p,
                           uint8_t **jpg, const size_t *len, int n, int round,
                           int seed, int res, int model, uint8_t *out) {
  sl_err err;
  double t0 = now_s();
  for (int i = 0; i < n; i++) {
    uint64_t idx = (uint64_t)round * (uint64_t)n + (uint64_t)i;
    sl_encoded in = {jpg[i], len[i], 1, 0, 0, 0};
    sl_image_info info;
    sl_crop_box box;
    sl_decoded d;
    int flip;
    if (sl_decoder_probe(dec, &in, &info, &err) != SL_OK)
      goto fail;
    sl_aug_sample_crop(p, info.width, info.height, res, res, (uint64_t)seed, 0,
                       idx, &box, &flip);
    int m = model ? sl_aug_dct_scale(box.w, box.h, res, res)
                  : smallest_cover(box.w, box.h, res);
    sl_decode_req req = {box.x, box.y, box.w, box.h, m, res, res, 4, 0};
    if (sl_decoder_decode(dec, &in, &req, &d, &err) != SL_OK)
      goto fail;
    if (ARGBScale(d.pixels, (int)d.stride, d.w, d.h, out, res * 4, res, res,
                  kFilterBox) != 0)
      return -1;
  }
  return n / (now_s() - t0);
fail:
  fprintf(stderr, "bench_decode: %s\n", err.msg);
  return -1;
}

/* --scale-costs: the scales measured, and per round and resolution the
 * sums over all crops of decode time, blocks, resize time, resize input
 * pixels and covering crops. */
enum { k_nm = 7 };
static const int k_ms[k_nm] = {1, 2, 3, 4, 5, 6, 8};

static int scale_costs(uint8_t **jpg, const size_t *len, int n, int rounds,
                       int seed) {
  sl_aug_params p = sl_test_aug_params(SL_LAYOUT_NCHW);
  sl_decoder *dec;
  sl_err err;
  /* Scratch for an unreduced 8/8 decode of a whole 500x375 image. */
  uint8_t *out = malloc(224 * 224 * 4);
  if (!out || sl_decoder_create(&dec, p.max_pixels, 512, 512, &err) != SL_OK)
    return 1;
  static double dct[k_nres][k_nm][k_max_rounds];
  double rs_t[k_nres][k_nm] = {{0}}, rs_in[k_nres][k_nm] = {{0}};
  double rs_n[k_nres][k_nm] = {{0}}, box_t[k_nres] = {0};
  double box_px[k_nres] = {0};
  for (int r = 0; r < rounds; r++)
    for (int k = 0; k < k_nres; k++) {
      int res = k_res[k];
      double t_dec[k_nm] = {0}, blocks = 0;
      for (int j = 0; j < k_nm; j++) {
        int q = (j + r + k) % k_nm; /* rotate: drift hits all scales alike */
        int m = k_ms[q];
        for (int i = 0; i < n; i++) {
          uint64_t idx = (uint64_t)r * (uint64_t)n + (uint64_t)i;
          sl_encoded in = {jpg[i], len[i], 1, 0, 0, 0};
          sl_image_info info;
          sl_crop_box box;
          sl_decoded d;
          int flip;
          if (sl_decoder_probe(dec, &in, &info, &err) != SL_OK)
            goto fail;
          sl_aug_sample_crop(&p, info.width, info.height, res, res,
                             (uint64_t)seed, 0, idx, &box, &flip);
          /* Unreduced (the IDCT and colour conversion), then reduced as
           * the pipeline asks (plus the box filter, row by row). */
          sl_decode_req req = {box.x, box.y, box.w, box.h, m, 0, 0, 4, 0};
          double t0 = now_s();
          if (sl_decoder_decode(dec, &in, &req, &d, &err) != SL_OK)
            goto fail;
          double t1 = now_s();
          double t_unreduced = t1 - t0;
          t_dec[q] += t_unreduced;
          if (q == 0)
            blocks += (double)box.w * (double)box.h / 64.0;
          double px = (double)d.w * (double)d.h;
          req.min_w = req.min_h = res;
          t0 = now_s();
          if (sl_decoder_decode(dec, &in, &req, &d, &err) != SL_OK)
            goto fail;
          double t2 = now_s();
          if (d.kx > 1 || d.ky > 1) {
            box_t[k] += (t2 - t0) - t_unreduced;
            box_px[k] += px;
          }
          /* Only scales that cover the output are ever resized from. */
          if ((int64_t)box.w * m < (int64_t)8 * res ||
              (int64_t)box.h * m < (int64_t)8 * res)
            continue;
          t0 = now_s();
          if (ARGBScale(d.pixels, (int)d.stride, d.w, d.h, out, res * 4, res,
                        res, kFilterBox) != 0)
            return 1;
          rs_t[k][q] += now_s() - t0;
          rs_in[k][q] += (double)d.w * (double)d.h;
          rs_n[k][q] += 1;
        }
      }
      for (int q = 0; q < k_nm; q++)
        dct[k][q][r] = (t_dec[q] - t_dec[0]) / blocks * 1e9;
    }
  printf("bench_decode --scale-costs: %d images 500x375 q90 4:2:0, %d "
         "rounds; ns per 8x8 luma block of the crop above 1/8 "
         "(median of rounds)\n",
         n, rounds);
  printf("%-6s", "res");
  for (int q = 0; q < k_nm; q++)
    printf("  m=%d   ", k_ms[q]);
  printf("  box ns/px  resize ns/input px\n");
  double all[k_nm][k_nres], rfit[k_nres], bx[k_nres];
  for (int k = 0; k < k_nres; k++) {
    printf("%-6d", k_res[k]);
    for (int q = 0; q < k_nm; q++) {
      all[q][k] = median(dct[k][q], rounds);
      printf("  %7.1f", all[q][k]);
    }
    /* Least squares of resize time per crop on input pixels per crop over
     * the covering scales: the slope is the cost per input pixel. */
    double sx = 0, sy = 0, sxx = 0, sxy = 0, c = 0;
    for (int q = 0; q < k_nm; q++) {
      if (rs_n[k][q] < 1)
        continue;
      double x = rs_in[k][q] / rs_n[k][q], y = rs_t[k][q] / rs_n[k][q] * 1e9;
      sx += x, sy += y, sxx += x * x, sxy += x * y, c += 1;
    }
    double den = c * sxx - sx * sx;
    rfit[k] = c >= 2 && den > 0 ? (c * sxy - sx * sy) / den : 0;
    bx[k] = box_px[k] > 0 ? box_t[k] / box_px[k] * 1e9 : 0;
    printf("  %7.3f  %7.3f\n", bx[k], rfit[k]);
  }
  printf("constants (median over resolutions), ns:\n  dct_block[] = {");
  for (int q = 0; q < k_nm; q++)
    printf("%s%d: %.1f", q ? ", " : "", k_ms[q], median(all[q], k_nres));
  printf("}\n  box_px = %.3f (per scaled pixel of a box-reduced decode)\n"
         "  resize_px = %.3f\n",
         median(bx, k_nres), median(rfit, k_nres));
  /* The model against the smallest covering scale on the same crops, in
   * alternating rounds (the order swapped each round). */
  printf("decode+resize, cost model vs smallest covering scale (images per "
         "CPU-second, median of per-round ratios):\n");
  for (int k = 0; k < k_nres; k++) {
    double ratio[k_max_rounds];
    for (int r = 0; r < rounds; r++) {
      double v[2];
      for (int j = 0; j < 2; j++) {
        int model = (j + r) % 2;
        v[model] =
            policy_round(dec, &p, jpg, len, n, r, seed, k_res[k], model, out);
        if (v[model] <= 0)
          return 1;
      }
      ratio[r] = v[1] / v[0];
    }
    printf("  %d: model/smallest %.3f\n", k_res[k], median(ratio, rounds));
    printf("RESULT {\"case\": \"scale_model\", \"res\": %d, \"ratio\": "
           "%.4f}\n",
           k_res[k], median(ratio, rounds));
  }
  sl_decoder_destroy(dec);
  free(out);
  return 0;
fail:
  fprintf(stderr, "bench_decode: %s\n", err.msg);
  return 1;
}

int main(int argc, char **argv) {
  int n = 64, rounds = 7, seed = 1, texture = 2, costs = 0;
  int profile = -1, profile_res = 128; /* --profile rgbx|planes */
  for (int i = 1; i < argc; i++) {
    int ok = i + 1 < argc;
    if (strcmp(argv[i], "--scale-costs") == 0)
      costs = 1;
    else if (ok && strcmp(argv[i], "--images") == 0)
      ok = parse_int(argv[++i], 1, 100000, &n);
    else if (ok && strcmp(argv[i], "--rounds") == 0)
      ok = parse_int(argv[++i], 1, k_max_rounds, &rounds);
    else if (ok && strcmp(argv[i], "--seed") == 0)
      ok = parse_int(argv[++i], 0, 1 << 30, &seed);
    else if (ok && strcmp(argv[i], "--texture") == 0)
      ok = parse_int(argv[++i], 0, 3, &texture);
    else if (ok && strcmp(argv[i], "--profile") == 0) {
      i++;
      profile = strcmp(argv[i], "planes") == 0 ? 1
                : strcmp(argv[i], "rgbx") == 0 ? 0
                : strcmp(argv[i], "both") == 0 ? 2
                                               : -1;
      ok = profile >= 0;
    } else if (ok && strcmp(argv[i], "--res") == 0)
      ok = parse_int(argv[++i], 8, 224, &profile_res);
    else
      ok = 0;
    if (!ok) {
      fprintf(stderr,
              "usage: bench_decode [--images N] [--rounds R<=%d] "
              "[--seed S] [--texture 0..3] [--scale-costs]\n"
              "       [--profile rgbx|planes|both [--res N]]\n",
              k_max_rounds);
      return 2;
    }
  }
  uint8_t **jpg = calloc((size_t)n, sizeof *jpg);
  uint8_t **pk = calloc((size_t)n, sizeof *pk);
  uint8_t **nr = calloc((size_t)n, sizeof *nr);
  size_t *nr_len = calloc((size_t)n, sizeof *nr_len);
  size_t *len = calloc((size_t)n, sizeof *len);
  size_t *pk_len = calloc((size_t)n, sizeof *pk_len);
  uint8_t *rgb = malloc(500 * 375 * 3), *out = malloc(224 * 224 * 3);
  if (!jpg || !pk || !nr || !len || !pk_len || !nr_len || !rgb || !out)
    return 1;
  sl_err err;
  sl_jpeg_rewriter *rw;
  if (sl_jpeg_rewriter_create(&rw, 0, &err) != SL_OK) {
    fprintf(stderr, "bench_decode: %s\n", err.msg);
    return 1;
  }
  size_t total = 0, pk_total = 0;
  for (int i = 0; i < n; i++) {
    sl_synth_jpeg_opts o = sl_synth_jpeg_defaults();
    o.texture = texture;
    o.label = i % 10;
    sl_synth_err serr;
    if (sl_synth_jpeg((uint64_t)seed * 1000003u + (uint64_t)i, 500, 375, &o,
                      &jpg[i], &len[i], &serr) != SL_OK) {
      fprintf(stderr, "bench_decode: %s\n", serr.msg);
      return 1;
    }
    if (sl_jpeg_rewrite(rw, jpg[i], len[i], &pk[i], &pk_len[i], &err) !=
        SL_OK) {
      fprintf(stderr, "bench_decode: %s\n", err.msg);
      return 1;
    }
    sl_jpeg_rewriter_set_interval(rw, 0);
    sl_status st =
        sl_jpeg_rewrite(rw, jpg[i], len[i], &nr[i], &nr_len[i], &err);
    sl_jpeg_rewriter_set_interval(rw, -1);
    if (st != SL_OK) {
      fprintf(stderr, "bench_decode: %s\n", err.msg);
      return 1;
    }
    total += len[i];
    pk_total += pk_len[i];
  }
  sl_jpeg_rewriter_destroy(rw);
  if (costs) { /* the packed files, as (b) decodes them */
    int rc = scale_costs(pk, pk_len, n, rounds, seed);
    for (int i = 0; i < n; i++)
      free(jpg[i]), free(pk[i]), free(nr[i]);
    free(jpg), free(pk), free(nr), free(len), free(pk_len), free(nr_len);
    free(rgb), free(out);
    return rc;
  }
  if (profile >= 0) { /* only (b) at one resolution: for perf */
    sl_aug_params pp = sl_test_aug_params(SL_LAYOUT_NCHW);
    sl_pipeline *pr, *pq;
    pp.jpeg_planes = 0;
    if (sl_pipeline_create(&pr, &pp, 224, &err) != SL_OK)
      return 1;
    pp.jpeg_planes = 1;
    if (sl_pipeline_create(&pq, &pp, 224, &err) != SL_OK)
      return 1;
    double x[k_max_rounds], y[k_max_rounds], q[k_max_rounds];
    for (int r = 0; r < rounds; r++) {
      x[r] = profile != 1
                 ? sluice_round(pr, pk, pk_len, n, r, seed, profile_res, out, 1)
                 : 1;
      y[r] = profile != 0
                 ? sluice_round(pq, pk, pk_len, n, r, seed, profile_res, out, 1)
                 : 1;
      q[r] = y[r] / x[r];
    }
    printf("at %d: rgbx %.0f, planes %.0f images/s (medians of %d rounds); "
           "planes/rgbx %.3f (median of per-round ratios)\n",
           profile_res, median(x, rounds), median(y, rounds), rounds,
           median(q, rounds));
    sl_pipeline_times tr, tq;
    sl_pipeline_times_get(pr, &tr);
    sl_pipeline_times_get(pq, &tq);
    if (tr.jpeg_decodes && tq.jpeg_decodes)
      printf("per image: rgbx decode %.1f us, resize+convert %.1f us; planes "
             "decode %.1f us, resize+convert %.1f us; %.0f%% as planes\n",
             (double)tr.decode_ns / 1e3 / (double)tr.jpeg_decodes,
             (double)tr.augment_ns / 1e3 / (double)tr.jpeg_decodes,
             (double)tq.decode_ns / 1e3 / (double)tq.jpeg_decodes,
             (double)tq.augment_ns / 1e3 / (double)tq.jpeg_decodes,
             100.0 * (double)tq.jpeg_planes / (double)tq.jpeg_decodes);
    sl_pipeline_destroy(pr);
    sl_pipeline_destroy(pq);
    return 0;
  }
  /* The level records, and the time to make them from the packed files. */
  uint8_t **lv[k_nlv];
  size_t *lv_len[k_nlv], lv_total[k_nlv] = {0};
  double lv_make_s[k_nlv];
  for (int s = 0; s < k_nlv; s++) {
    lv[s] = calloc((size_t)n, sizeof **lv);
    lv_len[s] = calloc((size_t)n, sizeof **lv_len);
    if (!lv[s] || !lv_len[s])
      return 1;
    double t0 = now_s();
    for (int i = 0; i < n; i++) {
      if (sl_jpeg_levels_make(pk[i], pk_len[i], k_lv_scales[s], 90, 1u << 28,
                              &lv[s][i], &lv_len[s][i], &err) != SL_OK ||
          !lv[s][i]) {
        fprintf(stderr, "bench_decode: levels: %s\n", err.msg);
        return 1;
      }
      lv_total[s] += lv_len[s][i];
    }
    lv_make_s[s] = now_s() - t0;
  }
  tjhandle tj = tjInitDecompress();
  sl_aug_params p = sl_test_aug_params(SL_LAYOUT_NCHW);
  sl_pipeline *pl, *pl_stream, *pl_lv[k_nlv];
  sl_pipeline *pp_b, *pp_s, *pp_l; /* planes: (b), (s), (L1) */
  sl_decoder *dec;
  sl_aug_params pp = p;
  pp.jpeg_planes = 1;
  if (sl_pipeline_create(&pp_b, &pp, 224, &err) != SL_OK ||
      sl_pipeline_create(&pp_s, &pp, 224, &err) != SL_OK ||
      sl_pipeline_create(&pp_l, &pp, 224, &err) != SL_OK)
    return 1;
  for (int s = 0; s < k_nlv; s++)
    if (sl_pipeline_create(&pl_lv[s], &p, 224, &err) != SL_OK)
      return 1;
  if (!tj || sl_pipeline_create(&pl, &p, 224, &err) != SL_OK ||
      sl_pipeline_create(&pl_stream, &p, 224, &err) != SL_OK ||
      sl_decoder_create(&dec, p.max_pixels, 448, 448, &err) != SL_OK) {
    fprintf(stderr, "bench_decode: cannot set up: %s\n",
            tj ? err.msg : tjGetErrorStr2(NULL));
    return 1;
  }
  printf("bench_decode: %d images 500x375 q90 4:2:0, texture %d (mean %.1f "
         "KB original, %.1f KB packed: %+.1f%%), %d rounds, 1 thread, images "
         "per thread-CPU-second\n",
         n, texture, (double)total / n / 1000.0, (double)pk_total / n / 1000.0,
         100.0 * ((double)pk_total / (double)total - 1.0), rounds);
  double a[k_max_rounds], a2[k_max_rounds], ra2[k_max_rounds];
  double a3[k_max_rounds], ra3[k_max_rounds];
  double h[k_nres][k_max_rounds], rh[k_nres][k_max_rounds];
  double b[k_nres][k_max_rounds], rb[k_nres][k_max_rounds];
  double sr[k_nres][k_max_rounds], rs[k_nres][k_max_rounds];
  double gain[k_nres][k_max_rounds];
  double L[k_nlv][k_nres][k_max_rounds], rL[k_nlv][k_nres][k_max_rounds];
  double rLb[k_nlv][k_nres][k_max_rounds];
  uint64_t mix[k_nlv][k_nres][4] = {{{0}}};
  double Pb[k_nres][k_max_rounds], Ps[k_nres][k_max_rounds];
  double Pl[k_nres][k_max_rounds];
  for (int r = 0; r < rounds; r++) {
    a[r] = tj_round(tj, jpg, len, n, rgb);
    a2[r] = tj_round(tj, pk, pk_len, n, rgb);
    a3[r] = tj_round(tj, nr, nr_len, n, rgb);
    if (a[r] <= 0 || a2[r] <= 0 || a3[r] <= 0)
      return 1;
    ra2[r] = a2[r] / a[r];
    ra3[r] = a3[r] / a2[r];
    for (int k = 0; k < k_nres; k++) {
      b[k][r] = sluice_round(pl, pk, pk_len, n, r, seed, k_res[k], out, 1);
      sr[k][r] =
          sluice_round(pl_stream, jpg, len, n, r, seed, k_res[k], out, 1);
      for (int s = 0; s < k_nlv; s++) {
        sl_pipeline_times t0, t1;
        sl_pipeline_times_get(pl_lv[s], &t0);
        L[s][k][r] = sluice_round(pl_lv[s], lv[s], lv_len[s], n, r, seed,
                                  k_res[k], out, SL_IMAGE_JPEG_LEVELS);
        sl_pipeline_times_get(pl_lv[s], &t1);
        if (L[s][k][r] <= 0)
          return 1;
        for (int q = 0; q < 4; q++)
          mix[s][k][q] += t1.level_decodes[q] - t0.level_decodes[q];
        rL[s][k][r] = L[s][k][r] / a[r];
        rLb[s][k][r] = L[s][k][r] / b[k][r];
      }
      Pb[k][r] = sluice_round(pp_b, pk, pk_len, n, r, seed, k_res[k], out, 1) /
                 b[k][r];
      Ps[k][r] =
          sluice_round(pp_s, jpg, len, n, r, seed, k_res[k], out, 1) / sr[k][r];
      Pl[k][r] = sluice_round(pp_l, lv[1], lv_len[1], n, r, seed, k_res[k], out,
                              SL_IMAGE_JPEG_LEVELS) /
                 L[1][k][r];
      h[k][r] = floor_round(dec, &p, pk, pk_len, n, r, seed, k_res[k]);
      if (b[k][r] <= 0 || sr[k][r] <= 0 || h[k][r] <= 0)
        return 1;
      rh[k][r] = h[k][r] / a[r];
      rb[k][r] = b[k][r] / a[r];
      rs[k][r] = sr[k][r] / a[r];
      gain[k][r] = b[k][r] / sr[k][r];
    }
  }
  double am = median(a, rounds), a2m = median(a2, rounds);
  printf("%-50s %7.0f images/s\n", "(a)  tjDecompress2 full decode, originals",
         am);
  printf("%-50s %7.0f images/s  a'/a %.2f\n",
         "(a') tjDecompress2 full decode, packed files", a2m,
         median(ra2, rounds));
  double a3m = median(a3, rounds);
  printf("%-50s %7.0f images/s  a''/a' %.2f\n",
         "(a'') the same, packed without restart markers", a3m,
         median(ra3, rounds));
  printf("RESULT {\"case\": \"tj_full\", \"images_per_s\": %.1f}\n", am);
  printf("RESULT {\"case\": \"tj_full_norst\", \"images_per_s\": %.1f, "
         "\"ratio\": %.4f}\n",
         a3m, median(ra3, rounds));
  printf("RESULT {\"case\": \"tj_full_packed\", \"images_per_s\": %.1f, "
         "\"ratio\": %.4f}\n",
         a2m, median(ra2, rounds));
  static const double goal[k_nres] = {1.2, 0, 0, 2.0};
  static const double lv_goal[k_nres] = {1.6, 0, 2.5, 3.0};
  for (int k = 0; k < k_nres; k++) {
    char name[80];
    double bm = median(b[k], rounds), rbm = median(rb[k], rounds);
    double sm = median(sr[k], rounds), rsm = median(rs[k], rounds);
    snprintf(name, sizeof name, "(b)  sluice rrc+flip+u8 NCHW at %d, packed",
             k_res[k]);
    printf("%-50s %7.0f images/s  b/a %.2f", name, bm, rbm);
    if (goal[k] > 0)
      printf("  (goal >= %.1f: %s)", goal[k],
             rbm >= goal[k] ? "met" : "MISSED");
    printf("\n");
    snprintf(name, sizeof name, "(s)  the same on the originals at %d",
             k_res[k]);
    printf("%-50s %7.0f images/s  s/a %.2f  windows gain b/s %.2f\n", name, sm,
           rsm, median(gain[k], rounds));
    printf("RESULT {\"case\": \"sluice_aug\", \"res\": %d, \"images_per_s\": "
           "%.1f, \"ratio\": %.4f}\n",
           k_res[k], bm, rbm);
    printf("RESULT {\"case\": \"sluice_stream\", \"res\": %d, "
           "\"images_per_s\": %.1f, \"ratio\": %.4f}\n",
           k_res[k], sm, rsm);
    snprintf(name, sizeof name, "(P)  planes at %d: P/b, P/s, P/L1", k_res[k]);
    printf("%-50s %.2f  %.2f  %.2f\n", name, median(Pb[k], rounds),
           median(Ps[k], rounds), median(Pl[k], rounds));
    printf("RESULT {\"case\": \"sluice_planes\", \"res\": %d, \"ratio_b\": "
           "%.4f, \"ratio_s\": %.4f, \"ratio_l1\": %.4f}\n",
           k_res[k], median(Pb[k], rounds), median(Ps[k], rounds),
           median(Pl[k], rounds));
    double hm = median(h[k], rounds), rhm = median(rh[k], rounds);
    snprintf(name, sizeof name, "(h)  the same windows at 1/8, no resize, %d",
             k_res[k]);
    printf("%-50s %7.0f images/s  h/a %.2f  (ceiling of b/a)\n", name, hm, rhm);
    printf("RESULT {\"case\": \"huffman_floor\", \"res\": %d, "
           "\"images_per_s\": %.1f, \"ratio\": %.4f}\n",
           k_res[k], hm, rhm);
    for (int s = 0; s < k_nlv; s++) {
      double lm = median(L[s][k], rounds), rlm = median(rL[s][k], rounds);
      uint64_t tot = mix[s][k][0] + mix[s][k][1] + mix[s][k][2] + mix[s][k][3];
      snprintf(name, sizeof name, "(L%d) levels %s, at %d", s, k_lv_name[s],
               k_res[k]);
      printf("%-50s %7.0f images/s  L/a %.2f  L/b %.2f", name, lm, rlm,
             median(rLb[s][k], rounds));
      if (lv_goal[k] > 0)
        printf("  (goal >= %.1f: %s)", lv_goal[k],
               rlm >= lv_goal[k] ? "met" : "MISSED");
      printf("  mix %.0f/%.0f/%.0f/%.0f%%\n",
             100.0 * (double)mix[s][k][0] / (double)tot,
             100.0 * (double)mix[s][k][1] / (double)tot,
             100.0 * (double)mix[s][k][2] / (double)tot,
             100.0 * (double)mix[s][k][3] / (double)tot);
      printf("RESULT {\"case\": \"sluice_levels%s\", \"res\": %d, "
             "\"images_per_s\": %.1f, \"ratio\": %.4f, \"mix\": "
             "[%.4f, %.4f, %.4f, %.4f]}\n",
             k_lv_case[s], k_res[k], lm, rlm,
             (double)mix[s][k][0] / (double)tot,
             (double)mix[s][k][1] / (double)tot,
             (double)mix[s][k][2] / (double)tot,
             (double)mix[s][k][3] / (double)tot);
    }
  }
  for (int s = 0; s < k_nlv; s++)
    printf("levels %-8s %.1f KB per image (%+.1f%% over packed); making "
           "them from the packed file: %.0f images/s\n",
           k_lv_name[s], (double)lv_total[s] / n / 1000.0,
           100.0 * ((double)lv_total[s] / (double)pk_total - 1.0),
           n / lv_make_s[s]);
  printf("RESULT {\"case\": \"size\", \"original_bytes\": %.0f, "
         "\"packed_bytes\": %.0f, \"levels_bytes\": [%.0f, %.0f, %.0f, "
         "%.0f]}\n",
         (double)total / n, (double)pk_total / n, (double)lv_total[0] / n,
         (double)lv_total[1] / n, (double)lv_total[2] / n,
         (double)lv_total[3] / n);
  sl_pipeline_times t;
  sl_pipeline_times_get(pl, &t);
  printf("sluice (b) time split: decode %.0f%%, resize+convert %.0f%%; "
         "%.0f%% of decodes windowed\n",
         100.0 * (double)t.decode_ns / (double)(t.decode_ns + t.augment_ns),
         100.0 * (double)t.augment_ns / (double)(t.decode_ns + t.augment_ns),
         100.0 * (double)t.jpeg_windowed / (double)t.jpeg_decodes);
  sl_pipeline_times_get(pp_b, &t);
  uint64_t pb = t.jpeg_planes, nb = t.jpeg_decodes;
  sl_pipeline_times_get(pp_s, &t);
  uint64_t ps = t.jpeg_planes, ns = t.jpeg_decodes;
  sl_pipeline_times_get(pp_l, &t);
  printf("planes rows: %.0f%% of (b)'s, %.0f%% of (s)'s, %.0f%% of (L1)'s "
         "decodes as planes\n",
         100.0 * (double)pb / (double)nb, 100.0 * (double)ps / (double)ns,
         100.0 * (double)t.jpeg_planes / (double)t.jpeg_decodes);
  sl_pipeline_destroy(pp_b);
  sl_pipeline_destroy(pp_s);
  sl_pipeline_destroy(pp_l);
  sl_pipeline_destroy(pl);
  sl_pipeline_destroy(pl_stream);
  for (int s = 0; s < k_nlv; s++) {
    sl_pipeline_destroy(pl_lv[s]);
    for (int i = 0; i < n; i++)
      free(lv[s][i]);
    free(lv[s]);
    free(lv_len[s]);
  }
  sl_decoder_destroy(dec);
  tjDestroy(tj);
  for (int i = 0; i < n; i++) {
    free(jpg[i]);
    free(pk[i]);
    free(nr[i]);
  }
  free(jpg), free(pk), free(nr), free(len), free(pk_len), free(nr_len);
  free(rgb), free(out);
  return 0;
}
