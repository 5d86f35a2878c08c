/* The class names of an HDF5 array dataset, read at open by
 * formats/hdf5/source_h5array.c.
 *
 * Class names: a rank-1 string dataset (classes, class_names, label_names,
 * or the course files' list_classes) in the images' file or the labels'
 * file, else such a string attribute of the images dataset, the labels
 * dataset or the root group; the first found is taken. Fixed-length
 * (numpy's 'S') and variable-length (h5py's str) strings are read; other
 * types under those names (a class count) are not names and are skipped.
 * At most 65,536 names of 1,024 bytes each. */
#ifndef SLUICE_FORMATS_H5ARRAY_NAMES_H
#define SLUICE_FORMATS_H5ARRAY_NAMES_H

#include <hdf5.h>

#include "formats/core/source_impl.h"

typedef struct sl_h5_names {
  char *blob; /* k NUL-terminated names back to back (the caller frees) */
  size_t len;
  uint32_t k;
  char from[320]; /* where they were read, for the description */
} sl_h5_names;

/* Where to look, in order (an id < 0 is skipped). */
typedef struct sl_h5_names_where {
  hid_t file, labels_file; /* the images' file; dataset.labels_path's */
  const char *labels_path;
  hid_t images; /* the pixel dataset and its name */
  const char *images_name;
  hid_t labels; /* the labels dataset and its name */
  const char *labels_name;
} sl_h5_names_where;

/* The first names found into *out (k 0 when none). Errors: SL_EFORMAT (a
 * candidate of names that cannot be read: the message names it),
 * SL_ENOMEM. */
sl_status sl_h5_class_names(sl_source *src, const sl_h5_names_where *where,
                            sl_h5_names *out, sl_err *err);

#endif
