"""Datasets read in place through the binding: WebDataset shards written by
webdataset's ShardWriter (a brace pattern) and an ImageFolder of PNG
files; every sample once an epoch, with the label the writer stored."""

import io
import os

import numpy as np
import pytest

import sluice

wds = pytest.importorskip("webdataset")  # scripts/test-requirements.txt
Image = pytest.importorskip("PIL.Image")


def _png(rng):
    b = io.BytesIO()
    Image.fromarray(rng.integers(0, 256, (24, 20, 3), dtype=np.uint8)).save(
        b, "PNG")
    return b.getvalue()


def _epoch_labels(path, n, **extra):
    o = {"dataset.path": path, "loader.batch_size": 4, "loader.workers": 2,
         "loader.drop_last": False, "resolution.max": 16,
         "augment.dtype": "u8", "device.backend": "host",
         "loader.order": "quasi_random", "loader.quasi_window": 1}
    o.update(extra)
    got = {}
    with sluice.Loader(o) as ld:
        for b in ld.epoch(0):
            idx = np.from_dlpack(b.indices)[: b.valid]
            lab = np.from_dlpack(b.labels)[: b.valid]
            for i, l in zip(idx.tolist(), lab.tolist()):
                got[i] = l
    assert sorted(got) == list(range(n))
    return got


def test_webdataset_pattern(tmp_path):
    rng = np.random.default_rng(1)
    with wds.ShardWriter(str(tmp_path / "t-%06d.tar"), maxcount=7,
                         verbose=0) as sw:
        for i in range(20):
            sw.write({"__key__": "k%03d" % i, "png": _png(rng), "cls": i % 3})
    got = _epoch_labels(str(tmp_path / "t-{000000..000002}.tar"), 20)
    assert all(got[i] == i % 3 for i in range(20))


def test_image_folder(tmp_path):
    rng = np.random.default_rng(2)
    for c in ("b_dog", "a_cat"):
        os.makedirs(tmp_path / c)
        for i in range(5):
            (tmp_path / c / ("%d.png" % i)).write_bytes(_png(rng))
    got = _epoch_labels(str(tmp_path), 10, **{"loader.io": "pread"})
    # torchvision's order: a_cat (label 0) first, then b_dog
    assert [got[i] for i in range(10)] == [0] * 5 + [1] * 5


def test_decode_error_names_the_file(tmp_path):
    # Issue 40: "jpeg: Premature end of JPEG file" at sample 21 named no
    # file. A JPEG cut after its header opens, then fails to decode: the
    # error names the folder's file as well as the sample's index.
    rng = np.random.default_rng(3)
    os.makedirs(tmp_path / "album")
    for i in range(6):
        b = io.BytesIO()
        Image.fromarray(rng.integers(0, 256, (48, 64, 3), dtype=np.uint8)).save(
            b, "JPEG", quality=90)
        data = b.getvalue()
        if i == 4:
            data = data[: len(data) // 2]
        (tmp_path / "album" / ("p%d.jpg" % i)).write_bytes(data)
    o = {"dataset.path": str(tmp_path), "loader.batch_size": 2,
         "loader.workers": 1, "resolution.max": 16, "augment.dtype": "u8",
         "device.backend": "host", "loader.order": "sequential",
         "loader.on_error": "fail"}
    with sluice.Loader(o) as ld:
        with pytest.raises(sluice.Error) as e:
            for _ in ld.epoch(0):
                pass
    msg = str(e.value)
    assert "sample 4" in msg and "album/p4.jpg" in msg, msg


def test_unreadable_file_left_out_with_skip(tmp_path):
    # Issue 40: one unreadable file stopped a folder read in place even
    # with loader.on_error = skip ("sample 18 (file album/garbage.jpg):
    # value is not an image file" failed the open). With skip it is left
    # out and reported, count and name; with fail the open still fails,
    # naming it.
    rng = np.random.default_rng(4)
    os.makedirs(tmp_path / "album")
    os.makedirs(tmp_path / "other")
    for i in range(5):
        (tmp_path / "album" / ("p%d.png" % i)).write_bytes(_png(rng))
        (tmp_path / "other" / ("q%d.png" % i)).write_bytes(_png(rng))
    (tmp_path / "album" / "garbage.jpg").write_bytes(b"not an image" * 10)
    o = {"loader.io": "pread", "loader.on_error": "fail"}
    with pytest.raises(sluice.Error) as e:
        _epoch_labels(str(tmp_path), 10, **o)
    assert "album/garbage.jpg" in str(e.value)
    o["loader.on_error"] = "skip"
    got = _epoch_labels(str(tmp_path), 10, **o)  # every sample once
    assert [got[i] for i in range(10)] == [0] * 5 + [1] * 5
    opts = {"dataset.path": str(tmp_path), "loader.batch_size": 4,
            "resolution.max": 16, "augment.dtype": "u8",
            "device.backend": "host", "loader.on_error": "skip"}
    with sluice.Loader(opts) as ld:
        s = ld.stats()
        assert ld.sample_count == 10
    assert s["left_out"] == 1
    assert "album/garbage.jpg" in s["left_out_files"]
    assert "not an image" in s["left_out_files"]
