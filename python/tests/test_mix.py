"""Mixup/CutMix and label smoothing in the loader (timm's Mixup, batch
mode): each batch's pixels are exact mixtures of the unmixed batch and its
flip, its targets exact mixtures of smoothed one-hot rows, the same for
any worker count and after a resume; eval mixes nothing."""

import random

import numpy as np
import pytest

import sluice

CLASSES = 5


@pytest.fixture(scope="module")
def labelled(tmp_path_factory):
    """A dataset with class labels and no float targets."""
    path = str(tmp_path_factory.mktemp("mix") / "labelled.lmdb")
    rng = random.Random(4)
    w = sluice.Writer(path)
    for i in range(64):
        wd, ht = rng.randint(24, 50), rng.randint(24, 50)
        w.add_pixels(bytes(rng.getrandbits(8) for _ in range(wd * ht * 3)),
                     wd, ht, 3, label=i % CLASSES)
    for k in range(CLASSES):
        w.set_class_name(k, "c%d" % k)
    w.commit()
    w.close()
    return path


def options(path, **extra):
    o = {"dataset.path": path, "loader.batch_size": 8, "loader.workers": 2,
         "resolution.max": 32, "augment.dtype": "fp32", "loader.seed": 3,
         # Host memory, read through numpy, on a machine with a GPU too.
         "device.backend": "host"}
    o.update(extra)
    return o


MIX = {"augment.mixup": 0.8, "augment.cutmix": 1.0,
       "augment.label_smoothing": 0.1}


def batches(o, epoch=0):
    out = []
    with sluice.Loader(o) as ld:
        for b in ld.epoch(epoch):
            x = np.array(memoryview(b.images), copy=True)
            t = None if b.targets is None else np.array(b.targets, copy=True)
            out.append((x, np.array(b.labels, copy=True), t, b.mix))
            del b
    return out


def smoothed(labels, eps):
    off = eps / CLASSES
    t = np.full((len(labels), CLASSES), off)
    for j, y in enumerate(labels):
        t[j, y] = 1 - eps + off
    return t


def test_pixels_and_targets_are_exact_mixtures(labelled):
    plain = batches(options(labelled))
    mixed = batches(options(labelled, **MIX))
    kinds = set()
    for (x, y, _, _), (xm, ym, t, (kind, lam, box)) in zip(plain, mixed):
        kinds.add(kind)
        n = len(y)
        assert (y == ym).all()  # labels keep each sample's own class
        x = x.view(np.float32).reshape(n, 3, 32, 32)
        xm = xm.view(np.float32).reshape(n, 3, 32, 32)
        flip = x[::-1]
        if kind == "mixup":
            lam32 = np.float32(lam)
            want = lam32 * x + (np.float32(1) - lam32) * flip
            assert np.array_equal(xm, want.astype(np.float32))
        elif kind == "cutmix":
            y0, y1, x0, x1 = box
            want = x.copy()
            want[:, :, y0:y1, x0:x1] = flip[:, :, y0:y1, x0:x1]
            assert np.array_equal(xm, want)
            area = (y1 - y0) * (x1 - x0)
            assert lam == pytest.approx(1 - area / (32 * 32), abs=1e-6)
        else:
            assert np.array_equal(xm, x)
        s = smoothed(y, 0.1)
        want_t = lam * s + (1 - lam) * s[::-1]
        assert t.shape == (n, CLASSES)
        assert np.allclose(t, want_t, atol=1e-6)
        assert np.allclose(t.sum(axis=1), 1, atol=1e-5)
    assert kinds == {"mixup", "cutmix"}


def test_label_smoothing_alone(labelled):
    for x, y, t, (kind, lam, _) in batches(options(labelled, **{
            "augment.label_smoothing": 0.2})):
        assert kind == "none" and lam == 1
        assert np.allclose(t, smoothed(y, 0.2), atol=1e-7)


def test_mixing_is_deterministic_and_resumes(labelled):
    runs = [batches(options(labelled, **MIX, **{"loader.workers": w}), epoch=1)
            for w in (1, 2, 4)]
    for a, b in zip(runs[0], runs[1]):
        assert np.array_equal(a[0], b[0]) and np.array_equal(a[2], b[2])
    for a, b in zip(runs[0], runs[2]):
        assert np.array_equal(a[0], b[0]) and a[3] == b[3]
    o = options(labelled, **MIX)
    with sluice.Loader(o) as ld:
        it = ld.epoch(1)
        for _ in range(3):
            next(it)
        state = ld.state_dict()
    with sluice.Loader(o) as ld:
        ld.load_state_dict(state)
        rest = [np.array(memoryview(b.images), copy=True) for b in ld]
    assert all(np.array_equal(a, b[0]) for a, b in zip(rest, runs[0][3:]))
    # another mixing setting is another stream of batches: refused
    with sluice.Loader(options(labelled, **{"augment.mixup": 0.2})) as ld:
        with pytest.raises(sluice.Error):
            ld.load_state_dict(state)


def test_eval_mixes_nothing(labelled):
    ev = {"loader.mode": "eval", "resolution.eval": 32}
    a = batches(options(labelled, **ev, **MIX))
    b = batches(options(labelled, **ev))
    for (x, _, t, mix), (x2, _, t2, _) in zip(a, b):
        assert np.array_equal(x, x2) and mix[0] == "none" and t is None


def test_u8_batches_mix_rounded(labelled):
    plain = batches(options(labelled, **{"augment.dtype": "u8"}))
    mixed = batches(options(labelled, **{"augment.dtype": "u8",
                                         "augment.mixup": 1.0}))
    for (x, *_), (xm, _, _, (kind, lam, _)) in zip(plain, mixed):
        if kind != "mixup":
            continue
        x = x.reshape(8, -1).astype(np.float32)
        lam32 = np.float32(lam)
        want = np.rint(lam32 * x + (np.float32(1) - lam32) * x[::-1])
        assert np.abs(xm.reshape(8, -1) - want).max() <= 1


def test_refusals_name_the_cause(labelled, tmp_path):
    path = str(tmp_path / "targets.lmdb")
    w = sluice.Writer(path, target_width=2)
    w.add_pixels(bytes(32 * 32 * 3), 32, 32, 3, label=0, targets=[1, 2])
    w.commit()
    w.close()
    with pytest.raises(sluice.Error, match="float targets"):
        sluice.Loader(options(path, **MIX, **{"loader.batch_size": 1}))
    nolabels = str(tmp_path / "noclass.lmdb")
    w = sluice.Writer(nolabels)
    w.add_pixels(bytes(32 * 32 * 3), 32, 32, 3, label=-1)
    w.commit()
    w.close()
    with pytest.raises(sluice.Error, match="num_classes"):
        sluice.Loader(options(nolabels, **MIX, **{"loader.batch_size": 1}))
    with sluice.Loader(options(nolabels, **MIX, **{
            "loader.batch_size": 1, "augment.num_classes": 3})) as ld:
        b = next(iter(ld.epoch(0)))
        assert np.asarray(b.targets).shape == (1, 3)
        del b


def test_each_rank_draws_its_own_mixing_and_resumes_it(labelled):
    """Issue 40: every rank drew the same kind, lambda and box for a batch,
    so the global batch mixed with one lambda. Each rank now draws its own
    (as each process of the reference recipes does); a resumed rank draws
    its batches' mixing again."""
    o = options(labelled, **MIX, **{"loader.world_size": 2})
    ranks = [[b[3] for b in batches(dict(o, **{"loader.rank": r}), epoch=1)]
             for r in (0, 1)]
    assert len(ranks[0]) == len(ranks[1]) == 4
    for a, b in zip(*ranks):
        assert a != b  # (kind, lambda, box): lambda is drawn continuous
    r1 = dict(o, **{"loader.rank": 1})
    with sluice.Loader(r1) as ld:
        it = ld.epoch(1)
        for _ in range(2):
            next(it)
        state = ld.state_dict()
    with sluice.Loader(r1) as ld:
        ld.load_state_dict(state)
        rest = [b.mix for b in ld]
    assert rest == ranks[1][2:]
