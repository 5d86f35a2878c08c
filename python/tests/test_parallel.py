"""Shards packed by a real distributed engine (sluice.parallel): Ray Data on
a local cluster (ray.init(num_cpus=2)) and PySpark on local[2], each writing
an image folder as one shard per task, then indexed and read for an epoch.
Run by tests/dist/run.sh in a venv that has ray and pyspark; skipped where
they are not installed."""

import hashlib
import os
import subprocess
from collections import Counter

import pytest

import sluice
import sluice.parallel as par

from conftest import base_options

N_IMAGES = 30
CLASSES = ["class_000", "class_001", "class_002"]


@pytest.fixture(scope="module")
def images(tmp_path_factory):
    root = tmp_path_factory.mktemp("dist")
    img = root / "img"
    subprocess.run([sluice._cli(), "synth", str(img), "--count",
                    str(N_IMAGES), "--classes", "3"], check=True,
                   capture_output=True)
    # The same images packed by `sluice pack` into one file: the reference.
    one = root / "one.lmdb"
    subprocess.run([sluice._cli(), "pack", str(img), str(one), "--quiet"],
                   check=True, capture_output=True)
    rows = []
    for c, cls in enumerate(CLASSES):
        for f in sorted(os.listdir(img / cls)):
            rows.append({"image": (img / cls / f).read_bytes(), "label": c,
                         "name": "%s/%s" % (cls, f)})
    return root, rows, str(one)


def pixels_by_name(path):
    ds = sluice.Dataset(path)
    out = {}
    for i in range(len(ds)):
        n = ds.name(i)
        px, label, _ = ds[i]
        out[n] = (label, hashlib.sha256(px.tobytes()).hexdigest())
    return out


def check_set(folder, one, tasks):
    names = sorted(os.listdir(folder))
    assert names == [par.shard_name(k) for k in range(tasks)] + \
        ["sluice.index"]
    got = pixels_by_name(folder)
    assert got == pixels_by_name(one)  # every image once, same pixels
    assert sluice.Dataset(folder).class_names == CLASSES
    # An epoch of the loader over the result.
    o = base_options(folder, **{"loader.drop_last": False,
                                "loader.batch_size": 4})
    seen = Counter()
    with sluice.Loader(o) as ld:
        for b in ld.epoch(0):
            seen.update(memoryview(b.indices).tolist()[:b.n])
    assert set(seen) == set(range(N_IMAGES))


def test_ray_data(images, tmp_path):
    ray = pytest.importorskip("ray")
    root, rows, one = images
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             configure_logging=False)
    try:
        ds = ray.data.from_items(rows, override_num_blocks=2)
        folder = tmp_path / "ray"
        r = par.write_ray(ds, folder, name="name", classes=CLASSES)
        assert r["samples"] == N_IMAGES
        check_set(folder, one, r["shards"])
        assert r["shards"] >= 2  # two write tasks, a shard each
    finally:
        ray.shutdown()


def test_spark(images, tmp_path):
    pyspark = pytest.importorskip("pyspark")
    from pyspark.sql import SparkSession
    root, rows, one = images
    spark = (SparkSession.builder.master("local[2]")
             .appName("sluice-test").config("spark.ui.enabled", "false")
             .getOrCreate())
    try:
        df = spark.createDataFrame(
            [(bytearray(r["image"]), r["label"], r["name"]) for r in rows],
            ["image", "label", "name"]).repartition(3)
        folder = tmp_path / "spark"
        r = par.write_spark(df, folder, name="name", classes=CLASSES)
        assert (r["shards"], r["samples"]) == (3, N_IMAGES)
        check_set(folder, one, 3)
        # A retried task rewrites its own shard only: the others keep their
        # bytes, and the re-indexed set is the same.
        before = {n: (folder / n).read_bytes()
                  for n in os.listdir(folder) if n != "sluice.index"}
        part1 = [row.asDict() for row in
                 df.rdd.mapPartitionsWithIndex(
                     lambda i, it: it if i == 1 else iter(())).collect()]
        par.write_shard(folder / par.shard_name(1), part1, name="name",
                        classes=CLASSES)
        assert sluice.index(str(folder))["checksummed"] <= 1
        for n, b in before.items():
            if n != par.shard_name(1):
                assert (folder / n).read_bytes() == b
        check_set(folder, one, 3)
    finally:
        spark.stop()


def test_example_pack_parallel(images, tmp_path):
    """examples/pack_parallel.py, as the docs run it, with Spark."""
    pytest.importorskip("pyspark")
    import sys
    root, _, one = images
    ex = os.path.join(os.path.dirname(__file__), "..", "..", "examples",
                      "pack_parallel.py")
    out = tmp_path / "ex"
    p = subprocess.run([sys.executable, ex, str(root / "img"), str(out),
                        "--engine", "spark", "--tasks", "2",
                        ], capture_output=True, text=True,
                       env=dict(os.environ, SPARK_LOCAL_IP="127.0.0.1",
                                PYSPARK_SUBMIT_ARGS="--master local[2] "
                                "pyspark-shell"))
    assert p.returncode == 0, p.stderr[-2000:]
    assert "2 shards, %d samples" % N_IMAGES in p.stdout
    check_set(out, one, 2)
