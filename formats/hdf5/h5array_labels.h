/* The numeric datasets beside an HDF5 pixel array
 * (formats/hdf5/source_h5array.c), one row per image, read whole at open with
 * H5Dread: labels (N,) or (N,1,...), targets (N,K) (one-hot, multi-label,
 * float), and the lengths of fixed-size encoded rows. Labels are
 * dataset.labels, else the first of the common names (labels, y, ...) that is
 * not the images, in dataset.labels_path's file when set; labels of K > 1
 * values a row are targets. Called under the HDF5 lock. Thread safety: one
 * caller's. */
#ifndef SLUICE_FORMATS_H5ARRAY_LABELS_H
#define SLUICE_FORMATS_H5ARRAY_LABELS_H

#include "formats/hdf5/h5array_dset.h"

typedef struct sl_h5_labels {
  hid_t file;                /* dataset.labels_path's file (-1: none) */
  sl_h5_dset lab, tgt;       /* labels, dataset.targets (d < 0: none) */
  bool lab_targets;          /* lab has K > 1 values a row: read as targets */
  const sl_h5_dset *targets; /* what src->targets is read from, or NULL */
  bool argmax;               /* dataset.label_from = argmax */
  int64_t *ints;             /* lab's n values (read as labels) */
  double *floats;            /* lab's n values, when floats */
} sl_h5_labels;

/* Opens and checks the labels and targets of the n images of dataset img
 * in file, sets src->target_width, and reads the labels (the targets wait
 * for the index: sl_h5_labels_read_targets). *L must start as
 * SL_H5_LABELS_NONE; sl_h5_labels_close frees it on any return. Errors:
 * SL_EFORMAT, SL_ECONFIG (argmax without an (N,K) dataset), SL_ENOMEM. */
#define SL_H5_LABELS_NONE                                                      \
  ((sl_h5_labels){.file = -1, .lab = {.d = -1}, .tgt = {.d = -1}})
sl_status sl_h5_labels_open(sl_source *src, hid_t file, const sl_h5_dset *img,
                            uint64_t n, sl_h5_labels *L, sl_err *err);
/* Reads the targets into src->targets (allocated by sl_source_alloc_index),
 * if any. Errors: SL_EFORMAT. */
sl_status sl_h5_labels_read_targets(sl_source *src, const sl_h5_labels *L,
                                    sl_err *err);
/* Sample i's label into *label (-1: none): NULL, or why it is not one.
 * After sl_h5_labels_read_targets (argmax reads the targets). */
const char *sl_h5_label_of(const sl_source *src, const sl_h5_labels *L,
                           uint64_t i, int64_t *label);
/* Closes the datasets and the labels' file, frees the values. */
void sl_h5_labels_close(sl_h5_labels *L);

/* Fixed-size encoded images: the (N,) integer lengths of img's n rows of
 * row_bytes (dataset.lengths, else the first of lengths, sizes, lens),
 * opened into *len (the caller closes it) and read whole into *out (n
 * int64, the caller frees). Errors: SL_EFORMAT, SL_ENOMEM. */
sl_status sl_h5_read_lengths(sl_source *src, hid_t file, const sl_h5_dset *img,
                             uint64_t n, uint64_t row_bytes, sl_h5_dset *len,
                             int64_t **out, sl_err *err);

#endif
