/* Test helpers shared by the codecs and augment tests: an independent full
 * decode (TurboJPEG), a float area-average resampler, PSNR. */
#ifndef SLUICE_TESTS_IMG_UTIL_H
#define SLUICE_TESTS_IMG_UTIL_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include <turbojpeg.h>

/* Full-size decode to RGB (channels 3) or gray (1); malloc'd, NULL on
 * error. */
static inline uint8_t *tu_tj_decode(const uint8_t *jpg, size_t len,
                                    int channels, int *w, int *h) {
  tjhandle t = tjInitDecompress();
  int sub, cs;
  uint8_t *out = NULL;
  if (t &&
      tjDecompressHeader3(t, jpg, (unsigned long)len, w, h, &sub, &cs) == 0) {
    out = malloc((size_t)*w * (size_t)*h * (size_t)channels);
    if (out && tjDecompress2(t, jpg, (unsigned long)len, out, *w, 0, *h,
                             channels == 1 ? TJPF_GRAY : TJPF_RGB, 0) != 0) {
      free(out);
      out = NULL;
    }
  }
  if (t)
    tjDestroy(t);
  return out;
}

/* Area-average resample of the box (bx,by,bw,bh) of a W-wide image with C
 * channels to ow x oh, in float, HWC. */
static inline void tu_area_resample(const uint8_t *img, int W, int C, int bx,
                                    int by, int bw, int bh, int ow, int oh,
                                    float *out) {
  double sx = (double)bw / ow, sy = (double)bh / oh;
  for (int oy = 0; oy < oh; oy++) {
    double y0 = by + oy * sy, y1 = y0 + sy;
    for (int ox = 0; ox < ow; ox++) {
      double x0 = bx + ox * sx, x1 = x0 + sx;
      double acc[4] = {0, 0, 0, 0}, wsum = 0;
      /* Bounded by the box: y0 + sy may round past its last row. */
      for (int iy = (int)floor(y0); iy < (int)ceil(y1) && iy < by + bh; iy++) {
        double wy = fmin(y1, iy + 1.0) - fmax(y0, (double)iy);
        if (wy <= 0)
          continue;
        for (int ix = (int)floor(x0); ix < (int)ceil(x1) && ix < bx + bw;
             ix++) {
          double wx = fmin(x1, ix + 1.0) - fmax(x0, (double)ix);
          if (wx <= 0)
            continue;
          const uint8_t *p = img + ((size_t)iy * (size_t)W + (size_t)ix) * C;
          for (int c = 0; c < C; c++)
            acc[c] += wx * wy * p[c];
          wsum += wx * wy;
        }
      }
      for (int c = 0; c < C; c++)
        out[((size_t)oy * ow + ox) * C + c] = (float)(acc[c] / wsum);
    }
  }
}

/* PSNR in dB of n u8 values against float references. */
static inline double tu_psnr(const uint8_t *a, const float *ref, size_t n) {
  double se = 0;
  for (size_t i = 0; i < n; i++) {
    double d = (double)a[i] - ref[i];
    se += d * d;
  }
  if (se == 0)
    return 99.0;
  return 10.0 * log10(255.0 * 255.0 / (se / (double)n));
}

/* PSNR of two u8 buffers. */
static inline double tu_psnr_u8(const uint8_t *a, const uint8_t *b, size_t n) {
  double se = 0;
  for (size_t i = 0; i < n; i++) {
    double d = (double)a[i] - b[i];
    se += d * d;
  }
  if (se == 0)
    return 99.0;
  return 10.0 * log10(255.0 * 255.0 / (se / (double)n));
}

#endif
