#!/usr/bin/python3
"""Fixtures for test_shards: TFRecord shards written by the `tfrecord`
package's TFRecordWriter (PyPI, scripts/test-requirements.txt), as
TensorFlow's ImageNet converter and TFDS name their files and features,
and MXNet RecordIO shards written by mxrecordio.py beside this file
(mxnet's layout byte for byte), from images PIL encodes. Run with
/usr/bin/python3.

    make_shards.py OUTDIR

Writes, beside the fixtures, what the tests compare against:
    NAME.ref     per sample in the dataset's order: int32 label, int32 kind
                 (0 exact PNG, 1 JPEG), S*S*3 RGB bytes (PIL's decode of
                 the stored bytes)
    NAME.bad     for a damaged set: SHARD RECORD OFFSET SAMPLE, the shard
                 (under OUTDIR), the bad record's number and byte offset in
                 it, and its sample number in the whole set
"""
import gzip
import io
import os
import shutil
import struct
import sys

import numpy as np
import tfrecord
from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mxrecordio  # noqa: E402

S = 16
out = sys.argv[1]
rng = np.random.default_rng(2027)


def sub(name):
    p = os.path.join(out, name)
    os.makedirs(p, exist_ok=True)
    return p


def image(kind):
    """Encoded bytes and PIL's decode of them."""
    a = rng.integers(0, 256, (S, S, 3), dtype=np.uint8)
    a[:, : S // 2] = a[:, : S // 2] // 64 * 64  # some flat areas for JPEG
    b = io.BytesIO()
    Image.fromarray(a).save(b, "JPEG" if kind == "jpg" else "PNG", quality=95)
    data = b.getvalue()
    return data, np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))


def ref_write(name, rows):
    with open(os.path.join(out, name + ".ref"), "wb") as f:
        for label, kind, rgb in rows:
            f.write(struct.pack("<ii", label, 1 if kind == "jpg" else 0))
            f.write(rgb.tobytes())


def frames(path):
    """(offset, length) of each TFRecord record."""
    raw = open(path, "rb").read()
    pos, fr = 0, []
    while pos < len(raw):
        (n,) = struct.unpack_from("<Q", raw, pos)
        fr.append((pos, n))
        pos += 16 + n
    return fr


# ---- TFRecord: tf/train-{00000..00003}.tfrecord (ImageNet converter's
# names), 2, 3, 0 and 2 records: an empty shard too.
tf = sub("tf")
rows, j = [], 0
for k, n in enumerate([2, 3, 0, 2]):
    w = tfrecord.TFRecordWriter(os.path.join(tf, "train-%05d.tfrecord" % k))
    for _ in range(n):
        kind = ["jpg", "png"][j % 2]
        data, rgb = image(kind)
        label = (j * 3) % 7 + 1  # the converter's 1-based labels
        w.write({"image/encoded": (data, "byte"),
                 "image/class/label": (label, "int"),
                 "image/filename": (b"s%02d.%s" % (j, kind.encode()), "byte"),
                 "image/format": (kind.upper().encode(), "byte")})
        rows.append((label, kind, rgb))
        j += 1
    w.close()
ref_write("tf", rows)
# A list of them: a path and a pattern, relative to the list's folder.
with open(os.path.join(tf, "list.txt"), "w") as f:
    f.write("# the training shards\ntrain-00000.tfrecord\n\n"
            "train-{00001..00003}.tfrecord\n")

# A damaged copy: shard 1's record 1 with its data CRC flipped.
bad = sub("tfbad")
for k in range(4):
    shutil.copy(os.path.join(tf, "train-%05d.tfrecord" % k), bad)
p = os.path.join(bad, "train-00001.tfrecord")
off, n = frames(p)[1]
raw = bytearray(open(p, "rb").read())
raw[off + 12 + n] ^= 0x40
open(p, "wb").write(bytes(raw))
with open(os.path.join(out, "tfbad.bad"), "w") as f:
    f.write("tfbad/train-00001.tfrecord 1 %d 3\n" % off)

# gzip-compressed copies (compression_type GZIP): refused by name.
gz = sub("tfgz")
for k in range(2):
    src = open(os.path.join(tf, "train-%05d.tfrecord" % k), "rb").read()
    open(os.path.join(gz, "train-%05d.tfrecord" % k), "wb").write(
        gzip.compress(src))

# ---- TFDS: tfds/mnist-train.tfrecord-0000{0..2}-of-00003 (TFDS's feature
# names image, label, file_name), 3, 2 and 2 records.
tfds = sub("tfds")
rows, j = [], 0
for k, n in enumerate([3, 2, 2]):
    w = tfrecord.TFRecordWriter(
        os.path.join(tfds, "mnist-train.tfrecord-%05d-of-00003" % k))
    for _ in range(n):
        kind = ["png", "jpg"][j % 2]
        data, rgb = image(kind)
        w.write({"image": (data, "byte"), "label": (j % 4, "int"),
                 "file_name": (b"t%02d" % j, "byte")})
        rows.append((j % 4, kind, rgb))
        j += 1
    w.close()
ref_write("tfds", rows)
# The same set with shard 1 missing.
gap = sub("tfdsgap")
for k in (0, 2):
    shutil.copy(os.path.join(tfds, "mnist-train.tfrecord-%05d-of-00003" % k),
                gap)

# ---- RecordIO: rio/part-{0..2}.rec, as im2rec writes them (label i % 5,
# flag 0), 3, 2 and 3 records; part-0 and part-2 with their .idx, part-1
# scanned. part-1's record 1 is a JPEG whose comment holds the magic: the
# writer splits it into parts.
rio = sub("rio")
MAGIC = struct.pack("<I", mxrecordio.MAGIC)
rows, j = [], 0
for k, n in enumerate([3, 2, 3]):
    w = mxrecordio.IndexedWriter(
        None if k == 1 else os.path.join(rio, "part-%d.idx" % k),
        os.path.join(rio, "part-%d.rec" % k))
    for r in range(n):
        kind = ["jpg", "png"][j % 2]
        data, rgb = image(kind)
        if k == 1 and r == 1:
            data, rgb = image("jpg")
            kind = "jpg"
            com = b"ab" + MAGIC + b"cd"
            data = (data[:2] + b"\xff\xfe" + struct.pack(">H", 2 + len(com)) +
                    com + data[2:])
            rgb = np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))
            open(os.path.join(out, "commented.jpg"), "wb").write(data)
        w.write_idx(j, mxrecordio.pack(float(j % 5), data, id=j))
        rows.append((j % 5, kind, rgb))
        j += 1
    w.close()
ref_write("rio", rows)
with open(os.path.join(rio, "list.txt"), "w") as f:
    f.write("part-0.rec\npart-1.rec\npart-2.rec\n")

# A damaged copy: part-2's record 1 with its magic flipped (no .idx: the
# scan stops there).
riobad = sub("riobad")
for k in range(3):
    shutil.copy(os.path.join(rio, "part-%d.rec" % k), riobad)
shutil.copy(os.path.join(rio, "part-0.idx"), riobad)
offs = [int(l.split("\t")[1]) for l in open(os.path.join(rio, "part-2.idx"))]
p = os.path.join(riobad, "part-2.rec")
raw = bytearray(open(p, "rb").read())
raw[offs[1] + 1] ^= 0x40
open(p, "wb").write(bytes(raw))
with open(os.path.join(out, "riobad.bad"), "w") as f:
    f.write("riobad/part-2.rec 1 %d 6\n" % offs[1])

# ---- Image lists: lists/train.txt (PATH LABEL, as torchvision-style and
# Caffe ImageData lists have them: a path with a space, an absolute path, a
# comment and a blank line), lists/train.lst (the same images as im2rec's
# write_list writes them) and lists/multi.lst (two float labels a line).
lists = sub("lists")
for c in ("a", "b c"):
    sub(os.path.join("lists", "img", c))
items, rows = [], []
for i in range(7):
    kind = ["jpg", "png"][i % 2]
    data, rgb = image(kind)
    rel = "img/%s/%d.%s" % (["a", "b c"][i % 2], i, kind)
    open(os.path.join(lists, rel), "wb").write(data)
    items.append((rel, (i * 5) % 9))
    rows.append(((i * 5) % 9, kind, rgb))
ref_write("list", rows)
with open(os.path.join(lists, "train.txt"), "w") as f:
    f.write("# PATH LABEL\n")
    for i, (rel, label) in enumerate(items):
        if i == 3:
            rel = os.path.abspath(os.path.join(lists, rel))
            f.write("\n")
        f.write("%s %d\n" % (rel, label))


def im2rec_write_list(path_out, image_list):
    """mxnet tools/im2rec.py's write_list: items (index, path, label...)."""
    with open(path_out, "w") as fout:
        for i, item in enumerate(image_list):
            line = "%d\t" % item[0]
            for j in item[2:]:
                line += "%f\t" % j
            line += "%s\n" % item[1]
            fout.write(line)


im2rec_write_list(os.path.join(lists, "train.lst"),
                  [(i, rel, float(label)) for i, (rel, label) in
                   enumerate(items)])
im2rec_write_list(os.path.join(lists, "multi.lst"),
                  [(i, rel, float(label), label / 4.0) for i, (rel, label) in
                   enumerate(items)])
# Damaged lists, each naming its bad line in NAME.line.
bad_lists = {
    "badlabel.txt": (items[:2] + [(items[2][0], "three")], 3),
    "missing.txt": ([items[0], ("img/a/none.jpg", 1)], 2),
    "notimage.txt": ([items[0], items[1], ("img/notes.jpg", 0)], 3),
}
open(os.path.join(lists, "img", "notes.jpg"), "w").write("not an image\n")
for name, (its, line) in bad_lists.items():
    with open(os.path.join(lists, name), "w") as f:
        for rel, label in its:
            f.write("%s %s\n" % (rel, label))
    open(os.path.join(out, name + ".line"), "w").write("%d\n" % line)
