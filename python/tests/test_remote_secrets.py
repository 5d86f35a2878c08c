"""No credential of a dataset's URL in any message or output: a
user:password@ in an http(s) URL (HTTP basic auth, which the request still
sends: nginx asks for it here) and a presigned URL's query string
(?X-Amz-Credential=...&X-Amz-Signature=...), through opens that succeed
and that fail (404, 401, a damaged shard), the Python exceptions, the
loader's log lines, and what `sluice info`, `index` and `verify` print.
RecordIO shards written by mxrecordio.py (mxnet's writer byte for byte)
and a WebDataset tar, served by nginx on loopback (httpserver.py)."""

import io
import os
import shutil
import subprocess
import sys
import tarfile
import time

import numpy as np
import pytest

import sluice

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "tests", "formats", "foreign"))
import mxrecordio  # noqa: E402

Image = pytest.importorskip("PIL.Image")
httpserver = pytest.importorskip("httpserver")

USER, SECRET, WRONG = "sluser", "pw-s3cr3t-feed", "pw-wr0ng-beef"
CRED, SIG = "AKIAQUERYCRED7", "sig0123abcdef4567"
QUERY = "?X-Amz-Credential=%s%%2Fus-east-1&X-Amz-Signature=%s" % (CRED, SIG)
HIDDEN = (SECRET, WRONG, CRED, SIG)
PER_SHARD = (3, 4)


def _jpeg(rng):
    b = io.BytesIO()
    Image.fromarray(rng.integers(0, 256, (20, 28, 3), dtype=np.uint8)).save(
        b, "JPEG", quality=90)
    return b.getvalue()


def write_set(folder):
    os.makedirs(folder)
    rng = np.random.default_rng(11)
    for k, n in enumerate(PER_SHARD):
        w = mxrecordio.IndexedWriter(os.path.join(folder, "img-%d.idx" % k),
                                     os.path.join(folder, "img-%d.rec" % k))
        for i in range(n):
            w.write_idx(i, mxrecordio.pack(float(i), _jpeg(rng)))
        w.close()
    with open(os.path.join(folder, "bad-0.rec"), "wb") as f:
        mxrecordio.write_record(f, mxrecordio.pack(1.0, _jpeg(rng)))
        f.write(b"\x0a\x23\xd7\xce" + b"\xff" * 64)  # a damaged record
    with tarfile.open(os.path.join(folder, "train-0.tar"), "w") as t:
        for i in range(3):
            for ext, data in (("jpg", _jpeg(rng)), ("cls", b"%d" % i)):
                info = tarfile.TarInfo("s%04d.%s" % (i, ext))
                info.size = len(data)
                t.addfile(info, io.BytesIO(data))


@pytest.fixture(scope="module")
def web(tmp_path_factory):
    if not (shutil.which("nginx") or os.path.exists("/usr/sbin/nginx")):
        pytest.skip("nginx not found (apt-get install nginx)")
    www = tmp_path_factory.mktemp("www")
    write_set(str(www / "private"))
    shutil.copytree(www / "private", www / "set")
    srv = httpserver.Nginx(tmp_path_factory.mktemp("nginx"), www,
                           basic_auth=(USER, SECRET)).start()
    try:
        yield srv, www
    finally:
        srv.stop()


@pytest.fixture(autouse=True)
def cache(monkeypatch, tmp_path):
    os.makedirs(tmp_path / "xdg")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    return tmp_path / "xdg" / "sluice"


def clean(text):
    for s in HIDDEN:
        assert s not in text, "%r shown in: %s" % (s, text)
    return text


def cli(*args):
    p = subprocess.run([sluice._cli(), *args], capture_output=True,
                       text=True)
    clean(p.stdout + p.stderr)
    return p


def raised(kind, fn, *a, **kw):
    with pytest.raises(kind) as e:
        fn(*a, **kw)
    return clean(str(e.value))


def logged(srv, before, *parts):
    """Whether an access-log line since line `before` holds every part,
    within 10 s (nginx logs a request just after it answers)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if any(all(p in l for p in parts) for l in srv.requests()[before:]):
            return True
        time.sleep(0.05)
    return False


def private(srv, name, password=SECRET):
    return "http://%s:%s@127.0.0.1:%d/private/%s" % (USER, password,
                                                      srv.port, name)


def on_disk(cache):
    """The cache folder's sidecars hold no credential either."""
    for n in os.listdir(cache):
        if n.startswith("sidecar-"):
            with open(os.path.join(cache, n), "rb") as f:
                clean(f.read().decode("latin-1"))


def test_basic_auth_is_sent_and_never_shown(web, cache):
    srv, www = web
    url = private(srv, "img-{0..1}.rec")
    local = sluice.Dataset(str(www / "private" / "img-{0..1}.rec"))
    ds = sluice.Dataset(url)  # nginx asks for basic auth: curl sent it
    assert len(ds) == len(local) == sum(PER_SHARD)
    assert [ds.read(i) for i in range(len(ds))] == \
        [local.read(i) for i in range(len(local))]
    shown = "http://127.0.0.1:%d/private/img-{0..1}.rec" % srv.port
    # Without it, or with another password: refused, and not shown.
    msg = raised(sluice.IOError, sluice.Dataset,
                 "http://127.0.0.1:%d/private/img-{0..1}.rec" % srv.port)
    assert "401" in msg
    msg = raised(sluice.IOError, sluice.Dataset,
                 private(srv, "img-{0..1}.rec", WRONG))
    assert "401" in msg and "/private/img-0.rec" in msg
    # The commands' output.
    p = cli("info", url)
    assert p.returncode == 0, p.stderr
    assert "file:        " + shown in p.stdout
    p = cli("index", url)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith(shown + ": 2 shards")
    p = cli("verify", url)
    assert p.returncode == 0, p.stderr
    assert shown in p.stdout
    # The loader's log lines (the C loader: its INFO line names the set
    # twice) and a WebDataset tar behind the same password.
    exe = os.environ.get("SLUICE_PY_C_BATCHES")
    if exe and os.path.exists(exe):
        for path in (url, private(srv, "train-0.tar")):
            p = subprocess.run(
                [exe, "0", "dataset.path=" + path, "loader.batch_size=2",
                 "loader.workers=2", "resolution.max=16",
                 "device.backend=host", "augment.dtype=u8"],
                capture_output=True, text=True,
                env={**os.environ, "SLUICE_PY_C_LOG": "1"})
            assert p.returncode == 0, p.stderr
            assert "read in place" in p.stderr
            assert "127.0.0.1:%d/private/" % srv.port in p.stderr
            clean(p.stdout + p.stderr)
    # The Python loader.
    with sluice.Loader({"dataset.path": url, "loader.batch_size": 2,
                        "loader.drop_last": False,
                        "resolution.max": 16, "augment.dtype": "u8",
                        "device.backend": "host"}) as ld:
        assert sum(b.valid for b in ld.epoch(0)) == sum(PER_SHARD)
    on_disk(cache)


def test_failures_never_show_credentials(web, cache):
    srv, www = web
    # 404: the shard named, the password not.
    missing = private(srv, "gone-{0..1}.rec")
    msg = raised(sluice.IOError, sluice.Dataset, missing)
    assert "404" in msg and "127.0.0.1:%d/private/gone-0.rec" % srv.port in msg
    msg = raised(sluice.Error, sluice.Loader,
                 {"dataset.path": missing, "device.backend": "host"})
    assert "404" in msg
    p = cli("info", missing)
    assert p.returncode != 0 and "404" in p.stderr
    # A damaged shard: named with its record.
    bad = private(srv, "bad-0.rec")
    msg = raised(sluice.Error, sluice.Dataset, bad)
    assert "/private/bad-0.rec" in msg and "record 1" in msg
    p = cli("verify", bad)
    assert p.returncode != 0 and "/private/bad-0.rec" in p.stdout + p.stderr
    # A presigned URL's query: sent (nginx logs it), never shown.
    gone = "http://127.0.0.1:%d/set/gone.rec%s" % (srv.port, QUERY)
    msg = raised(sluice.IOError, sluice.Dataset, gone)
    assert "404" in msg and "/set/gone.rec" in msg
    before = len(srv.requests())
    signed = "http://127.0.0.1:%d/set/img-{0..1}.rec%s" % (srv.port, QUERY)
    assert len(sluice.Dataset(signed)) == sum(PER_SHARD)
    assert logged(srv, before, "GET /set/img-1.idx?X-Amz", SIG)
    assert logged(srv, before, "GET /set/img-1.rec?X-Amz", SIG)
    on_disk(cache)
    # Signed again: the same set, opened from its sidecar (HEADs only).
    before = len(srv.requests())
    again = signed.replace(SIG, "sig-again")
    assert len(sluice.Dataset(again)) == sum(PER_SHARD)
    assert logged(srv, before, "HEAD /set/img-1.rec?X-Amz", "sig-again")
    assert not any("GET /set/img-" in l for l in srv.requests()[before:])
    # Its shards, cached under the first signature, are the same objects:
    # read from the cache, not fetched again.
    first = sluice.Dataset(signed)
    ds = sluice.Dataset(again)
    before = len(srv.requests())
    assert [ds.read(i) for i in range(len(ds))] == \
        [first.read(i) for i in range(len(first))]
    assert not any("GET /set/img-" in l for l in srv.requests()[before:])
    p = cli("info", signed)
    assert p.returncode == 0, p.stderr
    assert "file:        http://127.0.0.1:%d/set/img-{0..1}.rec\n" % \
        srv.port in p.stdout
    p = cli("info", "http://127.0.0.1:%d/set/bad-0.rec%s" % (srv.port, QUERY))
    assert p.returncode != 0 and "/set/bad-0.rec" in p.stderr
    # A mix's path with a comma is named by its place.
    msg = raised(ValueError, sluice.Loader, None,
                 path=[private(srv, "a,b.rec"), private(srv, "img-0.rec")])
    assert "dataset 0" in msg
