"""Fixtures for the binding's tests: small datasets written through the
binding's own Writer, and the C reference program's path."""

import os
import random

import pytest

import sluice

N_SAMPLES = 103  # not a multiple of the batch size: padding is exercised


def _write(path, n, seed=0):
    rng = random.Random(seed)
    w = sluice.Writer(str(path), target_width=2)
    for i in range(n):
        wd, ht = rng.randint(20, 60), rng.randint(20, 60)
        px = bytes(rng.getrandbits(8) for _ in range(wd * ht * 3))
        w.add_pixels(px, wd, ht, 3, label=i % 5, targets=[i, -i / 2],
                     name="s%03d.raw" % i)
    for k in range(5):
        w.set_class_name(k, "class%d" % k)
    w.commit()
    w.close()


@pytest.fixture(scope="session")
def dataset(tmp_path_factory):
    path = tmp_path_factory.mktemp("ds") / "small.lmdb"
    _write(path, N_SAMPLES)
    return str(path)


def base_options(path, **extra):
    o = {
        "dataset.path": path,
        "loader.batch_size": 8,
        "loader.workers": 2,
        "resolution.max": 32,
        "augment.dtype": "u8",
        "loader.seed": 7,
        # The batches in host memory, where numpy and the C program read
        # them, on a machine with a GPU too; device tests ask for cuda.
        "device.backend": "host",
    }
    o.update(extra)
    return o


@pytest.fixture
def opts(dataset):
    return lambda **extra: base_options(dataset, **extra)


@pytest.fixture(scope="session")
def c_batches():
    exe = os.environ.get("SLUICE_PY_C_BATCHES")
    if not exe or not os.path.exists(exe):
        pytest.skip("SLUICE_PY_C_BATCHES (the C reference program) not set")
    return exe
