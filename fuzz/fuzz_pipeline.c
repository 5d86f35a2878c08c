/* libFuzzer target: probe + region decode + the whole augment pipeline on
 * arbitrary bytes. JPEG, PNG, WebP and level records (SLV1) are recognised
 * by their magic;
 * anything else is fed as a raw array (HWC or CHW planes) whose shape and
 * kind come from its first bytes. The
 * pipeline's settings (output size, crop, dtype, layout, flip, filter) are
 * derived from the input's length and last byte, and up to 8 detection
 * boxes (any floats: NaN, infinities, inverted) from its first bytes, which
 * iou_crop chooses its crop from and every crop moves, so plain image files
 * make a good seed corpus (fuzz/corpus). Build and run: fuzz/run.sh.
 *
 * Each input is decoded twice: the region from a point to the far corner,
 * and the middle quarter (which a restart-laid-out JPEG decodes through a
 * window of its segments).
 *
 * A level record is also run as the loader reads it: its directory parsed
 * from the first bytes (formats/core/levels.h), the level sl_aug_levels_pick
 * chooses, and the pipeline on a copy of the record in which every other
 * byte is scrambled (the bytes a level view never reads); the pipeline
 * must pick that same level (SL_ESTATE is a failure).
 *
 * Every outcome but a crash, a sanitizer report or a leak is fine: bad
 * input must come back as an error status. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "augment/pipeline.h"
#include "codecs/codec.h"
#include "formats/core/levels.h"

enum { k_side = 64, k_npipes = 8 };

/* One pipeline per settings combination, created on first use: a harness
 * may keep state; the library itself has none. */
static sl_pipeline *g_pipes[k_npipes];
static sl_decoder *g_dec;
static uint8_t g_out[k_side * k_side * 3 * 4];

static sl_aug_params params(int i) {
  sl_aug_params p = {.crop = (sl_crop)(i % 5),
                     .scale = {0.08, 1.0},
                     .ratio = {3.0 / 4.0, 4.0 / 3.0},
                     .flip = 0.5,
                     .center_ratio = 0.875,
                     .channels = i == 7 ? 1 : 3,
                     .mean = {0.485f, 0.456f, 0.406f},
                     .std = {0.229f, 0.224f, 0.225f},
                     .dtype = (sl_dtype)(i % 4),
                     .layout = (sl_layout)((i / 4) % 2),
                     .filter = (sl_filter)((i / 2) % 2),
                     .max_pixels = 4u << 20,
                     .box_min_area = i % 2 ? 0.25 : 0,
                     .iou_all = i % 4 == 3,
                     .letterbox_fill = 114,
                     .jpeg_planes = i % 3 != 1};
  if (i == 6) { /* the recipe's warps move boxes too */
    p.recipe.policy.policy = SL_AUTO_RANDAUGMENT;
    p.recipe.policy.num_ops = 3;
    p.recipe.policy.bins = 31;
    p.recipe.policy.magnitude = 9;
  }
  return p;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  sl_err err;
  if (!g_dec && sl_decoder_create(&g_dec, 4u << 20, 2 * k_side, 2 * k_side,
                                  &err) != SL_OK)
    abort();
  int codec = 3, rh = 0, rw = 0, rc = 0;
  const uint8_t *payload = data;
  size_t len = size;
  if (size >= 2 && data[0] == 0xff && data[1] == 0xd8) {
    codec = 1;
  } else if (size >= 8 && memcmp(data, "\x89PNG", 4) == 0) {
    codec = 2;
  } else if (size >= 8 && memcmp(data, "SLV1", 4) == 0) {
    codec = SL_IMAGE_JPEG_LEVELS; /* a level record (formats/core/layout.h) */
  } else if (size >= 12 && memcmp(data, "RIFF", 4) == 0 &&
             memcmp(data + 8, "WEBP", 4) == 0) {
    codec = SL_IMAGE_WEBP;
  } else if (size >= 3) {
    rh = 1 + data[0] % 32, rw = 1 + data[1] % 32,
    rc = (int[]){1, 3, 4}[data[2] % 3];
    /* raw HWC, or CHW planes in RGB or BGR order (1 or 3 of them) */
    codec = (int[]){SL_IMAGE_RAW, SL_IMAGE_RAW_CHW,
                    SL_IMAGE_RAW_CHW_BGR}[(data[2] / 3) % 3];
    if (codec != SL_IMAGE_RAW && rc == 4)
      rc = 3;
    payload = data + 3;
    len = size - 3;
  }
  uint8_t last = size ? data[size - 1] : 0;
  sl_encoded in = {payload, len, codec, rh, rw, rc};
  sl_image_info info;
  if (sl_decoder_probe(g_dec, &in, &info, &err) == SL_OK) {
    /* A region and scale from the input's own numbers. */
    int x = (int)(last % (unsigned)info.width);
    int y = (int)((size / 7) % (unsigned)info.height);
    sl_decode_req req = {x,
                         y,
                         info.width - x,
                         info.height - y,
                         1 + (int)(size % 8),
                         1 + last % 40,
                         1 + last % 50,
                         (last & 1) ? 4 : 1,
                         0};
    sl_decoded out;
    if (sl_decoder_decode(g_dec, &in, &req, &out, &err) == SL_OK) {
      volatile uint8_t sink = 0; /* touch every decoded byte */
      for (int r = 0; r < out.h; r++)
        for (int c = 0; c < out.w * req.channels; c++)
          sink ^= out.pixels[(size_t)r * out.stride + (size_t)c];
      (void)sink;
    }
    /* The middle quarter: small enough that a JPEG with restart markers
     * is decoded through a window of its segments (codecs/jpeg_window.h). */
    sl_decode_req mid = {info.width / 4,
                         info.height / 4,
                         info.width / 2 ? info.width / 2 : 1,
                         info.height / 2 ? info.height / 2 : 1,
                         req.scale,
                         0,
                         0,
                         req.channels,
                         (last >> 1) & 1}; /* planes where they fit */
    if (sl_decoder_decode(g_dec, &in, &mid, &out, &err) == SL_OK && out.w > 0)
      (void)*(volatile const uint8_t *)(out.pixels +
                                        (size_t)(out.h - 1) * out.stride);
    for (int c = 0; c < out.planes.n; c++) { /* every byte of each plane */
      volatile uint8_t sink = 0;
      for (int r = 0; r < out.planes.h[c]; r++)
        for (int x = 0; x < out.planes.w[c]; x++)
          sink ^=
              out.planes.px[c][(size_t)r * out.planes.stride[c] + (size_t)x];
      (void)sink;
    }
  }
  int i = (int)((size + last) % k_npipes);
  if (!g_pipes[i]) {
    sl_aug_params p = params(i);
    if (sl_pipeline_create(&g_pipes[i], &p, k_side, &err) != SL_OK)
      abort();
  }
  int oh = 1 + (int)(last % k_side), ow = 1 + (int)((size * 13) % k_side);
  float bin[8 * 4], bout[8 * 4];
  uint32_t src[8], nb = (uint32_t)(size / 16 < 8 ? size / 16 : 8);
  memcpy(bin, data, (size_t)nb * 16);
  sl_aug_boxes bx = {bin, 16, nb, bout, src, (uint32_t)(last % 9), 0, 0};
  if (sl_pipeline_run_boxes(g_pipes[i], payload, len, codec, rh, rw, rc, 1, 0,
                            size, oh, ow, g_out, &bx, &err) == SL_OK &&
      (bx.n_out > bx.cap || bx.n_out > bx.kept || bx.kept > nb))
    abort();
  sl_levels lv;
  uint8_t *view = NULL;
  if (codec == SL_IMAGE_JPEG_LEVELS &&
      !sl_levels_parse_dir(data, SL_LEVELS_HEAD_MAX, size, &lv) &&
      (view = malloc(size))) {
    sl_aug_params p = params(i);
    int k = sl_aug_levels_pick(&p, &lv, bin, 16, nb, 1, 0, size, oh, ow);
    size_t head = size < SL_LEVELS_HEAD_MAX ? size : SL_LEVELS_HEAD_MAX;
    memset(view, 0xA5, size);
    memcpy(view, data, head);
    memcpy(view + lv.level[k].off, data + lv.level[k].off, lv.level[k].len);
    bx.kept = bx.n_out = 0;
    if (sl_pipeline_run_view(g_pipes[i], view, size, codec, k, 0, 0, 0, 1, 0,
                             size, oh, ow, g_out, &bx, &err) == SL_ESTATE)
      abort(); /* the reader's level is not the pipeline's */
    free(view);
  }
  return 0;
}
