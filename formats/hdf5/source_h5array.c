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
 * (formats/hdf5/h5chunk.c); chunks that cut the images (h5py's auto-chunking)
 * are read a group at a time, the chunks of one row of the first axis, and
 * copied into place (formats/hdf5/h5tiles.c). Vlen elements are located in the
 * global heap collections. Samples are read by mmap/pread like any raw sample,
 * through the RAW (HWC) or RAW_CHW(_BGR) codecs, or the image codecs. No HDF5
 * call after open.
 *
 * Filtered chunks (gzip, shuffle, lzf, blosc, fletcher32) are undone by the
 * workers (sl_source_unfilter, formats/hdf5/h5filter.c); chunks never written
 * read as the fill value.
 *
 * Refused at open, naming the dataset: other filters, groups of chunks
 * scattered over the file, width-major arrays
 * (nwhc, ncwh), 2 or 4 channels, NHWC arrays in BGR order, non-uint8
 * pixels, ranks other than 3 and 4, empty or truncated arrays.
 *
 * This file builds the sample index; the pixel array's checks are
 * formats/hdf5/h5array_images.c, its chunk table h5array_chunks.c, the labels,
 * targets and lengths h5array_labels.c, class names h5array_names.c, the
 * vlen heaps h5array_heap.c and the description h5array_describe.c. */
#include "formats/core/source_impl.h"

#include <hdf5.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/endian.h"
#include "common/map_guard.h"
#include "formats/core/image_sniff.h"
#include "formats/hdf5/h5array_chunks.h"
#include "formats/hdf5/h5array_describe.h"
#include "formats/hdf5/h5array_heap.h"
#include "formats/hdf5/h5array_images.h"
#include "formats/hdf5/h5array_labels.h"
#include "formats/hdf5/h5array_names.h"

typedef struct arrays {
  sl_h5_dset img, len; /* len: fixed-size encoded rows' lengths */
  sl_h5_labels labels; /* labels, targets, and their file */
  sl_h5_geom g;        /* the pixel array's; g.chunk_addr freed by the caller */
} arrays;

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
  sl_source_entry_from_sniff(e, off, n, &s);
  return NULL;
}

/* Sample i of a vlen dataset: its bytes located in the heap and sniffed. */
static const char *take_vlen(const sl_source *src, const sl_h5_geom *g,
                             uint64_t i, sl_h5_heap *h, sl_sample_info *e,
                             char *why, size_t cap) {
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

/* One sample's bytes in the map, read under the SIGBUS guard
 * (common/map_guard.h): a vlen element and its heap object, or a
 * fixed-size row's image header. */
typedef struct entry_call {
  const sl_source *src;
  const sl_h5_geom *g;
  uint64_t i, off;
  uint32_t n;
  bool vlen;
  sl_h5_heap *heap; /* what the heap walk allocates stays reachable */
  sl_sample_info *e;
  char *why;
  size_t cap;
  const char *bad;
} entry_call;

static void entry_read(void *ctx) {
  entry_call *c = ctx;
  c->bad = c->vlen
               ? take_vlen(c->src, c->g, c->i, c->heap, c->e, c->why, c->cap)
               : sniff_entry(c->src, c->off, c->n, c->e, c->why, c->cap);
}

/* entry_read's answer; SL_EIO in *st (and NULL) when the map faulted. */
static const char *guarded_entry(entry_call *c, sl_status *st, sl_err *err) {
  size_t at = 0;
  if (sl_guard_call(entry_read, c, c->src->map, (size_t)c->src->file_size, &at))
    return c->bad;
  *st = sl_err_set(err, SL_EIO,
                   "%s: offset %zu cannot be read (SIGBUS) while indexing "
                   "sample %" PRIu64 ": the file shrank (truncated or copied "
                   "over) since it was opened, or a disk error; it was "
                   "%" PRIu64 " bytes",
                   c->src->path, at, c->i, c->src->file_size);
  return NULL;
}

static sl_status index_arrays(sl_source *src, hid_t file, arrays *A,
                              sl_err *err) {
  sl_status st = sl_h5_find_images(src, file, &A->img, err);
  if (st == SL_OK)
    st = sl_h5_check_images(src, &A->img, file, &A->g, err);
  if (st == SL_OK && A->g.chunked)
    st = sl_h5_chunk_table(src, &A->img, file, &A->g, err);
  if (st == SL_OK)
    st = sl_h5_labels_open(src, file, &A->img, A->g.n, &A->labels, err);
  if (st != SL_OK)
    return st;
  int64_t *lens = NULL;
  if (A->g.fixed)
    st = sl_h5_read_lengths(src, file, &A->img, A->g.n, A->g.bytes, &A->len,
                            &lens, err);
  if (st == SL_OK)
    st = sl_source_alloc_index(src, A->g.n, err);
  if (st == SL_OK)
    st = sl_h5_labels_read_targets(src, &A->labels, err);
  if (st == SL_OK && A->g.chunked)
    st = sl_h5_make_filtered(src, &A->img, &A->g, err);
  sl_h5_heap heap = {0};
  heap.steps_max = src->file_size / 8 + 256 * A->g.n;
  if (st == SL_OK && A->g.n > 0 && (A->g.fixed || A->g.vlen))
    st = sl_guard_install(err);
  for (uint64_t i = 0; st == SL_OK && i < A->g.n; i++) {
    sl_sample_info *e = &src->index[i];
    char where[SL_H5_NAME_CAP + 32];
    snprintf(where, sizeof where, "%s[%" PRIu64 "]", A->img.name, i);
    int64_t lab = -1;
    const char *bad = sl_h5_label_of(src, &A->labels, i, &lab);
    if (bad) {
      char w2[SL_H5_NAME_CAP * 2 + 96];
      snprintf(w2, sizeof w2, "%s, label %s[%" PRIu64 "]", where,
               A->labels.lab.name, i);
      st = sl_source_bad_entry(src, i, w2, bad, err);
      continue;
    }
    if (A->g.fixed) {
      char fwhy[SL_H5_NAME_CAP + 200];
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
        entry_call c = {.src = src,
                        .i = i,
                        .off = A->g.addr + i * A->g.bytes,
                        .n = (uint32_t)lens[i],
                        .e = e,
                        .why = fwhy,
                        .cap = sizeof fwhy};
        fb = guarded_entry(&c, &st, err);
        if (st != SL_OK)
          break;
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
      entry_call c = {.src = src,
                      .g = &A->g,
                      .i = i,
                      .vlen = true,
                      .heap = &heap,
                      .e = e,
                      .why = vwhy,
                      .cap = sizeof vwhy};
      const char *vb = guarded_entry(&c, &st, err);
      if (st != SL_OK)
        break;
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
  sl_h5_names cls = {0};
  sl_h5_names_where where = {
      file,        A->labels.file,  src->labels_path,  A->img.d,
      A->img.name, A->labels.lab.d, A->labels.lab.name};
  if (st == SL_OK)
    st = sl_h5_class_names(src, &where, &cls, err);
  if (st == SL_OK)
    st = sl_source_set_classes(src, cls.blob ? cls.blob : "", cls.len, cls.k,
                               err);
  if (st == SL_OK) {
    sl_h5_described what = {&A->img, &A->g, &A->len, &A->labels, &cls};
    st = sl_h5_describe(src, &what, err);
  }
  free(cls.blob);
  return st;
}

sl_status sl_source_index_h5array(sl_source *src, int64_t file, sl_err *err) {
  arrays A = {.img = {.d = -1}, .len = {.d = -1}, .labels = SL_H5_LABELS_NONE};
  src->version = 0;
  sl_status st = index_arrays(src, (hid_t)file, &A, err);
  free(A.g.chunk_addr);
  free(A.g.chunk_len);
  free(A.g.chunk_mask);
  free(A.g.tile);
  free(A.g.span_addr);
  free(A.g.span_len);
  if (A.img.d >= 0)
    H5Dclose(A.img.d);
  if (A.len.d >= 0)
    H5Dclose(A.len.d);
  sl_h5_labels_close(&A.labels);
  return st;
}
