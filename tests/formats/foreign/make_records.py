#!/usr/bin/python3
"""Writes test_records' fixtures: TFRecord files with the `tfrecord` package
from PyPI (its TFRecordWriter, the writer the reader's users have; pinned in
scripts/test-requirements.txt) and MXNet RecordIO files with mxrecordio.py
beside this file (mxnet's layout byte for byte; mxnet does not install).

    make_records.py OUTDIR IMGDIR

IMGDIR holds the image files the C test encoded, listed in IMGDIR/list.txt.
The damaged files are the good ones with one thing broken, each named for
what; the C test knows which record of which.
"""
import gzip
import os
import struct
import sys

import tfrecord

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mxrecordio  # noqa: E402

out, imgdir = sys.argv[1], sys.argv[2]
names = [l.strip() for l in open(os.path.join(imgdir, "list.txt")) if l.strip()]
images = [open(os.path.join(imgdir, n), "rb").read() for n in names]
N = len(images)


def path(name):
    return os.path.join(out, name)


def write_tf(name, examples):
    w = tfrecord.TFRecordWriter(path(name))
    for ex in examples:
        w.write(ex)
    w.close()


# ---- TFRecord ----------------------------------------------------------------
# TensorFlow's ImageNet converter's features (build_imagenet_data.py):
# labels 1..N as it stores them (0 is its background class), then one
# record without a label.
tf = []
for i, (n, b) in enumerate(zip(names, images)):
    tf.append({
        "image/height": (32, "int"),
        "image/width": (32, "int"),
        "image/colorspace": (b"RGB", "byte"),
        "image/channels": (3, "int"),
        "image/class/label": (i + 1, "int"),
        "image/class/synset": (b"n%08d" % i, "byte"),
        "image/format": (b"JPEG" if n.endswith(".jpg") else b"PNG", "byte"),
        "image/filename": (n.encode(), "byte"),
        "image/encoded": (b, "byte"),
        "image/object/bbox/xmin": ([0.25, 0.5], "float"),
    })
tf.append({"image/encoded": (images[0], "byte"),
           "image/filename": (names[0].encode(), "byte")})
write_tf("tf.tfrecord", tf)

# TFDS's names: image, label (and file_name); labels i % 3.
write_tf("tfds.tfrecord-00000-of-00001",
         [{"image": (b, "byte"), "label": (i % 3, "int"),
           "file_name": (n.encode(), "byte")}
          for i, (n, b) in enumerate(zip(names, images))])

# Other names: read with dataset.image_key = jpg, dataset.label_key = cls.
write_tf("custom.tfrecord", [{"jpg": (b, "byte"), "cls": (100 + i, "int")}
                             for i, b in enumerate(images)])

# Damaged copies of tf.tfrecord, by its framing.
raw = open(path("tf.tfrecord"), "rb").read()
frames = []  # (offset, length) of each record
pos = 0
while pos < len(raw):
    (length,) = struct.unpack_from("<Q", raw, pos)
    frames.append((pos, length))
    pos += 16 + length


def damaged(name, data):
    with open(path(name), "wb") as f:
        f.write(data)


def flip(data, at):
    b = bytearray(data)
    b[at] ^= 0x40
    return bytes(b)


# Record 2: a byte of its image's entropy-coded data flipped (its data CRC
# fails; the Example, whose map order protobuf does not fix, still parses).
o2, l2 = frames[2]
img2 = raw.find(images[2], o2 + 12, o2 + 12 + l2)
assert img2 > 0
damaged("bad_datacrc.tfrecord", flip(raw, img2 + len(images[2]) - 10))
# Record 3: its length CRC flipped (the framing stops there).
damaged("bad_lencrc.tfrecord", flip(raw, frames[3][0] + 9))
# The last record cut short.
damaged("truncated.tfrecord", raw[:-10])
# Record 4: a length past the end, with a length CRC that holds.
b = bytearray(raw)
off4 = frames[4][0]
big = struct.pack("<Q", 1 << 40)
b[off4:off4 + 8] = big
b[off4 + 8:off4 + 12] = tfrecord.TFRecordWriter.masked_crc(big)
damaged("bad_length.tfrecord", bytes(b))
# Record 1: an Example whose nested length runs past its end, framed with
# CRCs that hold.
bad = b"\x0a\x10\x0a\x0e\x0a\x05image\x12\x20\x0a\x03"
rec = struct.pack("<Q", len(bad))
frame = (rec + tfrecord.TFRecordWriter.masked_crc(rec) + bad +
         tfrecord.TFRecordWriter.masked_crc(bad))
o1, l1 = frames[1]
damaged("bad_proto.tfrecord", raw[:o1] + frame + raw[o1 + 16 + l1:])
# A gzip-compressed TFRecord (compression_type GZIP).
damaged("gzip.tfrecord", gzip.compress(raw))

# ---- RecordIO -------------------------------------------------------------------
MAGIC = struct.pack("<I", mxrecordio.MAGIC)

# im2rec: one record per image, key i, label i (flag 0), with its .idx.
w = mxrecordio.IndexedWriter(path("im.idx"), path("im.rec"))
for i, b in enumerate(images):
    w.write_idx(i, mxrecordio.pack(float(i), b, id=i))
w.close()

# Float labels [i, i / 2] (flag 2: targets), no .idx. Record 1's id is the
# magic (payload offset 8: the writer splits inside the IRHeader); record
# 2's JPEG carries a comment holding the magic twice from payload offset
# 40 (first, empty middle and last parts).
jpeg = next(b for n, b in zip(names, images) if n.endswith(".jpg"))
com = b"ab" + MAGIC + MAGIC + b"cd"
commented = jpeg[:2] + b"\xff\xfe" + struct.pack(">H", 2 + len(com)) + com + jpeg[2:]
open(path("commented.jpg"), "wb").write(commented)
w = mxrecordio.IndexedWriter(None, path("multi.rec"))
for i, b in enumerate(images):
    if i == 2:
        b = commented
    w.write_idx(i, mxrecordio.pack([i, i / 2], b,
                                   id=mxrecordio.MAGIC if i == 1 else i))
w.close()

# InsightFace's layout: record 0 a header (flag 2, no image), the images
# (flag 0, label the identity), then one record per identity (flag 2, no
# image), all in the .idx.
w = mxrecordio.IndexedWriter(path("insight.idx"), path("insight.rec"))
w.write_idx(0, mxrecordio.pack([N + 1, N + 3], b""))
for i, b in enumerate(images):
    w.write_idx(i + 1, mxrecordio.pack(float(i % 2), b, id=i + 1))
for ident in range(2):
    w.write_idx(N + 1 + ident, mxrecordio.pack([1 + ident, N + 1], b""))
w.close()

# Damaged RecordIO, from im.rec (no .idx unless named).
rio = open(path("im.rec"), "rb").read()
offs = [int(l.split("\t")[1]) for l in open(path("im.idx"))]
damaged("bad_magic.rec", flip(rio, offs[2] + 1))  # record 2's magic
damaged("trunc.rec", rio[:-12])                    # the last record cut
damaged("badidx.rec", rio)                         # its .idx: line 3 inside
with open(path("badidx.idx"), "w") as f:
    for k, o in enumerate(offs):
        f.write("%d\t%d\n" % (k, o + 8 if k == 3 else o))
w = mxrecordio.IndexedWriter(None, path("badrec.rec"))
for i, b in enumerate(images):
    p = mxrecordio.pack(float(i), b)
    if i == 1:  # flag 1000: labels past the payload
        p = struct.pack("<I", 1000) + p[4:]
    if i == 4:  # not an image
        p = mxrecordio.pack(4.0, b"not an image file at all")
    if i == 5:  # a label that is not a class index
        p = mxrecordio.pack(2.5, b)
    w.write_idx(i, p)
w.close()

# im.rec's .idx in reverse order (sample i is record N-1-i), and one that
# lists record 2's offset again as line 4.
for name in ("reversed", "dupidx"):
    damaged(name + ".rec", rio)
with open(path("reversed.idx"), "w") as f:
    for k in reversed(range(len(offs))):
        f.write("%d\t%d\n" % (k, offs[k]))
with open(path("dupidx.idx"), "w") as f:
    for k, o in enumerate(offs):
        f.write("%d\t%d\n" % (k, offs[2] if k == 4 else o))
