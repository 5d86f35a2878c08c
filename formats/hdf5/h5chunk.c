/* Reading a chunked HDF5 dataset's chunk index from the file's bytes
 * (formats/hdf5/h5chunk.h says what is read and why). Formats from the HDF5
 * File Format Specification version 3: object headers (IV.A), the data
 * layout message (IV.A.2.i), v1 B-trees (III.A.1), fixed arrays (III.H)
 * and extensible arrays (III.G). */
#include "formats/hdf5/h5chunk.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/endian.h"

enum {
  MSG_LAYOUT = 0x0008,
  MSG_CONTINUATION = 0x0010,
  MAX_BLOCKS = 64,      /* object header blocks followed */
  MAX_BTREE_LEVEL = 64, /* far above any real tree's height */
  IDX_SINGLE = 1,
  IDX_IMPLICIT = 2,
  IDX_FARRAY = 3,
  IDX_EARRAY = 4,
  IDX_BTREE2 = 5,
  IDX_BTREE1 = 100, /* layout v3's only index */
};

#define UNDEF UINT64_MAX /* HDF5's undefined address: all bits set */

typedef struct rd {
  const sl_h5_chunk_query *q;
  sl_h5_chunk_index *x;
  char *why;
  size_t cap;
  uint64_t nodes, nodes_max; /* B-tree nodes visited, and the bound */
  uint64_t entries_max;      /* B-tree entries visited: the bound */
} rd;

static sl_h5c_result bad(rd *r, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  if (r->cap)
    vsnprintf(r->why, r->cap, fmt, ap);
  va_end(ap);
  return SL_H5C_DAMAGED;
}

/* The absolute offset of relative address rel, when n bytes from it lie
 * inside the file. */
static bool span(const rd *r, uint64_t rel, uint64_t n, uint64_t *abs) {
  const sl_h5_chunk_query *q = r->q;
  if (rel > UINT64_MAX - q->base)
    return false;
  uint64_t a = rel + q->base;
  if (a > q->file_size || n > q->file_size - a)
    return false;
  *abs = a;
  return true;
}

static uint64_t get_n(const uint8_t *p, unsigned n) {
  uint64_t v = 0;
  for (unsigned i = n; i-- > 0;)
    v = v << 8 | p[i];
  return v;
}

/* Chunk k (linear) at relative address rel: size stored bytes there. */
static sl_h5c_result set_chunk(rd *r, uint64_t k, uint64_t rel, uint64_t size,
                               uint32_t mask) {
  if (rel == UNDEF)
    return SL_H5C_OK; /* never written: stays unallocated */
  sl_h5_chunk *c = &r->x->chunk[k];
  uint64_t abs;
  if (size == 0 || size > UINT32_MAX)
    return bad(r, "chunk %" PRIu64 " has a stored size of %" PRIu64 " bytes", k,
               size);
  if (!span(r, rel, size, &abs))
    return bad(r,
               "chunk %" PRIu64 " (%" PRIu64 " bytes at address %" PRIu64
               ") runs past the end of the file (%" PRIu64 " bytes)",
               k, size, rel, r->q->file_size);
  if (c->addr != SL_H5C_UNALLOCATED)
    return bad(r, "chunk %" PRIu64 " is listed twice in the chunk index", k);
  c->addr = abs;
  c->size = (uint32_t)size;
  c->mask = mask;
  return SL_H5C_OK;
}

/* The data layout message of the object header at q->ohdr: *msg, *len. */
static sl_h5c_result find_layout(rd *r, const uint8_t **msg, uint64_t *len) {
  const sl_h5_chunk_query *q = r->q;
  const uint8_t *f = q->file;
  struct {
    uint64_t at, len;
  } blk[MAX_BLOCKS];
  int nb = 0;
  bool v2 = false, tracked = false;
  uint64_t at;
  if (!span(r, q->ohdr, 16, &at))
    return bad(r,
               "the dataset's object header (address %" PRIu64 ") lies "
               "outside the file",
               q->ohdr);
  if (memcmp(f + at, "OHDR", 4) == 0) {
    uint8_t fl = f[at + 5];
    if (f[at + 4] != 2)
      return bad(r, "object header (OHDR) version %u (2 read)", f[at + 4]);
    uint64_t p = at + 6 + (fl & 0x20 ? 16 : 0) + (fl & 0x10 ? 4 : 0);
    unsigned sz = 1u << (fl & 3);
    if (p + sz > q->file_size)
      return bad(r, "the object header is cut short by the end of the file");
    uint64_t n = get_n(f + p, sz);
    p += sz;
    if (n > q->file_size - p || q->file_size - p - n < 4)
      return bad(r,
                 "the object header's first block (%" PRIu64 " bytes) "
                 "runs past the end of the file",
                 n);
    blk[nb].at = p;
    blk[nb++].len = n;
    v2 = true;
    tracked = (fl & 0x04) != 0;
  } else if (f[at] == 1) {
    uint64_t n = sl_get_le32(f + at + 8);
    if (n > q->file_size - at - 16)
      return bad(r,
                 "the object header (%" PRIu64 " bytes) runs past the "
                 "end of the file",
                 n);
    blk[nb].at = at + 16; /* 12 bytes, padded to 8 */
    blk[nb++].len = n;
  } else {
    return bad(r,
               "no object header at address %" PRIu64 " (version %u; 1 "
               "or OHDR read)",
               q->ohdr, f[at]);
  }
  unsigned hdr = v2 ? 4u + (tracked ? 2u : 0u) : 8u;
  for (int b = 0; b < nb; b++) {
    uint64_t p = blk[b].at, end = blk[b].at + blk[b].len;
    while (end - p >= hdr) {
      unsigned type = v2 ? f[p] : sl_get_le16(f + p);
      uint64_t sz = v2 ? sl_get_le16(f + p + 1) : sl_get_le16(f + p + 2);
      p += hdr;
      if (sz > end - p)
        return bad(r,
                   "an object header message (type %u, %" PRIu64
                   " bytes) runs past its block",
                   type, sz);
      if (type == MSG_LAYOUT) {
        *msg = f + p;
        *len = sz;
        return SL_H5C_OK;
      }
      if (type == MSG_CONTINUATION) {
        uint64_t ca, cl, cabs;
        if (sz < 16)
          return bad(r, "a header continuation message of %" PRIu64 " bytes",
                     sz);
        ca = sl_get_le64(f + p);
        cl = sl_get_le64(f + p + 8);
        if (nb == MAX_BLOCKS)
          return bad(r, "more than %d object header blocks", MAX_BLOCKS);
        if (!span(r, ca, cl, &cabs))
          return bad(r,
                     "an object header continuation (%" PRIu64 " bytes at "
                     "address %" PRIu64 ") lies outside the file",
                     cl, ca);
        if (v2 && (cl < 8 || memcmp(f + cabs, "OCHK", 4) != 0))
          return bad(r, "no OCHK continuation block at address %" PRIu64, ca);
        blk[nb].at = v2 ? cabs + 4 : cabs;
        blk[nb++].len = v2 ? cl - 8 : cl;
      }
      p += sz;
    }
  }
  return bad(r, "no data layout message in the dataset's object header");
}

/* A v1 B-tree leaf entry: key (size, filter mask, rank+1 offsets), chunk
 * address. */
static sl_h5c_result btree_leaf(rd *r, const uint8_t *key, uint64_t child) {
  const sl_h5_chunk_query *q = r->q;
  const sl_h5_chunk_index *x = r->x;
  uint64_t k = 0;
  if (sl_get_le64(key + 8 + 8 * (uint64_t)q->rank) != 0)
    return bad(r, "a chunk B-tree key has a nonzero element offset");
  for (int i = 0; i < q->rank; i++) {
    uint64_t o = sl_get_le64(key + 8 + 8 * (uint64_t)i);
    if (o % x->cdims[i] != 0)
      return bad(r,
                 "a chunk B-tree key has offset %" PRIu64 " on axis %d, "
                 "not a multiple of the chunk's %" PRIu64,
                 o, i, x->cdims[i]);
    if (o / x->cdims[i] >= x->grid[i])
      return SL_H5C_OK; /* beyond the dataset's extent: not part of it */
    k = k * x->grid[i] + o / x->cdims[i];
  }
  return set_chunk(r, k, child, sl_get_le32(key), sl_get_le32(key + 4));
}

/* The v1 B-tree node at rel, of level want (-1: the root, any level). */
static sl_h5c_result btree(rd *r, uint64_t rel, int want) {
  const uint8_t *f = r->q->file;
  uint64_t keysz = 8 + 8 * ((uint64_t)r->q->rank + 1), at;
  if (++r->nodes > r->nodes_max)
    return bad(r, "the chunk B-tree has more nodes than the dataset has "
                  "chunks (a cycle?)");
  if (!span(r, rel, 24, &at))
    return bad(r,
               "a chunk B-tree node (address %" PRIu64 ") lies outside "
               "the file",
               rel);
  if (memcmp(f + at, "TREE", 4) != 0 || f[at + 4] != 1)
    return bad(r, "no chunk B-tree node (TREE, type 1) at address %" PRIu64,
               rel);
  int level = f[at + 5];
  unsigned ent = sl_get_le16(f + at + 6);
  if ((want >= 0 && level != want) || level > MAX_BTREE_LEVEL)
    return bad(r,
               "a chunk B-tree node at address %" PRIu64 " has level %d "
               "(%d expected)",
               rel, level, want);
  if (!span(r, rel, 24 + ent * (keysz + 8) + keysz, &at))
    return bad(r,
               "a chunk B-tree node of %u entries (address %" PRIu64
               ") runs past the end of the file",
               ent, rel);
  /* Nodes that share a subtree (internal entries all naming one leaf of
   * 65535 skippable keys) would multiply the work by the nodes: a tree
   * whose nodes are its own has no more entries than the file has room
   * for. */
  if (ent > r->entries_max - r->x->entries)
    return bad(r,
               "the chunk B-tree visits more than the %" PRIu64 " entries "
               "the file has room for (node at address %" PRIu64
               " reached twice: shared subtrees?)",
               r->entries_max, rel);
  r->x->entries += ent;
  const uint8_t *p = f + at + 24;
  for (unsigned e = 0; e < ent; e++, p += keysz + 8) {
    uint64_t child = sl_get_le64(p + keysz);
    sl_h5c_result st =
        level == 0 ? btree_leaf(r, p, child) : btree(r, child, level - 1);
    if (st != SL_H5C_OK)
      return st;
  }
  return SL_H5C_OK;
}

/* A fixed array: header "FAHD" at rel, data block "FADB", paged when it
 * holds more than 2^page_bits entries (each page then followed by its
 * checksum; a page not yet written is all unallocated). */
static sl_h5c_result farray(rd *r, uint64_t rel, unsigned page_bits) {
  const uint8_t *f = r->q->file;
  uint64_t n = r->x->nchunks, at, d;
  if (!span(r, rel, 28, &at) || memcmp(f + at, "FAHD", 4) != 0 ||
      f[at + 4] != 0)
    return bad(r, "no fixed array header (FAHD, version 0) at address %" PRIu64,
               rel);
  unsigned client = f[at + 5], esz = f[at + 6], pbits = f[at + 7];
  uint64_t nent = sl_get_le64(f + at + 8), dblk = sl_get_le64(f + at + 16);
  if (client > 1 || (client == 0 && esz != 8) ||
      (client == 1 && (esz < 13 || esz > 20)))
    return bad(r, "fixed array of client %u with entries of %u bytes", client,
               esz);
  if (pbits != page_bits || pbits > 31)
    return bad(r, "fixed array pages of 2^%u entries (the layout says 2^%u)",
               pbits, page_bits);
  if (nent != n)
    return bad(r, "fixed array of %" PRIu64 " entries for %" PRIu64 " chunks",
               nent, n);
  if (dblk == UNDEF)
    return SL_H5C_OK; /* no chunk written */
  uint64_t page_n = (uint64_t)1 << pbits;
  uint64_t npages = n > page_n ? (n + page_n - 1) / page_n : 0;
  uint64_t bm = (npages + 7) / 8, first = 14 + (npages ? bm + 4 : 0);
  if (!span(r, dblk, first + n * esz + (npages ? npages : 1) * 4, &d))
    return bad(r,
               "the fixed array data block (address %" PRIu64 ", %" PRIu64
               " entries) runs past the end of the file",
               dblk, n);
  if (memcmp(f + d, "FADB", 4) != 0 || f[d + 4] != 0 || f[d + 5] != client ||
      sl_get_le64(f + d + 6) != rel)
    return bad(r,
               "no fixed array data block (FADB) of this array at "
               "address %" PRIu64,
               dblk);
  const uint8_t *e = f + d + first;
  for (uint64_t k = 0; k < n; k++, e += esz) {
    if (npages && k % page_n == 0 && k) /* the previous page's checksum */
      e += 4;
    uint64_t page = npages ? k / page_n : 0;
    if (npages && !(f[d + 14 + page / 8] & (0x80u >> (page % 8))))
      continue; /* page never written */
    uint64_t size = client ? get_n(e + 8, esz - 12) : r->x->chunk_bytes;
    uint32_t mask = client ? sl_get_le32(e + esz - 4) : 0;
    sl_h5c_result st = set_chunk(r, k, sl_get_le64(e), size, mask);
    if (st != SL_H5C_OK)
      return st;
  }
  return SL_H5C_OK;
}

/* An extensible array: where its entry e (linear over the maximum chunk
 * grid, the first axis slowest) falls in the dataset's grid: chunk *k, or
 * false past the dataset's extent. */
typedef struct ea {
  unsigned client, esz; /* 0: 8-byte addresses; 1: filtered entries */
  uint64_t idx_n;       /* entries in the index block */
  uint64_t rel;         /* the header's address */
  uint64_t arr_off;     /* bytes of a block's offset field */
  uint64_t page_n;      /* entries a data block page holds */
  uint64_t n;           /* entries to visit: grid[0] x maxgrid[1..] */
  uint64_t maxgrid[SL_H5C_MAX_RANK];
} ea;

static bool ea_chunk(const rd *r, const ea *a, uint64_t e, uint64_t *k) {
  const sl_h5_chunk_index *x = r->x;
  uint64_t c[SL_H5C_MAX_RANK];
  for (int i = r->q->rank - 1; i >= 1; i--) {
    c[i] = e % a->maxgrid[i];
    e /= a->maxgrid[i];
  }
  c[0] = e;
  uint64_t lin = 0;
  for (int i = 0; i < r->q->rank; i++) {
    if (c[i] >= x->grid[i])
      return false;
    lin = lin * x->grid[i] + c[i];
  }
  *k = lin;
  return true;
}

/* n entries at p, the first of them entry first. */
static sl_h5c_result ea_entries(rd *r, const ea *a, const uint8_t *p,
                                uint64_t first, uint64_t n) {
  for (uint64_t i = 0; i < n && first + i < a->n; i++, p += a->esz) {
    uint64_t k;
    if (!ea_chunk(r, a, first + i, &k))
      continue;
    uint64_t size = a->client ? get_n(p + 8, a->esz - 12) : r->x->chunk_bytes;
    uint32_t mask = a->client ? sl_get_le32(p + a->esz - 4) : 0;
    sl_h5c_result st = set_chunk(r, k, sl_get_le64(p), size, mask);
    if (st != SL_H5C_OK)
      return st;
  }
  return SL_H5C_OK;
}

/* A data block "EADB" of nelm entries from entry first, at rel; paged when
 * it holds more than page_n (its pages follow its prefix, each with its
 * checksum; init: the super block's bit array of the pages written, this
 * block's from bit init_at). */
static sl_h5c_result ea_dblock(rd *r, const ea *a, uint64_t rel, uint64_t first,
                               uint64_t nelm, uint64_t boff_want,
                               const uint8_t *init, uint64_t init_at) {
  const uint8_t *f = r->q->file;
  if (rel == UNDEF || first >= a->n)
    return SL_H5C_OK; /* never written, or past the dataset */
  uint64_t prefix = 6 + 8 + a->arr_off, at;
  bool paged = nelm > a->page_n;
  uint64_t npages = paged ? nelm / a->page_n : 0;
  uint64_t page = a->page_n * a->esz + 4;
  uint64_t size =
      paged ? prefix + 4 + npages * page : prefix + nelm * a->esz + 4;
  if (!span(r, rel, size, &at))
    return bad(r,
               "an extensible array data block (address %" PRIu64 ", %" PRIu64
               " entries) runs past the end of the file",
               rel, nelm);
  if (memcmp(f + at, "EADB", 4) != 0 || f[at + 4] != 0 ||
      f[at + 5] != a->client || sl_get_le64(f + at + 6) != a->rel)
    return bad(r,
               "no extensible array data block (EADB) of this array at "
               "address %" PRIu64,
               rel);
  /* Its offset field, as HDF5 writes it (a block in a wrong slot would
   * give other chunks' addresses). */
  uint64_t boff = get_n(f + at + 14, (unsigned)a->arr_off);
  if (boff != boff_want)
    return bad(r,
               "the extensible array data block at address %" PRIu64
               " has block offset %" PRIu64 ", its slot %" PRIu64,
               rel, boff, boff_want);
  if (!paged)
    return ea_entries(r, a, f + at + prefix, first, nelm);
  for (uint64_t pg = 0; pg < npages && first + pg * a->page_n < a->n; pg++) {
    uint64_t bit = init_at + pg;
    if (init && !(init[bit / 8] & (0x80u >> (bit % 8))))
      continue; /* page never written */
    sl_h5c_result st = ea_entries(r, a, f + at + prefix + 4 + pg * page,
                                  first + pg * a->page_n, a->page_n);
    if (st != SL_H5C_OK)
      return st;
  }
  return SL_H5C_OK;
}

static int log2_exact(uint64_t v) {
  if (v == 0 || (v & (v - 1)))
    return -1;
  int l = 0;
  while (v >>= 1)
    l++;
  return l;
}

/* An extensible array: header "EAHD" at rel (its creation parameters also
 * in the layout message, cp), index block "EAIB" holding the first entries,
 * the data block addresses of the first super blocks and the addresses of
 * the other super blocks "EASB"; super block u has 2^(u/2) data blocks of
 * 2^((u+1)/2) x min entries (HDF5's H5EA__hdr_init). */
static sl_h5c_result earray(rd *r, uint64_t rel, const uint8_t *cp) {
  const sl_h5_chunk_query *q = r->q;
  const uint8_t *f = q->file;
  uint64_t at, ib;
  if (!span(r, rel, 72, &at) || memcmp(f + at, "EAHD", 4) != 0 ||
      f[at + 4] != 0)
    return bad(r,
               "no extensible array header (EAHD, version 0) at address "
               "%" PRIu64,
               rel);
  ea a = {
      .client = f[at + 5], .esz = f[at + 6], .idx_n = f[at + 8], .rel = rel};
  unsigned maxbits = f[at + 7], idx_n = f[at + 8], dmin = f[at + 9],
           smin = f[at + 10], pbits = f[at + 11];
  if (a.client > 1 || (a.client == 0 && a.esz != 8) ||
      (a.client == 1 && (a.esz < 13 || a.esz > 20)))
    return bad(r, "extensible array of client %u with entries of %u bytes",
               a.client, a.esz);
  int ld = log2_exact(dmin), ls = log2_exact(smin);
  if (cp[0] != maxbits || cp[1] != idx_n || cp[2] != smin || cp[3] != dmin ||
      cp[4] != pbits || ld < 0 || ls < 0 || maxbits > 64 ||
      maxbits <= (unsigned)ld || pbits > 31)
    return bad(r,
               "extensible array parameters (max bits %u, index entries %u, "
               "min pointers %u, min entries %u, page bits %u) unlike its "
               "layout message's or impossible",
               maxbits, idx_n, smin, dmin, pbits);
  unsigned nsblks = 1 + maxbits - (unsigned)ld, in_iblock = 2u * (unsigned)ls;
  uint64_t ndblk = 2 * ((uint64_t)smin - 1);
  if (in_iblock > nsblks)
    return bad(r, "extensible array of %u super blocks, %u in its index block",
               nsblks, in_iblock);
  uint64_t nsblk = nsblks - in_iblock;
  a.arr_off = (maxbits + 7) / 8;
  a.page_n = (uint64_t)1 << pbits;
  uint64_t iblock = sl_get_le64(f + at + 60);
  if (iblock == UNDEF)
    return SL_H5C_OK; /* no chunk written */
  uint64_t isz = 14 + (uint64_t)idx_n * a.esz + 8 * (ndblk + nsblk) + 4;
  if (!span(r, iblock, isz, &ib) || memcmp(f + ib, "EAIB", 4) != 0 ||
      f[ib + 4] != 0 || f[ib + 5] != a.client || sl_get_le64(f + ib + 6) != rel)
    return bad(r,
               "no extensible array index block (EAIB) of this array at "
               "address %" PRIu64,
               iblock);
  a.n = r->x->grid[0];
  for (int i = 1; i < q->rank; i++) {
    uint64_t m = q->maxdims ? q->maxdims[i] : q->dims[i];
    if (m == UINT64_MAX || m < q->dims[i])
      return bad(r, "an extensible array over axis %d", i);
    a.maxgrid[i] = (m + r->x->cdims[i] - 1) / r->x->cdims[i];
    if (a.maxgrid[i] == 0 || a.n > UINT64_MAX / a.maxgrid[i])
      return bad(r, "an extensible array of more entries than addresses");
    a.n *= a.maxgrid[i];
  }
  if (a.n > 4 * r->x->nchunks + 1024) { /* valid, but mostly empty slots */
    bad(r,
        "an extensible array of %" PRIu64 " entries for %" PRIu64
        " chunks (a maximum shape far beyond the shape)",
        a.n, r->x->nchunks);
    return SL_H5C_UNSUPPORTED;
  }
  const uint8_t *dblk_addr = f + ib + 14 + (uint64_t)idx_n * a.esz;
  const uint8_t *sblk_addr = dblk_addr + 8 * ndblk;
  sl_h5c_result st = ea_entries(r, &a, f + ib + 14, 0, idx_n);
  uint64_t start = idx_n, dblk = 0;
  for (unsigned u = 0; st == SL_H5C_OK && u < nsblks && start < a.n; u++) {
    uint64_t nd = (uint64_t)1 << (u / 2);
    uint64_t nelm = ((uint64_t)1 << ((u + 1) / 2)) * dmin;
    if (u < in_iblock) {
      if (nelm > a.page_n) { /* HDF5's fixed parameters never make them */
        bad(r, "paged data blocks in an extensible array's index block");
        return SL_H5C_UNSUPPORTED;
      }
      for (uint64_t d = 0; st == SL_H5C_OK && d < nd; d++)
        st = ea_dblock(r, &a, sl_get_le64(dblk_addr + 8 * (dblk + d)),
                       start + d * nelm, nelm,
                       /* HDF5 computes these with the block's index
                        * among all the index block's, not its super
                        * block's (H5EA__lookup_elmt) */
                       start - idx_n + (dblk + d) * nelm, NULL, 0);
      dblk += nd;
    } else {
      uint64_t srel = sl_get_le64(sblk_addr + 8 * (u - in_iblock)), sb;
      uint64_t npages = nelm > a.page_n ? nelm / a.page_n : 0;
      uint64_t pis = (npages + 7) / 8; /* bytes per data block, but the
                                          bits run on across blocks */
      uint64_t ssz = 6 + 8 + a.arr_off + nd * pis + nd * 8 + 4;
      if (srel != UNDEF) {
        if (!span(r, srel, ssz, &sb) || memcmp(f + sb, "EASB", 4) != 0 ||
            f[sb + 4] != 0 || f[sb + 5] != a.client ||
            sl_get_le64(f + sb + 6) != rel ||
            get_n(f + sb + 14, (unsigned)a.arr_off) != start - idx_n)
          return bad(r,
                     "no extensible array super block (EASB) of this array "
                     "for entry %" PRIu64 " at address %" PRIu64,
                     start, srel);
        const uint8_t *init = f + sb + 14 + a.arr_off;
        const uint8_t *addr = init + nd * pis;
        for (uint64_t d = 0; st == SL_H5C_OK && d < nd; d++)
          st = ea_dblock(r, &a, sl_get_le64(addr + 8 * d), start + d * nelm,
                         nelm, start - idx_n + d * nelm, npages ? init : NULL,
                         d * npages);
      }
    }
    if (nd > (UINT64_MAX - start) / nelm)
      break; /* past any dataset's entries */
    start += nd * nelm;
  }
  return st;
}

sl_h5c_result sl_h5_chunk_index_read(const sl_h5_chunk_query *q,
                                     sl_h5_chunk_index *x, char *why,
                                     size_t cap) {
  rd r = {.q = q, .x = x, .why = why, .cap = cap};
  memset(x, 0, sizeof *x);
  if (cap)
    why[0] = '\0';
  if (q->rank < 1 || q->rank > SL_H5C_MAX_RANK || q->elem_size == 0)
    return bad(&r, "rank %d, elements of %" PRIu32 " bytes", q->rank,
               q->elem_size);
  const uint8_t *m = NULL;
  uint64_t len = 0;
  sl_h5c_result st = find_layout(&r, &m, &len);
  if (st != SL_H5C_OK)
    return st;
  unsigned nd = (unsigned)q->rank + 1, itype = 0, page_bits = 0;
  const uint8_t *ea_params = NULL;
  uint64_t dims[SL_H5C_MAX_RANK + 1], idx = UNDEF, single_size = 0;
  uint32_t single_mask = 0;
  bool single_filtered = false;
  if (len < 3)
    return bad(&r, "a data layout message of %" PRIu64 " bytes", len);
  if (m[0] != 3 && m[0] != 4) {
    x->kind = "layout message version 1 or 2 (HDF5 1.6)";
    if (m[0] != 1 && m[0] != 2)
      return bad(&r, "data layout message version %u", m[0]);
    bad(&r, "%s", x->kind);
    return SL_H5C_UNSUPPORTED;
  }
  x->layout_version = m[0];
  if (m[1] != 2)
    return bad(&r, "the data layout is of class %u, not chunked (2)", m[1]);
  if (m[0] == 3) {
    if (m[2] != nd || len < 11 + 4 * (uint64_t)nd)
      return bad(&r,
                 "a chunked layout of %u dimensions in %" PRIu64
                 " bytes for a dataset of rank %d",
                 m[2], len, q->rank);
    idx = sl_get_le64(m + 3);
    for (unsigned i = 0; i < nd; i++)
      dims[i] = sl_get_le32(m + 11 + 4 * i);
    itype = IDX_BTREE1;
    x->kind = "v1 B-tree";
  } else {
    unsigned flags = m[2], enc = len >= 5 ? m[4] : 0;
    x->layout_flags = flags;
    uint64_t p = 5;
    if (len < 5 || m[3] != nd || enc < 1 || enc > 8 ||
        len - p < (uint64_t)nd * enc + 1)
      return bad(&r,
                 "a chunked layout (version 4) of %u dimensions, %u "
                 "bytes each, in %" PRIu64 " bytes for a dataset of "
                 "rank %d",
                 len >= 4 ? m[3] : 0, enc, len, q->rank);
    for (unsigned i = 0; i < nd; i++, p += enc)
      dims[i] = get_n(m + p, enc);
    itype = m[p++];
    uint64_t extra = itype == IDX_SINGLE   ? (flags & 2 ? 12 : 0)
                     : itype == IDX_FARRAY ? 1
                     : itype == IDX_EARRAY ? 5
                     : itype == IDX_BTREE2 ? 6
                                           : 0;
    if (itype < IDX_SINGLE || itype > IDX_BTREE2)
      return bad(&r, "chunk index type %u (1 to 5 exist)", itype);
    if (len - p < extra + 8)
      return bad(&r, "a chunked layout (version 4) of %" PRIu64 " bytes", len);
    if (itype == IDX_SINGLE && (flags & 2)) {
      single_filtered = true;
      single_size = sl_get_le64(m + p);
      single_mask = sl_get_le32(m + p + 8);
    }
    if (itype == IDX_FARRAY)
      page_bits = m[p];
    if (itype == IDX_EARRAY)
      ea_params = m + p;
    idx = sl_get_le64(m + p + extra);
    x->kind = itype == IDX_SINGLE     ? "single chunk"
              : itype == IDX_IMPLICIT ? "implicit"
              : itype == IDX_FARRAY   ? "fixed array"
              : itype == IDX_EARRAY   ? "extensible array"
                                      : "version 2 B-tree";
  }
  if (dims[q->rank] != q->elem_size)
    return bad(&r,
               "the layout's element size is %" PRIu64 " bytes, the "
               "datatype's %" PRIu32,
               dims[q->rank], q->elem_size);
  x->nchunks = 1;
  x->chunk_bytes = q->elem_size;
  for (int i = 0; i < q->rank; i++) {
    if (dims[i] == 0)
      return bad(&r, "a chunk dimension of 0 (axis %d)", i);
    x->cdims[i] = dims[i];
    x->grid[i] = q->dims[i] == 0 ? 0 : (q->dims[i] - 1) / dims[i] + 1;
    if (x->grid[i] && x->nchunks > UINT64_MAX / x->grid[i])
      x->nchunks = UINT64_MAX;
    else
      x->nchunks *= x->grid[i];
    if (x->chunk_bytes > UINT32_MAX / dims[i])
      return bad(&r, "chunks of more than 4 GiB");
    x->chunk_bytes *= dims[i];
  }
  if (x->nchunks > q->max_chunks)
    return bad(&r, "a grid of %" PRIu64 " chunks (up to %" PRIu64 " read)",
               x->nchunks, q->max_chunks);
  bool first_unlimited = q->maxdims && q->maxdims[0] == UINT64_MAX;
  for (int i = 1; first_unlimited && i < q->rank; i++)
    first_unlimited = q->maxdims[i] != UINT64_MAX;
  if (itype == IDX_BTREE2 || (itype == IDX_EARRAY && !first_unlimited)) {
    bad(&r,
        "a chunk index of type %s (a dataset with %s, written with "
        "libver='latest')",
        x->kind,
        itype == IDX_BTREE2 ? "more than one unlimited axis"
                            : "an unlimited axis other than the first");
    return SL_H5C_UNSUPPORTED;
  }
  x->chunk = malloc((x->nchunks ? x->nchunks : 1) * sizeof *x->chunk);
  if (!x->chunk)
    return SL_H5C_NOMEM;
  for (uint64_t k = 0; k < x->nchunks; k++)
    x->chunk[k] = (sl_h5_chunk){.addr = SL_H5C_UNALLOCATED};
  if (idx == UNDEF || x->nchunks == 0)
    return SL_H5C_OK; /* nothing written yet */
  switch (itype) {
  case IDX_BTREE1:
    r.nodes_max = 2 * x->nchunks + 2;
    r.entries_max = q->file_size / (8 + 8 * ((uint64_t)q->rank + 1) + 8);
    return btree(&r, idx, -1);
  case IDX_SINGLE:
    if (x->nchunks != 1)
      return bad(&r, "a single-chunk index for %" PRIu64 " chunks", x->nchunks);
    return set_chunk(&r, 0, idx, single_filtered ? single_size : x->chunk_bytes,
                     single_mask);
  case IDX_IMPLICIT:
    for (uint64_t k = 0; k < x->nchunks; k++) {
      if (k > (UINT64_MAX - 1 - idx) / x->chunk_bytes)
        return bad(&r, "implicit chunk %" PRIu64 " has no address", k);
      st = set_chunk(&r, k, idx + k * x->chunk_bytes, x->chunk_bytes, 0);
      if (st != SL_H5C_OK)
        return st;
    }
    return SL_H5C_OK;
  case IDX_EARRAY:
    return earray(&r, idx, ea_params);
  default:
    return farray(&r, idx, page_bits);
  }
}
