/* The level record, codec 7 of the dataset files (formats/core/layout.h): one
 * JPEG at several resolutions. Its own header, so that the codecs and the
 * pipeline that read and make these records include only this, not the
 * rest of the files' layout. */
#ifndef SLUICE_FORMATS_LEVELS_H
#define SLUICE_FORMATS_LEVELS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/endian.h"
#include "sluice.h"

/* Codec 7, JPEG levels (LMDB layout 4, HDF5 layout 3): one image stored at
 * level 0 (its own size, the record's height and width) and at up to
 * SL_LEVELS_MAX - 1 smaller sizes, each a JPEG in the restart layout:
 *   0  u8[4] magic "SLV1"
 *   4  u8    n, the number of levels (1..SL_LEVELS_MAX), level 0 included
 *   5  u8[3] reserved, 0
 *   8  n x { u32 length, u16 height, u16 width } (little-endian)
 *   then the n JPEGs back to back, level 0 first.
 * Level k > 0 is smaller than level k - 1 in both sides, and is the whole
 * scene of level 0 resized to its size: level pixel p covers level-0
 * pixels [p * W0 / Wk, (p + 1) * W0 / Wk), so a crop maps to any level
 * exactly (by Wk / W0 and Hk / H0). */
#define SL_LEVELS_MAGIC "SLV1"
#define SL_LEVELS_MAX SL_LEVELS_MAX_PUBLIC /* the one count, in sluice.h */
#define SL_LEVELS_HDR 8u
#define SL_LEVELS_ENTRY 8u

/* The most bytes of a record's header and directory: what a reader takes
 * first to learn where each level lies. */
#define SL_LEVELS_HEAD_MAX (SL_LEVELS_HDR + SL_LEVELS_MAX * SL_LEVELS_ENTRY)

typedef struct sl_levels {
  int n;
  struct {
    const uint8_t *bytes; /* p + off */
    uint32_t off, len;    /* the level's JPEG: [off, off + len) of the record */
    uint16_t height, width;
  } level[SL_LEVELS_MAX];
} sl_levels;

/* Parses the header and directory of a level record of len bytes from its
 * first avail bytes (avail >= min(len, SL_LEVELS_HEAD_MAX) holds all of
 * them): every level's place and size, checked against each other and
 * len, but none of the JPEGs (they need not have been read). Returns NULL
 * and fills lv (bytes pointing into p at the levels' offsets), or a static
 * string saying what is wrong (a cut or damaged record). */
static inline const char *sl_levels_parse_dir(const uint8_t *p, size_t avail,
                                              size_t len, sl_levels *lv) {
  memset(lv, 0, sizeof *lv);
  if (avail > len)
    avail = len;
  if (avail < SL_LEVELS_HDR || memcmp(p, SL_LEVELS_MAGIC, 4) != 0)
    return "level record: bad magic (not SLV1)";
  int n = p[4];
  if (n < 1 || n > SL_LEVELS_MAX || p[5] || p[6] || p[7])
    return "level record: bad level count or reserved bytes";
  size_t off = SL_LEVELS_HDR + (size_t)n * SL_LEVELS_ENTRY;
  if (off > avail)
    return "level record: directory cut short";
  for (int k = 0; k < n; k++) {
    const uint8_t *e = p + SL_LEVELS_HDR + (size_t)k * SL_LEVELS_ENTRY;
    uint32_t l = sl_get_le32(e);
    uint16_t h = sl_get_le16(e + 4), w = sl_get_le16(e + 6);
    if (l < 4 || l > len - off)
      return "level record: a level's JPEG runs past the record";
    if (!h || !w ||
        (k > 0 &&
         (h >= lv->level[k - 1].height || w >= lv->level[k - 1].width)))
      return "level record: a level's size is zero or not below the previous";
    lv->level[k].bytes = p + off;
    lv->level[k].off = (uint32_t)off;
    lv->level[k].len = l;
    lv->level[k].height = h;
    lv->level[k].width = w;
    off += l;
  }
  if (off != len)
    return "level record: the levels do not fill the record";
  lv->n = n;
  return NULL;
}

/* A level view: a record of len bytes at p of which only the header, the
 * directory and level `only` were read (the rest of p[0..len) is not the
 * file's). Parses the directory and checks that level `only` is a JPEG;
 * only < 0: the whole record, every level checked. Returns as
 * sl_levels_parse_dir. */
static inline const char *sl_levels_parse_view(const uint8_t *p, size_t len,
                                               int only, sl_levels *lv) {
  const char *why = sl_levels_parse_dir(p, len, len, lv);
  if (why)
    return why;
  if (only >= lv->n) {
    lv->n = 0;
    return "level record: fewer levels than the reader chose from";
  }
  for (int k = only < 0 ? 0 : only; k < (only < 0 ? lv->n : only + 1); k++)
    if (lv->level[k].bytes[0] != 0xFF || lv->level[k].bytes[1] != 0xD8) {
      lv->n = 0;
      return "level record: a level is not a JPEG";
    }
  return NULL;
}

/* Parses a whole level container of len bytes. Returns NULL and fills lv,
 * or a static string saying what is wrong (a cut or damaged record). */
static inline const char *sl_levels_parse(const uint8_t *p, size_t len,
                                          sl_levels *lv) {
  return sl_levels_parse_view(p, len, -1, lv);
}

#endif
