/* An area-average (box) resampler that takes a fractional source window:
 * output pixel (ox, oy) is the mean of the source over
 * [u0 + ox * sx, u0 + (ox + 1) * sx) x [v0 + oy * sy, ...), sx = (u1 - u0) /
 * out_w, fractions of source pixels weighted by their share (Q14 weights).
 * A crop decoded from a resolution level lies at fractional coordinates
 * of the decoded region: this places it exactly, where libyuv's integer
 * source rectangles would shift it by up to half a pixel.
 *
 * Thread safety: an sl_resampler is one worker's scratch. Memory, at
 * create: for outputs up to max_out on a side and sources up to max_src
 * pixels wide, (max_src + 16) * 8 bytes of row (ch 1: twice that, and
 * max_out * 4 + 16 bytes of output rows: 1-byte images go four output rows
 * at a time through the 4-channel pass) plus 2 * max_out *
 * (SL_RESAMPLE_TAPS * 2 + 4) bytes of weights. */
#ifndef SLUICE_AUGMENT_RESAMPLE_H
#define SLUICE_AUGMENT_RESAMPLE_H

#include <stddef.h>
#include <stdint.h>

/* Most source pixels one output pixel may take per axis (a reduction of
 * at most SL_RESAMPLE_TAPS - 1). */
#define SL_RESAMPLE_TAPS 6

typedef struct sl_resampler sl_resampler;

/* NULL when out of memory or the sizes are not positive. */
sl_resampler *sl_resampler_create(int max_out, int max_src, int ch);
void sl_resampler_destroy(sl_resampler *r);

/* Makes r use its SSE2 (or C) passes even on a CPU with AVX2, which give
 * the same bytes: for the test that checks they do. */
void sl_resampler_baseline(sl_resampler *r);

/* Resamples the window [u0, u1) x [v0, v1) of a sw x sh source of r's ch
 * bytes per pixel (the window is clamped to the source) to out_w x out_h
 * at dst (stride out_w * ch). Returns 0, or -1 when the sizes exceed r's
 * or a reduction needs more than SL_RESAMPLE_TAPS taps (nothing written:
 * the caller resizes another way). */
int sl_resample_area(sl_resampler *r, const uint8_t *src, size_t stride, int sw,
                     int sh, double u0, double u1, double v0, double v1,
                     uint8_t *dst, int out_w, int out_h);

#endif
