/* The description of an HDF5 array file's source (sl_source_describe,
 * `sluice info`): the pixel array, its storage and chunks, the labels,
 * targets and class names, and advice on dataset.chunk_cache where reading
 * a sample undoes a chunk. Made at open by formats/hdf5/source_h5array.c; no
 * HDF5 call. */
#ifndef SLUICE_FORMATS_H5ARRAY_DESCRIBE_H
#define SLUICE_FORMATS_H5ARRAY_DESCRIBE_H

#include "formats/hdf5/h5array_images.h"
#include "formats/hdf5/h5array_labels.h"
#include "formats/hdf5/h5array_names.h"

/* What the description is made of: the pixel array img as checked (g), the
 * lengths dataset len of fixed-size rows, the labels and the class names. */
typedef struct sl_h5_described {
  const sl_h5_dset *img;
  const sl_h5_geom *g;
  const sl_h5_dset *len;
  const sl_h5_labels *labels;
  const sl_h5_names *classes;
} sl_h5_described;

/* Sets src->desc (after src->h5f is set). Errors: SL_ENOMEM. */
sl_status sl_h5_describe(sl_source *src, const sl_h5_described *what,
                         sl_err *err);

#endif
