/* HDF5 chunk filters undone (formats/hdf5/h5filter.h). The formats follow
 * HDF5's H5Zdeflate.c, H5Zshuffle.c and H5Zfletcher32.c, h5py's
 * lzf_filter.c and hdf5-blosc's blosc_filter.c (a chunk is one Blosc
 * buffer, its header giving its sizes). */
#include "formats/hdf5/h5filter.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <blosc.h>
#include <liblzf/lzf.h>
#include <zlib.h>

#include "common/endian.h"

const char *sl_h5_filter_name(uint32_t id) {
  switch (id) {
  case SL_H5F_DEFLATE:
    return "gzip";
  case SL_H5F_SHUFFLE:
    return "shuffle";
  case SL_H5F_FLETCHER32:
    return "fletcher32";
  case SL_H5F_LZF:
    return "lzf";
  case SL_H5F_BLOSC:
    return "blosc";
  default:
    return NULL;
  }
}

uint64_t sl_h5_filter_scratch(const sl_h5_pipeline *p) {
  uint64_t m = p->chunk_bytes > p->max_stored ? p->chunk_bytes : p->max_stored;
  return 2 * m;
}

/* HDF5's H5_checksum_fletcher32: 16-bit big-endian words, sums folded
 * every 360 words; an odd last byte is the high byte of a word. */
static uint32_t fletcher32(const uint8_t *d, size_t n) {
  uint32_t s1 = 0, s2 = 0;
  size_t words = n / 2;
  while (words) {
    size_t t = words > 360 ? 360 : words;
    words -= t;
    do {
      s1 += (uint32_t)d[0] << 8 | d[1];
      d += 2;
      s2 += s1;
    } while (--t);
    s1 = (s1 & 0xffff) + (s1 >> 16);
    s2 = (s2 & 0xffff) + (s2 >> 16);
  }
  if (n % 2) {
    s1 += (uint32_t)*d << 8;
    s2 += s1;
    s1 = (s1 & 0xffff) + (s1 >> 16);
    s2 = (s2 & 0xffff) + (s2 >> 16);
  }
  s1 = (s1 & 0xffff) + (s1 >> 16);
  s2 = (s2 & 0xffff) + (s2 >> 16);
  return s2 << 16 | s1;
}

const char *sl_h5_unfilter(const sl_h5_pipeline *p, uint32_t mask,
                           const uint8_t *in, size_t len, uint8_t *scratch,
                           const uint8_t **out, char *why, size_t cap) {
  uint64_t half = sl_h5_filter_scratch(p) / 2;
  uint8_t *buf[2] = {scratch, scratch + half};
  int next = 0;
  const uint8_t *cur = in;
  uint64_t n = len;
  for (int f = p->n - 1; f >= 0; f--) {
    if (mask & (1u << f))
      continue; /* skipped when the chunk was written */
    uint8_t *dst = buf[next];
    switch (p->id[f]) {
    case SL_H5F_FLETCHER32: {
      if (n < 4) {
        snprintf(why, cap, "fletcher32: %" PRIu64 " bytes, no checksum", n);
        return why;
      }
      n -= 4;
      uint32_t want = sl_get_le32(cur + n), got = fletcher32(cur, n);
      /* HDF5 1.6 wrote the sum with its bytes swapped in pairs; HDF5
       * accepts both. */
      uint32_t swapped = (got & 0x00ff00ffu) << 8 | (got & 0xff00ff00u) >> 8;
      if (want != got && want != swapped) {
        snprintf(why, cap,
                 "fletcher32 checksum mismatch (stored %08" PRIx32
                 ", computed %08" PRIx32 "): the chunk is damaged",
                 want, got);
        return why;
      }
      continue; /* the data stays where it is, 4 bytes shorter */
    }
    case SL_H5F_DEFLATE: {
      uLongf dn = (uLongf)half;
      int rc = uncompress(dst, &dn, cur, (uLong)n);
      if (rc != Z_OK) {
        snprintf(why, cap, "gzip: %s (corrupt compressed data)",
                 rc == Z_BUF_ERROR   ? "the data inflates past the chunk size"
                 : rc == Z_MEM_ERROR ? "no memory"
                                     : "not a valid zlib stream");
        return why;
      }
      n = dn;
      break;
    }
    case SL_H5F_LZF: {
      unsigned dn = lzf_decompress(cur, (unsigned)n, dst, (unsigned)half);
      if (dn == 0) {
        snprintf(why, cap, "lzf: corrupt compressed data");
        return why;
      }
      n = dn;
      break;
    }
    case SL_H5F_BLOSC: {
      /* The header's sizes checked against the bytes there are before
       * Blosc reads them (it takes the compressed size from the header);
       * the _ctx call keeps no global state and takes no lock, so workers
       * decompress at once. */
      size_t nbytes = 0;
      if (n < BLOSC_MIN_HEADER_LENGTH ||
          blosc_cbuffer_validate(cur, (size_t)n, &nbytes) != 0) {
        snprintf(why, cap,
                 "blosc: not a valid Blosc buffer (%" PRIu64 " bytes)", n);
        return why;
      }
      if (nbytes > half) {
        snprintf(why, cap,
                 "blosc: the buffer holds %zu bytes, past the chunk size",
                 nbytes);
        return why;
      }
      int dn = blosc_decompress_ctx(cur, dst, (size_t)half, 1);
      if (dn <= 0 || (size_t)dn != nbytes) {
        snprintf(why, cap, "blosc: corrupt compressed data");
        return why;
      }
      n = (uint64_t)dn;
      break;
    }
    case SL_H5F_SHUFFLE: {
      uint64_t es = p->elem[f];
      if (es <= 1) /* bytes: shuffling is the identity */
        continue;
      uint64_t ne = n / es;
      for (uint64_t b = 0; b < es; b++)
        for (uint64_t e = 0; e < ne; e++)
          dst[e * es + b] = cur[b * ne + e];
      memcpy(dst + ne * es, cur + ne * es, n - ne * es); /* leftover bytes */
      break;
    }
    default:
      snprintf(why, cap, "filter %" PRIu32 " is not undone", p->id[f]);
      return why;
    }
    cur = dst;
    next ^= 1;
  }
  if (n != p->chunk_bytes) {
    snprintf(why, cap,
             "the chunk unfilters to %" PRIu64 " bytes, %" PRIu64 " expected",
             n, p->chunk_bytes);
    return why;
  }
  *out = cur;
  return NULL;
}
