#!/usr/bin/python3
"""Writes the HDF5 array fixtures of test_h5array with h5py (Debian's
python3-h5py), the way h5py users write their image sets, and beside each
good one what numpy reads back, for the C test to compare with:

    make_h5.py OUTDIR

    NAME.h5    the fixture
    NAME.rgb   numpy's pixels of every sample as (N, H, W, 3) uint8 RGB:
               NCHW transposed, gray repeated in the three channels
    NAME.lab   the expected labels, int32 little-endian (-1: none)
    NAME.tgt   the expected targets, float32 little-endian (N, K), if any

The bad_* files are damaged or odd inputs that must be refused.
"""
import os
import shutil
import sys

import h5py
import numpy as np

out = sys.argv[1]
rng = np.random.default_rng(15)


def px(*shape):
    return rng.integers(0, 256, shape, dtype=np.uint8)


def expect(name, hwc, labels, targets=None):
    hwc = np.asarray(hwc, dtype=np.uint8)
    if hwc.ndim == 3:
        hwc = hwc[..., None]
    if hwc.shape[-1] == 1:
        hwc = np.repeat(hwc, 3, axis=-1)
    hwc.tofile(os.path.join(out, name + ".rgb"))
    np.asarray(labels, dtype="<i4").tofile(os.path.join(out, name + ".lab"))
    if targets is not None:
        np.asarray(targets, dtype="<f4").tofile(os.path.join(out, name + ".tgt"))


def path(name):
    return os.path.join(out, name + ".h5")


# NHWC colour, (N,) int64 labels under the common names.
with h5py.File(path("nhwc"), "w") as f:
    f["images"] = px(6, 20, 20, 3)
    f["labels"] = np.array([3, 0, -1, 7, 2, 1], dtype=np.int64)
with h5py.File(path("nhwc"), "r") as f:
    expect("nhwc", f["images"][()], f["labels"][()])

# NCHW colour (BigGAN's imgs), (N, 1) int32 labels as y.
with h5py.File(path("nchw"), "w") as f:
    f["imgs"] = px(5, 3, 16, 16)
    f["y"] = np.array([[1], [2], [3], [4], [0]], dtype=np.int32)
with h5py.File(path("nchw"), "r") as f:
    expect("nchw", f["imgs"][()].transpose(0, 2, 3, 1), f["y"][()][:, 0])

# Gray (N, H, W) as x, one-hot float (N, 3) y: targets, no labels.
onehot = np.eye(3, dtype=np.float32)[[2, 0, 1, 2]]
with h5py.File(path("gray"), "w") as f:
    f["x"] = px(4, 12, 12)
    f["y"] = onehot
with h5py.File(path("gray"), "r") as f:
    expect("gray", f["x"][()], [-1] * 4, f["y"][()])

# The course-style train_set_x / train_set_y, not square.
with h5py.File(path("course"), "w") as f:
    f["train_set_x"] = px(3, 8, 10, 3)
    f["train_set_y"] = np.array([1, 0, 1], dtype=np.uint8)
    f["list_classes"] = np.array([b"non-cat", b"cat"])
with h5py.File(path("course"), "r") as f:
    expect("course", f["train_set_x"][()], f["train_set_y"][()])

# A 512-byte userblock (MATLAB v7.3), PCam-like (N, 1, 1, 1) uint8 labels.
with h5py.File(path("userblock"), "w", userblock_size=512) as f:
    f["images"] = px(3, 9, 9, 3)
    f["labels"] = np.array([1, 0, 1], dtype=np.uint8).reshape(3, 1, 1, 1)
with open(path("userblock"), "r+b") as fh:
    fh.write(b"MATLAB 7.3 MAT-file, sluice test fixture")
with h5py.File(path("userblock"), "r") as f:
    expect("userblock", f["images"][()], f["labels"][()].reshape(3))

# No common names: two uint8 arrays, ambiguous; float64 targets by name.
with h5py.File(path("two"), "w") as f:
    f["a"] = px(2, 4, 4, 3)
    f["b"] = px(3, 5, 5, 1)
    f["tg"] = rng.normal(size=(3, 2))
with h5py.File(path("two"), "r") as f:
    expect("two", f["b"][()], [-1] * 3, f["tg"][()].astype(np.float32))

# Chunked, unfiltered: one sample per chunk; 4 per chunk with a partial
# edge chunk (10 = 4 + 4 + 2); and chunks after a 512-byte userblock.
with h5py.File(path("chunk1"), "w") as f:
    f.create_dataset("images", data=px(5, 10, 10, 3), chunks=(1, 10, 10, 3))
    f["labels"] = np.arange(5, dtype=np.int16)
with h5py.File(path("chunk1"), "r") as f:
    expect("chunk1", f["images"][()], f["labels"][()])
with h5py.File(path("chunk4"), "w") as f:
    f.create_dataset("imgs", data=px(10, 3, 8, 8), chunks=(4, 3, 8, 8))
    f["labels"] = np.arange(10, dtype=np.int64) % 3
with h5py.File(path("chunk4"), "r") as f:
    expect("chunk4", f["imgs"][()].transpose(0, 2, 3, 1), f["labels"][()])
with h5py.File(path("chunkub"), "w", userblock_size=512) as f:
    f.create_dataset("images", data=px(6, 8, 8, 3), chunks=(2, 8, 8, 3))
with h5py.File(path("chunkub"), "r") as f:
    expect("chunkub", f["images"][()], [-1] * 6)

# Chunk indexes sluice parses: a v1 B-tree of two levels (1100 chunks,
# leaves of at most 64) with h5py's default libver; with libver='latest'
# (layout message v4) a paged fixed array (1100 chunks, pages of 1024) and a
# single chunk. An extensible array (maxshape=None, libver='latest') is
# asked of HDF5 (few chunks).
with h5py.File(path("chunkbt"), "w") as f:
    f.create_dataset("images", data=px(1100, 8, 8, 3), chunks=(1, 8, 8, 3))
    f["labels"] = (np.arange(1100) % 7).astype(np.int32)
with h5py.File(path("chunkfa"), "w", libver="latest") as f:
    f.create_dataset("images", data=px(1100, 8, 8, 3), chunks=(1, 8, 8, 3))
with h5py.File(path("chunksingle"), "w", libver="latest") as f:
    f.create_dataset("images", data=px(5, 8, 8, 3), chunks=(5, 8, 8, 3))
with h5py.File(path("chunkea"), "w", libver="latest") as f:
    f.create_dataset("images", data=px(6, 8, 8, 3), chunks=(2, 8, 8, 3),
                     maxshape=(None, 8, 8, 3))
# An appendable set (maxshape, libver='latest') of 4500 gzip chunks: an
# extensible array with super blocks, parsed by sluice (not asked of HDF5).
with h5py.File(path("ea_many"), "w", libver="latest") as f:
    f.create_dataset("images", data=px(4500, 4, 4, 3), chunks=(1, 4, 4, 3),
                     compression="gzip", maxshape=(None, 4, 4, 3))
for name in ("chunkbt", "chunkfa", "chunksingle", "chunkea", "ea_many"):
    with h5py.File(path(name), "r") as f:
        lab = f["labels"][()] if "labels" in f else [-1] * len(f["images"])
        expect(name, f["images"][()], lab)


# Filtered chunks, undone by sluice's workers: gzip+shuffle one a chunk;
# NCHW with lzf 4 a chunk, a partial edge chunk, the flat first chunk
# and the edge chunk (half fill) compressed, the noisy second stored
# unfiltered (lzf cannot shrink it: h5py skips the optional filter, filter
# mask 1); gzip+fletcher32;
# 500 samples a chunk (BigGAN-like) with a partial edge chunk; gzip with a
# chunk written raw through write_direct_chunk (filter mask 1); and chunks
# never written (the fill value 17, gzip; 0, unfiltered, in a B-tree and a
# fixed array).
with h5py.File(path("gz"), "w") as f:
    f.create_dataset("images", data=px(6, 10, 10, 3), chunks=(1, 10, 10, 3),
                     compression="gzip", shuffle=True)
    f["labels"] = np.arange(6, dtype=np.int64)
lzf = px(10, 3, 8, 8)
lzf[0:4] = 9
with h5py.File(path("lzf"), "w") as f:
    f.create_dataset("imgs", data=lzf, chunks=(4, 3, 8, 8), compression="lzf")
with h5py.File(path("fletcher"), "w") as f:
    f.create_dataset("images", data=px(5, 8, 8, 3), chunks=(2, 8, 8, 3),
                     compression="gzip", fletcher32=True)
many = px(600, 8, 8, 3)
many[::3] = 0
with h5py.File(path("many500"), "w") as f:
    f.create_dataset("images", data=many, chunks=(500, 8, 8, 3),
                     compression="gzip", shuffle=True)
with h5py.File(path("mask"), "w") as f:
    d = f.create_dataset("images", data=px(4, 8, 8, 3), chunks=(1, 8, 8, 3),
                         compression="gzip")
    d.id.write_direct_chunk((2, 0, 0, 0), px(1, 8, 8, 3).tobytes(),
                            filter_mask=1)
with h5py.File(path("unalloc"), "w") as f:
    d = f.create_dataset("images", (6, 8, 8, 3), dtype=np.uint8,
                         chunks=(2, 8, 8, 3), compression="gzip", fillvalue=17)
    d[0:2] = px(2, 8, 8, 3)
    d[4:6] = px(2, 8, 8, 3)
with h5py.File(path("unalloc_raw"), "w") as f:
    d = f.create_dataset("images", (6, 8, 8, 3), dtype=np.uint8,
                         chunks=(2, 8, 8, 3))
    d[0:2] = px(2, 8, 8, 3)
    d[4:6] = px(2, 8, 8, 3)
with h5py.File(path("unalloc_fa"), "w", libver="latest") as f:
    d = f.create_dataset("images", (6, 8, 8, 3), dtype=np.uint8,
                         chunks=(2, 8, 8, 3))
    d[0:2] = px(2, 8, 8, 3)
# 1000 samples in 20 gzip chunks of 50: the quasi_random order's blocks.
q50 = px(1000, 8, 8, 3)
q50[1::2] = 5
with h5py.File(path("q50"), "w") as f:
    f.create_dataset("images", data=q50, chunks=(50, 8, 8, 3),
                     compression="gzip")
for name in ("gz", "fletcher", "many500", "mask", "unalloc", "unalloc_raw",
             "unalloc_fa", "q50"):
    with h5py.File(path(name), "r") as f:
        lab = f["labels"][()] if "labels" in f else [-1] * len(f["images"])
        expect(name, f["images"][()], lab)
with h5py.File(path("lzf"), "r") as f:
    expect("lzf", f["imgs"][()].transpose(0, 2, 3, 1), [-1] * 10)
    assert f["imgs"].id.get_chunk_info(1).filter_mask == 1  # stored raw

# Images that span chunks, read a row of chunks at a time: chunks cutting
# the rows (unfiltered, a v1 B-tree); h5py's own auto-chunking of a
# compressed array ((64, 48, 48, 3) gets chunks (16, 24, 24, 2): the channel
# axis split 2 + 1, partial edge chunks); gzip+shuffle chunks (5, 8, 8, 1)
# over (12, 20, 20, 3), partial on every axis, with labels; NCHW with lzf;
# gray (N, H, W); gzip+fletcher32 in a fixed array (libver='latest'); an
# extensible array (maxshape, asked of HDF5); chunks never written (fill
# value 9) in a group partly written and in groups not written at all.
with h5py.File(path("tiles_split"), "w") as f:
    f.create_dataset("images", data=px(4, 8, 8, 3), chunks=(1, 4, 8, 3))
with h5py.File(path("tiles_auto"), "w") as f:
    f.create_dataset("images", data=px(64, 48, 48, 3), compression="gzip")
    assert f["images"].chunks[1] < 48, f["images"].chunks
with h5py.File(path("tiles_gz"), "w") as f:
    f.create_dataset("images", data=px(12, 20, 20, 3), chunks=(5, 8, 8, 1),
                     compression="gzip", shuffle=True)
    f["labels"] = (np.arange(12) % 4).astype(np.int64)
with h5py.File(path("tiles_nchw"), "w") as f:
    f.create_dataset("imgs", data=px(6, 3, 16, 16), chunks=(2, 1, 16, 8),
                     compression="lzf")
with h5py.File(path("tiles_gray"), "w") as f:
    f.create_dataset("images", data=px(7, 10, 10), chunks=(3, 4, 4),
                     compression="gzip")
with h5py.File(path("tiles_fa"), "w", libver="latest") as f:
    f.create_dataset("images", data=px(5, 12, 12, 3), chunks=(2, 5, 12, 3),
                     compression="gzip", fletcher32=True)
with h5py.File(path("tiles_ea"), "w", libver="latest") as f:
    f.create_dataset("images", data=px(6, 8, 8, 3), chunks=(2, 4, 8, 3),
                     maxshape=(None, 8, 8, 3))
with h5py.File(path("tiles_unalloc"), "w") as f:
    d = f.create_dataset("images", (6, 8, 8, 3), dtype=np.uint8,
                         chunks=(2, 4, 4, 3), compression="gzip", fillvalue=9)
    d[0:2, 0:4] = px(2, 4, 8, 3)
for name in ("tiles_split", "tiles_auto", "tiles_gz", "tiles_gray",
             "tiles_fa", "tiles_ea", "tiles_unalloc"):
    with h5py.File(path(name), "r") as f:
        lab = f["labels"][()] if "labels" in f else [-1] * len(f["images"])
        expect(name, f["images"][()], lab)
with h5py.File(path("tiles_nchw"), "r") as f:
    expect("tiles_nchw", f["imgs"][()].transpose(0, 2, 3, 1), [-1] * 6)
# A row of chunks spread over the file (written piecemeal, 2 MiB of
# another dataset between its two chunks): refused, not read as a span.
with h5py.File(path("bad_scatter"), "w") as f:
    d = f.create_dataset("images", (4, 8, 8, 3), dtype=np.uint8,
                         chunks=(4, 4, 8, 3))
    d[:, 0:4] = px(4, 4, 8, 3)
    f.flush()  # the first chunk leaves HDF5's chunk cache: allocated here
    f["other"] = px(2 << 20)
    d[:, 4:8] = px(4, 4, 8, 3)

# Class names: the course's list_classes (fixed-length strings) above; an
# attribute of the images (h5py's variable-length str); an attribute of the
# root (fixed); a label_names dataset of variable-length UTF-8 strings
# beside a `classes` that is a count (an integer: not names, skipped).
with h5py.File(path("chunk1"), "a") as f:
    f["images"].attrs["class_names"] = ["zero", "one", "", "three", "four",
                                        "five", "six", "seven"]
with h5py.File(path("chunk4"), "a") as f:
    f.attrs["classes"] = np.array([b"a", b"bb", b"ccc"])
with h5py.File(path("gz"), "a") as f:
    f["classes"] = 3
    f.create_dataset("label_names", data=["k\u00f6nig", "cat", "dog"],
                     dtype=h5py.string_dtype())
for name, cls in (("course", ["non-cat", "cat"]),
                  ("chunk1", ["zero", "one", "", "three", "four", "five",
                              "six", "seven"]),
                  ("chunk4", ["a", "bb", "ccc"]),
                  ("gz", ["k\u00f6nig", "cat", "dog"])):
    with open(os.path.join(out, name + ".cls"), "wb") as fh:
        fh.write(b"".join(c.encode() + b"\n" for c in cls))


def chunk_at(name, k):
    with h5py.File(path(name), "r") as f:
        return f["images"].id.get_chunk_info(k).byte_offset


def damage(src, dst, sig, nth, new):
    """dst: src with the nth occurrence of sig replaced by new."""
    b = bytearray(open(path(src), "rb").read())
    at = -1
    for _ in range(nth + 1):
        at = b.index(sig, at + 1)
    b[at:at + len(new)] = new
    open(path(dst), "wb").write(bytes(b))

# PCam's layout: the pixels x in one file, the (N, 1, 1, 1) labels y in
# another (dataset.labels_path). One-hot float labels read as targets and,
# with dataset.label_from = argmax, as labels too (an all-zero row: -1).
with h5py.File(path("pcam"), "w") as f:
    f["x"] = px(5, 8, 8, 3)
with h5py.File(path("pcam_y"), "w") as f:
    f["y"] = np.array([1, 0, 0, 1, 1], dtype=np.uint8).reshape(5, 1, 1, 1)
with h5py.File(path("pcam"), "r") as f, h5py.File(path("pcam_y"), "r") as g:
    expect("pcam", f["x"][()], g["y"][()].reshape(5))
hot = np.eye(3, dtype=np.float32)[[2, 0, 1, 1, 0]]
hot[3] = 0
with h5py.File(path("onehot"), "w") as f:
    f["images"] = px(5, 8, 8, 3)
    f["labels"] = hot
with h5py.File(path("onehot"), "r") as f:
    y = f["labels"][()]
    lab = np.where(y.max(axis=1) > 0, y.argmax(axis=1), -1)
    expect("onehot", f["images"][()], lab, y)

# Damaged or unsupported inputs.
with h5py.File(path("bad_many"), "w", libver="latest") as f:
    f.create_dataset("images", data=px(4097, 1, 1, 3), chunks=(1, 1, 1, 3),
                     maxshape=(None, None, 1, 3))
damage("chunkbt", "bad_tree", b"TREE", 2, b"TREX")
damage("chunkfa", "bad_fadb", b"FADB", 0, b"FADX")
# Chunks whose stored bytes are damaged: gzip garbage in chunk 1, a flipped
# byte under fletcher32 in chunk 0 (found when read, naming the sample).
shutil.copy(path("gz"), path("bad_gzbytes"))
with open(path("bad_gzbytes"), "r+b") as f:
    f.seek(chunk_at("gz", 1))
    f.write(b"garbage!" * 4)
shutil.copy(path("fletcher"), path("bad_fletcher"))
with open(path("bad_fletcher"), "r+b") as f:
    f.seek(chunk_at("fletcher", 0) + 5)
    b = f.read(1)
    f.seek(-1, 1)
    f.write(bytes([b[0] ^ 0x40]))
# A shape whose sample size overflows what sluice reads (never written).
with h5py.File(path("bad_huge"), "w") as f:
    f.create_dataset("images", (4, 40000, 40000, 3), dtype=np.uint8)
with h5py.File(path("bad_float"), "w") as f:
    f["images"] = rng.random((2, 4, 4, 3), dtype=np.float32)
with h5py.File(path("bad_rank2"), "w") as f:
    f["images"] = px(4, 16)
with h5py.File(path("bad_zero"), "w") as f:
    f["images"] = np.zeros((0, 4, 4, 3), dtype=np.uint8)
with h5py.File(path("bad_chunked"), "w") as f:
    f.create_dataset("images", data=px(4, 8, 8, 3), chunks=(2, 8, 8, 3),
                     shuffle=True, scaleoffset=0)
with h5py.File(path("bad_vlen"), "w") as f:
    d = f.create_dataset("images", (2,), dtype=h5py.vlen_dtype(np.uint8))
    d[0] = np.frombuffer(b"\xff\xd8\xff\xe0 not really", dtype=np.uint8)
    d[1] = np.frombuffer(b"\x89PNG\r\n\x1a\n", dtype=np.uint8)
with h5py.File(path("bad_labels"), "w") as f:
    f["images"] = px(6, 4, 4, 3)
    f["labels"] = np.arange(5)
with h5py.File(path("bad_4ch"), "w") as f:
    f["images"] = px(2, 4, 4, 4)
with h5py.File(path("bad_axes"), "w") as f:
    f["images"] = px(2, 5, 6, 7)
# The nhwc file cut inside its pixel array.
shutil.copy(path("nhwc"), path("bad_cut"))
with open(path("bad_cut"), "r+b") as fh:
    fh.truncate(os.path.getsize(path("nhwc")) - 600)

# Encoded images: a vlen uint8 dataset of PNG and JPEG files (what h5py
# users write with vlen_dtype), after a userblock, with labels; numpy's
# pixels come from PIL's decode (PNG exact; JPEG within a step).
import io  # noqa: E402

from PIL import Image  # noqa: E402

enc, dec, kinds = [], [], []
for i in range(6):
    a = px(16, 16, 3)
    a[:, :, 1] = a[:, :, 0] // 2  # some structure for JPEG
    im = Image.fromarray(a)
    b = io.BytesIO()
    if i % 2 == 0:
        im.save(b, format="PNG")
    else:
        im.save(b, format="JPEG", quality=95)
    raw = b.getvalue()
    enc.append(np.frombuffer(raw, dtype=np.uint8))
    dec.append(np.asarray(Image.open(io.BytesIO(raw)).convert("RGB")))
with h5py.File(path("vlen"), "w", userblock_size=512) as f:
    d = f.create_dataset("images", (6,), dtype=h5py.vlen_dtype(np.uint8))
    for i, e in enumerate(enc):
        d[i] = e
    f["labels"] = np.arange(6, dtype=np.int64)
expect("vlen", np.stack(dec), np.arange(6))
# The same with the first heap object's length past its collection's end.
shutil.copy(path("vlen"), path("bad_heap"))
with open(path("bad_heap"), "r+b") as fh:
    blob = bytearray(fh.read())
    g = blob.index(b"GCOL")
    blob[g + 24:g + 32] = (1 << 40).to_bytes(8, "little")
    fh.seek(0)
    fh.write(blob)

# Fixed-size encoded images: the same PNG and JPEG files as rows of an
# (N, L) uint8 dataset padded with zeros to the longest, with an int64
# `lengths`; as an (N,) opaque dataset (numpy's void) with uint32 `sizes`;
# and with the lengths under a name given by dataset.lengths. Then a row
# of length 0 and one longer than its row.
L = max(len(e) for e in enc) + 7
rows = np.zeros((6, L), dtype=np.uint8)
for i, e in enumerate(enc):
    rows[i, :len(e)] = e
lens = np.array([len(e) for e in enc], dtype=np.int64)
with h5py.File(path("fixed"), "w") as f:
    f["images"] = rows
    f["lengths"] = lens
    f["labels"] = np.arange(6, dtype=np.int64)
expect("fixed", np.stack(dec), np.arange(6))
with h5py.File(path("fixedop"), "w") as f:
    f["images"] = np.frombuffer(rows.tobytes(), dtype="V%d" % L)
    f["sizes"] = lens.astype(np.uint32)
expect("fixedop", np.stack(dec), [-1] * 6)
with h5py.File(path("fixednamed"), "w") as f:
    f["data"] = rows
    f["nbytes"] = lens.astype(np.int32)
expect("fixednamed", np.stack(dec), [-1] * 6)
for name, at, v in (("bad_len0", 3, 0), ("bad_lenbig", 4, L + 1)):
    with h5py.File(path(name), "w") as f:
        f["images"] = rows
        bad = lens.copy()
        bad[at] = v
        f["lengths"] = bad

# Blosc chunks (filter 32001) as PyTables writes them (Debian's
# python3-tables, whose default compressor this is for many users): one
# Blosc 1 buffer a chunk, with its codecs blosclz, lz4, zlib and zstd,
# byte- and bit-shuffle inside Blosc, a partial edge chunk, PyTables' own
# chunk shape (images spanning chunks), and NCHW. Half of each image is flat
# so that every chunk compresses (an incompressible one PyTables stores
# raw). The expected pixels are PyTables' reading of the file.
import tables  # noqa: E402


def half_flat(*shape):
    a = px(*shape) % 4  # a little noise on three quarters of flat rows
    a[:, shape[1] // 4:] += 40
    a[:, : shape[1] // 4] = px(shape[0], shape[1] // 4, *shape[2:])
    return a


for name, data, lib, shuf, chunks in (
        ("blosc_lz", half_flat(8, 32, 32, 3), "blosc:blosclz", 1,
         (2, 32, 32, 3)),
        ("blosc_lz4", half_flat(7, 32, 32, 3), "blosc:lz4", 1, (3, 32, 32, 3)),
        ("blosc_zlib", half_flat(6, 24, 24, 3), "blosc:zlib", 2,
         (2, 24, 24, 3)),
        ("blosc_zstd", half_flat(40, 32, 32, 3), "blosc:zstd", 1, None),
        ("blosc_nchw", half_flat(5, 3, 32, 32), "blosc:lz4", 0,
         (1, 3, 32, 32))):
    filters = tables.Filters(complevel=5, complib=lib, shuffle=shuf == 1,
                             bitshuffle=shuf == 2)
    with tables.open_file(path(name), "w") as f:
        f.create_carray("/", "images", obj=data, filters=filters,
                        chunkshape=chunks)
        f.create_array("/", "labels", obj=np.arange(len(data), dtype=np.int64))
    with h5py.File(path(name), "r") as f:  # every chunk went through Blosc
        d = f["images"].id
        assert all(d.get_chunk_info(k).filter_mask == 0
                   for k in range(d.get_num_chunks())), name
    with tables.open_file(path(name), "r") as f:
        got = f.root.images[:]
        if name == "blosc_nchw":
            got = got.transpose(0, 2, 3, 1)
        expect(name, got, f.root.labels[:])
# A Blosc chunk whose compressed bytes are damaged (its header kept).
shutil.copy(path("blosc_lz"), path("bad_blosc"))
with h5py.File(path("blosc_lz"), "r") as f:
    at = f["images"].id.get_chunk_info(1).byte_offset
with open(path("bad_blosc"), "r+b") as f:
    f.seek(at + 16)
    f.write(b"\xff" * 64)
