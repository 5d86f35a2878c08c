/* A structural check of an LMDB file before liblmdb walks it.
 *
 * liblmdb trusts its file: a truncated file or a flipped byte in a page
 * header can make it read outside its map (SIGBUS, SIGSEGV). This walk reads
 * the same structures (LMDB 0.9 data format 1, 64-bit) from our own map with
 * every offset bounds-checked: both meta pages, then every branch and leaf
 * page of the main tree, each at most once, and the extent of every
 * overflow run (its header too when thorough). With a named sub-database
 * (dataset.lmdb_db), the main tree is walked for its record, then its own
 * tree the same way. Page layout (lmdb.c): 16-byte
 * header {pgno u64, pad u16, flags u16, lower u16, upper u16 | overflow page
 * count u32}, then u16 node offsets; a node is {lo u16, hi u16, flags u16,
 * ksize u16, key, data}. */
#include "formats/core/source_impl.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "formats/core/layout.h"

enum {
  PAGEHDR = 16,
  NODEHDR = 8,
  P_BRANCH = 0x01,
  P_LEAF = 0x02,
  P_OVERFLOW = 0x04,
  P_META = 0x08,
  F_BIGDATA = 0x01,
  F_SUBDATA = 0x02,
  F_DUPDATA = 0x04,
  MAX_DEPTH = 64,
};
#define MDB_MAGIC 0xBEEFC0DEu
#define MDB_DATA_VERSION 1u
#define P_INVALID UINT64_MAX

typedef struct walk {
  const uint8_t *map;
  uint64_t size;
  const char *path;
  uint32_t psize;
  uint64_t npages; /* pages the meta says are in use */
  uint8_t *seen;   /* one bit per page */
  uint64_t entries;
  uint64_t first_data; /* file offset of the smallest key's value */
  bool thorough;       /* also read every overflow page's header */
  /* Walking the main tree for the named sub-database subdb (NULL: the
   * main tree holds the samples and a sub-database is an error). */
  const char *subdb;
  bool found;
  uint16_t sub_flags;
  uint64_t sub_entries, sub_root;
  uint64_t subdbs; /* sub-database nodes seen */
} walk;

typedef struct meta {
  uint32_t psize;
  uint16_t main_flags;
  uint16_t depth;
  uint64_t entries, root, last_pg, txnid;
} meta;

static int read_meta(const uint8_t *p, uint64_t avail, meta *m);
static sl_status check_page(walk *w, uint64_t pgno, int depth, sl_err *err);

sl_status sl_lmdb_check(const uint8_t *map, uint64_t size, const char *path,
                        const char *subdb, bool thorough, uint64_t *entries,
                        uint64_t *first_data, void **held, sl_err *err) {
  meta m0, m1, m;
  if (read_meta(map, size, &m0) != 0)
    return sl_err_set(err, SL_EFORMAT,
                      "%s: LMDB meta page 0 is damaged or "
                      "of an unknown version; " SL_REPACK_HINT,
                      path);
  int ok1 = size >= 2ull * m0.psize &&
            read_meta(map + m0.psize, size - m0.psize, &m1) == 0 &&
            m1.psize == m0.psize;
  m = ok1 && m1.txnid > m0.txnid ? m1 : m0;
  uint64_t need = (m.last_pg + 1) * (uint64_t)m.psize;
  if (m.last_pg >= UINT64_MAX / m.psize || need > size)
    return sl_err_set(err, SL_EFORMAT,
                      "%s: truncated: the LMDB meta page "
                      "says %" PRIu64 " pages of %" PRIu32 " bytes but the "
                      "file has %" PRIu64 " bytes; " SL_REPACK_HINT,
                      path, m.last_pg + 1, m.psize, size);
  if (m.main_flags != 0)
    return sl_err_set(err, SL_EFORMAT,
                      "%s: main database has flags 0x%x "
                      "(sluice writes plain keys); " SL_REPACK_HINT,
                      path, m.main_flags);
  walk w = {.map = map,
            .size = size,
            .path = path,
            .psize = m.psize,
            .npages = m.last_pg + 1,
            .thorough = thorough};
  w.subdb = subdb && subdb[0] ? subdb : NULL;
  if (m.root == P_INVALID && !w.subdb) {
    *entries = 0;
    return SL_OK;
  }
  w.seen = calloc((size_t)(w.npages / 8 + 1), 1);
  if (!w.seen)
    return sl_err_set(err, SL_ENOMEM, "%s: no memory", path);
  if (held)
    *held = w.seen;
  sl_status st = m.root == P_INVALID ? SL_OK : check_page(&w, m.root, 0, err);
  if (st == SL_OK && w.entries != m.entries)
    st = sl_err_set(err, SL_EFORMAT,
                    "%s: LMDB tree holds %" PRIu64
                    " entries, its meta page says %" PRIu64 "; " SL_REPACK_HINT,
                    path, w.entries, m.entries);
  if (st == SL_OK && w.subdb && !w.found)
    st = sl_err_set(err, SL_EFORMAT,
                    "%s: no LMDB sub-database named '%s' (dataset.lmdb_db; "
                    "the file holds %" PRIu64 ")",
                    path, w.subdb, w.subdbs);
  if (st == SL_OK && w.subdb && w.sub_flags != 0)
    st = sl_err_set(err, SL_EFORMAT,
                    "%s: sub-database '%s' has flags 0x%x (duplicate or "
                    "integer keys are not read)",
                    path, w.subdb, w.sub_flags);
  if (st == SL_OK && w.subdb) { /* now the samples' own tree */
    uint64_t want = w.sub_entries;
    const char *name = w.subdb;
    w.subdb = NULL;
    w.entries = 0;
    w.first_data = 0;
    if (w.sub_root != P_INVALID)
      st = check_page(&w, w.sub_root, 0, err);
    if (st == SL_OK && w.entries != want)
      st = sl_err_set(err, SL_EFORMAT,
                      "%s: sub-database '%s' holds %" PRIu64
                      " entries, its record says %" PRIu64,
                      path, name, w.entries, want);
  }
  free(w.seen);
  if (held)
    *held = NULL;
  if (st != SL_OK)
    return st;
  *entries = w.entries;
  *first_data = w.first_data;
  return SL_OK;
}

static uint64_t le64(const uint8_t *p) {
  return sl_get_le64(p);
}

static int read_meta(const uint8_t *p, uint64_t avail, meta *m) {
  if (avail < 152 || (sl_get_le16(p + 10) & P_META) == 0 ||
      sl_get_le32(p + 16) != MDB_MAGIC ||
      sl_get_le32(p + 20) != MDB_DATA_VERSION)
    return -1;
  m->psize = sl_get_le32(p + 40); /* free DB's md_pad holds the page size */
  m->main_flags = sl_get_le16(p + 92);
  m->depth = sl_get_le16(p + 94);
  m->entries = le64(p + 120);
  m->root = le64(p + 128);
  m->last_pg = le64(p + 136);
  m->txnid = le64(p + 144);
  if (m->psize < 512 || m->psize > 65536 || (m->psize & (m->psize - 1)))
    return -1;
  return 0;
}

static sl_status bad(walk *w, uint64_t pgno, const char *what, sl_err *err) {
  return sl_err_set(err, SL_EFORMAT,
                    "%s: LMDB page %" PRIu64 " (offset %" PRIu64
                    "): %s; " SL_REPACK_HINT,
                    w->path, pgno, pgno * w->psize, what);
}

static sl_status check_overflow(walk *w, uint64_t pgno, uint64_t dsize,
                                sl_err *err) {
  if (pgno < 2 || pgno >= w->npages)
    return bad(w, pgno, "overflow page number out of range", err);
  /* The run must lie inside the file. liblmdb only computes the value's
   * address from the page number, so unless asked not to, the overflow
   * page itself is not read: a cold open then reads tree pages only. */
  uint64_t need = (PAGEHDR + dsize + w->psize - 1) / w->psize;
  if (need > w->npages - pgno)
    return bad(w, pgno, "overflow run runs past the end of the file", err);
  if (!w->thorough)
    return SL_OK;
  const uint8_t *p = w->map + pgno * w->psize;
  uint32_t pages = sl_get_le32(p + 12);
  if (le64(p) != pgno || (sl_get_le16(p + 10) & P_OVERFLOW) == 0)
    return bad(w, pgno, "not an overflow page", err);
  if (pages == 0 || pages > w->npages - pgno ||
      (uint64_t)pages * w->psize < PAGEHDR + dsize)
    return bad(w, pgno, "overflow run does not hold its value", err);
  return SL_OK;
}

static sl_status check_page(walk *w, uint64_t pgno, int depth, sl_err *err) {
  if (depth >= MAX_DEPTH)
    return bad(w, pgno, "tree deeper than 64 levels", err);
  if (pgno < 2 || pgno >= w->npages)
    return bad(w, pgno, "page number out of range", err);
  if (w->seen[pgno / 8] & (1u << (pgno % 8)))
    return bad(w, pgno, "page reached twice", err);
  w->seen[pgno / 8] |= (uint8_t)(1u << (pgno % 8));
  const uint8_t *p = w->map + pgno * w->psize;
  uint16_t flags = sl_get_le16(p + 10);
  uint32_t lower = sl_get_le16(p + 12), upper = sl_get_le16(p + 14);
  if (le64(p) != pgno)
    return bad(w, pgno, "page header names another page", err);
  bool branch = (flags & (P_BRANCH | P_LEAF)) == P_BRANCH;
  bool leaf = (flags & (P_BRANCH | P_LEAF)) == P_LEAF;
  if ((!branch && !leaf) || (flags & (P_OVERFLOW | P_META | 0x20)))
    return bad(w, pgno, "neither a branch nor a leaf page", err);
  if (lower < PAGEHDR || lower > upper || upper > w->psize ||
      (lower - PAGEHDR) % 2)
    return bad(w, pgno, "free-space bounds out of range", err);
  uint32_t nkeys = (lower - PAGEHDR) / 2;
  if (nkeys == 0)
    return bad(w, pgno, "empty page", err);
  for (uint32_t k = 0; k < nkeys; k++) {
    uint32_t off = sl_get_le16(p + PAGEHDR + 2 * k);
    if (off < upper || off + NODEHDR > w->psize)
      return bad(w, pgno, "node offset out of range", err);
    const uint8_t *n = p + off;
    uint64_t lo = sl_get_le16(n), hi = sl_get_le16(n + 2);
    uint16_t nflags = sl_get_le16(n + 4);
    uint32_t ksize = sl_get_le16(n + 6);
    uint64_t end = off + NODEHDR + (uint64_t)ksize;
    if (end > w->psize)
      return bad(w, pgno, "node key runs past the page", err);
    if (branch) {
      uint64_t child = lo | (hi << 16) | ((uint64_t)nflags << 32);
      sl_status st = check_page(w, child, depth + 1, err);
      if (st != SL_OK)
        return st;
      continue;
    }
    uint64_t dsize = lo | (hi << 16);
    if ((nflags & F_SUBDATA) && !(nflags & (F_DUPDATA | F_BIGDATA))) {
      /* A named sub-database: its 48-byte record (struct MDB_db). */
      if (!w->subdb)
        return bad(w, pgno,
                   "the main database holds named sub-databases: name "
                   "one with dataset.lmdb_db",
                   err);
      if (dsize != 48 || end + 48 > w->psize)
        return bad(w, pgno, "malformed sub-database record", err);
      const uint8_t *rec = n + NODEHDR + ksize;
      w->subdbs++;
      w->entries++;
      if (ksize == strlen(w->subdb) &&
          memcmp(n + NODEHDR, w->subdb, ksize) == 0) {
        w->found = true;
        w->sub_flags = sl_get_le16(rec + 4);
        w->sub_entries = le64(rec + 32);
        w->sub_root = le64(rec + 40);
      }
      continue;
    }
    if (nflags & (F_SUBDATA | F_DUPDATA))
      return bad(w, pgno, "duplicate values (sluice reads unique keys)", err);
    if (nflags & F_BIGDATA) {
      if (end + 8 > w->psize)
        return bad(w, pgno, "overflow reference runs past the page", err);
      uint64_t ov = le64(n + NODEHDR + ksize);
      sl_status st = check_overflow(w, ov, dsize, err);
      if (st != SL_OK)
        return st;
      if (w->entries == 0)
        w->first_data = ov * w->psize + PAGEHDR;
    } else if (end + dsize > w->psize) {
      return bad(w, pgno, "node value runs past the page", err);
    } else if (w->entries == 0) {
      w->first_data = pgno * w->psize + end;
    }
    w->entries++;
  }
  return SL_OK;
}
