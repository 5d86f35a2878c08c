"""Several datasets in one loader, mixed by weight (dataset.mix,
dataset.weights; Loader(path=[a, b], weights=[3, 1])): each dataset's share
of an epoch is its weight's, each is read without replacement (a small one
repeating, a large one continuing across epochs), batch.sources says where
each sample came from, and the batches are the same for any worker count,
disjoint across ranks, resumable (elastically too); eval reads every sample
of every dataset once."""

import collections
import random
import subprocess

import pytest

import sluice

# Dataset A: 300 samples, labels 0..4; dataset B: 40 samples, labels 0..2
# (10 + label would be the offset mode's view).
N_A, N_B = 300, 40
CLASSES_A = 5


def _write(path, n, classes, seed, fmt=None):
    rng = random.Random(seed)
    w = sluice.Writer(path, format=fmt) if fmt else sluice.Writer(path)
    for i in range(n):
        wd, ht = rng.randint(16, 30), rng.randint(16, 30)
        w.add_pixels(bytes(rng.getrandbits(8) for _ in range(wd * ht * 3)),
                     wd, ht, 3, label=i % classes)
    w.commit()
    w.close()


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    d = tmp_path_factory.mktemp("dmix")
    a, b = str(d / "a.lmdb"), str(d / "b.h5")
    _write(a, N_A, CLASSES_A, 1)
    _write(b, N_B, 3, 2, fmt="hdf5")
    return a, b


def options(pair, **extra):
    o = {"dataset.mix": "%s, %s" % pair, "dataset.weights": "3, 1",
         "loader.batch_size": 10, "loader.workers": 2, "loader.seed": 5,
         "loader.order": "random", "resolution.max": 16,
         "device.backend": "host", "loader.drop_last": "false"}
    o.update(extra)
    return o


def _epoch(ld, e):
    """Each batch's (indices, sources, labels, valid, pixel bytes)."""
    out = []
    for b in ld.epoch(e):
        out.append((memoryview(b.indices).tolist(), b.sources,
                    memoryview(b.labels).tolist(), b.valid,
                    bytes(memoryview(b.images).cast("B"))))
    return out


def _valid_indices(batches):
    return [i for idx, _, _, valid, _ in batches for i in idx[:valid]]


def test_shares_and_sources(pair):
    with sluice.Loader(options(pair)) as ld:
        assert ld.sample_count == N_A + N_B
        assert ld.source_count == 2
        assert len(ld) == -(-(N_A + N_B) // 10)
        assert ld.source_of(0) == (0, 0)
        assert ld.source_of(N_A + 7) == (1, 7)
        with pytest.raises(IndexError):
            ld.source_of(N_A + N_B)
        per_epoch = []
        for e in range(4):
            batches = _epoch(ld, e)
            shares = collections.Counter()
            for idx, src, labels, valid, _ in batches:
                for j in range(valid):
                    k, local = ld.source_of(idx[j])
                    assert src[j] == k
                    assert labels[j] == local % (CLASSES_A if k == 0 else 3)
                    shares[k] += 1
            per_epoch.append(shares)
    total = sum(per_epoch, collections.Counter())
    n = 4 * (N_A + N_B)
    assert sum(total.values()) == n
    # 3:1: each epoch is exactly 255 + 85 (largest remainder of 340 x w).
    for shares in per_epoch:
        assert shares == {0: 255, 1: 85}
    assert abs(total[0] / n - 0.75) < 0.01
    assert abs(total[1] / n - 0.25) < 0.01


def test_without_replacement_across_epochs(pair):
    """Each dataset's samples come back only once all were read: over any
    number of epochs, the counts of a dataset's samples differ by <= 1 (a
    pass may end inside an epoch, so an epoch can hold a sample of the old
    pass and again of the new one), and epoch 0 of the large dataset, in
    its first pass, holds none twice."""
    with sluice.Loader(options(pair)) as ld:
        seen = collections.Counter()
        for e in range(5):
            idx = _valid_indices(_epoch(ld, e))
            a = [i for i in idx if i < N_A]
            if e == 0:
                assert len(a) == len(set(a))  # 255 of its 300
            seen.update(idx)
            for lo, hi in ((0, N_A), (N_A, N_A + N_B)):
                counts = [seen[i] for i in range(lo, hi)]
                assert max(counts) - min(counts) <= 1, (e, lo)


@pytest.mark.parametrize("order", ["random", "quasi_random", "sequential"])
def test_same_batches_for_any_worker_count(pair, order):
    ref = None
    for workers in (1, 2, 4):
        with sluice.Loader(options(pair, **{"loader.workers": workers,
                                            "loader.order": order})) as ld:
            got = [_epoch(ld, e) for e in (0, 3)]
        if ref is None:
            ref = got
        assert got == ref, (order, workers)
    if order != "random":  # interleaved: every 4 samples hold 3 of A
        src = [s for b in ref[0] for s in b[1][:b[3]]]
        for start in range(0, 300, 4):
            assert src[start:start + 4].count(0) == 3


def test_ranks_disjoint(pair):
    with sluice.Loader(options(pair)) as ld:
        whole = collections.Counter(_valid_indices(_epoch(ld, 2)))
    got = collections.Counter()
    positions = 0
    for r in range(3):
        with sluice.Loader(options(pair), rank=r, world_size=3) as ld:
            idx = _valid_indices(_epoch(ld, 2))
            positions += len(idx)
            got.update(idx)
    # The ranks deal the same epoch: together its samples, each as often.
    assert positions == N_A + N_B
    assert got == whole


def test_resume_mid_epoch_and_elastic(pair):
    with sluice.Loader(options(pair)) as ld:
        whole = _epoch(ld, 1)
    with sluice.Loader(options(pair)) as ld:
        ld.set_epoch(1)
        for _ in range(4):
            ld.next()
        state = ld.state_dict()
    with sluice.Loader(options(pair, **{"loader.workers": 3})) as ld:
        ld.load_state_dict(state)
        rest = [(memoryview(b.indices).tolist(), b.sources,
                 memoryview(b.labels).tolist(), b.valid,
                 bytes(memoryview(b.images).cast("B"))) for b in ld]
    assert rest == whole[4:]
    # Saved by 2 ranks after 3 batches each, resumed on 1, 3 and 4.
    read, states = [], []
    for r in range(2):
        with sluice.Loader(options(pair), rank=r, world_size=2) as ld:
            ld.set_epoch(1)
            for _ in range(3):
                b = ld.next()
                read += memoryview(b.indices).tolist()[:b.valid]
            states.append(ld.state_dict())
    with sluice.Loader(options(pair)) as ld:
        epoch = collections.Counter(_valid_indices(_epoch(ld, 1)))
    for world in (1, 3, 4):
        seen = collections.Counter(read)
        for r in range(world):
            with sluice.Loader(options(pair), rank=r, world_size=world) as ld:
                ld.load_state_dict(states[r % 2])
                for b in ld:
                    seen.update(memoryview(b.indices).tolist()[:b.valid])
        assert seen == epoch, world


def test_eval_reads_each_sample_once(pair):
    with sluice.Loader(options(pair, **{"loader.mode": "eval"})) as ld:
        for e in (0, 1):
            idx = _valid_indices(_epoch(ld, e))
            assert sorted(idx) == list(range(N_A + N_B))


def test_offset_labels(pair):
    with sluice.Loader(options(pair, **{"dataset.mix_labels": "offset"})) \
            as ld:
        for idx, src, labels, valid, _ in _epoch(ld, 0):
            for j in range(valid):
                k, local = ld.source_of(idx[j])
                want = local % CLASSES_A if k == 0 else CLASSES_A + local % 3
                assert labels[j] == want


def test_python_list_form_and_the_c_loader(pair, c_batches):
    o = options(pair)
    del o["dataset.mix"], o["dataset.weights"]
    with sluice.Loader(o, path=list(pair), weights=[3, 1]) as ld:
        a = _epoch(ld, 1)
    with sluice.Loader(options(pair)) as ld:
        assert _epoch(ld, 1) == a
    # The C loader (sluice_py_c_batches) gives the same bytes.
    args = [c_batches, "1"] + ["%s=%s" % kv for kv in options(pair).items()]
    ref = [line for line in subprocess.run(
        args, check=True, capture_output=True, text=True).stdout.split("\n")
        if line]
    assert len(ref) == len(a)
    for line, (idx, _, labels, valid, img) in zip(ref, a):
        k, v, himg, hlab, hidx = line.split()
        assert int(v) == valid
        assert int(himg, 16) == _fnv1a(img)


def _fnv1a(data):
    h = 1469598103934665603
    for x in data:
        h = ((h ^ x) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return h


@pytest.mark.parametrize("extra, message", [
    ({"dataset.weights": "3, 0"}, "must be a number > 0"),
    ({"dataset.weights": "3, -1"}, "must be a number > 0"),
    ({"dataset.weights": "3"}, "1 weight for the 2 datasets"),
    ({"dataset.weights": ""}, "0 weights for the 2 datasets"),
    ({"dataset.weights": "1, 1e-9"}, "gets none of an epoch"),
    ({"dataset.path": "x.lmdb"}, "dataset.mix and dataset.path are both set"),
    ({"dataset.mix": "", "dataset.path": "x.lmdb"}, "dataset.weights is set"),
])
def test_refusals(pair, extra, message):
    with pytest.raises(sluice.Error) as e:
        sluice.Loader(options(pair, **extra))
    assert message in str(e.value)


def test_a_dataset_that_fails_to_open_is_named(pair, tmp_path):
    missing = str(tmp_path / "nowhere.lmdb")
    with pytest.raises(sluice.Error) as e:
        sluice.Loader(options(pair, **{"dataset.mix": "%s, %s" % (pair[0],
                                                                  missing)}))
    assert "dataset 2 of 2" in str(e.value)
    assert "nowhere.lmdb" in str(e.value)
    with pytest.raises(ValueError):
        sluice.Loader(path=[pair[0], "a,b"], weights=[1, 1])


def test_ini_paths_from_the_files_folder(pair, tmp_path):
    import os
    ini = tmp_path / "mix.ini"
    rel = [os.path.relpath(p, tmp_path) for p in pair]
    ini.write_text("[dataset]\nmix = %s, %s\nweights = 3, 1\n"
                   "[loader]\nbatch_size = 10\norder = random\nseed = 5\n"
                   "drop_last = false\nworkers = 2\n[resolution]\nmax = 16\n"
                   "[device]\nbackend = host\n" % tuple(rel))
    with sluice.Loader(str(ini)) as ld:
        got = _epoch(ld, 0)
    with sluice.Loader(options(pair)) as ld:
        assert _epoch(ld, 0) == got


def test_offset_labels_move_box_labels_too(tmp_path):
    """Detection datasets mixed with dataset.mix_labels = offset: each
    box's class moves with its image's label (made by the writer with
    boxes: sluice's own format)."""
    np = pytest.importorskip("numpy")
    from test_boxes import _jpeg
    paths = []
    for name, cls in (("a", 5), ("b", 3)):
        p = str(tmp_path / (name + ".lmdb"))
        paths.append(p)
        w = sluice.Writer(p)
        rng = random.Random(1)
        for i in range(8):
            w.add_encoded(_jpeg(rng, 40, 40), label=i % cls,
                          boxes=[(4.0, 4.0, 20.0, 20.0, i % cls)])
        w.commit()
        w.close()
    o = {"dataset.mix": ", ".join(paths), "dataset.weights": "1, 1",
         "dataset.mix_labels": "offset", "loader.batch_size": 4,
         "loader.workers": 1, "resolution.max": 32, "augment.dtype": "u8",
         "device.backend": "host", "augment.crop": "none",
         "loader.order": "sequential", "loader.drop_last": False}
    seen = set()
    with sluice.Loader(o) as ld:
        for b in ld.epoch(0):
            labels = np.from_dlpack(b.labels).tolist()
            boxes = np.from_dlpack(b.box_labels)
            for j in range(b.valid):
                k, local = ld.source_of(memoryview(b.indices).tolist()[j])
                want = local % 5 if k == 0 else 5 + local % 3
                assert labels[j] == want
                assert int(boxes[j][0]) == want
                seen.add(k)
    assert seen == {0, 1}


def test_mixup_needs_every_class(pair):
    """Soft targets over fewer classes than the mixed labels run to are
    refused (a label past them would get no column)."""
    with pytest.raises(sluice.ConfigError) as e:
        sluice.Loader(options(pair, **{"dataset.mix_labels": "offset",
                                        "augment.label_smoothing": 0.1,
                                        "augment.num_classes": 5}))
    assert "augment.num_classes = 5" in str(e.value)
    assert "8 classes" in str(e.value)
    with sluice.Loader(options(pair, **{"dataset.mix_labels": "offset",
                                        "augment.label_smoothing": 0.1,
                                        "augment.num_classes": 8})) as ld:
        assert ld.source_count == 2


def test_resume_with_the_same_shares(pair):
    """3, 1 and 6, 2 are one mix: a state of one resumes on the other."""
    with sluice.Loader(options(pair)) as ld:
        ld.set_epoch(1)
        ld.next()
        state = ld.state_dict()
    with sluice.Loader(options(pair, **{"dataset.weights": "6, 2"})) as ld:
        ld.load_state_dict(state)
    with sluice.Loader(options(pair, **{"dataset.weights": "2, 1"})) as ld:
        with pytest.raises(sluice.StateError):
            ld.load_state_dict(state)
