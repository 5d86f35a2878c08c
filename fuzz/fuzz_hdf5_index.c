/* libFuzzer target: the HDF5 reader's index checks (formats/hdf5/source_hdf5.c)
 * on files whose HDF5 structure is sound but whose sluice contents are
 * anything: the input decides the /samples attributes (layout version,
 * count, num_classes, target_width, class names, writer), which index
 * arrays exist and with what types and shapes, every offset, label, shape,
 * codec and name length, and the payload bytes. The harness writes that
 * file with libhdf5 and opens it as the loader does, in both modes (mmap,
 * pread) and in verify mode. libhdf5's own parsing of damaged container
 * bytes is not the target here (it is libhdf5's, and sluice closes the
 * file before open returns); sluice's trust in what a well-formed file
 * says is. Seeds in fuzz/corpus_hdf5 (well-formed sets of 0..4 samples).
 *
 * Checked beyond ASan/UBSan: a refused file says why; an accepted one has
 * every sample's payload and name inside the file and inside its record,
 * and every sample reads back (sl_source_read, sl_source_name) without
 * error, except those marked damaged (codec 0: SL_EFORMAT), which include
 * every sample verify mode reported bad. Build and run: fuzz/run.sh. */
#include <hdf5.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/core/layout.h"
#include "formats/core/source.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { MAX_N = 8, MAX_K = 3, MAX_CLASSES = 4 };

/* The input, read front to back; zeros once it runs out. */
typedef struct bytes {
  const uint8_t *p;
  size_t n;
} bytes;

static uint8_t u8(bytes *b) {
  if (b->n == 0)
    return 0;
  b->n--;
  return *b->p++;
}

static uint64_t u64(bytes *b) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++)
    v |= (uint64_t)u8(b) << (8 * i);
  return v;
}

/* A value near the expected one most of the time, anything sometimes. */
static uint64_t near(bytes *b, uint64_t want) {
  uint8_t sel = u8(b);
  switch (sel & 7) {
  case 0:
    return u64(b);
  case 1:
    return want + 1;
  case 2:
    return want ? want - 1 : UINT64_MAX;
  default:
    return want;
  }
}

static int attr_u(hid_t g, const char *name, hid_t type, uint64_t v) {
  hid_t s = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(g, name, type, s, H5P_DEFAULT, H5P_DEFAULT);
  int rc = a >= 0 && H5Awrite(a, H5T_NATIVE_UINT64, &v) >= 0 ? 0 : -1;
  if (a >= 0)
    H5Aclose(a);
  H5Sclose(s);
  return rc;
}

static void attr_str(hid_t g, const char *name, const char *raw, size_t count,
                     size_t sz) {
  hid_t t = H5Tcopy(H5T_C_S1);
  hsize_t dims[1] = {count};
  hid_t s = H5Screate_simple(1, dims, NULL);
  H5Tset_size(t, sz);
  hid_t a = H5Acreate2(g, name, t, s, H5P_DEFAULT, H5P_DEFAULT);
  if (a >= 0) {
    H5Awrite(a, t, raw);
    H5Aclose(a);
  }
  H5Sclose(s);
  H5Tclose(t);
}

static void dset(hid_t g, const char *name, hid_t type, int rank,
                 const hsize_t *dims, hid_t mtype, const void *buf) {
  hid_t space = H5Screate_simple(rank, dims, NULL);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_layout(dcpl, H5D_CONTIGUOUS);
  H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY);
  hid_t d = H5Dcreate2(g, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  if (d >= 0 && buf && dims[0] > 0)
    H5Dwrite(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
  if (d >= 0)
    H5Dclose(d);
  H5Pclose(dcpl);
  H5Sclose(space);
}

/* Writes the file the input describes; 0 when it was written. */
static int write_file(const char *path, bytes *b) {
  uint8_t flags = u8(b), more = u8(b);
  uint64_t n = u8(b) % (MAX_N + 1);
  uint32_t k = u8(b) % (MAX_K + 1), nclasses = u8(b) % (MAX_CLASSES + 1);
  uint64_t off[MAX_N + 1];
  int64_t label[MAX_N];
  uint32_t shape[MAX_N * 3];
  uint8_t codec[MAX_N];
  uint16_t nlen[MAX_N];
  float targets[MAX_N * MAX_K];
  uint64_t pos = 0;
  off[0] = (flags & 1) ? u8(b) : 0;
  for (uint64_t i = 0; i < n; i++) {
    uint8_t len = u8(b);
    nlen[i] = (uint16_t)((more & 1) ? u8(b) : u8(b) % (len + 1u));
    pos += len;
    off[i + 1] = (more & 2) && (u8(b) & 1) ? u64(b) : pos;
    uint8_t l = u8(b);
    label[i] = l == 0xFF ? (int64_t)u64(b) : (int64_t)l - 2;
    shape[3 * i] = (uint32_t)near(b, 1 + u8(b));
    shape[3 * i + 1] = (uint32_t)near(b, 1 + u8(b));
    shape[3 * i + 2] = (uint32_t)near(b, (u8(b) & 1) ? 3 : 1);
    codec[i] = u8(b) % 8;
    for (uint32_t j = 0; j < k; j++) {
      uint32_t bits = (uint32_t)u64(b);
      memcpy(&targets[i * k + j], &bits, 4);
    }
  }
  uint64_t total = (more & 4) ? near(b, pos) % 4096 : pos;
  uint8_t *payload = calloc(total ? total : 1, 1);
  if (!payload)
    return -1;
  for (uint64_t i = 0; i < total && b->n; i++)
    payload[i] = u8(b);

  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_LATEST);
  hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  H5Pclose(fapl);
  if (f < 0) {
    free(payload);
    return -1;
  }
  hid_t g = H5Gcreate2(f, SL_HDF5_GROUP, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  uint64_t version = near(b, (flags & 2) ? 1 : SL_HDF5_LAYOUT_VERSION);
  if (!(flags & 4))
    attr_u(g, "sluice_layout", H5T_STD_U32LE, version);
  attr_u(g, "count", H5T_STD_U64LE, near(b, n));
  attr_u(g, "num_classes", H5T_STD_U32LE, near(b, nclasses));
  if (!(flags & 8))
    attr_u(g, "target_width", H5T_STD_U32LE, near(b, k));
  char names[MAX_CLASSES * 8 + 1];
  for (size_t i = 0; i < sizeof names; i++)
    names[i] = (char)u8(b);
  size_t sz = 1 + u8(b) % 8;
  if (!(flags & 16) && nclasses)
    attr_str(g, "classes", names, nclasses, sz);
  if (flags & 32)
    attr_str(g, "writer", names, 1, sizeof names);
  hsize_t dn[1] = {total}, on[1] = {n + 1}, ln[1] = {n}, sn[2] = {n, 3},
          tn[2] = {n, k};
  /* Types as sluice writes them, or (flags & 64) one of them wrong. */
  int wrong = (flags & 64) ? u8(b) % 7 : -1;
  dset(g, "data", wrong == 0 ? H5T_STD_U16LE : H5T_STD_U8LE, 1, dn,
       H5T_NATIVE_UINT8, payload);
  dset(g, "offsets", wrong == 1 ? H5T_STD_U32LE : H5T_STD_U64LE, 1, on,
       H5T_NATIVE_UINT64, off);
  dset(g, "label", wrong == 2 ? H5T_STD_U64LE : H5T_STD_I64LE, 1, ln,
       H5T_NATIVE_INT64, label);
  dset(g, "shape", H5T_STD_U32LE, wrong == 3 ? 1 : 2, sn, H5T_NATIVE_UINT32,
       wrong == 3 ? NULL : shape);
  dset(g, "codec", H5T_STD_U8LE, 1, ln, H5T_NATIVE_UINT8, codec);
  if (!(flags & 128))
    dset(g, "name_length", wrong == 5 ? H5T_STD_U8LE : H5T_STD_U16LE, 1, ln,
         H5T_NATIVE_UINT16, nlen);
  if (k)
    dset(g, "targets", wrong == 6 ? H5T_IEEE_F64LE : H5T_IEEE_F32LE, 2, tn,
         H5T_NATIVE_FLOAT, targets);
  H5Gclose(g);
  H5Fclose(f);
  free(payload);
  return 0;
}

static void on_bad(void *user, uint64_t index, const char *reason) {
  (void)index;
  if (!reason || !reason[0])
    abort(); /* a bad sample says why */
  ++*(uint64_t *)user;
}

static void check(const char *path, int how) {
  sl_source *src = NULL;
  sl_err err = {0};
  uint64_t bad = 0;
  sl_source_mode mode = how == 1 ? SL_SOURCE_PREAD : SL_SOURCE_MMAP;
  const sl_source_opts hdf5 = {.fmt = SL_FORMAT_HDF5};
  sl_status st = how == 2
                     ? sl_source_open_verify_opts(&src, path, &hdf5, mode,
                                                  on_bad, &bad, &err)
                     : sl_source_open(&src, path, SL_FORMAT_HDF5, mode, &err);
  if (getenv("FUZZ_VERBOSE")) /* for seeds: why a file was refused */
    fprintf(stderr, "mode %d: %s %s (%llu bad)\n", how, sl_status_name(st),
            st == SL_OK ? "" : err.msg, (unsigned long long)bad);
  if (st != SL_OK) {
    if (err.msg[0] == '\0' || src)
      abort(); /* a refusal says why and hands out nothing */
    return;
  }
  uint64_t size = sl_source_file_size(src), n = sl_source_count(src);
  uint64_t damaged = 0;
  uint32_t k = sl_source_target_width(src);
  static uint8_t buf[1 << 16];
  char name[SL_NAME_MAX + 1];
  for (uint64_t i = 0; i < n; i++) {
    const sl_sample_info *e = sl_source_info(src, i);
    if (e->offset > size || e->length > size - e->offset ||
        e->name_len > e->offset || e->label < -1)
      abort(); /* the index points outside the file */
    if (k && !sl_source_targets(src, i))
      abort();
    const uint8_t *d = NULL;
    size_t len = 0;
    st = sl_source_read(src, i, buf, sizeof buf, &d, &len, &err);
    if (e->codec == 0) { /* marked damaged (verify mode), or stored so */
      if (st != SL_EFORMAT)
        abort();
      damaged++;
    } else if (st != SL_OK || len != e->length) {
      abort();
    }
    if (sl_source_name(src, i, name, sizeof name, &err) != SL_OK)
      abort();
  }
  if (damaged < bad)
    abort(); /* every sample reported bad is marked so */
  for (uint32_t c = 0; c < sl_source_class_count(src); c++)
    if (!sl_source_class_name(src, c))
      abort();
  sl_source_close(src);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static char path[256];
  if (!path[0]) {
    const char *tmp = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/fuzz_hdf5_index.%ld.h5",
             tmp && *tmp ? tmp : "/tmp", (long)getpid());
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* the harness's own writes */
  }
  bytes b = {data, size};
  if (write_file(path, &b) != 0)
    return 0;
  check(path, 0);
  check(path, 1);
  check(path, 2);
  unlink(path);
  return 0;
}
