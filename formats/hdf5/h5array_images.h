/* The pixel array of an HDF5 array file (formats/hdf5/source_h5array.c): found
 * by name or by a scan of the root, and checked at open, naming the
 * dataset in what it refuses: its type, shape, axis order and storage
 * (contiguous, or chunked: the chunk table is formats/hdf5/h5array_chunks.c's),
 * or its encoded images (vlen uint8, or fixed-size padded rows).
 * Called under the HDF5 lock. Thread safety: a geometry is one caller's. */
#ifndef SLUICE_FORMATS_H5ARRAY_IMAGES_H
#define SLUICE_FORMATS_H5ARRAY_IMAGES_H

#include "formats/hdf5/h5array_dset.h"

/* The pixel array as checked: where its samples lie, and the sample's
 * height, width, channels, codec and axis order. */
typedef struct sl_h5_geom {
  bool vlen;    /* encoded images: (N,) vlen uint8 descriptors at addr, 16
                   bytes each, into global heaps */
  bool fixed;   /* encoded images: (N, L) uint8 or (N,) opaque rows of
                   `bytes` = L bytes each from addr, padded; lengths apart */
  uint64_t ub;  /* vlen: the userblock's size */
  bool chunked; /* else contiguous at addr */
  hsize_t cdims[SL_H5_MAX_RANK]; /* chunked: the chunk shape */
  uint64_t *chunk_addr;          /* chunked: file offset of chunk c */
  uint32_t *chunk_len;           /* filtered: stored bytes of chunk c */
  uint32_t *chunk_mask; /* filtered: chunk c's filter mask or SL_H5_FILL */
  bool filtered;
  sl_h5_pipeline pipe; /* filtered: the pipeline */
  uint8_t fill;        /* the fill value */
  uint64_t per_chunk;  /* chunked: samples a chunk holds */
  bool tiled;          /* chunked: a sample spans several chunks */
  sl_h5_tiling tiling; /* tiled: the shapes (formats/hdf5/h5tiles.h) */
  uint64_t tiles;      /* chunks per group: tiled ? tiling.tiles : 1 */
  sl_h5_tile *tile;    /* tiled: every chunk, offset within its group */
  uint64_t *span_addr; /* tiled: group j's chunks lie in one span */
  uint32_t *span_len;  /*   of the file (0: no chunk of it written) */
  uint64_t n, addr, bytes;
  uint32_t h, w, c;
  uint8_t codec;
  sl_axis_order order;
} sl_h5_geom;

/* Opens the pixel array into a: dataset.images, else the first of the
 * common names (images, x, ...), else the one uint8 dataset of rank 3 or 4
 * at the root. Errors: SL_EFORMAT (none, or several: the message lists
 * them). */
sl_status sl_h5_find_images(sl_source *src, hid_t file, sl_h5_dset *a,
                            sl_err *err);
/* Checks the pixel array a of file and fills *g; for a chunked array
 * (g->chunked) what the chunks hold is left to sl_h5_chunk_table. Errors:
 * SL_EFORMAT, naming the dataset and why. */
sl_status sl_h5_check_images(sl_source *src, const sl_h5_dset *a, hid_t file,
                             sl_h5_geom *g, sl_err *err);

#endif
