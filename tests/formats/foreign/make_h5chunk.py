#!/usr/bin/python3
"""Writes test_h5chunk's HDF5 files with h5py (Debian's python3-h5py): one
dataset /images per file, chunked with each chunk index and storage case
sluice's chunk index parser reads, for the C test to compare its parse with
HDF5's own H5Dget_chunk_info:

    make_h5chunk.py OUTDIR

    bt_*      h5py's default libver: layout v3, a v1 B-tree
    fa_*      libver='latest': a fixed array (paged past 1024 chunks)
    single_*  libver='latest', one chunk
    implicit  libver='latest', allocated early, unfiltered: chunks in a row
    ea*       libver='latest', the first axis unlimited: an extensible
              array (entries in the index block only; super blocks, gzip;
              a maximum shape wider than the shape; chunks and whole
              blocks never written; 5000 chunks; 140000 chunks, whose last
              data blocks are paged, all written and mostly not)
    bt2       libver='latest', two unlimited axes: a v2 B-tree (not
              parsed: the parser must say so)
"""
import os
import sys

import h5py
import numpy as np

out = sys.argv[1]
rng = np.random.default_rng(1515)


def path(name):
    return os.path.join(out, name + ".h5")


def noisy(*shape):
    # half noise, half flat: gzip chunk sizes vary
    a = rng.integers(0, 256, shape, dtype=np.uint8)
    a[rng.random(shape[0]) < 0.5] = 7
    return a


with h5py.File(path("bt_gzip"), "w") as f:
    f.create_dataset("images", data=noisy(300, 8, 8, 3), chunks=(1, 8, 8, 3),
                     compression="gzip", shuffle=True, fletcher32=True)
# A grid over two axes with partial edge chunks: (7, 2) chunks.
with h5py.File(path("bt_grid"), "w") as f:
    f.create_dataset("images", data=noisy(20, 8, 8, 3), chunks=(3, 4, 8, 3))
# After a 512-byte userblock; chunks 1, 3, 4 never written.
with h5py.File(path("bt_ub"), "w", userblock_size=512) as f:
    d = f.create_dataset("images", (12, 8, 8, 3), dtype=np.uint8,
                         chunks=(2, 8, 8, 3))
    d[0:2] = noisy(2, 8, 8, 3)
    d[4:6] = noisy(2, 8, 8, 3)
    d[10:12] = noisy(2, 8, 8, 3)
# gzip, and chunk 2 stored raw with the filter skipped (filter mask 1).
with h5py.File(path("bt_mask"), "w") as f:
    d = f.create_dataset("images", data=noisy(6, 8, 8, 3), chunks=(1, 8, 8, 3),
                         compression="gzip")
    d.id.write_direct_chunk((2, 0, 0, 0), noisy(1, 8, 8, 3).tobytes(),
                            filter_mask=1)
# 4500 chunks: a B-tree of more than one level.
with h5py.File(path("bt_big"), "w") as f:
    f.create_dataset("images", data=noisy(4500, 1, 1, 1), chunks=(1, 1, 1, 1))
with h5py.File(path("fa_gzip"), "w", libver="latest") as f:
    f.create_dataset("images", data=noisy(1500, 4, 4, 3), chunks=(1, 4, 4, 3),
                     compression="gzip", shuffle=True)
with h5py.File(path("fa_plain"), "w", libver="latest") as f:
    f.create_dataset("images", data=noisy(40, 4, 4, 3), chunks=(3, 4, 4, 3))
# Pages 1 and 2 of the fixed array never written.
with h5py.File(path("fa_unalloc"), "w", libver="latest") as f:
    d = f.create_dataset("images", (2100, 2, 2, 3), dtype=np.uint8,
                         chunks=(1, 2, 2, 3))
    d[0:10] = noisy(10, 2, 2, 3)
with h5py.File(path("single_gzip"), "w", libver="latest") as f:
    f.create_dataset("images", data=noisy(5, 8, 8, 3), chunks=(5, 8, 8, 3),
                     compression="gzip")
with h5py.File(path("single_plain"), "w", libver="latest") as f:
    f.create_dataset("images", data=noisy(5, 8, 8, 3), chunks=(5, 8, 8, 3))
with h5py.File(path("implicit"), "w", libver="latest") as f:
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    dcpl.set_chunk((2, 8, 8, 3))
    dcpl.set_alloc_time(h5py.h5d.ALLOC_TIME_EARLY)
    space = h5py.h5s.create_simple((9, 8, 8, 3))
    dsid = h5py.h5d.create(f.id, b"images", h5py.h5t.NATIVE_UINT8, space,
                           dcpl=dcpl)
    h5py.Dataset(dsid)[...] = noisy(9, 8, 8, 3)
with h5py.File(path("ea"), "w", libver="latest") as f:
    f.create_dataset("images", data=noisy(6, 8, 8, 3), chunks=(2, 8, 8, 3),
                     maxshape=(None, 8, 8, 3))
# Super blocks (300 chunks: index block 4, its data blocks 240, then
# EASB), filtered entries.
with h5py.File(path("ea_gzip"), "w", libver="latest") as f:
    f.create_dataset("images", data=noisy(300, 4, 4, 3), chunks=(1, 4, 4, 3),
                     compression="gzip", shuffle=True, maxshape=(None, 4, 4, 3))
# A maximum shape wider than the shape: entries over the maximum grid.
with h5py.File(path("ea_grid"), "w", libver="latest") as f:
    f.create_dataset("images", data=noisy(20, 8, 8, 3), chunks=(3, 4, 8, 3),
                     maxshape=(None, 16, 8, 3))
with h5py.File(path("ea_unalloc"), "w", libver="latest") as f:
    d = f.create_dataset("images", (3000, 1, 1, 3), dtype=np.uint8,
                         chunks=(1, 1, 1, 3), maxshape=(None, 1, 1, 3))
    d[0:10] = noisy(10, 1, 1, 3)
    d[2500:2510] = noisy(10, 1, 1, 3)
with h5py.File(path("ea_big"), "w", libver="latest") as f:
    f.create_dataset("images", data=noisy(5000, 1, 1, 1), chunks=(1, 1, 1, 1),
                     maxshape=(None, 1, 1, 1))
# Past 131060 entries the data blocks hold 2048 entries in pages of 1024.
with h5py.File(path("ea_paged"), "w", libver="latest") as f:
    f.create_dataset("images", data=noisy(140000, 1, 1, 1), chunks=(1, 1, 1, 1),
                     maxshape=(None, 1, 1, 1))
with h5py.File(path("ea_pages_unwritten"), "w", libver="latest") as f:
    d = f.create_dataset("images", (140000, 1, 1, 1), dtype=np.uint8,
                         chunks=(1, 1, 1, 1), maxshape=(None, 1, 1, 1))
    for lo in (0, 131500, 139990):
        d[lo:lo + 10] = noisy(10, 1, 1, 1)
with h5py.File(path("bt2"), "w", libver="latest") as f:
    f.create_dataset("images", data=noisy(6, 8, 8, 3), chunks=(2, 4, 8, 3),
                     maxshape=(None, None, 8, 3))
