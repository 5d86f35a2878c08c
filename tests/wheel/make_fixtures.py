#!/usr/bin/python3
"""The wheel test's foreign datasets, written by the real clients before the
system's libraries are hidden (Debian's /usr/bin/python3):

    make_fixtures.py OUTDIR

OUTDIR/arrays.h5   h5py: images (6, 24, 32, 3) uint8, labels (6,) int64
OUTDIR/caffe.mdb   py-lmdb, single file: raw 32x32 Caffe Datums (CHW BGR),
                   encoded by tests/formats/foreign/make_foreign.py's
                   caffe.proto wire-format writer
OUTDIR/expect.json what the wheel must read back from both
"""
import json
import os
import sys

import h5py
import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "formats", "foreign"))
import make_foreign as mf  # noqa: E402  (the Datum encoder and py-lmdb writer)

out = sys.argv[1]
os.makedirs(out, exist_ok=True)

rng = np.random.default_rng(7)
images = rng.integers(0, 256, size=(6, 24, 32, 3), dtype=np.uint8)
labels = np.array([3, 1, 4, 1, 5, 9], dtype=np.int64)
with h5py.File(os.path.join(out, "arrays.h5"), "w") as f:
    f.create_dataset("images", data=images)
    f.create_dataset("labels", data=labels)

side = mf.S
items, caffe = [], []
for i, label in enumerate([0, 2, 7]):
    bgr = mf.planes(i, 3, side)
    items.append((b"%08d" % i, mf.datum(3, side, side, bgr, label)))
    chw = np.frombuffer(bgr, dtype=np.uint8).reshape(3, side, side)
    caffe.append({"label": label,
                  "rgb_hwc_sum": int(chw[::-1].transpose(1, 2, 0).astype(np.int64).sum()),
                  "first_pixel_rgb": [int(v) for v in chw[::-1, 0, 0]]})
mf.write(os.path.join(out, "caffe.mdb"), items, subdir=False)

expect = {
    "h5": {"labels": labels.tolist(),
           "sums": [int(im.astype(np.int64).sum()) for im in images],
           "shape": list(images.shape[1:])},
    "caffe": caffe, "caffe_side": side,
}
with open(os.path.join(out, "expect.json"), "w") as f:
    json.dump(expect, f)
