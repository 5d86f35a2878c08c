/* Writing the HDF5 layout: contiguous, unfiltered datasets in /samples
 * (each sample's name, then its payload, in /samples/data).
 *
 * A contiguous dataset's size is fixed when it is created, so payloads are
 * spooled to an unlinked temporary file (O_TMPFILE, or created and unlinked
 * at once: nothing is left behind if the process dies). At commit HDF5
 * writes the named temporary file with /samples/data allocated but not
 * filled, and the spool is copied to the data set's file offset. (HDF5
 * cannot create a file through /proc/self/fd, so the named file exists
 * during commit only.) Times are not recorded in
 * object headers and metadata uses the 1.8+ formats, whose headers carry
 * checksums (so readers detect damaged metadata). Same input → same bytes. */
#include "formats/core/writer_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/core/boxes.h"
#include "formats/core/layout.h"
#include "formats/hdf5/hdf5_lock.h"

#define SPOOL_CHUNK (4u << 20)

struct sl_hdf5_writer {
  const char *path; /* the named temporary file, created at commit */
  int spool;        /* unlinked file of payloads */
  uint8_t *wbuf;    /* write buffer for the spool */
  size_t wlen;
  uint64_t n, cap;   /* samples, capacity of the arrays */
  uint64_t *offsets; /* n + 1 */
  int64_t *label;
  uint32_t *shape;
  uint8_t *codec;
  uint16_t *name_len;
  float *targets; /* n × k */
  uint32_t k;
  uint32_t version; /* SL_HDF5_LAYOUT_VERSION, or _LEVELS */
};

void sl_hdf5_writer_set_version(sl_hdf5_writer *w, uint32_t v) {
  w->version = v;
}

static sl_status spool_open(sl_hdf5_writer *w, sl_err *err) {
  char dir[PATH_MAX];
  const char *slash = strrchr(w->path, '/');
  snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - w->path) : 1,
           slash ? w->path : ".");
  w->spool = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (w->spool < 0) { /* no O_TMPFILE here: create, then unlink at once */
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s.spool", w->path);
    w->spool = open(p, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
    if (w->spool < 0)
      return sl_err_errno(err, SL_EIO, errno, "%s", p);
    unlink(p);
  }
  return SL_OK;
}

static sl_status spool_flush(sl_hdf5_writer *w, sl_err *err) {
  size_t done = 0;
  while (done < w->wlen) {
    ssize_t n = write(w->spool, w->wbuf + done, w->wlen - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return sl_err_errno(err, SL_EIO, errno, "%s: spool write", w->path);
    done += (size_t)n;
  }
  w->wlen = 0;
  return SL_OK;
}

sl_status sl_hdf5_writer_open(sl_hdf5_writer **out, const char *tmp,
                              sl_err *err) {
  sl_hdf5_writer *w = calloc(1, sizeof *w);
  if (!w)
    return sl_err_set(err, SL_ENOMEM, "%s: no memory", tmp);
  w->path = tmp;
  w->spool = -1;
  w->wbuf = malloc(SPOOL_CHUNK);
  w->version = SL_HDF5_LAYOUT_VERSION;
  w->offsets = calloc(1, sizeof *w->offsets);
  sl_status st = w->wbuf && w->offsets
                     ? spool_open(w, err)
                     : sl_err_set(err, SL_ENOMEM, "%s: no memory", tmp);
  if (st != SL_OK) {
    sl_hdf5_writer_free(w);
    return st;
  }
  *out = w;
  return SL_OK;
}

static sl_status grow(sl_hdf5_writer *w, sl_err *err) {
  uint64_t cap = w->cap ? 2 * w->cap : 1024;
  uint16_t *nl = realloc(w->name_len, cap * sizeof *nl);
  if (nl)
    w->name_len = nl;
  float *t = w->k ? realloc(w->targets, cap * w->k * sizeof *t) : NULL;
  if (t)
    w->targets = t;
  uint64_t *o = realloc(w->offsets, (cap + 1) * sizeof *o);
  if (o)
    w->offsets = o;
  int64_t *l = realloc(w->label, cap * sizeof *l);
  if (l)
    w->label = l;
  uint32_t *s = realloc(w->shape, cap * 3 * sizeof *s);
  if (s)
    w->shape = s;
  uint8_t *c = realloc(w->codec, cap);
  if (c)
    w->codec = c;
  if (!o || !l || !s || !c || !nl || (w->k && !t))
    return sl_err_set(err, SL_ENOMEM, "%s: no memory for %llu samples", w->path,
                      (unsigned long long)cap);
  w->cap = cap;
  return SL_OK;
}

/* Appends len bytes to the spool. */
static sl_status spool_append(sl_hdf5_writer *w, const void *bytes, size_t len,
                              sl_err *err) {
  const uint8_t *p = bytes;
  size_t left = len;
  while (left) {
    size_t k = SPOOL_CHUNK - w->wlen < left ? SPOOL_CHUNK - w->wlen : left;
    memcpy(w->wbuf + w->wlen, p, k);
    w->wlen += k;
    p += k;
    left -= k;
    if (w->wlen == SPOOL_CHUNK) {
      sl_status st = spool_flush(w, err);
      if (st != SL_OK)
        return st;
    }
  }
  return SL_OK;
}

sl_status sl_hdf5_writer_add(sl_hdf5_writer *w, const void *payload, size_t len,
                             const sl_sample_info *meta, const char *name,
                             const float *targets, uint32_t k, sl_err *err) {
  w->k = k; /* fixed before the first add (writer.c) */
  if (w->n == w->cap) {
    sl_status st = grow(w, err);
    if (st != SL_OK)
      return st;
  }
  sl_status st = spool_append(w, name, meta->name_len, err);
  if (st == SL_OK)
    st = spool_append(w, payload, len, err);
  if (st != SL_OK)
    return st;
  uint64_t i = w->n++;
  w->offsets[i + 1] = w->offsets[i] + meta->name_len + len;
  w->name_len[i] = meta->name_len;
  if (k)
    memcpy(w->targets + i * k, targets, k * sizeof *targets);
  w->label[i] = meta->label;
  w->shape[3 * i] = meta->height;
  w->shape[3 * i + 1] = meta->width;
  w->shape[3 * i + 2] = meta->channels;
  w->codec[i] = meta->codec;
  return SL_OK;
}

/* Creates a contiguous dataset of the given shape and writes buf (when not
 * NULL) into it. */
static hid_t make_dset(hid_t group, const char *name, hid_t type, int rank,
                       const hsize_t *dims, hid_t mtype, const void *buf) {
  hid_t space = H5Screate_simple(rank, dims, NULL);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  hid_t d = -1;
  if (space >= 0 && dcpl >= 0 && H5Pset_layout(dcpl, H5D_CONTIGUOUS) >= 0 &&
      H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY) >= 0 &&
      H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER) >= 0 &&
      H5Pset_obj_track_times(dcpl, 0) >= 0)
    d = H5Dcreate2(group, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  if (d >= 0 && buf && dims[0] > 0 &&
      H5Dwrite(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
    H5Dclose(d);
    d = -1;
  }
  if (dcpl >= 0)
    H5Pclose(dcpl);
  if (space >= 0)
    H5Sclose(space);
  return d;
}

static int attr_scalar(hid_t obj, const char *name, hid_t type, hid_t mtype,
                       const void *v) {
  hid_t s = H5Screate(H5S_SCALAR);
  hid_t a =
      s >= 0 ? H5Acreate2(obj, name, type, s, H5P_DEFAULT, H5P_DEFAULT) : -1;
  int rc = a >= 0 && H5Awrite(a, mtype, v) >= 0 ? 0 : -1;
  if (a >= 0)
    H5Aclose(a);
  if (s >= 0)
    H5Sclose(s);
  return rc;
}

/* count fixed-length strings of the longest one's size (at least 1). */
enum { AS_NOMEM = -2 }; /* attr_strings could not allocate its buffer */
static int attr_strings(hid_t obj, const char *name, const char *const *strs,
                        uint32_t count) {
  size_t sz = 1;
  for (uint32_t i = 0; i < count; i++)
    if (strlen(strs[i]) + 1 > sz)
      sz = strlen(strs[i]) + 1;
  char *raw = calloc(count, sz);
  if (!raw)
    return AS_NOMEM;
  hid_t t = H5Tcopy(H5T_C_S1);
  hsize_t dims[1] = {count};
  hid_t s = H5Screate_simple(1, dims, NULL);
  int rc = -1;
  if (raw && t >= 0 && s >= 0 && H5Tset_size(t, sz) >= 0 &&
      H5Tset_strpad(t, H5T_STR_NULLTERM) >= 0 &&
      H5Tset_cset(t, H5T_CSET_UTF8) >= 0) {
    for (uint32_t i = 0; i < count; i++)
      memcpy(raw + i * sz, strs[i], strlen(strs[i]));
    hid_t a = H5Acreate2(obj, name, t, s, H5P_DEFAULT, H5P_DEFAULT);
    if (a >= 0) {
      rc = H5Awrite(a, t, raw) >= 0 ? 0 : -1;
      H5Aclose(a);
    }
  }
  free(raw);
  if (t >= 0)
    H5Tclose(t);
  if (s >= 0)
    H5Sclose(s);
  return rc;
}

/* Copies the spool's total bytes to file offset addr of path (the data
 * set's storage, allocated and left unwritten by HDF5). */
static sl_status copy_spool(sl_hdf5_writer *w, uint64_t addr, uint64_t total,
                            sl_err *err) {
  int fd = open(w->path, O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return sl_err_errno(err, SL_EIO, errno, "%s", w->path);
  sl_status st = SL_OK;
  for (uint64_t pos = 0; st == SL_OK && pos < total;) {
    size_t k = total - pos < SPOOL_CHUNK ? (size_t)(total - pos) : SPOOL_CHUNK;
    ssize_t n = pread(w->spool, w->wbuf, k, (off_t)pos);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      st = sl_err_errno(err, SL_EIO, n < 0 ? errno : EIO, "%s: spool read",
                        w->path);
      break;
    }
    for (ssize_t done = 0; done < n;) {
      ssize_t m = pwrite(fd, w->wbuf + done, (size_t)(n - done),
                         (off_t)(addr + pos + (uint64_t)done));
      if (m < 0 && errno == EINTR)
        continue;
      if (m < 0) {
        st = sl_err_errno(err, SL_EIO, errno, "%s: write", w->path);
        break;
      }
      done += m;
    }
    pos += (uint64_t)n;
  }
  if (close(fd) != 0 && st == SL_OK)
    st = sl_err_errno(err, SL_EIO, errno, "%s: close", w->path);
  return st;
}

/* The boxes as the datasets hold them (layout 4): per-sample counts, then
 * coordinates, labels and flags of all boxes, so h5py reads each as an
 * array. Memory: 2 bytes a sample and 24 a box, during commit. */
typedef struct h5_boxes {
  uint16_t *count; /* n */
  float *xy;       /* total × 4 */
  int32_t *label;  /* total */
  uint32_t *flags; /* total */
  uint64_t total;
} h5_boxes;

static sl_status unpack_boxes(sl_hdf5_writer *w, const sl_fw_boxes *bx,
                              h5_boxes *hb, sl_err *err) {
  uint64_t m = bx->total;
  hb->total = m;
  hb->count = malloc((w->n ? w->n : 1) * sizeof *hb->count);
  hb->xy = malloc((m ? m : 1) * 4 * sizeof *hb->xy);
  hb->label = malloc((m ? m : 1) * sizeof *hb->label);
  hb->flags = malloc((m ? m : 1) * sizeof *hb->flags);
  if (!hb->count || !hb->xy || !hb->label || !hb->flags)
    return sl_err_set(err, SL_ENOMEM, "%s: no memory for %" PRIu64 " boxes",
                      w->path, m);
  memcpy(hb->count, bx->count, w->n * sizeof *hb->count);
  for (uint64_t i = 0; i < m; i++) {
    sl_box b;
    sl_box_decode(bx->bytes + i * SL_BOX_BYTES, &b);
    hb->xy[4 * i] = b.x0;
    hb->xy[4 * i + 1] = b.y0;
    hb->xy[4 * i + 2] = b.x1;
    hb->xy[4 * i + 3] = b.y1;
    hb->label[i] = b.label;
    hb->flags[i] = b.flags;
  }
  return SL_OK;
}

/* Writes everything but the payloads; *data_addr gets the file offset of
 * /samples/data's storage. hb NULL: no boxes (the layout stays). */
static sl_status write_file(sl_hdf5_writer *w, uint32_t nclasses,
                            const char *const *classes, uint32_t k,
                            const char *settings, const char *levels,
                            const h5_boxes *hb, uint64_t *data_addr,
                            sl_err *err) {
  /* No object has a timestamp, the root group included (it takes the file
   * creation list): the same input must give byte-identical files. */
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), gcpl = H5Pcreate(H5P_GROUP_CREATE);
  hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
  hid_t f = -1, g = -1;
  if (fapl >= 0 && gcpl >= 0 && fcpl >= 0 &&
      H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_LATEST) >= 0 &&
      H5Pset_obj_track_times(gcpl, 0) >= 0 &&
      H5Pset_obj_track_times(fcpl, 0) >= 0)
    f = H5Fcreate(w->path, H5F_ACC_TRUNC, fcpl, fapl);
  if (fcpl >= 0)
    H5Pclose(fcpl);
  if (f >= 0)
    g = H5Gcreate2(f, SL_HDF5_GROUP, H5P_DEFAULT, gcpl, H5P_DEFAULT);
  const char *what = f < 0 ? "create the file" : "create /samples";
  int ok = g >= 0, nomem = 0;
  uint64_t total = w->offsets[w->n];
  hsize_t dn[1] = {total}, on[1] = {w->n + 1}, ln[1] = {w->n},
          sn[2] = {w->n, 3}, tn[2] = {w->n, k};
  enum { NDSET = 11 };
  hid_t d[NDSET] = {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1};
  hsize_t bn[2] = {hb ? hb->total : 0, 4}, bl[1] = {hb ? hb->total : 0};
  if (ok) {
    what = "write the datasets";
    d[0] = make_dset(g, "data", H5T_STD_U8LE, 1, dn, H5T_NATIVE_UINT8, NULL);
    d[1] = make_dset(g, "offsets", H5T_STD_U64LE, 1, on, H5T_NATIVE_UINT64,
                     w->offsets);
    d[2] =
        make_dset(g, "label", H5T_STD_I64LE, 1, ln, H5T_NATIVE_INT64, w->label);
    d[3] = make_dset(g, "shape", H5T_STD_U32LE, 2, sn, H5T_NATIVE_UINT32,
                     w->shape);
    d[4] =
        make_dset(g, "codec", H5T_STD_U8LE, 1, ln, H5T_NATIVE_UINT8, w->codec);
    d[5] = make_dset(g, "name_length", H5T_STD_U16LE, 1, ln, H5T_NATIVE_UINT16,
                     w->name_len);
    d[6] = k ? make_dset(g, "targets", H5T_IEEE_F32LE, 2, tn, H5T_NATIVE_FLOAT,
                         w->targets)
             : 0;
    d[7] = hb ? make_dset(g, "box_count", H5T_STD_U16LE, 1, ln,
                          H5T_NATIVE_UINT16, hb->count)
              : 0;
    d[8] = hb ? make_dset(g, "boxes", H5T_IEEE_F32LE, 2, bn, H5T_NATIVE_FLOAT,
                          hb->xy)
              : 0;
    d[9] = hb ? make_dset(g, "box_label", H5T_STD_I32LE, 1, bl,
                          H5T_NATIVE_INT32, hb->label)
              : 0;
    d[10] = hb ? make_dset(g, "box_flags", H5T_STD_U32LE, 1, bl,
                           H5T_NATIVE_UINT32, hb->flags)
               : 0;
    for (int i = 0; i < NDSET; i++)
      ok = ok && d[i] >= 0;
    haddr_t a = total ? H5Dget_offset(d[0]) : 0;
    ok = ok && a != HADDR_UNDEF;
    *data_addr = (uint64_t)a;
  }
  if (ok) {
    what = "write the attributes";
    uint32_t ver = hb ? SL_HDF5_LAYOUT_BOXES : w->version;
    uint64_t count = w->n;
    ok = attr_scalar(g, "sluice_layout", H5T_STD_U32LE, H5T_NATIVE_UINT32,
                     &ver) == 0 &&
         attr_scalar(g, "count", H5T_STD_U64LE, H5T_NATIVE_UINT64, &count) ==
             0 &&
         attr_scalar(g, "num_classes", H5T_STD_U32LE, H5T_NATIVE_UINT32,
                     &nclasses) == 0 &&
         attr_scalar(g, "target_width", H5T_STD_U32LE, H5T_NATIVE_UINT32, &k) ==
             0;
    int as = ok && nclasses ? attr_strings(g, "classes", classes, nclasses) : 0;
    if (ok && as == 0)
      as = attr_strings(g, "writer", &settings, 1);
    if (ok && as == 0 && levels[0])
      as = attr_strings(g, "levels", &levels, 1);
    nomem = as == AS_NOMEM;
    ok = ok && as == 0;
  }
  for (int i = 0; i < NDSET; i++)
    if (d[i] > 0)
      ok = H5Dclose(d[i]) >= 0 && ok;
  if (g >= 0)
    ok = H5Gclose(g) >= 0 && ok;
  if (f >= 0)
    ok = H5Fclose(f) >= 0 && ok;
  if (fapl >= 0)
    H5Pclose(fapl);
  if (gcpl >= 0)
    H5Pclose(gcpl);
  if (nomem)
    return sl_err_set(err, SL_ENOMEM, "%s: no memory to %s", w->path, what);
  if (!ok)
    return sl_err_set(err, SL_EIO, "%s: HDF5 could not %s (disk full?)",
                      w->path, what);
  return SL_OK;
}

sl_status sl_hdf5_writer_finish(sl_hdf5_writer *w, uint32_t nclasses,
                                const char *const *classes, uint32_t k,
                                const char *settings, const char *levels,
                                const sl_fw_boxes *bx, sl_err *err) {
  sl_status st = spool_flush(w, err);
  h5_boxes hb = {0};
  if (st == SL_OK && bx)
    st = unpack_boxes(w, bx, &hb, err);
  if (st == SL_OK) {
    uint64_t addr = 0;
    sl_hdf5_lock();
    H5E_BEGIN_TRY {
      st = write_file(w, nclasses, classes, k, settings, levels,
                      bx ? &hb : NULL, &addr, err);
    }
    H5E_END_TRY;
    /* HDF5 keeps a failed call's error records until its next call: drop
     * them, so a failed commit leaves nothing behind in the process. */
    H5Eclear2(H5E_DEFAULT);
    sl_hdf5_unlock();
    if (st == SL_OK)
      st = copy_spool(w, addr, w->offsets[w->n], err);
  }
  free(hb.count);
  free(hb.xy);
  free(hb.label);
  free(hb.flags);
  sl_hdf5_writer_free(w);
  return st;
}

void sl_hdf5_writer_free(sl_hdf5_writer *w) {
  if (!w)
    return;
  if (w->spool >= 0)
    close(w->spool);
  free(w->wbuf);
  free(w->offsets);
  free(w->label);
  free(w->shape);
  free(w->codec);
  free(w->name_len);
  free(w->targets);
  free(w);
}
