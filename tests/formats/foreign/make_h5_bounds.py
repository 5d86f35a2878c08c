#!/usr/bin/python3
"""Writes test_h5_bounds's HDF5 files with h5py (Debian's python3-h5py):
small files whose shape, not their bytes, would size what sluice builds at
open (issue 25).

    make_h5_bounds.py OUTDIR

    sparse_huge   images (2^32, 4, 4) uint8 in chunks of 1,024 rows, none
                  written: 1.4 KB claiming 2^32 samples (a 103 GB index)
    sparse_part   images (102,400, 4, 4) in chunks of 1,024 rows, the
                  first 2 chunks written: 100,352 samples of fill value
    vlen_png      images: 1,024 vlen uint8 elements, each the same PNG of
                  1x1 pixel (test_h5_bounds grafts heap collections onto
                  it and points the descriptors at them)
"""
import os
import sys
import zlib
import struct

import h5py
import numpy as np

out = sys.argv[1]


def path(name):
    return os.path.join(out, name + ".h5")


with h5py.File(path("sparse_huge"), "w") as f:
    f.create_dataset("images", (2**32, 4, 4), dtype=np.uint8,
                     chunks=(1024, 4, 4))
with h5py.File(path("sparse_part"), "w") as f:
    d = f.create_dataset("images", (100 * 1024, 4, 4), dtype=np.uint8,
                         chunks=(1024, 4, 4))
    d[0:2048] = np.arange(2048 * 16, dtype=np.uint32).reshape(
        2048, 4, 4).astype(np.uint8)


def png_1x1():
    def chunk(kind, data):
        c = struct.pack(">I", len(data)) + kind + data
        return c + struct.pack(">I", zlib.crc32(kind + data))
    ihdr = struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr)
            + chunk(b"IDAT", zlib.compress(b"\x00\x80")) + chunk(b"IEND", b""))


with h5py.File(path("vlen_png"), "w") as f:
    p = np.frombuffer(png_1x1(), dtype=np.uint8)
    d = f.create_dataset("images", (1024,), dtype=h5py.vlen_dtype(np.uint8))
    for i in range(1024):
        d[i] = p
