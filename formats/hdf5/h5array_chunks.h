/* The chunk table of a chunked HDF5 pixel array
 * (formats/hdf5/source_h5array.c): every chunk's file offset, stored size and
 * filter mask, checked against the file at open, and what the workers need to
 * undo them.
 *
 * The chunk index is read from the file's bytes (formats/hdf5/h5chunk.c: v1
 * B-trees, fixed and extensible arrays, single and implicit indexes), in
 * one pass. Other indexes (v2 B-trees: more than one unlimited axis with
 * libver='latest') are asked of HDF5 chunk by chunk, up to
 * SL_H5_MAX_CHUNKS: in HDF5 1.10.8 H5Dget_chunk_info_by_coord (like
 * H5Dget_chunk_info by index) iterates the whole chunk index on every call,
 * quadratic (measured 0.07 s for 1000 chunks, 0.48 s for 4000, 415 s for
 * 100000). HDF5 before 1.14.4 gives that address without the userblock
 * (HDF5 bug #3003): added here. Memory: 16 bytes per chunk while indexing,
 * 8 kept until the sample index is built.
 *
 * Called under the HDF5 lock. Thread safety: a geometry is one caller's. */
#ifndef SLUICE_FORMATS_H5ARRAY_CHUNKS_H
#define SLUICE_FORMATS_H5ARRAY_CHUNKS_H

#include "formats/hdf5/h5array_images.h"

enum { SL_H5_MAX_CHUNKS = 4096 };

/* Fills g's chunk table (chunk_addr, chunk_len, chunk_mask; tiled: tile,
 * span_addr, span_len, which the caller frees) for the chunked pixel array
 * a of file, as sl_h5_check_images left g. Errors: SL_EFORMAT (a damaged
 * index, chunks past the file, groups of chunks scattered over it),
 * SL_ETOOBIG (more chunks never written than dataset.max_fill_samples),
 * SL_ENOMEM. */
sl_status sl_h5_chunk_table(sl_source *src, const sl_h5_dset *a, hid_t file,
                            sl_h5_geom *g, sl_err *err);
/* Filtered chunks, chunks never written, or samples that span chunks: the
 * workers undo the filters, write the fill value and copy chunks into
 * place (sl_source_unfilter). Sets src->h5f (NULL when none of these),
 * taking g->chunk_mask (tiled: g->tile, and a mask per group made here).
 * Errors: SL_ENOMEM. */
sl_status sl_h5_make_filtered(sl_source *src, const sl_h5_dset *a,
                              sl_h5_geom *g, sl_err *err);

#endif
