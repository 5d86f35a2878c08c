"""Fixtures for test_wds: WebDataset shards written by webdataset's own
ShardWriter/TarWriter, tars with GNU long names and pax headers written by
Python's tarfile, damaged copies, and an ImageFolder made by plain file
copies. Run with /usr/bin/python3 (webdataset from scripts/test-requirements.txt,
PIL and numpy from Debian).

    make_wds.py OUTDIR

Writes, beside the fixtures, what the tests compare against:
    NAME.ref   per sample in the dataset's order: int32 label, int32 kind
               (0 exact PNG/lossless WebP, 1 JPEG), S*S*3 RGB bytes
               (PIL's decode of the stored bytes)
    tgt.f32    the targets of the tgt shards, float32, 3 a sample
    damaged.txt  one line per damaged shard: NAME OFFSET (the offset its
                 error must name)
"""
import io
import os
import shutil
import struct
import sys
import tarfile

import numpy as np
from PIL import Image
import webdataset as wds

S = 16
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(27)


def image(kind):
    """Encoded bytes and PIL's decode of them."""
    a = rng.integers(0, 256, (S, S, 3), dtype=np.uint8)
    a[:, : S // 2] = a[:, : S // 2] // 64 * 64  # some flat areas for JPEG
    b = io.BytesIO()
    if kind == "jpg":
        Image.fromarray(a).save(b, "JPEG", quality=95)
    elif kind == "webp":
        Image.fromarray(a).save(b, "WEBP", lossless=True)
    else:
        Image.fromarray(a).save(b, "PNG")
    data = b.getvalue()
    rgb = np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))
    return data, rgb


def ref_write(name, rows):
    with open(os.path.join(out, name + ".ref"), "wb") as f:
        for label, kind, rgb in rows:
            f.write(struct.pack("<ii", label, 1 if kind == "jpg" else 0))
            f.write(rgb.tobytes())


# 1. train-{000000..000003}.tar: 14 samples, 4 a shard (the last 2), keys
# with their image as png, jpg or webp; labels from .cls, .json or .txt.
rows, folder_rows = [], []
with wds.ShardWriter(os.path.join(out, "train-%06d.tar"), maxcount=4) as sw:
    for i in range(14):
        kind = ["png", "jpg", "webp"][i % 3]
        data, rgb = image(kind)
        label = i % 5
        s = {"__key__": "sample%04d" % i, kind: data}
        if i == 13:  # a caption is not a label: unlabelled
            s["txt"] = "a photo of a thing"
            label = -1
        elif i % 4 == 1:
            s["json"] = {"label": label, "caption": "a thing"}
        elif i % 4 == 2:
            s["txt"] = str(label + 1)  # .cls wins over .txt
            s["cls"] = label
        elif i % 4 == 3:
            s["txt"] = " %d\n" % label
        else:
            s["cls"] = label
        sw.write(s)
        rows.append((label, kind, rgb))
        if kind != "jpg" and label >= 0:
            folder_rows.append((label, kind, data, rgb, i))
ref_write("train", rows)
# A run of members without an image (skipped), inside shard 0's copy is
# not made: the webdataset writer always writes whole samples.

# 2. A shard list, relative to its folder.
os.makedirs(os.path.join(out, "lists"), exist_ok=True)
with open(os.path.join(out, "lists", "shards.txt"), "w") as f:
    f.write("# the train shards\n\n")
    for k in range(4):
        f.write("../train-%06d.tar\n" % k)

# 3. Targets: npy float32 (3,) with .cls, through TarWriter.
tg = []
trows = []
with wds.TarWriter(os.path.join(out, "tgt-000000.tar")) as tw:
    for i in range(5):
        data, rgb = image("png")
        t = rng.standard_normal(3).astype(np.float32)
        tw.write({"__key__": "t%03d" % i, "png": data, "npy": t, "cls": i})
        tg.append(t)
        trows.append((i, "png", rgb))
np.stack(tg).astype("<f4").tofile(os.path.join(out, "tgt.f32"))
ref_write("tgt", trows)


# 4. Long names: GNU 'L' members and pax 'x' headers, by Python's tarfile.
def long_tar(name, fmt):
    lrows = []
    deep = "/".join(["d%02d_long_folder_name" % k for k in range(8)])  # > 155
    with tarfile.open(os.path.join(out, name), "w", format=fmt) as t:
        for i in range(3):
            data, rgb = image("png")
            key = "%s/sample-with-a-long-name-%03d" % (deep, i)
            for ext, payload in (("png", data), ("cls", str(7 + i).encode())):
                ti = tarfile.TarInfo(key + "." + ext)
                ti.size = len(payload)
                t.addfile(ti, io.BytesIO(payload))
            lrows.append((7 + i, "png", rgb))
    ref_write(name[:-4], lrows)


long_tar("long-gnu.tar", tarfile.GNU_FORMAT)
long_tar("long-pax.tar", tarfile.PAX_FORMAT)

# 5. Damaged copies of train-000000.tar.
raw = open(os.path.join(out, "train-000000.tar"), "rb").read()
# the ustar header of the first image member (webdataset puts a pax header
# before each member: the ustar one is the block before the data)
with tarfile.open(os.path.join(out, "train-000000.tar")) as t:
    png = [m for m in t.getmembers() if m.name.endswith(".png")][0]
second = png.offset_data - 512
dam = []
b = bytearray(raw)
b[second + 1] ^= 0x20  # a name byte: the checksum no longer matches
open(os.path.join(out, "bad-checksum.tar"), "wb").write(b)
dam.append(("bad-checksum.tar", second))
cut = second + 512 + 10  # inside the second member's data
open(os.path.join(out, "truncated.tar"), "wb").write(raw[:cut])
dam.append(("truncated.tar", second))
b = bytearray(raw)
b[second + 124 : second + 136] = b"77777777777\0"  # size past the end
b[second + 148 : second + 156] = b"        "
chk = sum(b[second : second + 512])
b[second + 148 : second + 156] = b"%06o\0 " % chk
open(os.path.join(out, "size-past-end.tar"), "wb").write(b)
dam.append(("size-past-end.tar", second))
with open(os.path.join(out, "damaged.txt"), "w") as f:
    for n, o in dam:
        f.write("%s %d\n" % (n, o))

# 6. An ImageFolder by plain file copies: class folders c0..c4 (sorted:
# labels 0..4), the PNG and WebP images of (1); a bmp skipped.
fold = os.path.join(out, "folder")
frows = []
for label, kind, data, rgb, i in folder_rows:
    d = os.path.join(fold, "c%d" % label)
    os.makedirs(d, exist_ok=True)
    src = os.path.join(out, "img%04d.%s" % (i, kind))
    open(src, "wb").write(data)
    shutil.copyfile(src, os.path.join(d, "img%04d.%s" % (i, kind)))
open(os.path.join(fold, "c0", "notes.bmp"), "wb").write(b"BM" + b"\0" * 60)
# torchvision's order: classes sorted, then each class's files sorted
for label in range(5):
    for l2, kind, data, rgb, i in sorted(folder_rows, key=lambda r: r[4]):
        if l2 == label:
            frows.append((label, kind, rgb))
ref_write("folder", frows)

# 7. A shard whose second sample's .cls is not a number (verify reports it,
# an open fails naming it).
with wds.TarWriter(os.path.join(out, "badlabel.tar")) as tw:
    for i, cls in enumerate(["1", "x", "2"]):
        data, rgb = image("png")
        tw.write({"__key__": "b%d" % i, "png": data, "cls": cls})
