/* A dataset of an HDF5 array file, as the h5array modules share it: opened
 * by name, with its name and shape kept for messages, and the texts those
 * messages are made of. Called at open, under the HDF5 lock.
 * Thread safety: a dataset is one caller's. */
#ifndef SLUICE_FORMATS_H5ARRAY_DSET_H
#define SLUICE_FORMATS_H5ARRAY_DSET_H

#include <hdf5.h>
#include <stdint.h>

#include "formats/core/source_impl.h"

enum { SL_H5_MAX_RANK = 8, SL_H5_NAME_CAP = 256 };

/* h5repack reads a plugin filter (lzf, blosc, bitshuffle, zstd...) only
 * with its plugin on HDF5_PLUGIN_PATH; without it, it warns, exits 0 and
 * writes a copy without the array. Takes the dataset's name twice. */
#define SL_H5_ARRAY_HINT                                                       \
  "rewrite it contiguous and unfiltered (h5repack -l %s:CONTI -f %s:NONE "     \
  "in.h5 out.h5 with a plugin filter's plugin on HDF5_PLUGIN_PATH, else the "  \
  "copy has no array: check it with h5ls; or h5py, chunks=None), then read "   \
  "or convert it (`sluice pack --from`)"

typedef struct sl_h5_dset {
  hid_t d; /* < 0: absent */
  char name[SL_H5_NAME_CAP];
  int rank;
  hsize_t dims[SL_H5_MAX_RANK];
} sl_h5_dset;

/* Opens dataset name of file into a (a->d < 0 when it is absent: returns
 * SL_OK so the caller can try the next name; required makes absence an
 * error, naming option). In the labels' own file (dataset.labels_path,
 * fpath) a dataset's name is prefixed by that file's path; fpath NULL: the
 * source's file. Errors: SL_EFORMAT. */
sl_status sl_h5_dset_open_in(sl_source *src, hid_t file, const char *fpath,
                             const char *name, bool required,
                             const char *option, sl_h5_dset *a, sl_err *err);
static inline sl_status sl_h5_dset_open(sl_source *src, hid_t file,
                                        const char *name, bool required,
                                        const char *option, sl_h5_dset *a,
                                        sl_err *err) {
  return sl_h5_dset_open_in(src, file, NULL, name, required, option, a, err);
}

/* a's shape as numpy prints it: "(N, H, W)", "(N,)". */
void sl_h5_shape_text(const sl_h5_dset *a, char *buf, size_t cap);
/* The chunk shape cdims (a's rank) as numpy prints it; returns buf. */
const char *sl_h5_chunk_text(const sl_h5_dset *a, const hsize_t *cdims,
                             char *buf, size_t cap);
/* HDF5 type t as numpy names it ("uint8", "float32", ...). */
void sl_h5_type_text(hid_t t, char *buf, size_t cap);

/* n / d rounded up, for any n (n + d - 1 would wrap near 2^64 to a count of
 * 0 rows of chunks, and a division by it). d > 0. */
static inline uint64_t sl_h5_div_up(uint64_t n, uint64_t d) {
  return n / d + (n % d != 0);
}

#endif
