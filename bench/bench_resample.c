/* The fractional-window area resampler (augment/resample.c) against
 * libyuv's box filter on the same reductions, one thread: a fixed workload
 * for instruction counts (valgrind --tool=callgrind), which the machine's
 * load does not change.
 *
 *   bench_resample [--impl area|box|plane|all] [--out N] [--count K]
 *                  [--seed S]
 *
 * K windows of a level crop's shape: a source of side N x f (f uniform in
 * [1, 2.4], the reductions a decode from a resolution level leaves, each
 * side drawn apart) with fractional window edges (up to one pixel in from
 * each side), reduced to N x N RGBX. area: sl_resample_area on the
 * fractional window; box: libyuv ARGBScale(kFilterBox) of the integer
 * window (floor/ceil of the edges: what libyuv can take, up to half a pixel
 * off), which libyuv runs as a bilinear reduction for ARGB (ScaleARGB has
 * no box filter: aliasing beyond 2:1); plane: libyuv's true box filter,
 * ScalePlane(kFilterBox), once per channel on 4 separate planes of the
 * same integer window (what decoding to planes would resize). Prints RESULT
 * {"case": "resample", "impl": ..., "ns_per_image":
 * ..., "hash": FNV-1a of every area output, to check that a change of
 * the resampler keeps its bytes} (thread CPU time: meaningless under valgrind,
 * read the counts). See bench/results/HISTORY.md, "Instruction counts". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libyuv/scale.h>
#include <libyuv/scale_argb.h>

#include "augment/resample.h"

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static uint64_t next(uint64_t *s) { /* splitmix64 */
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static double unit(uint64_t *s) {
  return (double)(next(s) >> 11) * (1.0 / 9007199254740992.0);
}

int main(int argc, char **argv) {
  int out = 128, count = 200, area = 1, box = 1, plane = 1;
  uint64_t seed = 1;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
      out = atoi(argv[++i]);
    else if (strcmp(argv[i], "--count") == 0 && i + 1 < argc)
      count = atoi(argv[++i]);
    else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
      seed = (uint64_t)atoll(argv[++i]);
    else if (strcmp(argv[i], "--impl") == 0 && i + 1 < argc) {
      const char *v = argv[++i];
      int all = strcmp(v, "all") == 0;
      area = all || strcmp(v, "area") == 0;
      box = all || strcmp(v, "box") == 0;
      plane = all || strcmp(v, "plane") == 0;
    } else {
      fprintf(stderr,
              "usage: bench_resample [--impl area|box|plane|all] [--out N] "
              "[--count K] [--seed S]\n");
      return 2;
    }
  }
  if (out < 8 || out > 1024 || count < 1)
    return 2;
  int max_src = (int)(out * 2.4) + 4;
  uint8_t *src = malloc((size_t)max_src * (size_t)max_src * 4);
  uint8_t *dst = malloc((size_t)out * (size_t)out * 4);
  size_t psz = (size_t)max_src * (size_t)max_src; /* one plane */
  sl_resampler *r = sl_resampler_create(out, max_src, 4);
  if (!src || !dst || !r)
    return 1;
  uint64_t s = seed;
  for (size_t i = 0; i < (size_t)max_src * (size_t)max_src * 4; i++)
    src[i] = (uint8_t)(next(&s) >> 56);
  double t_area = 0, t_box = 0, t_plane = 0;
  unsigned sum = 0;
  uint64_t hash = 0xCBF29CE484222325ull; /* of every area output */
  s = seed * 7919u;
  for (int k = 0; k < count; k++) {
    int sw = (int)(out * (1 + 1.4 * unit(&s))) + 2;
    int sh = (int)(out * (1 + 1.4 * unit(&s))) + 2;
    double u0 = unit(&s), u1 = sw - unit(&s);
    double v0 = unit(&s), v1 = sh - unit(&s);
    if (area) {
      double t0 = now_s();
      if (sl_resample_area(r, src, (size_t)max_src * 4, sw, sh, u0, u1, v0, v1,
                           dst, out, out) != 0) {
        fprintf(stderr, "bench_resample: %dx%d refused\n", sw, sh);
        return 1;
      }
      t_area += now_s() - t0;
      for (size_t i = 0; i < (size_t)out * (size_t)out * 4; i++)
        hash = (hash ^ dst[i]) * 0x100000001B3ull; /* FNV-1a */
    }
    if (box) {
      int x0 = (int)floor(u0), x1 = (int)ceil(u1);
      int y0 = (int)floor(v0), y1 = (int)ceil(v1);
      double t0 = now_s();
      if (ARGBScale(src + (size_t)y0 * max_src * 4 + (size_t)x0 * 4,
                    max_src * 4, x1 - x0, y1 - y0, dst, out * 4, out, out,
                    kFilterBox) != 0)
        return 1;
      t_box += now_s() - t0;
      sum += dst[k % (out * out * 4)];
    }
    if (plane) {
      int x0 = (int)floor(u0), x1 = (int)ceil(u1);
      int y0 = (int)floor(v0), y1 = (int)ceil(v1);
      double t0 = now_s();
      for (int c = 0; c < 4; c++)
        ScalePlane(src + c * psz + (size_t)y0 * max_src + (size_t)x0, max_src,
                   x1 - x0, y1 - y0, dst + (size_t)c * out * out, out, out, out,
                   kFilterBox);
      t_plane += now_s() - t0;
      sum += dst[k % (out * out * 4)];
    }
  }
  if (area)
    printf("RESULT {\"case\": \"resample\", \"impl\": \"area\", \"out\": %d, "
           "\"count\": %d, \"ns_per_image\": %.0f, \"hash\": \"%016llx\"}\n",
           out, count, 1e9 * t_area / count, (unsigned long long)hash);
  if (box)
    printf("RESULT {\"case\": \"resample\", \"impl\": \"box\", \"out\": %d, "
           "\"count\": %d, \"ns_per_image\": %.0f}\n",
           out, count, 1e9 * t_box / count);
  if (plane)
    printf("RESULT {\"case\": \"resample\", \"impl\": \"plane\", \"out\": "
           "%d, \"count\": %d, \"ns_per_image\": %.0f}\n",
           out, count, 1e9 * t_plane / count);
  fprintf(stderr, "checksum %u\n", sum);
  sl_resampler_destroy(r);
  free(src), free(dst);
  return 0;
}
