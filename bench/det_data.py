#!/usr/bin/env python3
"""The detection bench's data: COCO-style annotations for the bench's
images, and the same images with those boxes packed to LMDB for sluice.

    det_data.py LIBSLUICE IMAGES_DIR OUT_JSON OUT_LMDB [--seed S]

Every image (class subfolders of JPEGs, as bench/run.sh prepares them)
gets 1 to 8 boxes of at least 8 px a side, drawn from a seeded stream,
with COCO's non-contiguous category ids (1, 3, 5, ... 19). OUT_JSON is a
COCO instances file (images with file_name relative to IMAGES_DIR, width
and height; annotations with bbox [x, y, w, h], category_id, iscrowd 0,
area; categories), which bench/peers/peer.py torch_det reads; OUT_LMDB
holds the same JPEGs with the same boxes (sl_writer_add_annotated through
ctypes; labels are the category ids mapped to 0..9 in id order, as
`sluice pack --coco` maps them), which bench/peers/sluice_loader.py
--detect reads. Standard library only.
"""
import argparse
import ctypes as C
import json
import os
import random
import struct
import sys

CATEGORIES = [{"id": 2 * k + 1, "name": "class%d" % k} for k in range(10)]


class Box(C.Structure):  # include/sluice.h: sl_box
    _fields_ = [("x0", C.c_float), ("y0", C.c_float), ("x1", C.c_float), ("y1", C.c_float),
                ("label", C.c_int32), ("flags", C.c_uint32)]


def jpeg_size(data):
    """(width, height) from a JPEG's first SOF marker."""
    i = 2
    while i + 9 < len(data):
        if data[i] != 0xFF:
            i += 1
            continue
        m = data[i + 1]
        if m in (0xD8, 0x01) or 0xD0 <= m <= 0xD7 or m == 0xFF:
            i += 1 if m == 0xFF else 2
            continue
        seg = struct.unpack(">H", data[i + 2:i + 4])[0]
        if 0xC0 <= m <= 0xCF and m not in (0xC4, 0xC8, 0xCC):
            h, w = struct.unpack(">HH", data[i + 5:i + 9])
            return w, h
        i += 2 + seg
    raise ValueError("no SOF marker")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("lib")
    ap.add_argument("images")
    ap.add_argument("json_out")
    ap.add_argument("lmdb_out")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    files = sorted(os.path.relpath(os.path.join(d, f), args.images)
                   for d, _, fs in os.walk(args.images) for f in fs
                   if f.lower().endswith((".jpg", ".jpeg")))
    if not files:
        sys.exit("det_data.py: no JPEGs under %s" % args.images)
    lib = C.CDLL(args.lib)
    lib.sl_writer_create.argtypes = [C.POINTER(C.c_void_p), C.c_char_p, C.c_void_p]
    lib.sl_writer_add_annotated.argtypes = [C.c_void_p, C.c_char_p, C.c_size_t, C.c_int32,
                                            C.c_void_p, C.c_char_p, C.POINTER(Box), C.c_uint32]
    lib.sl_writer_set_class_name.argtypes = [C.c_void_p, C.c_uint32, C.c_char_p]
    lib.sl_writer_commit.argtypes = [C.c_void_p]
    lib.sl_writer_destroy.argtypes = [C.c_void_p]
    lib.sl_writer_errmsg.argtypes = [C.c_void_p]
    lib.sl_writer_errmsg.restype = C.c_char_p
    w = C.c_void_p()
    if lib.sl_writer_create(C.byref(w), args.lmdb_out.encode(), None) != 0:
        sys.exit("det_data.py: %s" % lib.sl_writer_errmsg(w).decode())
    coco = {"images": [], "annotations": [], "categories": CATEGORIES}
    label_of = {c["id"]: k for k, c in enumerate(CATEGORIES)}
    for i, rel in enumerate(files):
        with open(os.path.join(args.images, rel), "rb") as f:
            data = f.read()
        wd, ht = jpeg_size(data)
        coco["images"].append({"id": i + 1, "file_name": rel, "width": wd, "height": ht})
        rng = random.Random(args.seed * 1000003 + i)
        boxes = []
        for _ in range(1 + i % 8):
            bw, bh = rng.uniform(8, wd * 0.6), rng.uniform(8, ht * 0.6)
            x, y = rng.uniform(0, wd - bw), rng.uniform(0, ht - bh)
            cat = CATEGORIES[rng.randrange(len(CATEGORIES))]["id"]
            coco["annotations"].append({"id": len(coco["annotations"]) + 1, "image_id": i + 1,
                                        "bbox": [x, y, bw, bh], "category_id": cat,
                                        "iscrowd": 0, "area": bw * bh})
            boxes.append(Box(x, y, x + bw, y + bh, label_of[cat], 0))
        arr = (Box * len(boxes))(*boxes)
        if lib.sl_writer_add_annotated(w, data, len(data), -1, None, rel.encode(), arr,
                                       len(boxes)) != 0:
            sys.exit("det_data.py: %s: %s" % (rel, lib.sl_writer_errmsg(w).decode()))
    for k, c in enumerate(CATEGORIES):
        lib.sl_writer_set_class_name(w, k, c["name"].encode())
    if lib.sl_writer_commit(w) != 0:
        sys.exit("det_data.py: commit: %s" % lib.sl_writer_errmsg(w).decode())
    lib.sl_writer_destroy(w)
    with open(args.json_out, "w") as f:
        json.dump(coco, f)
    print("det_data.py: %d images, %d boxes" % (len(files), len(coco["annotations"])),
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
