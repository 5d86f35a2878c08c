/* The chunk table of a chunked HDF5 pixel array, from the chunk index in
 * the file's bytes or, for other indexes, from HDF5
 * (formats/hdf5/h5array_chunks.h). */
#include "formats/hdf5/h5array_chunks.h"

#include <inttypes.h>
#include <stdlib.h>

#include "common/map_guard.h"
#include "formats/hdf5/h5chunk.h"

/* Chunks that hold whole samples: every axis but the first is the array's. */
static bool whole_samples(const sl_h5_dset *a, const hsize_t *cdims) {
  for (int i = 1; i < a->rank; i++)
    if (cdims[i] != a->dims[i])
      return false;
  return cdims[0] > 0;
}
/* The dataset's object header address (relative to the base address). */
static int object_addr(hid_t d, uint64_t *addr) {
#if H5_VERSION_GE(1, 12, 0)
  H5O_info1_t oi;
  if (H5Oget_info1(d, &oi) < 0)
    return -1;
#else
  H5O_info_t oi;
  if (H5Oget_info2(d, &oi, H5O_INFO_BASIC) < 0)
    return -1;
#endif
  *addr = (uint64_t)oi.addr;
  return 0;
}

/* Records chunk c: addr (absolute, or SL_H5C_UNALLOCATED: the fill value),
 * size stored bytes, filter mask. */
static sl_status take_chunk(sl_source *src, const sl_h5_dset *a, sl_h5_geom *g,
                            uint64_t c, uint64_t addr, uint64_t size,
                            uint32_t mask, sl_err *err) {
  char sh[128], cs[128];
  uint64_t want = g->pipe.chunk_bytes, grp = c / g->tiles;
  uint64_t first = grp * g->per_chunk, last = first + g->per_chunk > g->n
                                                  ? g->n - 1
                                                  : first + g->per_chunk - 1;
  uint32_t all = (uint32_t)((1u << g->pipe.n) - 1);
  if (addr == SL_H5C_UNALLOCATED) {
    g->chunk_addr[c] = 0;
    g->chunk_len[c] = 0;
    g->chunk_mask[c] = SL_H5_FILL;
    return SL_OK;
  }
  if (addr > src->file_size || size > src->file_size - addr || size == 0 ||
      ((!g->filtered || (mask & all) == all) && size != want)) {
    sl_h5_shape_text(a, sh, sizeof sh);
    sl_h5_chunk_text(a, g->cdims, cs, sizeof cs);
    return sl_err_set(
        err, SL_EFORMAT,
        "%s: dataset %s (shape %s, chunks %s): chunk %" PRIu64
        " (samples %" PRIu64 "..%" PRIu64 ") holds %" PRIu64
        " bytes at offset %" PRIu64 " (%" PRIu64 " %s, filter mask %#" PRIx32
        ", file of %" PRIu64 " bytes): truncated or damaged",
        src->path, a->name, sh, cs, c, first, last, size, addr, want,
        g->filtered ? "unfiltered" : "expected", mask, src->file_size);
  }
  g->chunk_addr[c] = addr;
  g->chunk_len[c] = (uint32_t)size;
  g->chunk_mask[c] = g->filtered ? mask & all : 0;
  if (size > g->pipe.max_stored)
    g->pipe.max_stored = size;
  return SL_OK;
}

static sl_status chunks_by_hdf5(sl_source *src, const sl_h5_dset *a,
                                sl_h5_geom *g, uint64_t nch, uint64_t ub,
                                const char *kind, sl_err *err);

/* A group's chunks are read as one span of the file, from the first to the
 * end of the last; h5py writes them back to back. A span much longer than
 * its chunks (a file written piecemeal, its chunks far apart) would read
 * what is not the array: refused, naming the group. Memory: 12 bytes per
 * chunk and 12 per group, kept. */
static sl_status group_spans(sl_source *src, const sl_h5_dset *a, sl_h5_geom *g,
                             sl_err *err) {
  uint64_t groups = sl_h5_div_up(g->n, g->per_chunk);
  uint64_t nch = groups * g->tiles;
  if (!(g->tile = malloc(nch * sizeof *g->tile)) ||
      !(g->span_addr = malloc(groups * sizeof *g->span_addr)) ||
      !(g->span_len = malloc(groups * sizeof *g->span_len)))
    return sl_err_set(err, SL_ENOMEM,
                      "%s: no memory for %" PRIu64 " chunks in %" PRIu64
                      " groups",
                      src->path, nch, groups);
  for (uint64_t j = 0; j < groups; j++) {
    uint64_t lo = UINT64_MAX, hi = 0, stored = 0;
    const uint64_t *ad = g->chunk_addr + j * g->tiles;
    for (uint64_t t = 0; t < g->tiles; t++) {
      uint64_t c = j * g->tiles + t;
      if (g->chunk_mask[c] == SL_H5_FILL)
        continue;
      lo = ad[t] < lo ? ad[t] : lo;
      hi = ad[t] + g->chunk_len[c] > hi ? ad[t] + g->chunk_len[c] : hi;
      stored += g->chunk_len[c];
    }
    g->span_addr[j] = lo == UINT64_MAX ? 0 : lo;
    g->span_len[j] = 0;
    if (lo == UINT64_MAX) { /* no chunk of the group written: fill */
      for (uint64_t t = 0; t < g->tiles; t++)
        g->tile[j * g->tiles + t] = (sl_h5_tile){0, 0, SL_H5T_FILL};
      continue;
    }
    uint64_t span = hi - lo;
    if (span > UINT32_MAX || span > 2 * stored + (1u << 20)) {
      char sh[128], cs[128];
      sl_h5_shape_text(a, sh, sizeof sh);
      sl_h5_chunk_text(a, g->cdims, cs, sizeof cs);
      return sl_err_set(
          err, SL_EFORMAT,
          "%s: dataset %s (shape %s, chunks %s): the %" PRIu64
          " chunks of samples %" PRIu64 "..%" PRIu64 " (%" PRIu64
          " bytes) are spread over %" PRIu64 " bytes of the file "
          "(offsets %" PRIu64 "..%" PRIu64 "); sluice reads a row of chunks "
          "in one span of at most 4 GiB and twice its bytes; " SL_H5_ARRAY_HINT,
          src->path, a->name, sh, cs, g->tiles, j * g->per_chunk,
          (j + 1) * g->per_chunk > g->n ? g->n - 1 : (j + 1) * g->per_chunk - 1,
          stored, span, lo, hi, a->name + 1, a->name + 1);
    }
    g->span_len[j] = (uint32_t)span;
    for (uint64_t t = 0; t < g->tiles; t++) {
      uint64_t c = j * g->tiles + t;
      bool fill = g->chunk_mask[c] == SL_H5_FILL;
      g->tile[c] = (sl_h5_tile){fill ? 0 : (uint32_t)(ad[t] - lo),
                                fill ? 0 : g->chunk_len[c], g->chunk_mask[c]};
    }
  }
  return SL_OK;
}
/* The samples of chunks never written (a row of chunks with any of its
 * chunks never written counts whole) and those chunks: each at most
 * dataset.max_fill_samples. */
static sl_status check_fill(sl_source *src, const sl_h5_dset *a,
                            const sl_h5_geom *g, uint64_t groups,
                            const char *sh, const char *cs, sl_err *err) {
  uint64_t chunks = 0, samples = 0;
  for (uint64_t j = 0; j < groups; j++) {
    uint64_t before = chunks;
    for (uint64_t t = 0; t < g->tiles; t++)
      chunks += g->chunk_mask[j * g->tiles + t] == SL_H5_FILL;
    if (chunks != before)
      samples += j == groups - 1 ? g->n - j * g->per_chunk : g->per_chunk;
  }
  if (samples <= src->max_fill && chunks <= src->max_fill)
    return SL_OK;
  return sl_err_set(
      err, SL_ETOOBIG,
      "%s: dataset %s (shape %s, chunks %s): %" PRIu64 " samples in %" PRIu64
      " chunks never written (the fill value), more than "
      "dataset.max_fill_samples = %" PRIu64 ": the shape claims more than "
      "the file holds; raise it for an array preallocated and partly written",
      src->path, a->name, sh, cs, samples, chunks, src->max_fill);
}

/* Chunk c (row-major over the chunk grid) holds part of the array's edge:
 * layout v4 may have left such chunks unfiltered. */
static bool partial_chunk(const sl_h5_dset *a, const sl_h5_geom *g,
                          uint64_t c) {
  for (int i = a->rank - 1; i >= 0; i--) {
    uint64_t grid = (a->dims[i] + g->cdims[i] - 1) / g->cdims[i];
    uint64_t at = c % grid;
    c /= grid;
    if ((at + 1) * g->cdims[i] > a->dims[i])
      return true;
  }
  return false;
}

/* sl_h5_chunk_index_read over the file's map, run under the SIGBUS guard
 * (common/map_guard.h): a file cut while it is opened is an error, not the
 * death of the process. x->chunk, once allocated, is reachable from x. */
typedef struct index_call {
  const sl_h5_chunk_query *q;
  sl_h5_chunk_index *x;
  char *why;
  size_t cap;
  sl_h5c_result r;
} index_call;

static void index_read(void *ctx) {
  index_call *c = ctx;
  c->r = sl_h5_chunk_index_read(c->q, c->x, c->why, c->cap);
}

sl_status sl_h5_chunk_table(sl_source *src, const sl_h5_dset *a, hid_t file,
                            sl_h5_geom *g, sl_err *err) {
  char sh[128], cs[128], why[256];
  sl_h5_shape_text(a, sh, sizeof sh);
  sl_h5_chunk_text(a, g->cdims, cs, sizeof cs);
  g->per_chunk = g->cdims[0];
  g->tiled = !whole_samples(a, g->cdims);
  g->tiles = 1;
  if (g->tiled) {
    uint64_t dims[SL_H5_MAX_RANK], cdims[SL_H5_MAX_RANK];
    for (int i = 0; i < a->rank; i++) {
      dims[i] = a->dims[i];
      cdims[i] = g->cdims[i];
    }
    if (sl_h5_tiling_init(&g->tiling, a->rank, dims, cdims) != 0)
      return sl_err_set(err, SL_EFORMAT,
                        "%s: dataset %s (shape %s): chunks %s overflow",
                        src->path, a->name, sh, cs);
    g->tiles = g->tiling.tiles;
  }
  uint64_t groups = sl_h5_div_up(g->n, g->per_chunk);
  if (g->tiles > UINT64_MAX / 16 / groups)
    return sl_err_set(err, SL_EFORMAT,
                      "%s: dataset %s (shape %s): chunks %s overflow",
                      src->path, a->name, sh, cs);
  uint64_t nch = groups * g->tiles;
  /* The shape, not the file, gives the samples: chunks never written are
   * legal (read as the fill value), so a small file can claim 2^32 samples
   * and size an index of 100 GB. Each chunk written holds at least a byte
   * of the file; those never written are bounded by dataset.max_fill_samples
   * (checked here before the tables are sized, by samples once the index
   * is read). */
  if (nch > src->file_size + src->max_fill)
    return sl_err_set(
        err, SL_ETOOBIG,
        "%s: dataset %s (shape %s, chunks %s): %" PRIu64 " chunks, but a "
        "file of %" PRIu64 " bytes holds at most that many written: more "
        "than dataset.max_fill_samples = %" PRIu64 " would be chunks never "
        "written (the fill value); raise it for an array preallocated and "
        "partly written",
        src->path, a->name, sh, cs, nch, src->file_size, src->max_fill);
  hsize_t ub = 0;
  hid_t fcpl = H5Fget_create_plist(file);
  herr_t ubr = fcpl >= 0 ? H5Pget_userblock(fcpl, &ub) : -1;
  if (fcpl >= 0)
    H5Pclose(fcpl);
  uint64_t ohdr = 0;
  if (ubr < 0 || object_addr(a->d, &ohdr) < 0)
    return sl_err_set(err, SL_EFORMAT,
                      "%s: dataset %s: cannot read the file's userblock "
                      "size or the dataset's header address",
                      src->path, a->name);
  if (g->per_chunk > UINT64_MAX / g->bytes)
    return sl_err_set(err, SL_EFORMAT,
                      "%s: dataset %s (shape %s): chunks %s overflow",
                      src->path, a->name, sh, cs);
  g->pipe.chunk_bytes = g->per_chunk * g->bytes;
  if (g->tiled) { /* one chunk's bytes (no overflow: tiling_init) */
    g->pipe.chunk_bytes = 1;
    for (int i = 0; i < a->rank; i++)
      g->pipe.chunk_bytes *= g->cdims[i];
  }
  if (!(g->chunk_addr = malloc((nch ? nch : 1) * sizeof *g->chunk_addr)) ||
      !(g->chunk_len = malloc((nch ? nch : 1) * sizeof *g->chunk_len)) ||
      !(g->chunk_mask = malloc((nch ? nch : 1) * sizeof *g->chunk_mask)))
    return sl_err_set(err, SL_ENOMEM,
                      "%s: no memory for %" PRIu64 " chunk offsets", src->path,
                      nch);
  uint64_t dims[SL_H5_MAX_RANK], maxdims[SL_H5_MAX_RANK];
  hsize_t hmax[SL_H5_MAX_RANK] = {0}, hcur[SL_H5_MAX_RANK];
  hid_t space = H5Dget_space(a->d);
  int mr = space >= 0 ? H5Sget_simple_extent_dims(space, hcur, hmax) : -1;
  if (space >= 0)
    H5Sclose(space);
  if (mr != a->rank)
    return sl_err_set(err, SL_EFORMAT,
                      "%s: dataset %s: its maximum shape cannot be read",
                      src->path, a->name);
  for (int i = 0; i < a->rank; i++) {
    dims[i] = a->dims[i];
    maxdims[i] = hmax[i] == H5S_UNLIMITED ? UINT64_MAX : (uint64_t)hmax[i];
  }
  sl_h5_chunk_query q = {.file = src->map,
                         .file_size = src->file_size,
                         .base = (uint64_t)ub,
                         .ohdr = ohdr,
                         .rank = a->rank,
                         .dims = dims,
                         .maxdims = maxdims,
                         .elem_size = 1,
                         .max_chunks = nch};
  sl_h5_chunk_index x = {0};
  index_call ic = {&q, &x, why, sizeof why, SL_H5C_OK};
  size_t at = 0;
  sl_status st = sl_guard_install(err);
  if (st != SL_OK)
    return st;
  if (!sl_guard_call(index_read, &ic, src->map, (size_t)src->file_size, &at)) {
    free(x.chunk); /* as far as the walk got */
    return sl_err_set(err, SL_EIO,
                      "%s: offset %zu cannot be read (SIGBUS) while reading "
                      "dataset %s's chunk index: the file shrank (truncated "
                      "or copied over) since it was opened, or a disk error; "
                      "it was %" PRIu64 " bytes",
                      src->path, at, a->name, src->file_size);
  }
  sl_h5c_result r = ic.r;
  if (r == SL_H5C_UNSUPPORTED)
    st = chunks_by_hdf5(src, a, g, nch, (uint64_t)ub, why, err);
  else if (r == SL_H5C_NOMEM)
    st = sl_err_set(err, SL_ENOMEM, "%s: no memory for %" PRIu64 " chunks",
                    src->path, nch);
  else if (r != SL_H5C_OK)
    st = sl_err_set(err, SL_EFORMAT,
                    "%s: dataset %s (shape %s, chunks %s): its chunk index "
                    "is damaged: %s",
                    src->path, a->name, sh, cs, why);
  bool same = r == SL_H5C_OK && x.nchunks == nch;
  for (int i = 0; same && i < a->rank; i++)
    same = x.cdims[i] == (uint64_t)g->cdims[i];
  if (r == SL_H5C_OK && !same)
    st = sl_err_set(err, SL_EFORMAT,
                    "%s: dataset %s (shape %s, chunks %s): its layout "
                    "message says %" PRIu64 " chunks of %" PRIu64
                    " samples: damaged",
                    src->path, a->name, sh, cs, x.nchunks, x.cdims[0]);
  /* Layout v4 may leave partial edge chunks unfiltered. */
  bool edge_raw = r == SL_H5C_OK && (x.layout_flags & 1);
  for (uint64_t c = 0; r == SL_H5C_OK && st == SL_OK && c < nch; c++) {
    const sl_h5_chunk *e = &x.chunk[c];
    uint32_t mask = edge_raw && partial_chunk(a, g, c) ? ~0u : e->mask;
    st = take_chunk(src, a, g, c, e->addr, e->size, mask, err);
  }
  free(x.chunk);
  if (st == SL_OK)
    st = check_fill(src, a, g, groups, sh, cs, err);
  if (st == SL_OK && g->tiled)
    st = group_spans(src, a, g, err);
  return st;
}

/* Chunk offsets asked of HDF5, one call per chunk (quadratic in 1.10.8, so
 * for small counts only). */
static sl_status chunks_by_hdf5(sl_source *src, const sl_h5_dset *a,
                                sl_h5_geom *g, uint64_t nch, uint64_t ub,
                                const char *kind, sl_err *err) {
  char sh[128], cs[128];
  sl_h5_shape_text(a, sh, sizeof sh);
  sl_h5_chunk_text(a, g->cdims, cs, sizeof cs);
  if (nch > SL_H5_MAX_CHUNKS)
    return sl_err_set(
        err, SL_EFORMAT,
        "%s: dataset %s (shape %s, chunks %s) has %" PRIu64
        " chunks in %s: sluice parses v1 B-trees, fixed and extensible "
        "arrays, single and implicit chunk indexes, and asks HDF5 for others "
        "only up to %u "
        "chunks (HDF5 1.10's chunk queries walk the whole index on every "
        "call); rewrite it with a fixed shape (h5py without maxshape) or "
        "with h5py's default libver, or " SL_H5_ARRAY_HINT,
        src->path, a->name, sh, cs, nch, kind, SL_H5_MAX_CHUNKS, a->name + 1,
        a->name + 1);
  unsigned maj = 0, min = 0, rel = 0;
  H5get_libversion(&maj, &min, &rel);
  bool add_ub = maj == 1 && (min < 14 || (min == 14 && rel < 4));
  for (uint64_t c = 0; c < nch; c++) {
    hsize_t coord[SL_H5_MAX_RANK] = {0};
    uint64_t rest = c; /* row-major over the chunk grid */
    for (int i = a->rank - 1; i >= 0; i--) {
      uint64_t grid = (a->dims[i] + g->cdims[i] - 1) / g->cdims[i];
      coord[i] = (rest % grid) * g->cdims[i];
      rest /= grid;
    }
    unsigned mask = 0;
    haddr_t at = HADDR_UNDEF;
    hsize_t size = 0;
    if (H5Dget_chunk_info_by_coord(a->d, coord, &mask, &at, &size) < 0)
      return sl_err_set(err, SL_EFORMAT,
                        "%s: dataset %s (shape %s, chunks %s): HDF5 cannot "
                        "locate chunk %" PRIu64 " (damaged file?)",
                        src->path, a->name, sh, cs, c);
    uint64_t off = at == HADDR_UNDEF ? SL_H5C_UNALLOCATED
                   : (uint64_t)at > UINT64_MAX - ub
                       ? UINT64_MAX - 1
                       : (uint64_t)at + (add_ub ? ub : 0);
    sl_status st = take_chunk(src, a, g, c, off, size, mask, err);
    if (st != SL_OK)
      return st;
  }
  return SL_OK;
}
sl_status sl_h5_make_filtered(sl_source *src, const sl_h5_dset *a,
                              sl_h5_geom *g, sl_err *err) {
  uint64_t groups = sl_h5_div_up(g->n, g->per_chunk);
  bool any_fill = false;
  for (uint64_t c = 0; !g->tiled && c < groups; c++)
    any_fill |= g->chunk_mask[c] == SL_H5_FILL;
  if (!g->filtered && !any_fill && !g->tiled)
    return SL_OK;
  if (!(src->h5f = calloc(1, sizeof *src->h5f)))
    return sl_err_set(err, SL_ENOMEM, "%s: no memory", src->path);
  sl_h5_filtered *f = src->h5f;
  f->pipe = g->pipe;
  f->per_chunk = g->per_chunk;
  f->sample_bytes = g->bytes;
  f->group_bytes = g->per_chunk * g->bytes;
  f->fill = g->fill;
  snprintf(f->dset, sizeof f->dset, "%s", a->name);
  if (!g->tiled) {
    f->mask = g->chunk_mask;
    g->chunk_mask = NULL;
    return SL_OK;
  }
  if (!(f->mask = malloc(groups * sizeof *f->mask)))
    return sl_err_set(err, SL_ENOMEM, "%s: no memory for %" PRIu64 " groups",
                      src->path, groups);
  for (uint64_t j = 0; j < groups; j++)
    f->mask[j] = g->span_len[j] ? 0 : SL_H5_FILL;
  f->tiled = true;
  f->tiling = g->tiling;
  f->tile = g->tile;
  g->tile = NULL;
  return SL_OK;
}
