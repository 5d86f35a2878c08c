"""io.remote_read = ranges (issue 38): each sample's bytes by an HTTP range
request, many in flight, nothing cached. Against the real servers of
test_remote.py (SeaweedFS's S3 and nginx on loopback): the batches equal
those of the same shards on local disk for any order, workers and ranks;
retries and resumed bodies give the same bytes; a server that ignores
Range, an object replaced since it was indexed and a server gone are
errors naming the URL; nothing lands in the cache folder."""

import os
import time

import pytest

import sluice

from conftest import base_options
from test_remote import PARTS, batches, env, s3, web  # noqa: F401 (fixtures)

RANGES = {"io.remote_read": "ranges"}


def samples(local):
    return len(sluice.Dataset(local))


def no_objects(cache):
    """The cache folder holds no shard and no download."""
    if not os.path.isdir(cache):
        return True
    return not [n for n in os.listdir(cache)
                if n.endswith(".obj") or n.startswith(".tmp")]


def test_s3_ranges_equal_local(s3, env):  # noqa: F811
    _, local = s3
    url = "s3://data/train/"
    for order in ("random", "quasi_random", "sequential"):
        for w in (1, 2):
            o = {"loader.workers": w, "loader.order": order}
            assert batches(url, env, **RANGES, **o) == batches(local, **o), \
                (order, w)
    for rank in (0, 1):
        r = {"loader.rank": rank, "loader.world_size": 2}
        assert batches(url, env, **RANGES, **r) == batches(local, **r)
    assert no_objects(env)


def test_few_requests_and_a_small_pool_still_equal(s3, env):  # noqa: F811
    """One request in flight, a pool of a few samples: the reader waits for
    the workers to hand buffers back, and the batches are the same."""
    _, local = s3
    o = {"loader.workers": 2, "io.range_requests": 1, "io.pool_size": "1MiB"}
    assert batches("s3://data/train/", env, **RANGES, **o) == \
        batches(local, **o)


def test_stats_count_requests_not_shards(s3, env):  # noqa: F811
    _, local = s3
    n = samples(local)
    o = base_options("s3://data/train/", **{
        "io.cache_dir": str(env), "loader.drop_last": False,
        "loader.batch_size": 8, **RANGES})
    with sluice.Loader(o) as ld:
        read = sum(len(memoryview(b.indices)) for b in ld.epoch(0))
        st = ld.stats()
    assert read >= n
    assert st["fetches"] == read  # a request a sample, no shard fetched
    assert st["cache_hits"] == 0
    sizes = sum(os.path.getsize(os.path.join(local, "part-%d.lmdb" % k))
                for k in range(PARTS))
    assert 0 < st["bytes_fetched"] < sizes  # the samples, not the shards
    assert no_objects(env)


def test_http_and_https_ranges_equal_local(web, tmp_path):  # noqa: F811
    srv, local = web
    want = batches(local, **{"loader.order": "random"})
    assert batches("http://127.0.0.1:%d/set/" % srv.port, tmp_path / "c1",
                   **RANGES, **{"loader.order": "random"}) == want
    assert batches("https://127.0.0.1:%d/set/" % srv.tls_port,
                   tmp_path / "c2", **RANGES,
                   **{"io.ca_bundle": srv.cert,
                      "loader.order": "random"}) == want


def test_ranges_retried_and_resumed(web, tmp_path):  # noqa: F811
    import httpserver
    srv, local = web
    want = batches(local)
    # Two 503s, then a body cut in half, for each shard's first requests:
    # retried, the cut one resumed from where it stopped.
    proxy = httpserver.FaultProxy(srv.port, fail=2, cut=1).start()
    try:
        url = "http://127.0.0.1:%d/set/" % proxy.port
        assert batches(url, tmp_path / "c1", **RANGES) == want
        assert all(proxy.seen["/set/part-%d.lmdb" % k] > 3
                   for k in range(PARTS))
    finally:
        proxy.stop()
    # Retries that do not suffice: the error names the shard's URL, the
    # sample, the status and S3's code.
    proxy = httpserver.FaultProxy(srv.port, fail=10 ** 6).start()
    proxy.seen["/set/sluice.index"] = 10 ** 7  # the index goes through
    try:
        url = "http://127.0.0.1:%d/set/" % proxy.port
        with pytest.raises(sluice.IOError) as e:
            batches(url, tmp_path / "c2", **RANGES,
                    **{"io.fetch_retries": 1})
        msg = str(e.value)
        assert "127.0.0.1:%d/set/part-" % proxy.port in msg, msg
        assert "HTTP 503 (SlowDown)" in msg and "sample" in msg, msg
        assert "retry" in msg, msg
    finally:
        proxy.stop()
    assert no_objects(tmp_path / "c1") and no_objects(tmp_path / "c2")


def test_server_that_ignores_range_is_an_error(web, tmp_path):  # noqa: F811
    import httpserver
    srv, _ = web
    proxy = httpserver.FaultProxy(srv.port, no_range=True).start()
    try:
        url = "http://127.0.0.1:%d/set/" % proxy.port
        with pytest.raises(sluice.IOError) as e:
            batches(url, tmp_path / "c", **RANGES)
        msg = str(e.value)
        assert "does not serve ranges" in msg, msg
        assert "io.remote_read = shards" in msg, msg
        # The shard cache reads the same server: whole objects.
        batches(url, tmp_path / "c2")
    finally:
        proxy.stop()


def test_replaced_object_is_named(s3, env):  # noqa: F811
    """A shard replaced by a larger one after the set was indexed: its
    bytes are never taken for the indexed ones."""
    server, local = s3
    server.upload_folder(local, "data", "replaced/")
    c = server.client()
    body = open(os.path.join(local, "part-1.lmdb"), "rb").read()
    c.put_object(Bucket="data", Key="replaced/part-1.lmdb",
                 Body=body + b"\0" * 4096)
    with pytest.raises(sluice.IOError) as e:
        batches("s3://data/replaced/", env, **RANGES)
    msg = str(e.value)
    assert "replaced/part-1.lmdb" in msg and "changed" in msg, msg
    assert "secret" not in msg.lower()


def test_close_mid_epoch_is_prompt(web, tmp_path):  # noqa: F811
    import httpserver
    srv, _ = web
    proxy = httpserver.FaultProxy(srv.port, rate=20000).start()
    try:
        url = "http://127.0.0.1:%d/set/" % proxy.port
        o = base_options(url, **{"io.cache_dir": str(tmp_path / "c"),
                                 "loader.workers": 2, **RANGES})
        ld = sluice.Loader(o)
        it = ld.epoch(0)
        next(it)
        t0 = time.monotonic()
        del it
        ld.close()
        took = time.monotonic() - t0
    finally:
        proxy.stop()
    # Catches a hang only: requests in flight are dropped, not waited for.
    assert took < 15, "close took %.1f s with requests in flight" % took


def test_server_gone_is_an_error_in_time(web, tmp_path):  # noqa: F811
    """The server gone after open: every request is refused and retried
    until io.fetch_deadline, then the error names the shard's URL."""
    import httpserver
    srv, _ = web
    proxy = httpserver.FaultProxy(srv.port).start()
    deadline = 3
    url = "http://127.0.0.1:%d/set/" % proxy.port
    o = base_options(url, **{"io.cache_dir": str(tmp_path / "c"),
                             "loader.workers": 2, "io.fetch_deadline":
                             deadline, **RANGES})
    msg, took = None, None
    with sluice.Loader(o) as ld:
        proxy.kill()
        t0 = time.monotonic()
        try:
            for b in ld.epoch(0):
                b = None  # a batch held keeps the loader's threads
        except sluice.Error as e:
            msg = str(e)
        took = time.monotonic() - t0
    assert msg is not None, "the epoch completed with the server gone"
    # Not a timing test: without the deadline the retries would go on; the
    # slack leaves a loaded machine room.
    assert took < deadline + 20, took
    assert "127.0.0.1:%d/set/part-" % proxy.port in msg, msg
    assert "deadline" in msg or "connect" in msg.lower(), msg
