/* Decode+augment of JPEG files given on the command line, one thread: a
 * small fixed workload for instruction counts (valgrind --tool=callgrind),
 * which the machine's load does not change, unlike a time.
 *
 *   bench_photos [--res R] [--rounds N] [--levels] [--planes] [--seed S]
 *                [--recipe tv|timm] FILE...
 *
 * Each file is stored as `sluice pack` stores it (sl_jpeg_rewrite: restart
 * layout), or with --levels as `sluice pack --levels 3/4,1/2` does (a level
 * record), then N rounds run sl_pipeline_run over every file at R x R
 * (random-resized crop + flip, u8 NCHW; fresh crops per round, the same
 * crops in every run of the same arguments); --planes sets
 * augment.jpeg_planes (decode to YCbCr planes); --recipe adds bench/run.sh's
 * recipe rows' ops (tv: TrivialAugmentWide + RandomErasing 0.1; timm:
 * RandAugment 2 ops m9 mstd 0.5 + RandomErasing 0.25). --psnr (not with
 * --levels) prints instead the mean PSNR of the same crops, unflipped,
 * against the float area average of a full TurboJPEG decode (the quality
 * test's reference, tests/codecs/img_util.h). Prints one line
 *   RESULT {"case": "photos", "res": R, "levels": L, "images": I, ...}
 * with images per thread-CPU-second (meaningless under valgrind: read the
 * instruction counts there). See bench/results/HISTORY.md, "Instruction
 * counts". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "augment/pipeline.h"
#include "augment/recipe.h"
#include "codecs/codec.h"
#include "codecs/img_util.h"
#include "codecs/jpeg_levels.h"
#include "codecs/jpeg_rewrite.h"
#include "support/aug_params.h"

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The whole file in a malloc'ed buffer; NULL on any error. */
static uint8_t *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  uint8_t *p = NULL;
  if (fseek(f, 0, SEEK_END) == 0) {
    long n = ftell(f);
    if (n > 0 && fseek(f, 0, SEEK_SET) == 0 && (p = malloc((size_t)n)) &&
        fread(p, 1, (size_t)n, f) != (size_t)n) {
      free(p);
      p = NULL;
    }
    *len = n > 0 ? (size_t)n : 0;
  }
  fclose(f);
  return p;
}

/* The recipe rows' ops, as bench/sluice_loader.py configures them. */
static void set_recipe(sl_aug_recipe *r, int timm) {
  memset(r, 0, sizeof *r);
  r->policy.policy = timm ? SL_AUTO_RANDAUGMENT : SL_AUTO_TRIVIAL;
  r->policy.num_ops = 2;
  r->policy.bins = timm ? 11 : 31;
  r->policy.magnitude = 9;
  r->policy.magnitude_std = timm ? 0.5 : 0;
  r->policy.interp = SL_INTERP_NEAREST;
  if (timm) {
    r->policy.has_fill = 1;
    r->policy.fill[0] = 124, r->policy.fill[1] = 116, r->policy.fill[2] = 104;
  }
  r->erasing = timm ? 0.25 : 0.1;
  r->erasing_scale[0] = 0.02, r->erasing_scale[1] = 0.33; /* the defaults */
  r->erasing_ratio[0] = 0.3, r->erasing_ratio[1] = 3.3;
}

int main(int argc, char **argv) {
  int res = 128, rounds = 1, levels = 0, seed = 1, planes = 0, psnr = 0;
  const char *recipe = NULL;
  int first = argc;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--res") == 0 && i + 1 < argc)
      res = atoi(argv[++i]);
    else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
      rounds = atoi(argv[++i]);
    else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
      seed = atoi(argv[++i]);
    else if (strcmp(argv[i], "--levels") == 0)
      levels = 1;
    else if (strcmp(argv[i], "--planes") == 0)
      planes = 1;
    else if (strcmp(argv[i], "--psnr") == 0)
      psnr = 1;
    else if (strcmp(argv[i], "--recipe") == 0 && i + 1 < argc)
      recipe = argv[++i];
    else {
      first = i;
      break;
    }
  }
  int n = argc - first;
  if (n <= 0 || res < 16 || res > 512 || rounds < 1 || (psnr && levels) ||
      (recipe && strcmp(recipe, "tv") != 0 && strcmp(recipe, "timm") != 0)) {
    fprintf(stderr, "usage: bench_photos [--res R] [--rounds N] [--levels] "
                    "[--planes] [--psnr] [--seed S] [--recipe tv|timm] "
                    "FILE...\n");
    return 2;
  }
  uint8_t **rec = calloc((size_t)n, sizeof *rec);
  size_t *len = calloc((size_t)n, sizeof *len);
  uint8_t *out = malloc((size_t)res * (size_t)res * 3);
  sl_jpeg_rewriter *rw;
  sl_err err;
  if (!rec || !len || !out || sl_jpeg_rewriter_create(&rw, 0, &err) != SL_OK)
    return 1;
  for (int i = 0; i < n; i++) {
    size_t flen = 0;
    uint8_t *file = slurp(argv[first + i], &flen), *pk;
    size_t pk_len;
    if (!file) {
      fprintf(stderr, "bench_photos: cannot read %s\n", argv[first + i]);
      return 1;
    }
    if (sl_jpeg_rewrite(rw, file, flen, &pk, &pk_len, &err) != SL_OK) {
      fprintf(stderr, "bench_photos: %s: %s\n", argv[first + i], err.msg);
      return 1;
    }
    free(file);
    if (levels) {
      if (sl_jpeg_levels_make(pk, pk_len, SL_LEVEL_SCALE(6) | SL_LEVEL_SCALE(4),
                              90, 1u << 28, &rec[i], &len[i], &err) != SL_OK ||
          !rec[i]) {
        fprintf(stderr, "bench_photos: %s: levels: %s\n", argv[first + i],
                err.msg);
        return 1;
      }
      free(pk);
    } else {
      rec[i] = pk;
      len[i] = pk_len;
    }
  }
  sl_jpeg_rewriter_destroy(rw);
  sl_aug_params p = sl_test_aug_params(SL_LAYOUT_NCHW);
  p.jpeg_planes = planes;
  if (recipe)
    set_recipe(&p.recipe, strcmp(recipe, "timm") == 0);
  sl_pipeline *pl;
  if (sl_pipeline_create(&pl, &p, res, &err) != SL_OK) {
    fprintf(stderr, "bench_photos: %s\n", err.msg);
    return 1;
  }
  int codec = levels ? SL_IMAGE_JPEG_LEVELS : 1;
  if (psnr) {
    sl_pipeline_destroy(pl);
    p.layout = SL_LAYOUT_NHWC;
    p.flip = 0;
    float *ref = malloc(sizeof(float) * (size_t)res * (size_t)res * 3);
    if (!ref || sl_pipeline_create(&pl, &p, res, &err) != SL_OK)
      return 1;
    double sum = 0;
    for (int i = 0; i < n; i++) {
      int W, H;
      uint8_t *full = tu_tj_decode(rec[i], len[i], 3, &W, &H);
      if (!full)
        return 1;
      for (int r = 0; r < rounds; r++) {
        uint64_t idx = (uint64_t)r * (uint64_t)n + (uint64_t)i;
        sl_crop_box box;
        int flip;
        if (sl_pipeline_run(pl, rec[i], len[i], codec, 0, 0, 0, (uint64_t)seed,
                            0, idx, res, res, out, &err) != SL_OK)
          return 1;
        sl_aug_sample_crop(&p, W, H, res, res, (uint64_t)seed, 0, idx, &box,
                           &flip);
        tu_area_resample(full, W, 3, box.x, box.y, box.w, box.h, res, res, ref);
        sum += tu_psnr(out, ref, (size_t)res * (size_t)res * 3);
      }
      free(full);
    }
    sl_pipeline_times t;
    sl_pipeline_times_get(pl, &t);
    printf("RESULT {\"case\": \"photos_psnr\", \"res\": %d, \"planes\": "
           "%llu, \"crops\": %d, \"psnr_db\": %.3f}\n",
           res, (unsigned long long)t.jpeg_planes, n * rounds,
           sum / (n * rounds));
    free(ref);
    sl_pipeline_destroy(pl);
    return 0;
  }
  double t0 = now_s();
  for (int r = 0; r < rounds; r++)
    for (int i = 0; i < n; i++) {
      uint64_t idx = (uint64_t)r * (uint64_t)n + (uint64_t)i;
      if (sl_pipeline_run(pl, rec[i], len[i], codec, 0, 0, 0, (uint64_t)seed, 0,
                          idx, res, res, out, &err) != SL_OK) {
        fprintf(stderr, "bench_photos: %s: %s\n", argv[first + i], err.msg);
        return 1;
      }
    }
  double dt = now_s() - t0;
  sl_pipeline_times t;
  sl_pipeline_times_get(pl, &t);
  printf("RESULT {\"case\": \"photos\", \"res\": %d, \"levels\": %d, "
         "\"planes\": %llu, \"images\": %d, \"rounds\": %d, "
         "\"images_per_s\": %.1f}\n",
         res, levels, (unsigned long long)t.jpeg_planes, n, rounds,
         (double)n * rounds / dt);
  sl_pipeline_destroy(pl);
  for (int i = 0; i < n; i++)
    free(rec[i]);
  free(rec), free(len), free(out);
  return 0;
}
