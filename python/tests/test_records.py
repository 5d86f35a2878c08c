"""TFRecord and MXNet RecordIO files through the binding: written by the
`tfrecord` package's TFRecordWriter and by tests/formats/foreign/
mxrecordio.py (mxnet's RecordIO writer byte for byte), read back with
sluice.Dataset and sluice.Loader, pixels and labels as the writers stored
them (PNG: exact)."""

import io
import os
import struct
import sys

import numpy as np
import pytest

import sluice

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "formats", "foreign"))


def _pngs(n):
    Image = pytest.importorskip("PIL.Image")
    out = []
    for i in range(n):
        px = ((np.arange(24 * 24 * 3).reshape(24, 24, 3) * (i + 3)) % 251)
        px = px.astype(np.uint8)
        b = io.BytesIO()
        Image.fromarray(px).save(b, format="PNG")
        out.append((px, b.getvalue()))
    return out


def test_tfrecord(tmp_path):
    tfrecord = pytest.importorskip("tfrecord")
    imgs = _pngs(3)
    path = str(tmp_path / "train.tfrecord-00000-of-00001")
    w = tfrecord.TFRecordWriter(path)
    for i, (_, png) in enumerate(imgs):
        w.write({"image/encoded": (png, "byte"),
                 "image/class/label": (i + 1, "int")})
    w.close()
    ds = sluice.Dataset(path)
    assert len(ds) == 3
    for i, (px, _) in enumerate(imgs):
        got, label, targets = ds[i]
        assert label == i + 1  # as stored
        assert np.array_equal(got, px)
    loader = sluice.Loader({"dataset.path": path, "dataset.label_offset": -1,
                            "loader.batch_size": 3, "loader.workers": 1,
                            "loader.order": "sequential",
                            "augment.crop": "none", "augment.flip": 0,
                            "augment.dtype": "u8", "augment.layout": "nhwc",
                            "resolution.min": 8, "resolution.max": 24,
                            "device.backend": "host"})
    batch = next(iter(loader.epoch(0)))
    assert list(np.asarray(batch.labels)[:3]) == [0, 1, 2]
    loader.close()


def test_tfrecord_tfds_shards(tmp_path):
    """TFDS's NAME-train.tfrecord-0000K-of-00003: the prefix names all
    three shards, read as one dataset in shard order."""
    tfrecord = pytest.importorskip("tfrecord")
    imgs = _pngs(5)
    split = [[0, 1], [2], [3, 4]]
    for k, idx in enumerate(split):
        w = tfrecord.TFRecordWriter(
            str(tmp_path / ("mnist-train.tfrecord-%05d-of-00003" % k)))
        for i in idx:
            w.write({"image": (imgs[i][1], "byte"), "label": (i * 2, "int")})
        w.close()
    ds = sluice.Dataset(str(tmp_path / "mnist-train.tfrecord"))
    assert len(ds) == 5
    for i, (px, _) in enumerate(imgs):
        got, label, _ = ds[i]
        assert label == i * 2
        assert np.array_equal(got, px)
    os.remove(tmp_path / "mnist-train.tfrecord-00001-of-00003")
    with pytest.raises(sluice.Error, match="shard 1 of 3 is missing"):
        sluice.Dataset(str(tmp_path / "mnist-train.tfrecord"))


def test_folder_list(tmp_path):
    """An image folder through a PATH LABEL list, paths from its folder."""
    imgs = _pngs(3)
    (tmp_path / "img").mkdir()
    with open(tmp_path / "train.txt", "w") as f:
        for i, (_, png) in enumerate(imgs):
            (tmp_path / "img" / ("%d.png" % i)).write_bytes(png)
            f.write("img/%d.png %d\n" % (i, 7 - i))
    ds = sluice.Dataset(str(tmp_path / "train.txt"))
    assert len(ds) == 3
    for i, (px, _) in enumerate(imgs):
        got, label, _ = ds[i]
        assert label == 7 - i
        assert np.array_equal(got, px)


def test_recordio_multipart(tmp_path):
    import mxrecordio
    imgs = _pngs(3)
    path = str(tmp_path / "faces.rec")
    w = mxrecordio.IndexedWriter(str(tmp_path / "faces.idx"), path)
    for i, (_, png) in enumerate(imgs):
        # record 1's id is the magic: the writer splits its IRHeader
        w.write_idx(i, mxrecordio.pack([i, 0.25], png,
                                       id=mxrecordio.MAGIC if i == 1 else i))
    w.close()
    raw = open(path, "rb").read()
    assert struct.pack("<I", (1 << 29) | 8) in raw  # a first part of 8 bytes
    ds = sluice.Dataset(path)
    assert len(ds) == 3
    for i, (px, png) in enumerate(imgs):
        got, label, targets = ds[i]
        assert label == i and targets == [float(i), 0.25]
        assert np.array_equal(got, px)
        assert ds.read(i) == png  # the joined image, as the writer had it
