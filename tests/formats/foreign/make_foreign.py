#!/usr/bin/python3
"""Writes the foreign-LMDB fixtures of test_foreign with py-lmdb (Debian's
python3-lmdb), the client Caffe's and LSUN's own tools use, and Datum bytes
from the small caffe.proto wire-format encoder below (no protobuf library).

    make_foreign.py OUTDIR IMGDIR

IMGDIR holds the image files the C test encoded (img0.jpg ... img5.png,
listed in IMGDIR/list.txt). Raw pixels follow pix() so the test computes
the same reference. Every fixture is a single file (subdir=False) except
mnist/, a directory LMDB (data.mdb + lock.mdb); named.mdb holds two named
sub-databases.
"""
import hashlib
import os
import pickle
import struct
import sys

import lmdb

S = 32  # raw colour side
M = 28  # MNIST side


def pix(i, c, y, x):
    """Stored plane c of raw sample i (planes in file order)."""
    return (i * 37 + c * 89 + y * 11 + x * 5 + (x * y) % 7) & 255


# ---- caffe.proto Datum, wire format ---------------------------------------
def varint(v):
    if v < 0:
        v += 1 << 64  # int32/int64 negatives: 10-byte varints
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def tag(field, wt):
    return varint(field << 3 | wt)


def f_varint(field, v):
    return tag(field, 0) + varint(v)


def f_bytes(field, b):
    return tag(field, 2) + varint(len(b)) + b


def datum(channels=None, height=None, width=None, data=None, label=None,
          floats=(), packed=True, encoded=None, reverse=False, extra=b""):
    parts = []
    if channels is not None:
        parts.append(f_varint(1, channels))
    if height is not None:
        parts.append(f_varint(2, height))
    if width is not None:
        parts.append(f_varint(3, width))
    if data is not None:
        parts.append(f_bytes(4, data))
    if label is not None:
        parts.append(f_varint(5, label))
    if floats:
        if packed:
            parts.append(f_bytes(6, b"".join(struct.pack("<f", f) for f in floats)))
        else:
            parts.append(b"".join(tag(6, 5) + struct.pack("<f", f) for f in floats))
    if encoded is not None:
        parts.append(f_varint(7, 1 if encoded else 0))
    if reverse:
        parts.reverse()
    return extra + b"".join(parts)


def annotated(d):
    """SSD's AnnotatedDatum: datum = 1, type = 2, annotation_group = 3."""
    group = f_varint(1, 4) + f_bytes(2, f_varint(1, 0) + f_bytes(2, b"\x0d" + struct.pack("<f", 0.25)))
    return f_bytes(1, d) + f_varint(2, 0) + f_bytes(3, group)


def planes(i, c, side):
    return bytes(pix(i, p, y, x) for p in range(c) for y in range(side) for x in range(side))


def write(path, items, subdir=False):
    if subdir:
        os.makedirs(path, exist_ok=True)
    env = lmdb.open(path, map_size=64 << 20, subdir=subdir)
    with env.begin(write=True) as txn:
        for k, v in items:
            txn.put(k, v)
    env.close()


RAW_LABELS = [0, 5, -3, 2147483647, -2147483648, 7]


def raw_items():
    items = []
    for i, lab in enumerate(RAW_LABELS):
        fl = (i * 0.5, -float(i))
        extra = b""
        if i == 3:  # unknown fields of every wire type, skipped
            extra = (f_varint(15, 123456789) + f_bytes(16, b"xyz") +
                     tag(17, 1) + struct.pack("<d", 1.5) + tag(18, 5) + b"abcd")
        d = datum(3, S, S, planes(i, 3, S), lab, fl, packed=(i % 2 == 0),
                  encoded=(False if i == 1 else None), reverse=(i == 2),
                  extra=extra)
        items.append((b"%08d_train/img%d.png" % (i, i), d))
    return items


def main():
    out, imgdir = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    names = open(os.path.join(imgdir, "list.txt")).read().split()
    files = [open(os.path.join(imgdir, n), "rb").read() for n in names]

    write(os.path.join(out, "caffe_raw.mdb"), raw_items())

    mn = []
    for i in range(5):
        d = datum(1, M, M, planes(i, 1, M), i % 10)
        mn.append((b"%08d" % i, annotated(d) if i in (1, 3) else d))
    write(os.path.join(out, "mnist"), mn, subdir=True)

    enc = []
    for i, (n, b) in enumerate(zip(names, files)):
        if i % 2:
            d = datum(data=b, label=i, encoded=True)
        else:  # convert_imageset --encoded leaves the shape unset; some set it
            d = datum(3, S, S, b, i, encoded=True, reverse=True)
        enc.append((b"%08d_%s" % (i, n.encode()), d))
    write(os.path.join(out, "caffe_enc.mdb"), enc)

    lsun, lines = [], []
    for i, (n, b) in enumerate(zip(names, files)):
        k = hashlib.sha1(n.encode()).hexdigest().encode()
        lsun.append((k, b))
        lines.append("%s %d %g" % (k.decode(), 10 + i, i / 4.0))
    write(os.path.join(out, "lsun.mdb"), lsun)
    with open(os.path.join(out, "lsun_labels.txt"), "w") as f:
        f.write("# key label target\n" + "\n".join(lines) + "\n")

    # Named sub-databases (dataset.lmdb_db): "train" raw, "val" encoded.
    env = lmdb.open(os.path.join(out, "named.mdb"), map_size=64 << 20,
                    subdir=False, max_dbs=2)
    for name, items in ((b"train", raw_items()), (b"val", enc)):
        db = env.open_db(name)
        with env.begin(write=True, db=db) as txn:
            for k, v in items:
                txn.put(k, v)
    env.close()

    keys = [b"%d" % i for i in range(len(files))]
    folder = list(zip(keys, files))
    folder.append((b"__keys__", pickle.dumps(keys)))
    folder.append((b"__len__", pickle.dumps(len(keys))))
    folder.append((b"num-samples", b"%d" % len(keys)))
    folder.append((b"dataset.meta", b"made by make_foreign.py"))
    write(os.path.join(out, "folder.mdb"), folder)

    # Values other tools serialise: pickled dicts (many PyTorch
    # repositories), refused naming the opcode (test_pickle has the tuples
    # and lists sluice reads), msgpack lists (tensorpack's LMDBSerializer),
    # read, and msgpack maps, named rather than called damaged Datums.
    pk = [(b"%08d" % i, pickle.dumps({"image": b, "label": i}, protocol=4))
          for i, b in enumerate(files[:3])]
    write(os.path.join(out, "pickled.mdb"), pk)
    import msgpack
    mp = [(b"%08d" % i, msgpack.packb([b, i], use_bin_type=True))
          for i, b in enumerate(files[:3])]
    write(os.path.join(out, "msgpack.mdb"), mp)
    mm = [(b"%08d" % i, msgpack.packb({"image": b, "label": i}, use_bin_type=True))
          for i, b in enumerate(files[:3])]
    write(os.path.join(out, "msgpack_map.mdb"), mm)

    # Damaged Datums: two good samples around one bad key.
    good = datum(3, 4, 4, bytes(48), 1)
    ok_d = datum(1, 2, 2, bytes(4), 0)
    bad = {
        "trunc": good[: len(good) - 20],
        "varint": good + b"\x28\xff\xff",
        "length": f_varint(1, 1) + tag(4, 2) + varint(1000) + bytes(10),
        "rawsize": datum(3, 32, 32, bytes(100), 1),
        "wiretype": good + tag(9, 3) + b"\x00",
        "empty": b"",
        "floats": datum(1, 2, 2, bytes(4), 0, (1.0, 2.0, 3.0)),
        "absurd": datum(3, 70000, 1, bytes(210000), 0),
        "notimage": b"this is not an image, just text",
        "webp": b"RIFF\x10\x00\x00\x00WEBPVP8 " + bytes(8),
        "encnoimage": datum(data=b"garbage bytes", label=0, encoded=True),
    }
    for name, v in bad.items():
        first = datum(1, 2, 2, bytes(4), 0, (1.0, 2.0)) if name == "floats" else ok_d
        if name in ("notimage", "webp"):
            first = files[0]
        items = [(b"00000000_ok", first), (b"00000001_bad_" + name.encode(), v),
                 (b"00000002_ok", first)]
        write(os.path.join(out, "bad_%s.mdb" % name), items)


if __name__ == "__main__":
    main()
