"""Sharded datasets: shards written by independent processes with
sluice.Writer, made one dataset by sluice.index (and `sluice index`), read
as one; shards checked against the index at open."""

import hashlib
import os
import random
import subprocess
import sys
from collections import Counter

import numpy as np
import pytest

import sluice

from conftest import base_options

CLASSES = ["cat", "dog", "zebra fish"]

# A shard written by a process of its own: the samples of part `part`.
WRITE_SHARD = r"""
import random, sys
import sluice
path, part, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(part)
w = sluice.Writer(path, target_width=1)
for i in range(n):
    wd, ht = rng.randint(8, 40), rng.randint(8, 40)
    px = bytes(rng.getrandbits(8) for _ in range(wd * ht * 3))
    w.add_pixels(px, wd, ht, 3, label=(part + i) % 3, targets=[part * 100 + i],
                 name="p%d/%03d" % (part, i))
for k, c in enumerate(%s):
    w.set_class_name(k, c)
w.commit()
w.close()
""".replace("%s", repr(CLASSES))


def write_parallel(folder, parts):
    """Starts one writer process per (name, part, n), all at once."""
    os.makedirs(folder, exist_ok=True)
    procs = [subprocess.Popen([sys.executable, "-c", WRITE_SHARD,
                               os.path.join(folder, name), str(part), str(n)])
             for name, part, n in parts]
    assert [p.wait() for p in procs] == [0] * len(procs)


def samples(path):
    """The multiset of a dataset's (stored bytes' digest, label, targets)."""
    ds = sluice.Dataset(path)
    out = Counter()
    for i in range(len(ds)):
        info = ds.info(i)
        out[(hashlib.sha256(ds.read(i)).hexdigest(), info["label"],
             tuple(info["targets"]))] += 1
    return out


PARTS = [("train-0.lmdb", 0, 23), ("train-1.h5", 1, 17),
         ("train-2.lmdb", 2, 31)]


@pytest.fixture(scope="module")
def shard_set(tmp_path_factory):
    folder = str(tmp_path_factory.mktemp("shards") / "set")
    write_parallel(folder, PARTS)
    return folder


def test_index_makes_one_dataset(shard_set):
    r = sluice.index(shard_set)
    assert r["shards"] == 3 and r["samples"] == 71
    whole = samples(shard_set)
    parts = Counter()
    for name, _, _ in PARTS:
        parts += samples(os.path.join(shard_set, name))
    assert whole == parts
    ds = sluice.Dataset(shard_set)
    assert ds.class_names == CLASSES
    # Index order is shard order (by name), then each shard's own order.
    first = sluice.Dataset(os.path.join(shard_set, "train-0.lmdb"))
    assert ds.read(0) == first.read(0)
    assert ds.read(23) == sluice.Dataset(
        os.path.join(shard_set, "train-1.h5")).read(0)
    # The index file itself opens the set too.
    assert len(sluice.Dataset(os.path.join(shard_set, "sluice.index"))) == 71


def epoch_batches(path, workers):
    o = base_options(path, **{"loader.workers": workers,
                              "loader.batch_size": 8,
                              "loader.drop_last": False})
    with sluice.Loader(o) as ld:
        return [(bytes(memoryview(b.images).cast("B")),
                 memoryview(b.labels).tolist(),
                 memoryview(b.indices).tolist()) for b in ld.epoch(1)]


def test_batches_same_for_any_worker_count(shard_set):
    sluice.index(shard_set)
    one = epoch_batches(shard_set, 1)
    # Every sample of every shard (the last batch padded with repeats).
    assert {i for _, _, idx in one for i in idx} == set(range(71))
    assert epoch_batches(shard_set, 2) == one
    assert epoch_batches(shard_set, 4) == one


def test_refresh_adds_shards_and_skips_unfinished(tmp_path):
    folder = str(tmp_path / "set")
    write_parallel(folder, PARTS[:2])
    assert sluice.index(folder)["checksummed"] == 2
    # A writer that died leaves only its hidden temporary file: not listed.
    with open(os.path.join(folder, ".train-9.lmdb.sluice-tmp.123"), "wb") as f:
        f.write(b"\0" * 4096)
    write_parallel(folder, PARTS[2:])
    r = sluice.index(folder)
    assert (r["shards"], r["samples"], r["checksummed"]) == (3, 71, 1)
    assert len(sluice.Dataset(folder)) == 71


def test_shard_with_other_settings_refused(tmp_path):
    folder = str(tmp_path / "set")
    write_parallel(folder, PARTS[:1])
    w = sluice.Writer(os.path.join(folder, "train-5.lmdb"), target_width=1)
    w.add_pixels(bytes(8 * 8 * 3), 8, 8, 3, label=1, targets=[0])
    w.set_class_name(0, "cat")
    w.set_class_name(1, "horse")
    w.commit()
    w.close()
    with pytest.raises(sluice.FormatError) as e:
        sluice.index(folder)
    msg = str(e.value)
    assert "train-5.lmdb" in msg and "horse" in msg and "dog" in msg
    assert "train-0.lmdb" in msg
    assert not os.path.exists(os.path.join(folder, "sluice.index"))

    os.remove(os.path.join(folder, "train-5.lmdb"))
    w = sluice.Writer(os.path.join(folder, "train-6.lmdb"), target_width=2)
    w.add_pixels(bytes(8 * 8 * 3), 8, 8, 3, label=0, targets=[0, 1])
    w.commit()
    w.close()
    with pytest.raises(sluice.FormatError, match="train-6.lmdb.*target"):
        sluice.index(folder)


def test_changed_shards_named_at_open(tmp_path):
    folder = str(tmp_path / "set")
    write_parallel(folder, PARTS)
    sluice.index(folder)
    victim = os.path.join(folder, "train-1.h5")
    keep = open(victim, "rb").read()

    os.remove(victim)
    with pytest.raises(sluice.IOError, match="train-1.h5: missing"):
        sluice.Dataset(folder)

    with open(victim, "wb") as f:
        f.write(keep[:len(keep) // 2])
    with pytest.raises(sluice.FormatError, match="train-1.h5: .*truncated"):
        sluice.Dataset(folder)

    # The same size, other first bytes: another file put in its place.
    with open(victim, "wb") as f:
        f.write(bytes(len(keep)))
    with pytest.raises(sluice.FormatError, match="train-1.h5: .*replaced"):
        sluice.Dataset(folder)

    # A byte changed past the first bytes: verify's whole-file checksums.
    with open(victim, "wb") as f:
        f.write(keep[:-1] + bytes([keep[-1] ^ 1]))
    sluice.Dataset(folder)  # opens: the first bytes and size match
    v = subprocess.run([sluice._cli(), "verify", folder],
                       capture_output=True, text=True)
    assert v.returncode != 0 and "train-1.h5" in v.stderr + v.stdout
    with open(victim, "wb") as f:
        f.write(keep)
    assert len(sluice.Dataset(folder)) == 71


def test_damaged_index_refused(tmp_path):
    folder = str(tmp_path / "set")
    write_parallel(folder, PARTS[:1])
    sluice.index(folder)
    path = os.path.join(folder, "sluice.index")
    good = open(path, "rb").read()
    rng = random.Random(5)
    for _ in range(20):  # a flipped byte anywhere
        b = bytearray(good)
        b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
        open(path, "wb").write(bytes(b))
        with pytest.raises(sluice.FormatError, match="sluice.index"):
            sluice.Dataset(folder)
    for cut in (0, 10, 64, len(good) - 1):
        open(path, "wb").write(good[:cut])
        with pytest.raises(sluice.FormatError, match="sluice.index"):
            sluice.Dataset(folder)
    open(path, "wb").write(good)
    assert len(sluice.Dataset(folder)) == 23


def test_cli_index(shard_set):
    out = subprocess.run([sluice._cli(), "index", shard_set],
                         capture_output=True, text=True, check=True).stdout
    assert "3 shards, 71 samples" in out
    info = subprocess.run([sluice._cli(), "info", shard_set],
                          capture_output=True, text=True, check=True).stdout
    assert "shards" in info and "71" in info
    bad = subprocess.run([sluice._cli(), "index", "/nonexistent/x"],
                         capture_output=True, text=True)
    assert bad.returncode == 1 and "/nonexistent/x" in bad.stderr


def test_pixels_read_back(shard_set):
    sluice.index(shard_set)
    ds = sluice.Dataset(shard_set)
    part = sluice.Dataset(os.path.join(shard_set, "train-2.lmdb"))
    px, label, targets = ds[40 + 5]
    want, wl, wt = part[5]
    assert np.array_equal(px, want) and label == wl and targets == wt


def run_cli(*args, ok=True):
    p = subprocess.run([sluice._cli(), *map(str, args)], capture_output=True,
                       text=True)
    if ok:
        assert p.returncode == 0, p.stderr
    return p


def test_pack_shards_same_for_any_thread_count(tmp_path):
    img = tmp_path / "img"
    run_cli("synth", img, "--count", 30, "--classes", 3)
    run_cli("pack", img, tmp_path / "one.lmdb", "--quiet")
    for t in (1, 2):
        out = run_cli("pack", img, tmp_path / ("t%d" % t), "--shards", 4,
                      "--threads", t, "--quiet").stdout
        assert "4 shards" in out
    names = sorted(os.listdir(tmp_path / "t1"))
    assert names == ["part-0000%d.lmdb" % k for k in range(4)] + \
        ["sluice.index"]
    for n in names:
        assert (tmp_path / "t1" / n).read_bytes() == \
            (tmp_path / "t2" / n).read_bytes(), n
    # The set holds the one file's samples, in its order.
    one, s = sluice.Dataset(str(tmp_path / "one.lmdb")), \
        sluice.Dataset(str(tmp_path / "t1"))
    assert len(s) == len(one) == 30 and s.class_names == one.class_names
    for i in range(30):
        assert s.read(i) == one.read(i) and \
            s.info(i)["label"] == one.info(i)["label"]

    # A second pack into the folder: refused, or with --force replaces the
    # first one whole (no stale shard of it joins the set).
    bad = run_cli("pack", img, tmp_path / "t1", "--shards", 2, "--quiet",
                  ok=False)
    assert bad.returncode == 1 and "t1" in bad.stderr
    run_cli("pack", img, tmp_path / "t1", "--shards", 2, "--quiet", "--force")
    assert sorted(os.listdir(tmp_path / "t1")) == \
        ["part-00000.lmdb", "part-00001.lmdb", "sluice.index"]
    assert len(sluice.Dataset(str(tmp_path / "t1"))) == 30
    # Anything else in the folder: refused even with --force.
    (tmp_path / "t2" / "notes.txt").write_text("mine")
    bad = run_cli("pack", img, tmp_path / "t2", "--shards", 2, "--quiet",
                  "--force", ok=False)
    assert bad.returncode == 1 and "notes.txt" in bad.stderr
    assert (tmp_path / "t2" / "notes.txt").exists()
    assert len(sluice.Dataset(str(tmp_path / "t2"))) == 30  # nothing lost


def test_pack_from_to_shards_and_back(shard_set, tmp_path):
    sluice.index(shard_set)
    # Any dataset into shards (here a set itself, HDF5 shards), and a set
    # into one file: the same samples, in order.
    run_cli("pack", "--from", shard_set, tmp_path / "h", "--shards", 2,
            "--format", "hdf5")
    assert sorted(os.listdir(tmp_path / "h")) == \
        ["part-00000.h5", "part-00001.h5", "sluice.index"]
    run_cli("pack", "--from", tmp_path / "h", tmp_path / "one.lmdb")
    a, b, c = (sluice.Dataset(str(p)) for p in
               (shard_set, tmp_path / "h", tmp_path / "one.lmdb"))
    assert len(a) == len(b) == len(c) == 71
    for i in range(71):
        assert a.read(i) == b.read(i) == c.read(i)
        assert a.info(i)["targets"] == c.info(i)["targets"]
        assert a.name(i) == c.name(i)
    bad = run_cli("pack", "--from", shard_set, tmp_path / "x", "--shards",
                  0, ok=False)
    assert bad.returncode == 2 and "--shards" in bad.stderr


def test_resume_and_quasi_random_over_shards(shard_set):
    """Resume mid-epoch and quasi_random (a block a shard) as for one file:
    the restored loader gives the rest of the epoch's batches exactly."""
    sluice.index(shard_set)
    for order in ("random", "quasi_random"):
        o = base_options(shard_set, **{"loader.order": order,
                                       "loader.drop_last": False})
        with sluice.Loader(o) as ld:
            full = [memoryview(b.indices).tolist() for b in ld.epoch(3)]
            ld.set_epoch(3)
            for _ in range(4):
                ld.next()
            st = ld.state_dict()
        with sluice.Loader(o) as ld:
            ld.load_state_dict(st)
            assert [memoryview(b.indices).tolist() for b in ld] == full[4:]
        if order == "quasi_random":
            # Each shard's samples are consecutive in the epoch's order
            # (a window of shards shuffled together): with one shard a
            # window, every run of a shard's samples is whole.
            o["loader.quasi_window"] = 1
            with sluice.Loader(o) as ld:
                seq = [i for b in ld.epoch(0)
                       for i in memoryview(b.indices).tolist()][:71]
            bounds = [0, 23, 40, 71]
            shard = [next(k for k in range(3) if bounds[k] <= i <
                          bounds[k + 1]) for i in seq]
            runs = [s for j, s in enumerate(shard)
                    if j == 0 or s != shard[j - 1]]
            assert sorted(runs) == [0, 1, 2]
