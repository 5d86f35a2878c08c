/* Indexing HDF5 files that sluice did not write: an h5py-style uint8 pixel
 * array, (N,H,W) gray or (N,H,W,C) / (N,C,H,W), beside optional labels (N,)
 * or (N,1,...) and one-hot / multi-label / float targets (N,K); or a vlen
 * uint8 dataset of encoded images.
 *
 * At open HDF5 is asked for the datasets' types, shapes and storage; labels
 * and targets are read whole (N × K values) with H5Dread. The pixel array
 * is read in place, unfiltered: contiguous, sample i's bytes are
 * H5Dget_offset + i × H·W·C (H5Dget_offset already adds a userblock, as in
 * MATLAB v7.3 files); chunked in chunks of whole samples, each chunk's
 * offset comes from the chunk index, parsed from the file's bytes
 * (formats/h5chunk.c); chunks that cut the images (h5py's auto-chunking)
 * are read a group at a time, the chunks of one row of the first axis, and
 * copied into place (formats/h5tiles.c). Vlen elements are located in the
 * global heap collections. Samples are read by mmap/pread like any raw sample,
 * through the RAW (HWC) or RAW_CHW(_BGR) codecs, or the image codecs. No HDF5
 * call after open.
 *
 * Filtered chunks (gzip, shuffle, lzf, blosc, fletcher32) are undone by the
 * workers (sl_source_unfilter, formats/h5filter.c); chunks never written
 * read as the fill value.
 *
 * Refused at open, naming the dataset: other filters, groups of chunks
 * scattered over the file, width-major arrays
 * (nwhc, ncwh), 2 or 4 channels, NHWC arrays in BGR order, non-uint8
 * pixels, ranks other than 3 and 4, empty or truncated arrays. */
#include "formats/source_impl.h"

#include <hdf5.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/endian.h"
#include "formats/h5array_heap.h"
#include "formats/h5array_names.h"
#include "formats/h5chunk.h"
#include "formats/image_sniff.h"
#include "formats/layout.h"

enum { MAX_RANK = 8, NAME_CAP = 256 };

static const char *const k_image_names[] = {
    "images", "x", "imgs", "data", "train_set_x", "X", "image", "img", NULL};
static const char *const k_length_names[] = {"lengths", "sizes", "lens", NULL};
static const char *const k_label_names[] = {"labels", "y", "ans", "train_set_y",
                                            "label",  "Y", NULL};

/* h5repack reads a plugin filter (lzf, blosc, bitshuffle, zstd...) only
 * with its plugin on HDF5_PLUGIN_PATH; without it, it warns, exits 0 and
 * writes a copy without the array. */
#define ARRAY_HINT                                                             \
  "rewrite it contiguous and unfiltered (h5repack -l %s:CONTI -f %s:NONE "     \
  "in.h5 out.h5 with a plugin filter's plugin on HDF5_PLUGIN_PATH, else the "  \
  "copy has no array: check it with h5ls; or h5py, chunks=None), then read "   \
  "or convert it (`sluice pack --from`)"

typedef struct dset {
  hid_t d;
  char name[NAME_CAP];
  int rank;
  hsize_t dims[MAX_RANK];
} dset;

static void shape_text(const dset *a, char *buf, size_t cap) {
  size_t o = (size_t)snprintf(buf, cap, "(");
  for (int i = 0; i < a->rank && o < cap; i++)
    o += (size_t)snprintf(buf + o, cap - o, "%s%llu", i ? ", " : "",
                          (unsigned long long)a->dims[i]);
  if (o < cap)
    snprintf(buf + o, cap - o, "%s)", a->rank == 1 ? "," : "");
}

static void type_text(hid_t t, char *buf, size_t cap) {
  H5T_class_t c = H5Tget_class(t);
  size_t bits = H5Tget_size(t) * 8;
  switch (c) {
  case H5T_INTEGER:
    snprintf(buf, cap, "%s%zu", H5Tget_sign(t) == H5T_SGN_NONE ? "uint" : "int",
             bits);
    break;
  case H5T_FLOAT:
    snprintf(buf, cap, "float%zu", bits);
    break;
  case H5T_VLEN:
    snprintf(buf, cap, "variable-length");
    break;
  case H5T_STRING:
    snprintf(buf, cap, "string");
    break;
  case H5T_ENUM:
    snprintf(buf, cap, "enum (bool?)");
    break;
  case H5T_OPAQUE:
    snprintf(buf, cap, "opaque");
    break;
  case H5T_COMPOUND:
    snprintf(buf, cap, "compound");
    break;
  default:
    snprintf(buf, cap, "class %d", (int)c);
  }
}

/* Opens dataset name into a (d < 0 when it is absent: returns SL_OK so the
 * caller can try the next name; required makes absence an error). */
/* In the labels' own file (dataset.labels_path) a dataset's name is
 * prefixed by that file's path. */
static sl_status open_named_in(sl_source *src, hid_t file, const char *fpath,
                               const char *name, bool required,
                               const char *option, dset *a, sl_err *err) {
  a->d = -1;
  snprintf(a->name, sizeof a->name, "%s%s%s%s", fpath ? fpath : "",
           fpath ? ":" : "", name[0] == '/' ? "" : "/", name);
  if (H5Lexists(file, name, H5P_DEFAULT) <= 0) {
    if (!required)
      return SL_OK;
    return sl_err_set(err, SL_EFORMAT, "%s: %s = %s: no such dataset",
                      fpath ? fpath : src->path, option, a->name);
  }
  a->d = H5Dopen2(file, name, H5P_DEFAULT);
  if (a->d < 0)
    return required
               ? sl_err_set(err, SL_EFORMAT, "%s: %s (%s) is not a dataset",
                            fpath ? fpath : src->path, a->name, option)
               : SL_OK;
  hid_t s = H5Dget_space(a->d);
  int r = s >= 0 ? H5Sget_simple_extent_ndims(s) : -1;
  if (r < 0 || r > MAX_RANK ||
      (r > 0 && H5Sget_simple_extent_dims(s, a->dims, NULL) != r)) {
    if (s >= 0)
      H5Sclose(s);
    return sl_err_set(err, SL_EFORMAT,
                      "%s: dataset %s: cannot read its shape (rank %d; up to "
                      "%d read)",
                      src->path, a->name, r, MAX_RANK);
  }
  H5Sclose(s);
  a->rank = r;
  return SL_OK;
}

static sl_status open_named(sl_source *src, hid_t file, const char *name,
                            bool required, const char *option, dset *a,
                            sl_err *err) {
  return open_named_in(src, file, NULL, name, required, option, a, err);
}

/* Root-level datasets of uint8 elements and rank 3 or 4: the candidates
 * when no common name is present. */
typedef struct scan {
  int found;
  char first[NAME_CAP];
  char list[512];
} scan;

static herr_t scan_one(hid_t g, const char *name, const H5L_info_t *info,
                       void *user) {
  (void)info;
  scan *s = user;
  H5O_info_t oi;
  if (H5Oget_info_by_name(g, name, &oi, H5P_DEFAULT) < 0 ||
      oi.type != H5O_TYPE_DATASET)
    return 0;
  hid_t d = H5Dopen2(g, name, H5P_DEFAULT);
  if (d < 0)
    return 0;
  hid_t t = H5Dget_type(d), sp = H5Dget_space(d);
  int r = sp >= 0 ? H5Sget_simple_extent_ndims(sp) : -1;
  bool px = t >= 0 && H5Tget_class(t) == H5T_INTEGER && H5Tget_size(t) == 1 &&
            (r == 3 || r == 4);
  if (t >= 0)
    H5Tclose(t);
  if (sp >= 0)
    H5Sclose(sp);
  H5Dclose(d);
  if (px) {
    if (s->found++ == 0)
      snprintf(s->first, sizeof s->first, "%s", name);
    size_t o = strlen(s->list);
    if (o + strlen(name) + 4 < sizeof s->list)
      snprintf(s->list + o, sizeof s->list - o, "%s/%s", o ? ", " : "", name);
  }
  return 0;
}

static sl_status find_images(sl_source *src, hid_t file, dset *a, sl_err *err) {
  if (src->images)
    return open_named(src, file, src->images, true, "dataset.images", a, err);
  for (int i = 0; k_image_names[i]; i++) {
    sl_status st = open_named(src, file, k_image_names[i], false,
                              "dataset.images", a, err);
    if (st != SL_OK || a->d >= 0)
      return st;
  }
  scan s = {0};
  hsize_t idx = 0;
  H5Literate(file, H5_INDEX_NAME, H5_ITER_NATIVE, &idx, scan_one, &s);
  if (s.found == 1)
    return open_named(src, file, s.first, true, "dataset.images", a, err);
  if (s.found == 0)
    return sl_err_set(err, SL_EFORMAT,
                      "%s: not a sluice HDF5 file (no /samples group with a "
                      "sluice_layout attribute), and no pixel array found: "
                      "no dataset images, x, imgs, data, train_set_x, X, "
                      "image or img, nor any uint8 dataset of rank 3 or 4 at "
                      "the root; name it with dataset.images",
                      src->path);
  return sl_err_set(err, SL_EFORMAT,
                    "%s: %d uint8 datasets could be the pixel array (%s); "
                    "name one with dataset.images",
                    src->path, s.found, s.list);
}

/* The pixel array's checks; fills *addr, the axis order and the sample's
 * height, width, channels and codec. */
typedef struct geom {
  bool vlen;    /* encoded images: (N,) vlen uint8 descriptors at addr, 16
                   bytes each, into global heaps */
  bool fixed;   /* encoded images: (N, L) uint8 or (N,) opaque rows of
                   `bytes` = L bytes each from addr, padded; lengths apart */
  uint64_t ub;  /* vlen: the userblock's size */
  bool chunked; /* else contiguous at addr */
  hsize_t cdims[MAX_RANK]; /* chunked: the chunk shape */
  uint64_t *chunk_addr;    /* chunked: file offset of chunk c */
  uint32_t *chunk_len;     /* filtered: stored bytes of chunk c */
  uint32_t *chunk_mask;    /* filtered: chunk c's filter mask or SL_H5_FILL */
  bool filtered;
  sl_h5_pipeline pipe; /* filtered: the pipeline */
  uint8_t fill;        /* the fill value */
  uint64_t per_chunk;  /* chunked: samples a chunk holds */
  bool tiled;          /* chunked: a sample spans several chunks */
  sl_h5_tiling tiling; /* tiled: the shapes (formats/h5tiles.h) */
  uint64_t tiles;      /* chunks per group: tiled ? tiling.tiles : 1 */
  sl_h5_tile *tile;    /* tiled: every chunk, offset within its group */
  uint64_t *span_addr; /* tiled: group j's chunks lie in one span */
  uint32_t *span_len;  /*   of the file (0: no chunk of it written) */
  uint64_t n, addr, bytes;
  uint32_t h, w, c;
  uint8_t codec;
  sl_array_layout order;
} geom;

/* The pipeline's filters by name, for messages. */
static const char *filter_names(hid_t p, int nf, char *buf, size_t cap) {
  size_t o = 0;
  buf[0] = '\0';
  for (int i = 0; i < nf && o < cap; i++) {
    unsigned flags;
    size_t nv = 0;
    char nm[48] = "";
    H5Z_filter_t id =
        H5Pget_filter2(p, (unsigned)i, &flags, &nv, NULL, sizeof nm, nm, NULL);
    const char *known = id == H5Z_FILTER_DEFLATE       ? "gzip"
                        : id == H5Z_FILTER_SHUFFLE     ? "shuffle"
                        : id == H5Z_FILTER_FLETCHER32  ? "fletcher32"
                        : id == H5Z_FILTER_SZIP        ? "szip"
                        : id == H5Z_FILTER_NBIT        ? "nbit"
                        : id == H5Z_FILTER_SCALEOFFSET ? "scaleoffset"
                        : id == 32000                  ? "lzf"
                        : id == 32001                  ? "blosc"
                                                       : NULL;
    o += (size_t)snprintf(buf + o, cap - o, "%s%s", i ? "+" : "",
                          known   ? known
                          : nm[0] ? nm
                                  : "unknown");
  }
  return buf;
}

/* The pipeline, when sl_h5_unfilter undoes every filter of it: NULL, or the
 * name of the first it does not. */
static const char *read_pipeline(hid_t p, int nf, sl_h5_pipeline *pl,
                                 char *name, size_t cap) {
  if (nf > SL_H5F_MAX) {
    snprintf(name, cap, "a pipeline of %d filters", nf);
    return name;
  }
  pl->n = nf;
  for (int i = 0; i < nf; i++) {
    unsigned flags = 0, cd[8] = {0};
    size_t nv = 8;
    char nm[48] = "";
    H5Z_filter_t id =
        H5Pget_filter2(p, (unsigned)i, &flags, &nv, cd, sizeof nm, nm, NULL);
    if (id < 0 || !sl_h5_filter_name((uint32_t)id)) {
      char fl[128];
      snprintf(name, cap, "%s", filter_names(p, nf, fl, sizeof fl));
      return name;
    }
    pl->id[i] = (uint32_t)id;
    pl->elem[i] = id == H5Z_FILTER_SHUFFLE && nv > 0 ? cd[0] : 1;
  }
  return NULL;
}

/* Chunks that hold whole samples: every axis but the first is the array's. */
static bool whole_samples(const dset *a, const hsize_t *cdims) {
  for (int i = 1; i < a->rank; i++)
    if (cdims[i] != a->dims[i])
      return false;
  return cdims[0] > 0;
}

static const char *chunk_text(const dset *a, const hsize_t *cdims, char *buf,
                              size_t cap) {
  dset c = *a;
  memcpy(c.dims, cdims, sizeof c.dims);
  shape_text(&c, buf, cap);
  return buf;
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

/* Chunked arrays: every chunk's file offset, stored size and filter mask.
 * The chunk index is read from the file's bytes (formats/h5chunk.c: v1
 * B-trees, fixed and extensible arrays, single and implicit indexes), in
 * one pass. Other indexes (v2 B-trees: more than one unlimited axis with
 * libver='latest') are asked of HDF5 chunk by chunk, up to
 * SL_H5_MAX_CHUNKS: in HDF5 1.10.8 H5Dget_chunk_info_by_coord (like
 * H5Dget_chunk_info by index) iterates the whole chunk index on every call,
 * quadratic (measured 0.07 s for 1000 chunks, 0.48 s for 4000, 415 s for
 * 100000). HDF5 before 1.14.4 gives that address without the userblock
 * (HDF5 bug #3003): added here. Memory: 16 bytes per chunk while indexing,
 * 8 kept until the sample index is built. */
enum { SL_H5_MAX_CHUNKS = 4096 };

/* n / d rounded up, for any n (n + d - 1 would wrap near 2^64 to a count of
 * 0 rows of chunks, and a division by it). d > 0. */
static uint64_t div_up(uint64_t n, uint64_t d) {
  return n / d + (n % d != 0);
}

/* Records chunk c: addr (absolute, or SL_H5C_UNALLOCATED: the fill value),
 * size stored bytes, filter mask. */
static sl_status take_chunk(sl_source *src, const dset *a, geom *g, uint64_t c,
                            uint64_t addr, uint64_t size, uint32_t mask,
                            sl_err *err) {
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
    shape_text(a, sh, sizeof sh);
    chunk_text(a, g->cdims, cs, sizeof cs);
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

static sl_status chunks_by_hdf5(sl_source *src, const dset *a, geom *g,
                                uint64_t nch, uint64_t ub, const char *kind,
                                sl_err *err);

/* A group's chunks are read as one span of the file, from the first to the
 * end of the last; h5py writes them back to back. A span much longer than
 * its chunks (a file written piecemeal, its chunks far apart) would read
 * what is not the array: refused, naming the group. Memory: 12 bytes per
 * chunk and 12 per group, kept. */
static sl_status group_spans(sl_source *src, const dset *a, geom *g,
                             sl_err *err) {
  uint64_t groups = div_up(g->n, g->per_chunk);
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
      shape_text(a, sh, sizeof sh);
      chunk_text(a, g->cdims, cs, sizeof cs);
      return sl_err_set(
          err, SL_EFORMAT,
          "%s: dataset %s (shape %s, chunks %s): the %" PRIu64
          " chunks of samples %" PRIu64 "..%" PRIu64 " (%" PRIu64
          " bytes) are spread over %" PRIu64 " bytes of the file "
          "(offsets %" PRIu64 "..%" PRIu64 "); sluice reads a row of chunks "
          "in one span of at most 4 GiB and twice its bytes; " ARRAY_HINT,
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
static sl_status check_fill(sl_source *src, const dset *a, const geom *g,
                            uint64_t groups, const char *sh, const char *cs,
                            sl_err *err) {
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
static bool partial_chunk(const dset *a, const geom *g, uint64_t c) {
  for (int i = a->rank - 1; i >= 0; i--) {
    uint64_t grid = (a->dims[i] + g->cdims[i] - 1) / g->cdims[i];
    uint64_t at = c % grid;
    c /= grid;
    if ((at + 1) * g->cdims[i] > a->dims[i])
      return true;
  }
  return false;
}

static sl_status chunk_table(sl_source *src, const dset *a, hid_t file, geom *g,
                             sl_err *err) {
  char sh[128], cs[128], why[256];
  shape_text(a, sh, sizeof sh);
  chunk_text(a, g->cdims, cs, sizeof cs);
  g->per_chunk = g->cdims[0];
  g->tiled = !whole_samples(a, g->cdims);
  g->tiles = 1;
  if (g->tiled) {
    uint64_t dims[MAX_RANK], cdims[MAX_RANK];
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
  uint64_t groups = div_up(g->n, g->per_chunk);
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
  uint64_t dims[MAX_RANK], maxdims[MAX_RANK];
  hsize_t hmax[MAX_RANK] = {0}, hcur[MAX_RANK];
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
  sl_h5_chunk_index x;
  sl_h5c_result r = sl_h5_chunk_index_read(&q, &x, why, sizeof why);
  sl_status st = SL_OK;
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
static sl_status chunks_by_hdf5(sl_source *src, const dset *a, geom *g,
                                uint64_t nch, uint64_t ub, const char *kind,
                                sl_err *err) {
  char sh[128], cs[128];
  shape_text(a, sh, sizeof sh);
  chunk_text(a, g->cdims, cs, sizeof cs);
  if (nch > SL_H5_MAX_CHUNKS)
    return sl_err_set(
        err, SL_EFORMAT,
        "%s: dataset %s (shape %s, chunks %s) has %" PRIu64
        " chunks in %s: sluice parses v1 B-trees, fixed and extensible "
        "arrays, single and implicit chunk indexes, and asks HDF5 for others "
        "only up to %u "
        "chunks (HDF5 1.10's chunk queries walk the whole index on every "
        "call); rewrite it with a fixed shape (h5py without maxshape) or "
        "with h5py's default libver, or " ARRAY_HINT,
        src->path, a->name, sh, cs, nch, kind, SL_H5_MAX_CHUNKS, a->name + 1,
        a->name + 1);
  unsigned maj = 0, min = 0, rel = 0;
  H5get_libversion(&maj, &min, &rel);
  bool add_ub = maj == 1 && (min < 14 || (min == 14 && rel < 4));
  for (uint64_t c = 0; c < nch; c++) {
    hsize_t coord[MAX_RANK] = {0};
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

/* A vlen uint8 dataset: its N descriptors (4-byte length, 8-byte global
 * heap collection address, 4-byte object index) lie contiguous at
 * H5Dget_offset. */
static sl_status check_vlen(sl_source *src, const dset *a, hid_t file, geom *g,
                            sl_err *err) {
  char sh[128];
  shape_text(a, sh, sizeof sh);
  hid_t fcpl = H5Fget_create_plist(file);
  size_t so = 0, sl = 0;
  hsize_t ub = 0;
  if (fcpl < 0 || H5Pget_sizes(fcpl, &so, &sl) < 0 ||
      H5Pget_userblock(fcpl, &ub) < 0) {
    if (fcpl >= 0)
      H5Pclose(fcpl);
    return sl_err_set(err, SL_EFORMAT,
                      "%s: cannot read the file's creation properties",
                      src->path);
  }
  H5Pclose(fcpl);
  if (so != 8 || sl != 8)
    return sl_err_set(err, SL_EFORMAT,
                      "%s: dataset %s (vlen): file addresses of %zu bytes "
                      "and lengths of %zu (8 and 8 read)",
                      src->path, a->name, so, sl);
  g->ub = (uint64_t)ub;
  haddr_t at = H5Dget_offset(a->d);
  if (at == HADDR_UNDEF)
    return sl_err_set(err, SL_EFORMAT,
                      "%s: dataset %s (vlen, shape %s) has no storage in the "
                      "file (never written)",
                      src->path, a->name, sh);
  g->addr = (uint64_t)at;
  if (g->addr > src->file_size || g->n > (src->file_size - g->addr) / 16)
    return sl_err_set(err, SL_EFORMAT,
                      "%s: truncated: dataset %s (vlen, shape %s) needs "
                      "%" PRIu64 " descriptors of 16 bytes from offset "
                      "%" PRIu64 " but the file has %" PRIu64 " bytes",
                      src->path, a->name, sh, g->n, g->addr, src->file_size);
  return SL_OK;
}

static const char *sniff_entry(const sl_source *src, uint64_t off, uint32_t n,
                               sl_sample_info *e, char *why, size_t cap);

/* Sample i of a vlen dataset: its bytes located in the heap and sniffed. */
static const char *take_vlen(const sl_source *src, const geom *g, uint64_t i,
                             sl_h5_heap *h, sl_sample_info *e, char *why,
                             size_t cap) {
  const uint8_t *d = src->map + g->addr + i * 16;
  uint32_t n = sl_get_le32(d), k = sl_get_le32(d + 12);
  uint64_t coll = sl_get_le64(d + 4);
  if (n == 0)
    return "empty element (no bytes)";
  if (coll > UINT64_MAX - g->ub)
    return "heap address out of range";
  coll += g->ub; /* heap addresses are relative to the base address */
  uint64_t off, len;
  const char *bad = sl_h5_heap_object(src->map, src->file_size, h, coll, k,
                                      &off, &len, why, cap);
  if (bad)
    return bad;
  if (len != n) {
    snprintf(why, cap,
             "heap object %" PRIu32 " holds %" PRIu64 " bytes, the "
             "element says %" PRIu32,
             k, len, n);
    return why;
  }
  return sniff_entry(src, off, n, e, why, cap);
}

/* The n encoded bytes at file offset off as sample e: JPEG, PNG or WebP,
 * its size and channels from its header. */
static const char *sniff_entry(const sl_source *src, uint64_t off, uint32_t n,
                               sl_sample_info *e, char *why, size_t cap) {
  sl_sniff s;
  int rc = sl_sniff_image(src->map + off, n, &s);
  if (s.kind != SL_SNIFF_JPEG && s.kind != SL_SNIFF_PNG &&
      s.kind != SL_SNIFF_WEBP) {
    snprintf(why, cap, "its %" PRIu32 " bytes are %s (JPEG, PNG or WebP read)",
             n, sl_sniff_name(s.kind));
    return why;
  }
  if (rc != 0 || s.width == 0 || s.height == 0 || s.width > UINT16_MAX ||
      s.height > UINT16_MAX) {
    snprintf(why, cap, "%s image whose header is malformed or too large",
             sl_sniff_name(s.kind));
    return why;
  }
  e->offset = off;
  e->length = n;
  e->codec = s.kind == SL_SNIFF_JPEG  ? SL_LAYOUT_CODEC_JPEG
             : s.kind == SL_SNIFF_PNG ? SL_LAYOUT_CODEC_PNG
                                      : SL_LAYOUT_CODEC_WEBP;
  e->width = (uint16_t)s.width;
  e->height = (uint16_t)s.height;
  e->channels = s.channels;
  return NULL;
}

static sl_status check_images(sl_source *src, const dset *a, hid_t file,
                              geom *g, sl_err *err) {
  char why[640] = "", sh[128], ty[64], fl[128];
  shape_text(a, sh, sizeof sh);
  hid_t t = H5Dget_type(a->d), p = H5Dget_create_plist(a->d);
  if (t < 0 || p < 0) {
    snprintf(why, sizeof why, "cannot be inspected");
  } else {
    type_text(t, ty, sizeof ty);
    H5D_layout_t lay = H5Pget_layout(p);
    int nf = H5Pget_nfilters(p);
    hid_t super = H5Tget_class(t) == H5T_VLEN ? H5Tget_super(t) : -1;
    bool u8 = super >= 0 && H5Tget_class(super) == H5T_INTEGER &&
              H5Tget_size(super) == 1;
    if (super >= 0)
      H5Tclose(super);
    if (H5Tget_class(t) == H5T_VLEN && !u8)
      snprintf(why, sizeof why,
               "is a variable-length dataset of other than uint8; encoded "
               "images are read from vlen uint8 (h5py.vlen_dtype(np.uint8))");
    else if (H5Tget_class(t) == H5T_VLEN &&
             (a->rank != 1 || lay != H5D_CONTIGUOUS || nf > 0))
      snprintf(why, sizeof why,
               "is a variable-length dataset of shape %s%s%s: encoded "
               "images are read from a contiguous unfiltered (N,) dataset",
               sh, lay != H5D_CONTIGUOUS ? ", not contiguous" : "",
               nf > 0 ? ", filtered" : "");
    else if (H5Tget_class(t) == H5T_VLEN)
      g->vlen = true;
    else if ((H5Tget_class(t) == H5T_OPAQUE && a->rank == 1) ||
             (H5Tget_class(t) == H5T_INTEGER && H5Tget_size(t) == 1 &&
              H5Tget_sign(t) == H5T_SGN_NONE && a->rank == 2)) {
      g->fixed = true; /* rows of encoded bytes, padded */
      g->bytes = a->rank == 1 ? (uint64_t)H5Tget_size(t) : a->dims[1];
      if (lay != H5D_CONTIGUOUS || nf > 0)
        snprintf(why, sizeof why,
                 "has shape %s: rank %s, read as fixed-size encoded images "
                 "(rows of JPEG/PNG bytes padded to %" PRIu64 "), but it is "
                 "%s; rows are read from a contiguous unfiltered dataset "
                 "(h5repack -l %s:CONTI -f %s:NONE in.h5 out.h5)",
                 sh, a->rank == 1 ? "1 opaque" : "2", g->bytes,
                 nf > 0 ? "filtered" : "not contiguous", a->name + 1,
                 a->name + 1);
      else if (g->bytes == 0 || g->bytes > UINT32_MAX)
        snprintf(why, sizeof why,
                 "has shape %s: rows of %" PRIu64 " bytes (1 to 4 GiB read)",
                 sh, g->bytes);
    } else if (H5Tget_class(t) != H5T_INTEGER || H5Tget_size(t) != 1 ||
               H5Tget_sign(t) != H5T_SGN_NONE)
      snprintf(why, sizeof why,
               "has %s elements; sluice reads uint8 pixel arrays (convert "
               "with numpy: (x * 255).round().astype(np.uint8))",
               ty);
    else if (a->rank != 3 && a->rank != 4)
      snprintf(why, sizeof why,
               "has shape %s: rank %d; pixel arrays are (N,H,W) gray or "
               "rank 4 (N,H,W,C) / (N,C,H,W)",
               sh, a->rank);
    else if (nf > 0 && lay != H5D_CHUNKED)
      snprintf(why, sizeof why, "is filtered but not chunked");
    else if (nf > 0 && read_pipeline(p, nf, &g->pipe, fl, sizeof fl))
      snprintf(why, sizeof why,
               "is chunked and filtered with %s: sluice undoes gzip, "
               "shuffle, lzf, blosc and fletcher32 only; " ARRAY_HINT,
               fl, a->name + 1, a->name + 1);
    else if (lay == H5D_CHUNKED &&
             H5Pget_chunk(p, a->rank, g->cdims) != a->rank)
      snprintf(why, sizeof why,
               "is chunked, but its chunk shape cannot be "
               "read (damaged?)");
    else if (lay != H5D_CONTIGUOUS && lay != H5D_CHUNKED)
      snprintf(why, sizeof why, "is stored %s (not contiguous); " ARRAY_HINT,
               lay == H5D_COMPACT ? "compact" : "virtually", a->name + 1,
               a->name + 1);
  }
  if (p >= 0 && H5Pget_layout(p) == H5D_CHUNKED)
    g->chunked = true;
  if (p >= 0 && H5Pget_nfilters(p) > 0)
    g->filtered = true;
  H5D_fill_value_t fv = H5D_FILL_VALUE_UNDEFINED;
  if (!why[0] && !g->fixed && p >= 0 && H5Pfill_value_defined(p, &fv) >= 0 &&
      fv != H5D_FILL_VALUE_UNDEFINED &&
      H5Pget_fill_value(p, H5T_NATIVE_UINT8, &g->fill) < 0)
    snprintf(why, sizeof why, "has a fill value that cannot be read");
  if (t >= 0)
    H5Tclose(t);
  if (p >= 0)
    H5Pclose(p);
  if (!why[0]) {
    for (int i = 0; i < a->rank; i++)
      if (a->dims[i] == 0)
        snprintf(why, sizeof why, "is empty (shape %s)", sh);
  }
  if (why[0])
    return sl_err_set(err, SL_EFORMAT, "%s: dataset %s %s", src->path, a->name,
                      why);
  g->n = a->dims[0];
  if (g->vlen)
    return check_vlen(src, a, file, g, err);
  if (g->fixed) {
    haddr_t at = H5Dget_offset(a->d);
    if (at == HADDR_UNDEF)
      return sl_err_set(err, SL_EFORMAT,
                        "%s: dataset %s (shape %s, fixed-size encoded "
                        "images) has no storage in the file (never written)",
                        src->path, a->name, sh);
    g->addr = (uint64_t)at;
    if (g->addr > src->file_size ||
        g->n > (src->file_size - g->addr) / g->bytes)
      return sl_err_set(err, SL_EFORMAT,
                        "%s: truncated: dataset %s (shape %s) needs %" PRIu64
                        " rows of %" PRIu64 " bytes from offset %" PRIu64
                        " but the file has %" PRIu64 " bytes",
                        src->path, a->name, sh, g->n, g->bytes, g->addr,
                        src->file_size);
    return SL_OK;
  }
  sl_array_layout o = src->array_layout;
  const hsize_t *d = a->dims;
  if (a->rank == 3) {
    if (o == SL_ARRAY_NWHC || o == SL_ARRAY_NCWH)
      snprintf(why, sizeof why,
               "(shape %s): dataset.array_layout = %s: width-major arrays "
               "are not read yet (transpose with numpy and rewrite)",
               sh, o == SL_ARRAY_NWHC ? "nwhc" : "ncwh");
    o = SL_ARRAY_NHWC;
    g->h = (uint32_t)(d[1] > UINT32_MAX ? UINT32_MAX : d[1]);
    g->w = (uint32_t)(d[2] > UINT32_MAX ? UINT32_MAX : d[2]);
    g->c = 1;
  } else {
    if (o == SL_ARRAY_AUTO) {
      if (d[3] == 1 || d[3] == 3 || d[3] == 4)
        o = SL_ARRAY_NHWC;
      else if (d[1] == 1 || d[1] == 3 || d[1] == 4)
        o = SL_ARRAY_NCHW;
      else
        snprintf(why, sizeof why,
                 "has shape %s: no axis of 1, 3 or 4 channels (last or "
                 "second); set dataset.array_layout",
                 sh);
    }
    if (!why[0] && (o == SL_ARRAY_NWHC || o == SL_ARRAY_NCWH))
      snprintf(why, sizeof why,
               "(shape %s): dataset.array_layout = %s: width-major arrays "
               "are not read yet (transpose with numpy and rewrite)",
               sh, o == SL_ARRAY_NWHC ? "nwhc" : "ncwh");
    hsize_t hh = o == SL_ARRAY_NHWC ? d[1] : d[2];
    hsize_t ww = o == SL_ARRAY_NHWC ? d[2] : d[3];
    hsize_t cc = o == SL_ARRAY_NHWC ? d[3] : d[1];
    g->h = (uint32_t)(hh > UINT32_MAX ? UINT32_MAX : hh);
    g->w = (uint32_t)(ww > UINT32_MAX ? UINT32_MAX : ww);
    g->c = (uint32_t)(cc > UINT32_MAX ? UINT32_MAX : cc);
    if (!why[0] && g->c != 1 && g->c != 3)
      snprintf(why, sizeof why,
               "has shape %s, read as %s: %" PRIu32 " channels (1 or 3 "
               "read; %s)",
               sh, o == SL_ARRAY_NHWC ? "NHWC" : "NCHW", g->c,
               g->c == 4 ? "dropping a 4th channel is not done yet"
                         : "set dataset.array_layout if the axes are "
                           "other");
    if (!why[0] && o == SL_ARRAY_NHWC && g->c == 3 &&
        src->order == SL_CHANNELS_BGR)
      snprintf(why, sizeof why,
               "(shape %s, NHWC): dataset.channel_order = bgr is read for "
               "NCHW arrays only",
               sh);
  }
  if (!why[0] && (g->h > UINT16_MAX || g->w > UINT16_MAX))
    snprintf(why, sizeof why,
             "has shape %s: images of %" PRIu32 "x%" PRIu32
             " (sides up to 65535)",
             sh, g->w, g->h);
  if (why[0])
    return sl_err_set(err, SL_EFORMAT, "%s: dataset %s %s", src->path, a->name,
                      why);
  g->order = o;
  g->bytes = (uint64_t)g->h * g->w * g->c;
  if (g->bytes > UINT32_MAX)
    return sl_err_set(err, SL_EFORMAT,
                      "%s: dataset %s has shape %s: samples of %" PRIu64
                      " bytes (up to 4 GiB read)",
                      src->path, a->name, sh, g->bytes);
  g->codec = g->c == 1 || o == SL_ARRAY_NHWC ? SL_LAYOUT_CODEC_RAW
             : src->order == SL_CHANNELS_BGR ? SL_LAYOUT_CODEC_RAW_CHW_BGR
                                             : SL_LAYOUT_CODEC_RAW_CHW;
  if (g->chunked)
    return chunk_table(src, a, file, g, err);
  haddr_t at = H5Dget_offset(a->d);
  if (at == HADDR_UNDEF)
    return sl_err_set(err, SL_EFORMAT,
                      "%s: dataset %s (shape %s) has no storage in the file "
                      "(never written, or in an external file)",
                      src->path, a->name, sh);
  g->addr = (uint64_t)at;
  if (g->addr > src->file_size || g->n > (src->file_size - g->addr) / g->bytes)
    return sl_err_set(err, SL_EFORMAT,
                      "%s: truncated: dataset %s (shape %s) needs %" PRIu64
                      " samples of %" PRIu64 " bytes from offset %" PRIu64
                      " but the file has %" PRIu64 " bytes",
                      src->path, a->name, sh, g->n, g->bytes, g->addr,
                      src->file_size);
  return SL_OK;
}

/* A label or target dataset of n rows: class and K (values per row). */
static sl_status check_numeric(sl_source *src, const dset *a, uint64_t n,
                               const char *images, bool *is_float, uint64_t *k,
                               sl_err *err) {
  char sh[128], ty[64], why[200] = "";
  shape_text(a, sh, sizeof sh);
  hid_t t = H5Dget_type(a->d);
  H5T_class_t c = t >= 0 ? H5Tget_class(t) : H5T_NO_CLASS;
  if (t >= 0)
    type_text(t, ty, sizeof ty);
  else
    snprintf(ty, sizeof ty, "unknown");
  if (t >= 0)
    H5Tclose(t);
  *k = 1;
  for (int i = 1; i < a->rank; i++) {
    if (a->dims[i] != 0 && *k > UINT64_MAX / a->dims[i])
      *k = UINT64_MAX;
    else
      *k *= a->dims[i];
  }
  if (c != H5T_INTEGER && c != H5T_FLOAT && c != H5T_ENUM)
    snprintf(why, sizeof why,
             "has %s elements (integers, floats or bools "
             "read)",
             ty);
  else if (a->rank < 1 || a->dims[0] != n)
    snprintf(why, sizeof why,
             "has shape %s but %s holds %" PRIu64 " images (one row each "
             "expected)",
             sh, images, n);
  else if (*k == 0 || *k > SL_TARGETS_MAX)
    snprintf(why, sizeof why,
             "has shape %s: %" PRIu64 " values per row (1 to %u read)", sh, *k,
             SL_TARGETS_MAX);
  if (why[0])
    return sl_err_set(err, SL_EFORMAT, "%s: dataset %s %s", src->path, a->name,
                      why);
  *is_float = c == H5T_FLOAT;
  return SL_OK;
}

static sl_status read_all(sl_source *src, const dset *a, hid_t memtype,
                          void *buf, sl_err *err) {
  if (H5Dread(a->d, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0)
    return sl_err_set(err, SL_EFORMAT,
                      "%s: dataset %s cannot be read (truncated or damaged "
                      "file?)",
                      src->path, a->name);
  return SL_OK;
}

/* Filtered chunks, chunks never written, or samples that span chunks: the
 * workers undo the filters, write the fill value and copy chunks into
 * place (sl_source_unfilter). Takes g->chunk_mask (tiled: g->tile, and a
 * mask per group made here). */
static sl_status make_filtered(sl_source *src, const dset *a, geom *g,
                               sl_err *err) {
  uint64_t groups = div_up(g->n, g->per_chunk);
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

static const char *filters_text(const sl_h5_pipeline *p, char *buf,
                                size_t cap) {
  size_t o = (size_t)snprintf(buf, cap, "chunked, filters ");
  for (int i = 0; i < p->n && o < cap; i++)
    o += (size_t)snprintf(buf + o, cap - o, "%s%s", i ? "+" : "",
                          sl_h5_filter_name(p->id[i]));
  if (o < cap)
    snprintf(buf + o, cap - o, " (undone by the workers), samples per chunk");
  return buf;
}

typedef struct arrays {
  hid_t lfile;             /* dataset.labels_path's file (-1: none) */
  dset img, lab, tgt, len; /* len: fixed-size encoded rows' lengths */
  geom g; /* the pixel array's; g.chunk_addr freed by the caller */
} arrays;

/* Fixed-size encoded images: the (N,) integer lengths (dataset.lengths,
 * else the first of lengths, sizes, lens), read whole into *out (N int64,
 * the caller frees). */
static sl_status read_lengths(sl_source *src, hid_t file, arrays *A,
                              int64_t **out, sl_err *err) {
  char sh[128];
  shape_text(&A->img, sh, sizeof sh);
  sl_status st = SL_OK;
  if (src->lengths_name)
    st = open_named(src, file, src->lengths_name, true, "dataset.lengths",
                    &A->len, err);
  for (int i = 0;
       !src->lengths_name && st == SL_OK && A->len.d < 0 && k_length_names[i];
       i++)
    st = open_named(src, file, k_length_names[i], false, "dataset.lengths",
                    &A->len, err);
  if (st != SL_OK)
    return st;
  if (A->len.d < 0)
    return sl_err_set(err, SL_EFORMAT,
                      "%s: dataset %s has shape %s: rank %s, read as "
                      "fixed-size encoded images (rows of JPEG/PNG bytes "
                      "padded to %" PRIu64 "), but no dataset gives each "
                      "row's length (lengths, sizes or lens; name it with "
                      "dataset.lengths)",
                      src->path, A->img.name, sh,
                      A->img.rank == 1 ? "1 opaque" : "2", A->g.bytes);
  bool fl = false;
  uint64_t k = 0;
  st = check_numeric(src, &A->len, A->g.n, A->img.name, &fl, &k, err);
  if (st == SL_OK && (fl || k != 1))
    st = sl_err_set(err, SL_EFORMAT,
                    "%s: dataset %s (the lengths of %s's rows) has %s; one "
                    "integer a row read",
                    src->path, A->len.name, A->img.name,
                    fl ? "float values" : "more than one value a row");
  if (st != SL_OK)
    return st;
  if (!(*out = malloc(A->g.n * sizeof **out)))
    return sl_err_set(err, SL_ENOMEM, "%s: no memory for %" PRIu64 " lengths",
                      src->path, A->g.n);
  return read_all(src, &A->len, H5T_NATIVE_INT64, *out, err);
}

static sl_status index_arrays(sl_source *src, hid_t file, arrays *A,
                              sl_err *err) {
  sl_status st = find_images(src, file, &A->img, err);
  if (st == SL_OK)
    st = check_images(src, &A->img, file, &A->g, err);
  if (st != SL_OK)
    return st;
  /* Labels: named, else the first common name that is not the images; in
   * dataset.labels_path's file when set. */
  hid_t lf = file;
  const char *lp = src->labels_path;
  if (lp) {
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl >= 0 && H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG) >= 0)
      lf = A->lfile = H5Fopen(lp, H5F_ACC_RDONLY, fapl);
    else
      lf = -1;
    if (fapl >= 0)
      H5Pclose(fapl);
    if (lf < 0)
      return sl_err_set(err, SL_EFORMAT,
                        "%s: dataset.labels_path = %s: HDF5 cannot open it "
                        "(missing, not HDF5, or damaged)",
                        src->path, lp);
  }
  if (src->labels)
    st = open_named_in(src, lf, lp, src->labels, true, "dataset.labels",
                       &A->lab, err);
  for (int i = 0;
       !src->labels && st == SL_OK && A->lab.d < 0 && k_label_names[i]; i++) {
    st = open_named_in(src, lf, lp, k_label_names[i], false, "dataset.labels",
                       &A->lab, err);
    if (st == SL_OK && A->lab.d >= 0 && strcmp(A->lab.name, A->img.name) == 0) {
      H5Dclose(A->lab.d);
      A->lab.d = -1;
    }
  }
  if (st == SL_OK && src->targets_name)
    st = open_named_in(src, lf, lp, src->targets_name, true, "dataset.targets",
                       &A->tgt, err);
  if (st == SL_OK && lp && A->lab.d < 0 && A->tgt.d < 0)
    st = sl_err_set(err, SL_EFORMAT,
                    "%s: dataset.labels_path = %s holds no labels (y, "
                    "labels, ...; name them with dataset.labels)",
                    src->path, lp);
  if (st != SL_OK)
    return st;
  bool lab_float = false, tgt_float = false;
  uint64_t lk = 0, tk = 0;
  if (A->lab.d >= 0)
    st = check_numeric(src, &A->lab, A->g.n, A->img.name, &lab_float, &lk, err);
  if (st == SL_OK && A->tgt.d >= 0)
    st = check_numeric(src, &A->tgt, A->g.n, A->img.name, &tgt_float, &tk, err);
  if (st != SL_OK)
    return st;
  /* Labels with K > 1 values a row (one-hot, multi-label) are targets. */
  bool lab_targets = A->lab.d >= 0 && lk > 1;
  if (lab_targets && A->tgt.d >= 0)
    return sl_err_set(err, SL_EFORMAT,
                      "%s: dataset %s has %" PRIu64 " values per row (read "
                      "as targets) and dataset.targets names %s as well; "
                      "name (N,) integer labels with dataset.labels",
                      src->path, A->lab.name, lk, A->tgt.name);
  const dset *T = lab_targets ? &A->lab : A->tgt.d >= 0 ? &A->tgt : NULL;
  src->target_width = T ? (uint32_t)(lab_targets ? lk : tk) : 0;
  bool argmax = src->label_argmax;
  if (argmax && (!T || (A->lab.d >= 0 && !lab_targets)))
    return sl_err_set(err, SL_ECONFIG,
                      "%s: dataset.label_from = argmax labels each row of an "
                      "(N,K) dataset, but %s%s",
                      src->path, A->lab.d >= 0 ? A->lab.name : "",
                      A->lab.d >= 0 ? " has one value a row (read as labels)"
                                    : "there is no (N,K) labels dataset");
  int64_t *labels = NULL;
  double *dl = NULL;
  if (A->lab.d >= 0 && !lab_targets) {
    if (!(labels = malloc(A->g.n * sizeof *labels)) ||
        (lab_float && !(dl = malloc(A->g.n * sizeof *dl)))) {
      free(labels);
      return sl_err_set(err, SL_ENOMEM, "%s: no memory for %" PRIu64 " labels",
                        src->path, A->g.n);
    }
    st = lab_float ? read_all(src, &A->lab, H5T_NATIVE_DOUBLE, dl, err)
                   : read_all(src, &A->lab, H5T_NATIVE_INT64, labels, err);
  }
  int64_t *lens = NULL;
  if (st == SL_OK && A->g.fixed)
    st = read_lengths(src, file, A, &lens, err);
  if (st == SL_OK)
    st = sl_source_alloc_index(src, A->g.n, err);
  if (st == SL_OK && T)
    st = read_all(src, T, H5T_NATIVE_FLOAT, src->targets, err);
  if (st == SL_OK && A->g.chunked)
    st = make_filtered(src, &A->img, &A->g, err);
  sl_h5_heap heap = {0};
  heap.steps_max = src->file_size / 8 + 256 * A->g.n;
  for (uint64_t i = 0; st == SL_OK && i < A->g.n; i++) {
    sl_sample_info *e = &src->index[i];
    char where[NAME_CAP + 32];
    snprintf(where, sizeof where, "%s[%" PRIu64 "]", A->img.name, i);
    int64_t lab = -1;
    const char *bad = NULL;
    if (dl) {
      if (!(dl[i] >= -1.0 && dl[i] <= (double)INT32_MAX) ||
          dl[i] != floor(dl[i]))
        bad = "its label is not an integer in [-1, 2^31)";
      else
        lab = (int64_t)dl[i];
    } else if (labels) {
      if (labels[i] < -1 || labels[i] > INT32_MAX)
        bad = "its label is outside [-1, 2^31)";
      else
        lab = labels[i];
    } else if (argmax) { /* the first largest value, if above 0 */
      const float *row = src->targets + i * src->target_width;
      float best = 0.0f;
      for (uint32_t k = 0; k < src->target_width; k++)
        if (row[k] > best) {
          best = row[k];
          lab = k;
        }
    }
    if (bad) {
      char w2[NAME_CAP * 2 + 96];
      snprintf(w2, sizeof w2, "%s, label %s[%" PRIu64 "]", where, A->lab.name,
               i);
      st = sl_source_bad_entry(src, i, w2, bad, err);
      continue;
    }
    if (A->g.fixed) {
      char fwhy[NAME_CAP + 200];
      const char *fb = NULL;
      if (lens[i] <= 0 || (uint64_t)lens[i] > A->g.bytes) {
        if (lens[i] <= 0)
          snprintf(fwhy, sizeof fwhy,
                   "its length %s[%" PRIu64 "] = %" PRId64 " is not above 0",
                   A->len.name, i, lens[i]);
        else
          snprintf(fwhy, sizeof fwhy,
                   "its length %s[%" PRIu64 "] = %" PRId64 " is past the end "
                   "of its row of %" PRIu64 " bytes",
                   A->len.name, i, lens[i], A->g.bytes);
        fb = fwhy;
      } else {
        fb = sniff_entry(src, A->g.addr + i * A->g.bytes, (uint32_t)lens[i], e,
                         fwhy, sizeof fwhy);
      }
      if (fb) {
        st = sl_source_bad_entry(src, i, where, fb, err);
        continue;
      }
      e->label = (int32_t)lab;
      st = sl_source_check_entry(src, i, where, err);
      continue;
    }
    if (A->g.vlen) {
      char vwhy[300];
      const char *vb = take_vlen(src, &A->g, i, &heap, e, vwhy, sizeof vwhy);
      if (vb) {
        st = sl_source_bad_entry(src, i, where, vb, err);
        continue;
      }
      e->label = (int32_t)lab;
      st = sl_source_check_entry(src, i, where, err);
      continue;
    }
    uint64_t c = A->g.chunked ? i / A->g.per_chunk : 0;
    bool fill = src->h5f && src->h5f->mask[c] == SL_H5_FILL;
    bool whole = src->h5f && src->h5f->pipe.n > 0;
    e->offset = fill         ? 0 /* one byte read, the fill value written */
                : A->g.tiled ? A->g.span_addr[c]
                : whole      ? A->g.chunk_addr[c]
                : A->g.chunked
                    ? A->g.chunk_addr[c] + (i % A->g.per_chunk) * A->g.bytes
                    : A->g.addr + i * A->g.bytes;
    e->length = fill         ? 1
                : A->g.tiled ? A->g.span_len[c]
                : whole      ? A->g.chunk_len[c]
                             : (uint32_t)A->g.bytes;
    e->label = (int32_t)lab;
    e->height = (uint16_t)A->g.h;
    e->width = (uint16_t)A->g.w;
    e->channels = (uint8_t)A->g.c;
    e->codec = A->g.codec;
    st = sl_source_check_entry(src, i, where, err);
  }
  sl_h5_heap_free(&heap);
  src->heap_steps = heap.steps;
  free(lens);
  if (src->h5f && src->max_length < A->g.bytes)
    src->max_length = (uint32_t)A->g.bytes; /* what sl_dataset_read gives */
  free(labels);
  free(dl);
  sl_h5_names cls = {0};
  sl_h5_names_where where = {file,        A->lfile, src->labels_path, A->img.d,
                             A->img.name, A->lab.d, A->lab.name};
  if (st == SL_OK)
    st = sl_h5_class_names(src, &where, &cls, err);
  if (st == SL_OK)
    st = sl_source_set_classes(src, cls.blob ? cls.blob : "", cls.len, cls.k,
                               err);
  free(cls.blob);
  if (st != SL_OK)
    return st;
  char sh[128], desc[1024], ftext[160];
  shape_text(&A->img, sh, sizeof sh);
  size_t o = 0;
  if (A->g.fixed)
    o = (size_t)snprintf(desc, sizeof desc,
                         "images %s %s %s: fixed-size encoded image bytes, "
                         "rows of %" PRIu64 " bytes padded, contiguous at "
                         "offset %" PRIu64 ", lengths %s",
                         A->img.name, sh,
                         A->img.rank == 1 ? "opaque (uint8 bytes)" : "uint8",
                         A->g.bytes, A->g.addr, A->len.name);
  else if (A->g.vlen)
    o = (size_t)snprintf(desc, sizeof desc,
                         "images %s %s vlen uint8: encoded image bytes in "
                         "global heap collections, descriptors at offset "
                         "%" PRIu64,
                         A->img.name, sh, A->g.addr);
  else
    o = (size_t)snprintf(
        desc, sizeof desc, "images %s %s uint8, %s%s, %s %" PRIu64, A->img.name,
        sh,
        A->img.rank == 3              ? "NHW (gray)"
        : A->g.order == SL_ARRAY_NHWC ? "NHWC"
                                      : "NCHW",
        A->g.c == 3
            ? (A->g.codec == SL_LAYOUT_CODEC_RAW_CHW_BGR ? " BGR" : " RGB")
            : "",
        !A->g.chunked   ? "contiguous at offset"
        : A->g.filtered ? filters_text(&A->g.pipe, ftext, sizeof ftext)
                        : "chunked unfiltered, samples per chunk",
        A->g.chunked ? A->g.per_chunk : A->g.addr);
  if (A->g.tiled && o < sizeof desc) {
    char cs[128];
    chunk_text(&A->img, A->g.cdims, cs, sizeof cs);
    o += (size_t)snprintf(desc + o, sizeof desc - o,
                          "; chunks %s: each image spans %" PRIu64
                          " chunks, read a row of chunks (%" PRIu64
                          " images) at a time",
                          cs, A->g.tiles, A->g.per_chunk);
  }
  if (A->lab.d >= 0 && o < sizeof desc) {
    shape_text(&A->lab, sh, sizeof sh);
    o += (size_t)snprintf(desc + o, sizeof desc - o, "; %s %s %s",
                          lab_targets ? "targets" : "labels", A->lab.name, sh);
  }
  if (A->tgt.d >= 0 && o < sizeof desc) {
    shape_text(&A->tgt, sh, sizeof sh);
    o += (size_t)snprintf(desc + o, sizeof desc - o, "; targets %s %s",
                          A->tgt.name, sh);
  }
  if (A->lab.d < 0 && o < sizeof desc)
    o += (size_t)snprintf(desc + o, sizeof desc - o, "; no labels (-1)");
  if (cls.k && o < sizeof desc)
    o += (size_t)snprintf(desc + o, sizeof desc - o,
                          "; %" PRIu32 " class names from %s", cls.k, cls.from);
  if (src->h5f && src->h5f->tiled && o < sizeof desc) {
    /* Every sample read undoes its whole row of chunks: only a cached
     * row serves its other images. */
    char whole[96];
    size_t wo = (size_t)snprintf(whole, sizeof whole, "1");
    for (int i = 1; i < A->img.rank && wo < sizeof whole; i++)
      wo += (size_t)snprintf(whole + wo, sizeof whole - wo, "x%llu",
                             (unsigned long long)A->img.dims[i]);
    snprintf(desc + o, sizeof desc - o,
             "; advice: reading one image undoes its row of %" PRIu64
             " chunks (%" PRIu64 " images, %" PRIu64
             " bytes); keep loader.order = quasi_random and "
             "dataset.chunk_cache of at least %" PRIu64
             " bytes (two rows) so each row is undone about once an epoch, "
             "or rechunk to whole images (h5repack -l %s:CHUNK=%s)",
             A->g.tiles, A->g.per_chunk, src->h5f->group_bytes,
             2 * src->h5f->group_bytes, A->img.name + 1, whole);
  } else if (src->h5f && src->h5f->pipe.n > 0 && A->g.per_chunk > 1 &&
             o < sizeof desc) {
    /* Cache advice: each chunk decompressed once needs all chunks cached
     * (the order does not walk chunks). */
    uint64_t nch = div_up(A->g.n, A->g.per_chunk);
    snprintf(desc + o, sizeof desc - o,
             "; advice: %" PRIu64 " samples a compressed chunk of %" PRIu64
             " bytes: each chunk is decompressed once while it stays in "
             "dataset.chunk_cache; %" PRIu64 " bytes cache them all",
             A->g.per_chunk, A->g.pipe.chunk_bytes,
             nch * A->g.pipe.chunk_bytes);
  }
  if (!(src->desc = strdup(desc)))
    return sl_err_set(err, SL_ENOMEM, "%s: no memory", src->path);
  return SL_OK;
}

sl_status sl_source_index_h5array(sl_source *src, int64_t file, sl_err *err) {
  arrays A = {.lfile = -1,
              .img = {.d = -1},
              .lab = {.d = -1},
              .tgt = {.d = -1},
              .len = {.d = -1}};
  src->version = 0;
  sl_status st = index_arrays(src, (hid_t)file, &A, err);
  free(A.g.chunk_addr);
  free(A.g.chunk_len);
  free(A.g.chunk_mask);
  free(A.g.tile);
  free(A.g.span_addr);
  free(A.g.span_len);
  hid_t ids[] = {A.img.d, A.lab.d, A.tgt.d, A.len.d};
  for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
    if (ids[i] >= 0)
      H5Dclose(ids[i]);
  if (A.lfile >= 0)
    H5Fclose(A.lfile);
  return st;
}
