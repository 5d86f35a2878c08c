/* Indexing an HDF5 file (layout in formats/layout.h).
 *
 * At open, HDF5 is asked for the datasets' shapes and types, the metadata
 * arrays are read in blocks of BLOCK samples (so open needs BLOCK * 31 bytes
 * of scratch beyond the index), and /samples/data's file address comes from
 * H5Dget_offset. The file is closed before open returns: reads never call
 * HDF5. Every HDF5 call runs with its error printing turned off; failures
 * become messages. */
#include "formats/source_impl.h"

#include <hdf5.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/boxes.h"
#include "formats/format.h"
#include "formats/hdf5_lock.h"
#include "formats/layout.h"

enum { BLOCK = 65536 };

typedef struct h5 {
  hid_t file, group;
  hid_t data, offsets, label, shape, codec, name_length, targets;
  hid_t box_count, boxes, box_label, box_flags; /* layout 4 */
} h5;

static sl_status index_open(sl_source *src, h5 *f, sl_err *err);
static sl_status read_attrs(sl_source *src, h5 *f, uint64_t *count,
                            sl_err *err);
static sl_status fill_index(sl_source *src, h5 *f, uint64_t n,
                            uint64_t data_addr, uint64_t data_size,
                            sl_err *err);
static sl_status read_boxes(sl_source *src, h5 *f, uint64_t n, sl_err *err);

static void h5_close_all(h5 *f) {
  hid_t *ids[] = {&f->data,  &f->offsets,     &f->label,    &f->shape,
                  &f->codec, &f->name_length, &f->targets,  &f->box_count,
                  &f->boxes, &f->box_label,   &f->box_flags};
  for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
    if (*ids[i] >= 0)
      H5Dclose(*ids[i]);
  if (f->group >= 0)
    H5Gclose(f->group);
  if (f->file >= 0)
    H5Fclose(f->file);
}

static sl_status index_hdf5(sl_source *src, sl_err *err) {
  h5 f = {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1};
  sl_status st = SL_OK;
  sl_hdf5_lock();
  H5E_BEGIN_TRY {
    st = index_open(src, &f, err);
    h5_close_all(&f);
  }
  H5E_END_TRY;
  /* HDF5 keeps a failed call's error records until its next call: drop
   * them, so a failed open leaves nothing behind in the host process. */
  H5Eclear2(H5E_DEFAULT);
  sl_hdf5_unlock();
  return st;
}

/* Opens dataset name, which must be contiguous, unfiltered, of integer class
 * with elements of `size` bytes (signed or not as `sign`; H5T_SGN_ERROR:
 * IEEE floats instead), and of rank `rank` with dims[0] == n0 (n0 = 0: any)
 * and, for rank 2, dims[1] == d1. */
static sl_status open_dset(sl_source *src, h5 *f, const char *name, size_t size,
                           H5T_sign_t sign, int rank, uint64_t n0, uint64_t d1,
                           hid_t *out, uint64_t *len, sl_err *err) {
  if (H5Lexists(f->group, name, H5P_DEFAULT) <= 0)
    return sl_err_set(err, SL_EFORMAT,
                      "%s: dataset %s/%s is missing; " SL_REPACK_HINT,
                      src->path, SL_HDF5_GROUP, name);
  hid_t d = H5Dopen2(f->group, name, H5P_DEFAULT);
  if (d < 0)
    return sl_err_set(err, SL_EFORMAT,
                      "%s: %s/%s is not a dataset; " SL_REPACK_HINT, src->path,
                      SL_HDF5_GROUP, name);
  *out = d;
  const char *why = NULL;
  hid_t plist = H5Dget_create_plist(d), type = H5Dget_type(d),
        space = H5Dget_space(d);
  hsize_t dims[2] = {0, 0};
  char buf[128];
  if (plist < 0 || type < 0 || space < 0) {
    why = "cannot be inspected";
  } else if (H5Pget_layout(plist) != H5D_CONTIGUOUS) {
    why = H5Pget_layout(plist) == H5D_CHUNKED ? "is chunked (sluice maps "
                                                "contiguous datasets only)"
                                              : "is not contiguous";
  } else if (H5Pget_nfilters(plist) != 0) {
    why = "is filtered or compressed";
  } else if (H5Tget_class(type) !=
                 (sign == H5T_SGN_ERROR ? H5T_FLOAT : H5T_INTEGER) ||
             H5Tget_size(type) != size ||
             (sign != H5T_SGN_ERROR && H5Tget_sign(type) != sign) ||
             (size > 1 && H5Tget_order(type) != H5T_ORDER_LE)) {
    snprintf(buf, sizeof buf,
             "has the wrong type (expected %s%zu-bit "
             "little-endian %s)",
             sign == H5T_SGN_ERROR  ? ""
             : sign == H5T_SGN_NONE ? "unsigned "
                                    : "signed ",
             size * 8, sign == H5T_SGN_ERROR ? "floats" : "integers");
    why = buf;
  } else if (H5Sget_simple_extent_ndims(space) != rank ||
             H5Sget_simple_extent_dims(space, dims, NULL) != rank) {
    snprintf(buf, sizeof buf, "has rank %d (expected %d)",
             H5Sget_simple_extent_ndims(space), rank);
    why = buf;
  } else if ((n0 && dims[0] != n0) || (rank == 2 && dims[1] != d1)) {
    snprintf(buf, sizeof buf, "has %llu rows (expected %" PRIu64 ")",
             (unsigned long long)dims[0], n0);
    why = buf;
  }
  if (plist >= 0)
    H5Pclose(plist);
  if (type >= 0)
    H5Tclose(type);
  if (space >= 0)
    H5Sclose(space);
  if (why)
    return sl_err_set(err, SL_EFORMAT,
                      "%s: dataset %s/%s %s; " SL_REPACK_HINT
                      " to get a file sluice can read",
                      src->path, SL_HDF5_GROUP, name, why);
  *len = dims[0];
  return SL_OK;
}

static sl_status index_open(sl_source *src, h5 *f, sl_err *err) {
  /* Closing the file closes whatever is still open in it, so a failure
   * half-way leaves nothing behind in the HDF5 library. */
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  if (fapl < 0 || H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG) < 0) {
    if (fapl >= 0)
      H5Pclose(fapl);
    return sl_err_set(err, SL_ENOMEM, "%s: HDF5 property list", src->path);
  }
  f->file = H5Fopen(src->path, H5F_ACC_RDONLY, fapl);
  H5Pclose(fapl);
  if (f->file < 0)
    return sl_err_set(err, SL_EFORMAT,
                      "%s: HDF5 cannot open the file "
                      "(truncated or damaged?); " SL_REPACK_HINT,
                      src->path);
  /* sluice's own layout: /samples with its sluice_layout attribute; any
   * other file is read as an h5py-style pixel array. */
  bool own = H5Lexists(f->file, SL_HDF5_GROUP, H5P_DEFAULT) > 0 &&
             H5Aexists_by_name(f->file, SL_HDF5_GROUP, "sluice_layout",
                               H5P_DEFAULT) > 0;
  if (src->entry_layout == SL_ENTRIES_ARRAY ||
      (src->entry_layout == SL_ENTRIES_AUTO && !own)) {
    src->entry_layout = SL_ENTRIES_ARRAY;
    return sl_source_index_h5array(src, (int64_t)f->file, err);
  }
  src->entry_layout = SL_ENTRIES_SLUICE;
  if (src->images || src->labels || src->targets_name || src->labels_path ||
      src->lengths_name || src->label_argmax)
    return sl_err_set(err, SL_ECONFIG,
                      "%s: dataset.images/labels/targets/labels_path/lengths/"
                      "label_from are for HDF5 "
                      "array files; this one is in sluice's layout",
                      src->path);
  if (H5Lexists(f->file, SL_HDF5_GROUP, H5P_DEFAULT) <= 0 ||
      (f->group = H5Gopen2(f->file, SL_HDF5_GROUP, H5P_DEFAULT)) < 0)
    return sl_err_set(err, SL_EFORMAT,
                      "%s: no group %s; not a sluice HDF5 "
                      "file? " SL_REPACK_HINT,
                      src->path, SL_HDF5_GROUP);
  uint64_t n = 0, total = 0, len = 0;
  sl_status st = read_attrs(src, f, &n, err);
  if (st == SL_OK)
    st = open_dset(src, f, "data", 1, H5T_SGN_NONE, 1, 0, 0, &f->data, &total,
                   err);
  if (st == SL_OK)
    st = open_dset(src, f, "offsets", 8, H5T_SGN_NONE, 1, n + 1, 0, &f->offsets,
                   &len, err);
  if (st == SL_OK)
    st =
        open_dset(src, f, "label", 8, H5T_SGN_2, 1, n, 0, &f->label, &len, err);
  if (st == SL_OK)
    st = open_dset(src, f, "shape", 4, H5T_SGN_NONE, 2, n, 3, &f->shape, &len,
                   err);
  if (st == SL_OK)
    st = open_dset(src, f, "codec", 1, H5T_SGN_NONE, 1, n, 0, &f->codec, &len,
                   err);
  if (st == SL_OK && src->version >= 2)
    st = open_dset(src, f, "name_length", 2, H5T_SGN_NONE, 1, n, 0,
                   &f->name_length, &len, err);
  if (st == SL_OK && src->target_width > 0)
    st = open_dset(src, f, "targets", 4, H5T_SGN_ERROR, 2, n, src->target_width,
                   &f->targets, &len, err);
  if (st != SL_OK)
    return st;
  uint64_t addr = 0;
  if (total > 0) {
    haddr_t a = H5Dget_offset(f->data);
    if (a == HADDR_UNDEF)
      return sl_err_set(err, SL_EFORMAT,
                        "%s: %s/data has no storage in the "
                        "file; " SL_REPACK_HINT,
                        src->path, SL_HDF5_GROUP);
    addr = (uint64_t)a;
    if (addr > src->file_size || total > src->file_size - addr)
      return sl_err_set(err, SL_EFORMAT,
                        "%s: truncated: %s/data needs bytes "
                        "[%" PRIu64 ", %" PRIu64 ") but the file has %" PRIu64
                        "; " SL_REPACK_HINT,
                        src->path, SL_HDF5_GROUP, addr, addr + total,
                        src->file_size);
  }
  st = sl_source_alloc_index(src, n, err);
  /* The boxes before the entries: sl_source_check_entry checks them. */
  if (st == SL_OK && src->version >= SL_HDF5_LAYOUT_BOXES)
    st = read_boxes(src, f, n, err);
  if (st == SL_OK)
    st = fill_index(src, f, n, addr, total, err);
  return st;
}

/* Reads a scalar integer attribute of /samples as u64. */
static int attr_u64(hid_t obj, const char *name, uint64_t *v) {
  if (H5Aexists(obj, name) <= 0)
    return -1;
  hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
  if (a < 0)
    return -1;
  hid_t t = H5Aget_type(a), s = H5Aget_space(a);
  int ok = t >= 0 && s >= 0 && H5Tget_class(t) == H5T_INTEGER &&
           H5Sget_simple_extent_npoints(s) == 1 &&
           H5Aread(a, H5T_NATIVE_UINT64, v) >= 0;
  if (t >= 0)
    H5Tclose(t);
  if (s >= 0)
    H5Sclose(s);
  H5Aclose(a);
  return ok ? 0 : -1;
}

/* A string attribute (fixed-length, `count` strings): all of them, each
 * NUL-terminated, back to back, into a malloc'd blob. Returns 0, -1 when
 * the attribute is not that, AS_NOMEM when the blob cannot be allocated. */
enum { AS_NOMEM = -2 };
static int attr_strings(hid_t obj, const char *name, uint64_t count,
                        size_t max_len, char **blob, size_t *blob_len) {
  hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
  if (a < 0)
    return -1;
  hid_t t = H5Aget_type(a), s = H5Aget_space(a);
  int rc = -1;
  size_t sz = t >= 0 ? H5Tget_size(t) : 0;
  char *raw = NULL;
  if (t >= 0 && s >= 0 && H5Tget_class(t) == H5T_STRING &&
      H5Tis_variable_str(t) == 0 && sz > 0 && sz <= max_len + 1 &&
      (uint64_t)H5Sget_simple_extent_npoints(s) == count) {
    if (!(raw = malloc(count * sz + 1)) || !(*blob = malloc(count * (sz + 1))))
      rc = AS_NOMEM;
    else if (H5Aread(a, t, raw) >= 0) {
      size_t pos = 0;
      for (uint64_t i = 0; i < count; i++) {
        size_t l = strnlen(raw + i * sz, sz);
        memcpy(*blob + pos, raw + i * sz, l);
        pos += l;
        (*blob)[pos++] = '\0';
      }
      *blob_len = pos;
      rc = 0;
    }
  }
  free(raw);
  if (t >= 0)
    H5Tclose(t);
  if (s >= 0)
    H5Sclose(s);
  H5Aclose(a);
  return rc;
}

static sl_status read_attrs(sl_source *src, h5 *f, uint64_t *count,
                            sl_err *err) {
  uint64_t v, k;
  if (attr_u64(f->group, "sluice_layout", &v) != 0)
    return sl_err_set(err, SL_EFORMAT,
                      "%s: %s has no sluice_layout "
                      "attribute; not a sluice HDF5 file? " SL_REPACK_HINT,
                      src->path, SL_HDF5_GROUP);
  sl_status vs = sl_source_set_version(src, "HDF5", v, SL_HDF5_LAYOUT_OLDEST,
                                       SL_HDF5_LAYOUT_BOXES, err);
  if (vs != SL_OK)
    return vs;
  /* Layout 4 (boxes) has levels when it has the levels attribute. */
  src->levels_layout =
      v == SL_HDF5_LAYOUT_LEVELS ||
      (v >= SL_HDF5_LAYOUT_BOXES && H5Aexists(f->group, "levels") > 0);
  if (v >= 2 &&
      (attr_u64(f->group, "target_width", &k) != 0 || k > SL_TARGETS_MAX))
    return sl_err_set(err, SL_EFORMAT,
                      "%s: %s lacks a valid target_width attribute "
                      "(0..%u); " SL_REPACK_HINT,
                      src->path, SL_HDF5_GROUP, SL_TARGETS_MAX);
  if (v >= 2)
    src->target_width = (uint32_t)k;
  if (attr_u64(f->group, "count", count) != 0 ||
      attr_u64(f->group, "num_classes", &k) != 0 || k > SL_CLASSES_MAX)
    return sl_err_set(err, SL_EFORMAT,
                      "%s: %s lacks a valid count or "
                      "num_classes attribute; " SL_REPACK_HINT,
                      src->path, SL_HDF5_GROUP);
  char *blob = NULL;
  size_t blob_len = 0;
  int as = k > 0 ? attr_strings(f->group, "classes", k, SL_CLASS_NAME_MAX,
                                &blob, &blob_len)
                 : 0;
  if (as == AS_NOMEM)
    return sl_err_set(err, SL_ENOMEM,
                      "%s: no memory for %" PRIu64 " class names", src->path,
                      k);
  if (as != 0) {
    free(blob);
    return sl_err_set(err, SL_EFORMAT,
                      "%s: %s's classes attribute is not "
                      "%" PRIu64 " fixed-length strings; " SL_REPACK_HINT,
                      src->path, SL_HDF5_GROUP, k);
  }
  sl_status st =
      sl_source_set_classes(src, blob ? blob : "", blob_len, (uint32_t)k, err);
  free(blob);
  char *w = NULL;
  size_t wl = 0;
  if (st == SL_OK && H5Aexists(f->group, "writer") > 0) {
    as = attr_strings(f->group, "writer", 1, SL_SETTINGS_MAX, &w, &wl);
    if (as == 0)
      st = sl_source_set_writer(src, w, wl ? wl - 1 : 0, err);
    else if (as == AS_NOMEM)
      st = sl_err_set(err, SL_ENOMEM, "%s: no memory for the writer attribute",
                      src->path);
  }
  free(w);
  w = NULL;
  if (st == SL_OK && src->levels_layout && H5Aexists(f->group, "levels") > 0 &&
      attr_strings(f->group, "levels", 1, SL_SETTINGS_MAX, &w, &wl) == 0)
    st = sl_source_set_levels(src, w, wl ? strnlen(w, wl) : 0, err);
  free(w);
  return st;
}

/* Rows [start, start + rows) of d, whose rank-2 rows have `cols` values. */
static herr_t read_rows(hid_t d, hid_t memtype, uint64_t start, uint64_t rows,
                        int rank, uint64_t cols, void *buf) {
  hsize_t off[2] = {start, 0}, cnt[2] = {rows, cols};
  hid_t fs = H5Dget_space(d);
  hid_t ms = H5Screate_simple(rank, cnt, NULL);
  herr_t rc = -1;
  if (fs >= 0 && ms >= 0 &&
      H5Sselect_hyperslab(fs, H5S_SELECT_SET, off, NULL, cnt, NULL) >= 0)
    rc = H5Dread(d, memtype, ms, fs, H5P_DEFAULT, buf);
  if (ms >= 0)
    H5Sclose(ms);
  if (fs >= 0)
    H5Sclose(fs);
  return rc;
}

static sl_status fill_index(sl_source *src, h5 *f, uint64_t n,
                            uint64_t data_addr, uint64_t data_size,
                            sl_err *err) {
  uint64_t *off = malloc((BLOCK + 1) * sizeof *off);
  int64_t *label = malloc(BLOCK * sizeof *label);
  uint32_t *shape = malloc(BLOCK * 3 * sizeof *shape);
  uint8_t *codec = malloc(BLOCK);
  uint16_t *nlen = calloc(BLOCK, sizeof *nlen);
  bool start_bad = false; /* the row's start offset cannot be trusted */
  uint64_t prev_end = 0;  /* the last end offset that could be */
  sl_status st = SL_OK;
  if (!off || !label || !shape || !codec || !nlen)
    st = sl_err_set(err, SL_ENOMEM, "%s: no memory", src->path);
  for (uint64_t s = 0; st == SL_OK && s < n; s += BLOCK) {
    uint64_t rows = n - s < BLOCK ? n - s : BLOCK;
    if (read_rows(f->offsets, H5T_NATIVE_UINT64, s, rows + 1, 1, 1, off) < 0 ||
        read_rows(f->label, H5T_NATIVE_INT64, s, rows, 1, 1, label) < 0 ||
        read_rows(f->shape, H5T_NATIVE_UINT32, s, rows, 2, 3, shape) < 0 ||
        read_rows(f->codec, H5T_NATIVE_UINT8, s, rows, 1, 1, codec) < 0 ||
        (f->name_length >= 0 && read_rows(f->name_length, H5T_NATIVE_UINT16, s,
                                          rows, 1, 1, nlen) < 0) ||
        (f->targets >= 0 &&
         read_rows(f->targets, H5T_NATIVE_FLOAT, s, rows, 2, src->target_width,
                   src->targets + s * src->target_width) < 0)) {
      st = sl_err_set(err, SL_EFORMAT,
                      "%s: cannot read the index arrays of "
                      "samples %" PRIu64 "..%" PRIu64
                      " (truncated?); " SL_REPACK_HINT,
                      src->path, s, s + rows - 1);
      break;
    }
    if (s == 0 && off[0] != 0)
      st = sl_err_set(err, SL_EFORMAT,
                      "%s: offsets[0] is %" PRIu64 ", not 0; " SL_REPACK_HINT,
                      src->path, off[0]);
    for (uint64_t r = 0; st == SL_OK && r < rows; r++) {
      uint64_t i = s + r;
      char where[64];
      snprintf(where, sizeof where, "offsets[%" PRIu64 "] = %" PRIu64, i,
               off[r]);
      const char *why = NULL;
      if (start_bad) /* the end of the sample before it was damaged */
        why = "its start (the previous sample's end) is damaged";
      else if (off[r + 1] < off[r] || off[r + 1] > data_size)
        why = "payload end before its start or past the data set";
      else if (off[r + 1] - off[r] > UINT32_MAX)
        why = "payload longer than 4 GiB";
      else if (shape[3 * r] > UINT16_MAX || shape[3 * r + 1] > UINT16_MAX ||
               shape[3 * r + 2] > UINT8_MAX)
        why = "shape out of range";
      else if (label[r] < -1 || label[r] > INT32_MAX)
        why = "label out of range";
      else if (nlen[r] > off[r + 1] - off[r] || nlen[r] > SL_NAME_MAX)
        why = "name longer than its record";
      if (why) {
        st = sl_source_bad_entry(src, i, where, why, err);
        /* A bad end is the next sample's start too: that one goes as well,
         * rather than taking this one's bytes as its own. */
        start_bad = off[r + 1] < (start_bad ? prev_end : off[r]) ||
                    off[r + 1] > data_size;
        if (!start_bad)
          prev_end = off[r + 1];
        continue;
      }
      start_bad = false;
      prev_end = off[r + 1];
      sl_sample_info *e = &src->index[i];
      e->name_len = nlen[r];
      e->offset = data_addr + off[r] + nlen[r];
      e->length = (uint32_t)(off[r + 1] - off[r] - nlen[r]);
      e->label = (int32_t)label[r];
      e->height = (uint16_t)shape[3 * r];
      e->width = (uint16_t)shape[3 * r + 1];
      e->channels = (uint8_t)shape[3 * r + 2];
      e->codec = codec[r];
      st = sl_source_check_entry(src, i, where, err);
    }
  }
  uint64_t end = 0;
  if (st == SL_OK && n > 0 &&
      read_rows(f->offsets, H5T_NATIVE_UINT64, n, 1, 1, 1, &end) < 0)
    st = sl_err_set(err, SL_EFORMAT,
                    "%s: cannot read offsets[%" PRIu64 "]; " SL_REPACK_HINT,
                    src->path, n);
  if (st == SL_OK && end != data_size)
    st = sl_err_set(err, SL_EFORMAT,
                    "%s: offsets[%" PRIu64 "] = %" PRIu64
                    " but %s/data holds %" PRIu64 " bytes; " SL_REPACK_HINT,
                    src->path, n, end, SL_HDF5_GROUP, data_size);
  free(off);
  free(label);
  free(shape);
  free(codec);
  free(nlen);
  return st;
}

/* Layout 4: box_count [N] into the offsets (cumulative), then boxes
 * [M][4], box_label [M] and box_flags [M] into the boxes, in blocks of
 * BLOCK (scratch: BLOCK × 24 bytes). M is bounded by the file's size (each
 * box takes 24 bytes there), and the counts must add up to M. The values
 * are checked with the entries (sl_source_check_entry). */
static sl_status read_boxes(sl_source *src, h5 *f, uint64_t n, sl_err *err) {
  uint64_t len = 0, m = 0;
  sl_status st = open_dset(src, f, "box_count", 2, H5T_SGN_NONE, 1, n, 0,
                           &f->box_count, &len, err);
  if (st == SL_OK)
    st = open_dset(src, f, "boxes", 4, H5T_SGN_ERROR, 2, 0, 4, &f->boxes, &m,
                   err);
  if (st == SL_OK && m > src->file_size / SL_BOX_BYTES)
    return sl_err_set(err, SL_EFORMAT,
                      "%s: %s/boxes has %" PRIu64
                      " rows, more than a file of %" PRIu64
                      " bytes holds; " SL_REPACK_HINT,
                      src->path, SL_HDF5_GROUP, m, src->file_size);
  if (st == SL_OK && m > 0)
    st = open_dset(src, f, "box_label", 4, H5T_SGN_2, 1, m, 0, &f->box_label,
                   &len, err);
  if (st == SL_OK && m > 0)
    st = open_dset(src, f, "box_flags", 4, H5T_SGN_NONE, 1, m, 0, &f->box_flags,
                   &len, err);
  if (st == SL_OK)
    st = sl_source_alloc_boxes(src, m, err);
  if (st != SL_OK)
    return st;
  uint16_t *cnt = malloc(BLOCK * sizeof *cnt);
  float *xy = malloc(BLOCK * 4 * sizeof *xy);
  int32_t *lab = malloc(BLOCK * sizeof *lab);
  uint32_t *flg = malloc(BLOCK * sizeof *flg);
  if (!cnt || !xy || !lab || !flg)
    st = sl_err_set(err, SL_ENOMEM, "%s: no memory", src->path);
  uint64_t sum = 0;
  for (uint64_t s = 0; st == SL_OK && s < n; s += BLOCK) {
    uint64_t rows = n - s < BLOCK ? n - s : BLOCK;
    if (read_rows(f->box_count, H5T_NATIVE_UINT16, s, rows, 1, 1, cnt) < 0) {
      st = sl_err_set(err, SL_EFORMAT,
                      "%s: cannot read %s/box_count of samples %" PRIu64
                      "..%" PRIu64 " (truncated?); " SL_REPACK_HINT,
                      src->path, SL_HDF5_GROUP, s, s + rows - 1);
      break;
    }
    for (uint64_t r = 0; r < rows; r++) {
      src->box_off[s + r] = sum;
      sum += cnt[r];
    }
  }
  if (st == SL_OK && sum != m)
    st = sl_err_set(err, SL_EFORMAT,
                    "%s: %s/box_count adds up to %" PRIu64
                    " boxes but %s/boxes has %" PRIu64 "; " SL_REPACK_HINT,
                    src->path, SL_HDF5_GROUP, sum, SL_HDF5_GROUP, m);
  if (st == SL_OK)
    src->box_off[n] = m;
  for (uint64_t s = 0; st == SL_OK && s < m; s += BLOCK) {
    uint64_t rows = m - s < BLOCK ? m - s : BLOCK;
    if (read_rows(f->boxes, H5T_NATIVE_FLOAT, s, rows, 2, 4, xy) < 0 ||
        read_rows(f->box_label, H5T_NATIVE_INT32, s, rows, 1, 1, lab) < 0 ||
        read_rows(f->box_flags, H5T_NATIVE_UINT32, s, rows, 1, 1, flg) < 0) {
      st = sl_err_set(err, SL_EFORMAT,
                      "%s: cannot read boxes %" PRIu64 "..%" PRIu64
                      " (truncated?); " SL_REPACK_HINT,
                      src->path, s, s + rows - 1);
      break;
    }
    for (uint64_t r = 0; r < rows; r++) {
      sl_box *b = &src->boxes[s + r];
      b->x0 = xy[4 * r];
      b->y0 = xy[4 * r + 1];
      b->x1 = xy[4 * r + 2];
      b->y1 = xy[4 * r + 3];
      b->label = lab[r];
      b->flags = flg[r];
    }
  }
  free(cnt);
  free(xy);
  free(lab);
  free(flg);
  return st;
}

/* ---- the row ------------------------------------------------------------- */

static const uint8_t k_hdf5_sig[8] = {0x89, 'H',  'D',  'F',
                                      '\r', '\n', 0x1a, '\n'};

static int hdf5_sniff(const uint8_t *head, size_t n) {
  return n >= 8 && memcmp(head, k_hdf5_sig, 8) == 0 ? 2 : 0;
}

/* After a userblock (MATLAB v7.3 writes 512 bytes) the signature sits at
 * 512, 1024, 2048, ...: HDF5 itself looks there. Only for a file no other
 * format took by its head: a record file's images may hold anything. */
static bool hdf5_sniff_userblock(int fd, uint64_t size) {
  for (uint64_t at = 512; at + 8 <= size; at *= 2) {
    uint8_t sig[8];
    if (pread(fd, sig, 8, (off_t)at) == 8 && memcmp(sig, k_hdf5_sig, 8) == 0)
      return true;
  }
  return false;
}

static const char *hdf5_not_this(size_t n) {
  (void)n;
  return "not an HDF5 file (no HDF5 signature at offset 0)";
}

static sl_status hdf5_index_file(sl_source *src, const char *path,
                                 sl_err *err) {
  (void)path;
  return index_hdf5(src, err);
}

const sl_format sl_format_hdf5 = {
    .kind = SL_FORMAT_HDF5,
    .name = "hdf5",
    .title = "HDF5",
    .what = "HDF5",
    .options = SL_FOPT_LABEL_FILE | SL_FOPT_ARRAYS,
    .entries = SL_ENTRIES_BIT(SL_ENTRIES_AUTO) |
               SL_ENTRIES_BIT(SL_ENTRIES_SLUICE) |
               SL_ENTRIES_BIT(SL_ENTRIES_ARRAY),
    .sniff = hdf5_sniff,
    .sniff_deep = hdf5_sniff_userblock,
    .not_this = hdf5_not_this,
    .reads = "HDF5 files (its own, and h5py-style arrays of pixels or of "
             "encoded images)",
    .index_file = hdf5_index_file,
};
