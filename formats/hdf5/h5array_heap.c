/* HDF5 global heap collections (h5array_heap.h). */
#include "formats/hdf5/h5array_heap.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/endian.h"

static const char *parse_gcol(const uint8_t *m, uint64_t fs, uint64_t at,
                              sl_h5_gcol *c, sl_h5_heap *h) {
  c->at = 0;
  if (c->cap)
    memset(c->len, 0, c->cap * sizeof *c->len);
  if (at > fs || fs - at < 16 || memcmp(m + at, "GCOL", 4) != 0 ||
      m[at + 4] != 1)
    return "no global heap collection (GCOL, version 1) there";
  uint64_t size = sl_get_le64(m + at + 8);
  if (size < 16 || size > fs - at)
    return "the heap collection's size runs past the end of the file";
  uint64_t p = at + 16, end = at + size;
  while (end - p >= 16) {
    if (h->steps++ == h->steps_max) {
      h->steps--;
      return "the descriptors name heap collections out of their order "
             "again and again: parsing them would step through more heap "
             "objects than 2 per 16 bytes of the file and 256 per sample";
    }
    uint16_t k = sl_get_le16(m + p);
    uint64_t n = sl_get_le64(m + p + 8);
    if (k == 0) /* the free space: the last object */
      break;
    if (n > end - p - 16)
      return "a heap object's length runs past its collection's end";
    if (k >= c->cap) {
      size_t nc = c->cap ? c->cap : 64;
      while (nc <= k)
        nc *= 2;
      uint64_t *o2 = realloc(c->off, nc * sizeof *o2);
      if (!o2)
        return "no memory";
      c->off = o2;
      uint64_t *l2 = realloc(c->len, nc * sizeof *l2);
      if (!l2)
        return "no memory";
      c->len = l2;
      memset(c->len + c->cap, 0, (nc - c->cap) * sizeof *l2);
      c->cap = nc;
    }
    c->off[k] = p + 16;
    c->len[k] = n;
    uint64_t step = 16 + ((n + 7) & ~(uint64_t)7);
    if (step > end - p)
      break;
    p += step;
  }
  c->at = at;
  return NULL;
}

const char *sl_h5_heap_object(const uint8_t *map, uint64_t f, sl_h5_heap *h,
                              uint64_t coll, uint32_t k, uint64_t *off,
                              uint64_t *len, char *why, size_t cap) {
  sl_h5_gcol *c = &h->slot[0];
  for (int s = 0; s < SL_H5_HEAP_SLOTS; s++) {
    if (h->slot[s].at == coll) {
      c = &h->slot[s];
      break;
    }
    if (h->slot[s].used < c->used)
      c = &h->slot[s];
  }
  c->used = ++h->clock;
  if (coll != c->at) {
    const char *bad = parse_gcol(map, f, coll, c, h);
    if (bad) {
      snprintf(why, cap, "heap collection at %" PRIu64 ": %s", coll, bad);
      return why;
    }
  }
  if (k >= c->cap || c->len[k] == 0) {
    snprintf(why, cap, "heap collection at %" PRIu64 " has no object %" PRIu32,
             coll, k);
    return why;
  }
  *off = c->off[k];
  *len = c->len[k];
  return NULL;
}

void sl_h5_heap_free(sl_h5_heap *h) {
  for (int s = 0; s < SL_H5_HEAP_SLOTS; s++) {
    free(h->slot[s].off);
    free(h->slot[s].len);
  }
}
