"""Detection boxes in the binding: sluice.augment.apply_boxes against
torchvision's affine matrix (Debian's torchvision 0.14 has no v2 box
transforms, so the reference is its _get_inverse_affine_matrix with
inverted=False, v2's box kernel, applied to the corners in numpy) and
against the pixels apply moves; batch.boxes, box_labels and box_counts
through DLPack, zero copy, against the geometry of a plain resize and
flip."""

import io
import random

import numpy as np
import pytest

import sluice
import sluice.augment as A

F = pytest.importorskip("torchvision.transforms.functional")
PIL = pytest.importorskip("PIL.Image")


def _tv_boxes(boxes, h, w, angle, translate, scale, shear, center):
    """torchvision v2's _affine_bounding_boxes_with_expand (no expand):
    the forward matrix about center (the image's middle when None), the
    corners, their enclosing box, clamped to the canvas."""
    if center is None:
        center = [w * 0.5, h * 0.5]
    m = F._get_inverse_affine_matrix(center, angle, translate, scale, shear,
                                     inverted=False)
    a = np.array(m, dtype=np.float64).reshape(2, 3)
    out = []
    for x0, y0, x1, y1 in np.asarray(boxes, dtype=np.float64):
        pts = np.array([[x0, y0, 1], [x1, y0, 1], [x1, y1, 1], [x0, y1, 1]])
        t = pts @ a.T
        bx = [t[:, 0].min(), t[:, 1].min(), t[:, 0].max(), t[:, 1].max()]
        out.append([min(max(bx[0], 0), w), min(max(bx[1], 0), h),
                    min(max(bx[2], 0), w), min(max(bx[3], 0), h)])
    return np.array(out)


def _random_boxes(rng, n, h, w, side=1):
    """n boxes of at least side pixels inside w x h."""
    b = []
    for _ in range(n):
        x0, y0 = rng.uniform(0, w - side - 1), rng.uniform(0, h - side - 1)
        b.append([x0, y0, rng.uniform(x0 + side, w), rng.uniform(y0 + side, h)])
    return np.array(b, dtype=np.float32)


@pytest.mark.parametrize("seed", range(40))
def test_apply_boxes_matches_torchvision_matrix(seed):
    rng = random.Random(seed)
    h, w = rng.randint(20, 300), rng.randint(20, 300)
    boxes = _random_boxes(rng, 6, h, w)
    op = ["rotate", "affine", "shear_x", "shear_y", "translate_x",
          "translate_y"][seed % 6]
    angle = rng.uniform(-180, 180)
    tx, ty = rng.randint(-40, 40), rng.randint(-40, 40)
    sx, sy = rng.uniform(-40, 40), rng.uniform(-40, 40)
    scale = rng.uniform(0.5, 2.0)
    center = None if seed % 4 else [rng.uniform(0, w), rng.uniform(0, h)]
    if op == "rotate":  # F.rotate passes -angle to the matrix
        got = A.apply_boxes(op, boxes, h, w, angle=angle, center=center)
        want = _tv_boxes(boxes, h, w, -angle, [0, 0], 1.0, [0, 0], center)
    elif op == "affine":
        got = A.apply_boxes(op, boxes, h, w, angle=angle, translate=[tx, ty],
                            scale=scale, shear=[sx, sy], center=center)
        want = _tv_boxes(boxes, h, w, angle, [tx, ty], scale, [sx, sy],
                         center)
    elif op == "shear_x":  # the policies' ShearX: about the top-left corner
        got = A.apply_boxes(op, boxes, h, w, shear=sx)
        want = _tv_boxes(boxes, h, w, 0, [0, 0], 1.0, [sx, 0], [0, 0])
    elif op == "shear_y":
        got = A.apply_boxes(op, boxes, h, w, shear=sy)
        want = _tv_boxes(boxes, h, w, 0, [0, 0], 1.0, [0, sy], [0, 0])
    elif op == "translate_x":
        got = A.apply_boxes(op, boxes, h, w, translate=tx)
        want = _tv_boxes(boxes, h, w, 0, [tx, 0], 1.0, [0, 0], None)
    else:
        got = A.apply_boxes(op, boxes, h, w, translate=ty)
        want = _tv_boxes(boxes, h, w, 0, [0, ty], 1.0, [0, 0], None)
    assert got.dtype == np.float32 and got.shape == (6, 4)
    np.testing.assert_allclose(got, want, atol=2e-3, rtol=1e-5)


def test_apply_boxes_hflip_and_errors():
    b = np.array([[10, 20, 30, 40]], dtype=np.float32)
    assert A.apply_boxes("hflip", b, 50, 100).tolist() == [[70, 20, 90, 40]]
    with pytest.raises(sluice.InvalidArgumentError):
        A.apply_boxes("adjust_hue", b, 50, 100, hue_factor=0.1)


@pytest.mark.parametrize("seed", range(12))
def test_boxes_follow_the_pixels(seed):
    """A white rectangle on black, warped by apply: every bright pixel lies
    in the box apply_boxes gives for the rectangle."""
    rng = random.Random(100 + seed)
    h, w = 120, 160
    img = np.zeros((h, w, 3), np.uint8)
    img[30:80, 50:110] = 255
    box = [[50, 30, 110, 80]]
    p = dict(angle=rng.uniform(-60, 60), translate=[rng.randint(-20, 20), 5],
             scale=rng.uniform(0.7, 1.3), shear=[rng.uniform(-20, 20), 0])
    out = A.apply("affine", img, interpolation="nearest", **p)
    (x0, y0, x1, y1), = A.apply_boxes("affine", box, h, w, **p)
    ys, xs = np.nonzero(out[:, :, 0] > 128)
    assert len(xs) > 0
    # pixel (x, y) covers [x, x + 1): inside, give or take nearest sampling
    assert xs.min() + 1 >= x0 - 1.5 and xs.max() <= x1 + 1.5
    assert ys.min() + 1 >= y0 - 1.5 and ys.max() <= y1 + 1.5


def _jpeg(rng, w, h):
    a = np.array([[[(x * 7 + y * 3 + c * 50) % 256 for c in range(3)]
                   for x in range(w)] for y in range(h)], np.uint8)
    buf = io.BytesIO()
    PIL.fromarray(a).save(buf, "JPEG", quality=90)
    return buf.getvalue()


N = 21


@pytest.fixture(scope="module")
def box_dataset(tmp_path_factory):
    rng = random.Random(5)
    path = str(tmp_path_factory.mktemp("boxes") / "det.lmdb")
    w = sluice.Writer(path)
    sizes, all_boxes = [], []
    for i in range(N):
        wd, ht = rng.randint(40, 90), rng.randint(40, 90)
        n = i % 4
        bx = [(*b, (i + k) % 3) for k, b in
              enumerate(_random_boxes(rng, n, ht, wd, 4).tolist())]
        w.add_encoded(_jpeg(rng, wd, ht), label=i % 3, boxes=bx)
        sizes.append((wd, ht))
        all_boxes.append(bx)
    w.commit()
    w.close()
    return path, sizes, all_boxes


def _opts(path, **extra):
    o = {"dataset.path": path, "loader.batch_size": 4, "loader.workers": 2,
         "resolution.max": 32, "augment.dtype": "u8", "loader.seed": 3,
         "device.backend": "host", "augment.crop": "none", "augment.flip": 1.0,
         "loader.order": "sequential", "loader.drop_last": False}
    o.update(extra)
    return o


def test_batch_boxes_zero_copy_and_geometry(box_dataset):
    path, sizes, all_boxes = box_dataset
    seen = 0
    with sluice.Loader(_opts(path)) as ld:
        for b in ld.epoch(0):
            boxes = np.from_dlpack(b.boxes)
            assert boxes.ctypes.data == b.boxes.data_ptr  # a view, no copy
            assert boxes.dtype == np.float32 and boxes.shape == (4, 3, 4)
            labels = np.from_dlpack(b.box_labels)
            counts = np.from_dlpack(b.box_counts)
            assert labels.dtype == np.int32 and labels.shape == (4, 3)
            assert counts.dtype == np.int32 and counts.shape == (4,)
            for j, idx in enumerate(np.from_dlpack(b.indices).tolist()):
                wd, ht = sizes[idx]
                want = all_boxes[idx]
                assert counts[j] == len(want)
                for k, (x0, y0, x1, y1, lab) in enumerate(want):
                    sx, sy = 32 / wd, 32 / ht  # whole image, then flipped
                    np.testing.assert_allclose(
                        boxes[j, k], [32 - x1 * sx, y0 * sy, 32 - x0 * sx,
                                      y1 * sy], atol=1e-4)
                    assert labels[j, k] == lab
                    seen += 1
                assert (boxes[j, counts[j]:] == 0).all()
                assert (labels[j, counts[j]:] == -1).all()
    assert seen > 10


def test_batch_boxes_torch_and_capacity(box_dataset):
    path, _, _ = box_dataset
    torch = pytest.importorskip("torch")
    with sluice.Loader(_opts(path, **{"loader.max_boxes": 2,
                                      "augment.crop": "iou_crop"})) as ld:
        for b in ld.epoch(0):
            t = torch.from_dlpack(b.boxes)
            assert t.data_ptr() == b.boxes.data_ptr
            assert tuple(t.shape) == (4, 2, 4)
            c = torch.from_dlpack(b.box_counts)
            assert c.dtype == torch.int32 and int(c.max()) <= 2
        assert ld.stats()["boxes_over"] >= 0


def test_no_boxes_gives_none(tmp_path):
    path = str(tmp_path / "plain.lmdb")
    w = sluice.Writer(path)
    w.add_encoded(_jpeg(random.Random(1), 40, 30), label=0)
    w.commit()
    w.close()
    with sluice.Loader(_opts(path, **{"loader.batch_size": 1})) as ld:
        for b in ld.epoch(0):
            assert b.boxes is None and b.box_labels is None
            assert b.box_counts is None
