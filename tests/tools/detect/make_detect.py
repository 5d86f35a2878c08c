#!/usr/bin/python3
"""Fixtures of test_cli_pack_detect: a COCO instances file written with
Python's json module in COCO's schema, and a VOCdevkit/VOC2007 folder whose
annotations are written with xml.etree in VOC's schema, over small JPEGs
made with PIL; plus damaged variants, and the boxes each sample must get
(expected-*.txt, float32 values computed here, independently of sluice).

  make_detect.py OUTDIR

expected-*.txt: per sample (in pack order) a line "NAME WIDTH HEIGHT N"
followed by N lines "x0 y0 x1 y1 label flags" (floats as float32 repr).
"""
import json
import os
import struct
import sys
import xml.etree.ElementTree as ET

from PIL import Image

CROWD, DIFFICULT = 1, 2


def f32(v):
    return struct.unpack("<f", struct.pack("<f", v))[0]


def jpeg(path, w, h, seed, orientation=None):
    img = Image.new("RGB", (w, h))
    px = img.load()
    for y in range(h):
        for x in range(w):
            px[x, y] = ((x * 7 + seed * 40) % 256, (y * 5 + seed) % 256,
                        (x + y + seed * 13) % 256)
    kw = {"quality": 90}
    if orientation:
        exif = Image.Exif()
        exif[0x0112] = orientation
        kw["exif"] = exif.tobytes()
    img.save(path, "JPEG", **kw)


def write_expected(path, samples):
    with open(path, "w") as f:
        for name, w, h, boxes in samples:
            f.write("%s %d %d %d\n" % (name, w, h, len(boxes)))
            for b in boxes:
                f.write("%r %r %r %r %d %d\n" % (f32(b[0]), f32(b[1]),
                                                 f32(b[2]), f32(b[3]), b[4],
                                                 b[5]))


def make_coco(out):
    os.makedirs(os.path.join(out, "coco", "images", "val"), exist_ok=True)
    # COCO's category ids have gaps (1..90 for 80 classes); listed out of
    # order here: labels follow the ids (1 -> 0, 3 -> 1, 90 -> 2).
    categories = [
        {"supercategory": "accessory", "id": 90, "name": "toothbrush"},
        {"supercategory": "person", "id": 1, "name": "person"},
        {"supercategory": "vehicle", "id": 3, "name": "car"},
    ]
    label = {1: 0, 3: 1, 90: 2}
    images = [
        {"license": 1, "file_name": "val/000000000042.jpg", "coco_url": "",
         "height": 48, "width": 64, "date_captured": "2013-11-14 11:18:45",
         "flickr_url": "", "id": 42},
        {"license": 1, "file_name": "val/000000000007.jpg", "coco_url": "",
         "height": 40, "width": 56, "date_captured": "", "flickr_url": "",
         "id": 7},
        # No annotations: kept, with 0 boxes.
        {"license": 1, "file_name": "val/000000001000.jpg", "coco_url": "",
         "height": 32, "width": 32, "date_captured": "", "flickr_url": "",
         "id": 1000},
        # EXIF orientation 6: COCO's boxes are on the stored pixels, 60x40.
        {"license": 1, "file_name": "val/rotated.jpg", "coco_url": "",
         "height": 40, "width": 60, "date_captured": "", "flickr_url": "",
         "id": 5},
    ]
    jpeg(os.path.join(out, "coco/images/val/000000000042.jpg"), 64, 48, 1)
    jpeg(os.path.join(out, "coco/images/val/000000000007.jpg"), 56, 40, 2)
    jpeg(os.path.join(out, "coco/images/val/000000001000.jpg"), 32, 32, 3)
    jpeg(os.path.join(out, "coco/images/val/rotated.jpg"), 60, 40, 4,
         orientation=6)
    anns = [
        # image 42: two boxes, one a crowd region, one reaching past the
        # right edge (as COCO's sometimes do)
        {"segmentation": [[10.5, 12.25, 20.0, 12.25, 20.0, 30.0]],
         "area": 123.4, "iscrowd": 0, "image_id": 42,
         "bbox": [10.5, 12.25, 9.5, 17.75], "category_id": 1, "id": 1001},
        {"segmentation": {"counts": [0, 5, 10], "size": [48, 64]},
         "area": 50.0, "iscrowd": 1, "image_id": 42,
         "bbox": [40.0, 20.0, 25.5, 10.0], "category_id": 90, "id": 1002},
        # image 7: one box of the middle category, zero height
        {"segmentation": [], "area": 0.0, "iscrowd": 0, "image_id": 7,
         "bbox": [1.0, 2.0, 3.0, 0.0], "category_id": 3, "id": 1003},
        # image 5 (EXIF-rotated file): in stored pixels
        {"segmentation": [], "area": 10.0, "iscrowd": 0, "image_id": 5,
         "bbox": [50.0, 5.0, 8.0, 30.0], "category_id": 3, "id": 1004},
        # image 42 again, after others: order within an image is the file's
        {"segmentation": [], "area": 1.0, "iscrowd": 0, "image_id": 42,
         "bbox": [0.0, 0.0, 1.0, 1.0], "category_id": 3, "id": 1005},
    ]
    doc = {"info": {"description": "sluice test", "version": "1.0",
                    "year": 2026},
           "licenses": [{"url": "", "id": 1, "name": "test"}],
           "images": images, "annotations": anns, "categories": categories}
    with open(os.path.join(out, "coco", "instances.json"), "w") as f:
        json.dump(doc, f, indent=2)
    samples = []
    for im in images:
        boxes = [(a["bbox"][0], a["bbox"][1], a["bbox"][0] + a["bbox"][2],
                  a["bbox"][1] + a["bbox"][3], label[a["category_id"]],
                  CROWD if a["iscrowd"] else 0)
                 for a in anns if a["image_id"] == im["id"]]
        samples.append((im["file_name"], im["width"], im["height"], boxes))
    write_expected(os.path.join(out, "expected-coco.txt"), samples)

    # Damaged: cut in the middle (a syntax error on a known line), an
    # annotation naming an image or a category that does not exist.
    text = json.dumps(doc, indent=2)
    lines = text.split("\n")
    cut = "\n".join(lines[:30]) + "\n  \"oops\": ]\n"
    with open(os.path.join(out, "coco", "cut.json"), "w") as f:
        f.write(cut)
    with open(os.path.join(out, "coco", "cut-line.txt"), "w") as f:
        f.write("%d\n" % 31)
    bad = json.loads(text)
    bad["annotations"][2]["image_id"] = 4242
    with open(os.path.join(out, "coco", "unknown-image.json"), "w") as f:
        json.dump(bad, f)
    bad = json.loads(text)
    bad["images"][1]["width"] = 57  # the file is 56 wide: boxes would not fit
    with open(os.path.join(out, "coco", "wrong-size.json"), "w") as f:
        json.dump(bad, f)
    bad = json.loads(text)
    bad["annotations"][3]["category_id"] = 77
    with open(os.path.join(out, "coco", "unknown-category.json"), "w") as f:
        json.dump(bad, f)


def voc_xml(path, filename, w, h, objects):
    a = ET.Element("annotation")
    ET.SubElement(a, "folder").text = "VOC2007"
    ET.SubElement(a, "filename").text = filename
    src = ET.SubElement(a, "source")
    ET.SubElement(src, "database").text = "The VOC2007 Database"
    ET.SubElement(src, "annotation").text = "PASCAL VOC2007"
    size = ET.SubElement(a, "size")
    ET.SubElement(size, "width").text = str(w)
    ET.SubElement(size, "height").text = str(h)
    ET.SubElement(size, "depth").text = "3"
    ET.SubElement(a, "segmented").text = "0"
    for o in objects:
        ob = ET.SubElement(a, "object")
        ET.SubElement(ob, "name").text = o["name"]
        ET.SubElement(ob, "pose").text = "Unspecified"
        ET.SubElement(ob, "truncated").text = "0"
        ET.SubElement(ob, "difficult").text = str(o["difficult"])
        bb = ET.SubElement(ob, "bndbox")
        for k in ("xmin", "ymin", "xmax", "ymax"):
            ET.SubElement(bb, k).text = str(o[k])
        for part in o.get("parts", []):
            p = ET.SubElement(ob, "part")
            ET.SubElement(p, "name").text = part["name"]
            pb = ET.SubElement(p, "bndbox")
            for k in ("xmin", "ymin", "xmax", "ymax"):
                ET.SubElement(pb, k).text = str(part[k])
    ET.indent(a) if hasattr(ET, "indent") else None
    ET.ElementTree(a).write(path)


VOC20 = ["aeroplane", "bicycle", "bird", "boat", "bottle", "bus", "car",
         "cat", "chair", "cow", "diningtable", "dog", "horse", "motorbike",
         "person", "pottedplant", "sheep", "sofa", "train", "tvmonitor"]


def make_voc(out):
    root = os.path.join(out, "voc", "VOCdevkit", "VOC2007")
    for d in ("Annotations", "JPEGImages", "ImageSets/Main"):
        os.makedirs(os.path.join(root, d), exist_ok=True)
    items = {
        "000005": (50, 40, [
            {"name": "chair", "difficult": 0, "xmin": 1, "ymin": 1,
             "xmax": 50, "ymax": 40},
            {"name": "person", "difficult": 1, "xmin": 10, "ymin": 12,
             "xmax": 20, "ymax": 30,
             # a person's parts have their own name and bndbox: not boxes
             "parts": [{"name": "head", "xmin": 11, "ymin": 12,
                        "xmax": 15, "ymax": 16}]},
        ]),
        "000007": (44, 36, [
            {"name": "car", "difficult": 0, "xmin": 5, "ymin": 6,
             "xmax": 30, "ymax": 20},
        ]),
        "000009": (40, 40, []),
    }
    for i, (stem, (w, h, objs)) in enumerate(sorted(items.items())):
        jpeg(os.path.join(root, "JPEGImages", stem + ".jpg"), w, h, 10 + i)
        voc_xml(os.path.join(root, "Annotations", stem + ".xml"),
                stem + ".jpg", w, h, objs)
    with open(os.path.join(root, "ImageSets/Main/train.txt"), "w") as f:
        f.write("000007\n000005\n")
    with open(os.path.join(root, "ImageSets/Main/val.txt"), "w") as f:
        f.write("000009\n")

    def samples(stems):
        s = []
        for stem in stems:
            w, h, objs = items[stem]
            s.append(("JPEGImages/%s.jpg" % stem, w, h,
                      [(o["xmin"] - 1, o["ymin"] - 1, o["xmax"], o["ymax"],
                        VOC20.index(o["name"]),
                        DIFFICULT if o["difficult"] else 0) for o in objs]))
        return s

    write_expected(os.path.join(out, "expected-voc-all.txt"),
                   samples(sorted(items)))
    write_expected(os.path.join(out, "expected-voc-train.txt"),
                   samples(["000007", "000005"]))

    # Damaged: an XML cut short (its line: the file's last), and an object
    # without a bndbox.
    bad = os.path.join(out, "voc-bad", "VOC2007")
    for d in ("Annotations", "JPEGImages"):
        os.makedirs(os.path.join(bad, d), exist_ok=True)
    jpeg(os.path.join(bad, "JPEGImages", "000001.jpg"), 20, 20, 1)
    voc_xml(os.path.join(bad, "Annotations", "000001.xml"), "000001.jpg", 20,
            20, [{"name": "dog", "difficult": 0, "xmin": 1, "ymin": 1,
                  "xmax": 5, "ymax": 5}])
    with open(os.path.join(bad, "Annotations", "000001.xml")) as f:
        text = f.read()
    cut = text[: text.index("</object>")]
    with open(os.path.join(bad, "Annotations", "000001.xml"), "w") as f:
        f.write(cut)
    with open(os.path.join(out, "voc-bad-line.txt"), "w") as f:
        f.write("%d\n" % (cut.count("\n") + 1))
    nobox = os.path.join(out, "voc-nobox", "VOC2007")
    for d in ("Annotations", "JPEGImages"):
        os.makedirs(os.path.join(nobox, d), exist_ok=True)
    jpeg(os.path.join(nobox, "JPEGImages", "000001.jpg"), 20, 20, 1)
    a = ET.Element("annotation")
    ET.SubElement(a, "filename").text = "000001.jpg"
    ob = ET.SubElement(a, "object")
    ET.SubElement(ob, "name").text = "dog"
    ET.ElementTree(a).write(os.path.join(nobox, "Annotations", "000001.xml"))


def main():
    out = sys.argv[1]
    make_coco(out)
    make_voc(out)


if __name__ == "__main__":
    main()
