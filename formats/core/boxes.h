/* Per-sample boxes of the dataset files (LMDB layout 5, HDF5 layout 4;
 * formats/core/layout.h): the encoding of one box, the LMDB box chunk, and the
 * checks a reader runs on them. Its own header, so that the fuzz target of
 * the chunk parser includes only this.
 *
 * One box is 24 bytes, little-endian:
 *   0 f32 x0, 4 f32 y0, 8 f32 x1, 12 f32 y1, 16 i32 label, 20 u32 flags.
 * An LMDB box chunk ("sluice.bx" + u32 big-endian chunk number) holds the
 * boxes of samples [first, first + n), every sample of the file in exactly
 * one chunk, in order:
 *   0  u8[4] magic "SLB1"
 *   4  u32   n, samples in the chunk (1..SL_BOX_CHUNK_SAMPLES)
 *   8  u64   first, the chunk's first sample
 *  16  u16[n] each sample's box count (0..SL_BOXES_MAX)
 *  16 + 2n   the boxes, 24 bytes each, sample by sample.
 * A chunk is at most SL_BOX_CHUNK_BYTES unless one sample's boxes alone
 * are more (65535 boxes: 1.5 MiB, so never). */
#ifndef SLUICE_FORMATS_BOXES_H
#define SLUICE_FORMATS_BOXES_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/endian.h"
#include "sluice.h"

#define SL_BOX_BYTES 24u
#define SL_BOX_CHUNK_MAGIC "SLB1"
#define SL_BOX_CHUNK_HDR 16u
#define SL_BOX_CHUNK_SAMPLES 65536u
#define SL_BOX_CHUNK_BYTES (16u << 20)
/* The flags this build knows; the writer refuses others. */
#define SL_BOX_FLAGS_KNOWN (SL_BOX_CROWD | SL_BOX_DIFFICULT)

_Static_assert(sizeof(sl_box) == SL_BOX_BYTES, "sl_box is 24 bytes");

static inline void sl_box_encode(uint8_t out[SL_BOX_BYTES], const sl_box *b) {
  const float f[4] = {b->x0, b->y0, b->x1, b->y1};
  for (int k = 0; k < 4; k++) {
    uint32_t u;
    memcpy(&u, &f[k], sizeof u);
    sl_put_le32(out + 4 * k, u);
  }
  sl_put_le32(out + 16, (uint32_t)b->label);
  sl_put_le32(out + 20, b->flags);
}

static inline void sl_box_decode(const uint8_t in[SL_BOX_BYTES], sl_box *b) {
  float f[4];
  for (int k = 0; k < 4; k++) {
    uint32_t u = sl_get_le32(in + 4 * k);
    memcpy(&f[k], &u, sizeof u);
  }
  b->x0 = f[0];
  b->y0 = f[1];
  b->x1 = f[2];
  b->y1 = f[3];
  b->label = (int32_t)sl_get_le32(in + 16);
  b->flags = sl_get_le32(in + 20);
}

/* NULL when b is a box a file may hold with nclasses classes, else a static
 * string saying what is wrong. Unknown flag bits are kept, not damage (a
 * later flag must not make files unreadable); the writer refuses them. */
static inline const char *sl_box_check(const sl_box *b, uint32_t nclasses) {
  if (!isfinite(b->x0) || !isfinite(b->y0) || !isfinite(b->x1) ||
      !isfinite(b->y1))
    return "a coordinate is not finite";
  if (b->x0 > b->x1 || b->y0 > b->y1)
    return "x0 > x1 or y0 > y1";
  if (b->label < 0 || (uint32_t)b->label >= nclasses)
    return "label outside the file's classes";
  return NULL;
}

/* The header of a box chunk of len bytes. */
typedef struct sl_box_chunk {
  uint32_t n;            /* samples */
  uint64_t first;        /* first sample */
  const uint8_t *counts; /* n u16 LE box counts */
  const uint8_t *boxes;  /* total boxes, SL_BOX_BYTES each */
  uint64_t total;        /* boxes in the chunk */
  uint32_t max_count;    /* largest count of a sample in it */
} sl_box_chunk;

/* Parses a box chunk p[0..len). Returns NULL and fills c, or a static
 * string saying what is wrong. Time: O(n); reads only p[0..len). */
static inline const char *sl_box_chunk_parse(const uint8_t *p, size_t len,
                                             sl_box_chunk *c) {
  memset(c, 0, sizeof *c);
  if (len < SL_BOX_CHUNK_HDR || memcmp(p, SL_BOX_CHUNK_MAGIC, 4) != 0)
    return "box chunk: bad magic (not SLB1) or shorter than its header";
  uint32_t n = sl_get_le32(p + 4);
  if (n < 1 || n > SL_BOX_CHUNK_SAMPLES)
    return "box chunk: sample count outside 1..65536";
  if ((size_t)n * 2 > len - SL_BOX_CHUNK_HDR)
    return "box chunk: box counts cut short";
  uint64_t total = 0;
  uint32_t max = 0;
  for (uint32_t j = 0; j < n; j++) {
    uint32_t k = sl_get_le16(p + SL_BOX_CHUNK_HDR + 2 * (size_t)j);
    total += k;
    if (k > max)
      max = k;
  }
  size_t rest = len - SL_BOX_CHUNK_HDR - (size_t)n * 2;
  if (rest % SL_BOX_BYTES != 0 || total != rest / SL_BOX_BYTES)
    return "box chunk: the box counts do not match its size";
  c->n = n;
  c->first = sl_get_le64(p + 8);
  c->counts = p + SL_BOX_CHUNK_HDR;
  c->boxes = p + SL_BOX_CHUNK_HDR + (size_t)n * 2;
  c->total = total;
  c->max_count = max;
  return NULL;
}

/* Writes a chunk header (the counts and boxes follow). */
static inline void sl_box_chunk_head(uint8_t out[SL_BOX_CHUNK_HDR], uint32_t n,
                                     uint64_t first) {
  memcpy(out, SL_BOX_CHUNK_MAGIC, 4);
  sl_put_le32(out + 4, n);
  sl_put_le32(out + 8, (uint32_t)first);
  sl_put_le32(out + 12, (uint32_t)(first >> 32));
}

static inline uint32_t sl_box_chunk_count(const sl_box_chunk *c, uint32_t j) {
  return sl_get_le16(c->counts + 2 * (size_t)j);
}

#endif
