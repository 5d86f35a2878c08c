/* Finding and checking the pixel array of an HDF5 array file
 * (formats/hdf5/h5array_images.h). */
#include "formats/hdf5/h5array_images.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static const char *const k_image_names[] = {
    "images", "x", "imgs", "data", "train_set_x", "X", "image", "img", NULL};

/* Root-level datasets of uint8 elements and rank 3 or 4: the candidates
 * when no common name is present. */
typedef struct scan {
  int found;
  char first[SL_H5_NAME_CAP];
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

sl_status sl_h5_find_images(sl_source *src, hid_t file, sl_h5_dset *a,
                            sl_err *err) {
  if (src->images)
    return sl_h5_dset_open(src, file, src->images, true, "dataset.images", a,
                           err);
  for (int i = 0; k_image_names[i]; i++) {
    sl_status st = sl_h5_dset_open(src, file, k_image_names[i], false,
                                   "dataset.images", a, err);
    if (st != SL_OK || a->d >= 0)
      return st;
  }
  scan s = {0};
  hsize_t idx = 0;
  H5Literate(file, H5_INDEX_NAME, H5_ITER_NATIVE, &idx, scan_one, &s);
  if (s.found == 1)
    return sl_h5_dset_open(src, file, s.first, true, "dataset.images", a, err);
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
/* A vlen uint8 dataset: its N descriptors (4-byte length, 8-byte global
 * heap collection address, 4-byte object index) lie contiguous at
 * H5Dget_offset. */
static sl_status check_vlen(sl_source *src, const sl_h5_dset *a, hid_t file,
                            sl_h5_geom *g, sl_err *err) {
  char sh[128];
  sl_h5_shape_text(a, sh, sizeof sh);
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
sl_status sl_h5_check_images(sl_source *src, const sl_h5_dset *a, hid_t file,
                             sl_h5_geom *g, sl_err *err) {
  char why[640] = "", sh[128], ty[64], fl[128];
  sl_h5_shape_text(a, sh, sizeof sh);
  hid_t t = H5Dget_type(a->d), p = H5Dget_create_plist(a->d);
  if (t < 0 || p < 0) {
    snprintf(why, sizeof why, "cannot be inspected");
  } else {
    sl_h5_type_text(t, ty, sizeof ty);
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
               "shuffle, lzf, blosc and fletcher32 only; " SL_H5_ARRAY_HINT,
               fl, a->name + 1, a->name + 1);
    else if (lay == H5D_CHUNKED &&
             H5Pget_chunk(p, a->rank, g->cdims) != a->rank)
      snprintf(why, sizeof why,
               "is chunked, but its chunk shape cannot be "
               "read (damaged?)");
    else if (lay != H5D_CONTIGUOUS && lay != H5D_CHUNKED)
      snprintf(why, sizeof why,
               "is stored %s (not contiguous); " SL_H5_ARRAY_HINT,
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
  sl_axis_order o = src->axis_order;
  const hsize_t *d = a->dims;
  if (a->rank == 3) {
    if (o == SL_AXES_NWHC || o == SL_AXES_NCWH)
      snprintf(why, sizeof why,
               "(shape %s): dataset.axis_order = %s: width-major arrays "
               "are not read yet (transpose with numpy and rewrite)",
               sh, o == SL_AXES_NWHC ? "nwhc" : "ncwh");
    o = SL_AXES_NHWC;
    g->h = (uint32_t)(d[1] > UINT32_MAX ? UINT32_MAX : d[1]);
    g->w = (uint32_t)(d[2] > UINT32_MAX ? UINT32_MAX : d[2]);
    g->c = 1;
  } else {
    if (o == SL_AXES_AUTO) {
      if (d[3] == 1 || d[3] == 3 || d[3] == 4)
        o = SL_AXES_NHWC;
      else if (d[1] == 1 || d[1] == 3 || d[1] == 4)
        o = SL_AXES_NCHW;
      else
        snprintf(why, sizeof why,
                 "has shape %s: no axis of 1, 3 or 4 channels (last or "
                 "second); set dataset.axis_order",
                 sh);
    }
    if (!why[0] && (o == SL_AXES_NWHC || o == SL_AXES_NCWH))
      snprintf(why, sizeof why,
               "(shape %s): dataset.axis_order = %s: width-major arrays "
               "are not read yet (transpose with numpy and rewrite)",
               sh, o == SL_AXES_NWHC ? "nwhc" : "ncwh");
    hsize_t hh = o == SL_AXES_NHWC ? d[1] : d[2];
    hsize_t ww = o == SL_AXES_NHWC ? d[2] : d[3];
    hsize_t cc = o == SL_AXES_NHWC ? d[3] : d[1];
    g->h = (uint32_t)(hh > UINT32_MAX ? UINT32_MAX : hh);
    g->w = (uint32_t)(ww > UINT32_MAX ? UINT32_MAX : ww);
    g->c = (uint32_t)(cc > UINT32_MAX ? UINT32_MAX : cc);
    if (!why[0] && g->c != 1 && g->c != 3)
      snprintf(why, sizeof why,
               "has shape %s, read as %s: %" PRIu32 " channels (1 or 3 "
               "read; %s)",
               sh, o == SL_AXES_NHWC ? "NHWC" : "NCHW", g->c,
               g->c == 4 ? "dropping a 4th channel is not done yet"
                         : "set dataset.axis_order if the axes are "
                           "other");
    if (!why[0] && o == SL_AXES_NHWC && g->c == 3 &&
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
  g->codec = g->c == 1 || o == SL_AXES_NHWC  ? SL_IMAGE_RAW
             : src->order == SL_CHANNELS_BGR ? SL_IMAGE_RAW_CHW_BGR
                                             : SL_IMAGE_RAW_CHW;
  if (g->chunked) /* where its chunks lie: sl_h5_chunk_table */
    return SL_OK;
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
