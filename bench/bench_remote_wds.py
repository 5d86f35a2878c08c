"""Opening WebDataset shards at a URL, with and without their sidecar
index (issue 38): SHARDS tar shards of PER samples (a small JPEG and a .cls
each, members as webdataset's TarWriter writes them, through Python's
tarfile), served by nginx on loopback (python/tests/httpserver.py) and,
with --s3, by SeaweedFS (python/tests/s3server.py). Times, each the median
of --repeat:
  local     sluice.Dataset over the same shards on local disk (warm)
  build     the first open at the URL, a fresh cache: every shard fetched
            once to checksum it, once into the cache, and walked; the
            sidecar written (what `sluice index URL` does)
  sidecar   a later open: the sidecar read, one HEAD a shard, no GET
and the sidecar's bytes.

  PYTHONPATH=build/python python3 bench/bench_remote_wds.py \\
      [--shards 1000] [--per 32] [--repeat 3] [--s3]
"""

import argparse
import io
import os
import shutil
import statistics
import sys
import tarfile
import tempfile
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "python", "tests"))

import sluice  # noqa: E402


def jpeg(i):
    from PIL import Image
    b = io.BytesIO()
    Image.new("RGB", (16, 16), (i % 256, (i * 7) % 256, 99)).save(b, "JPEG")
    return b.getvalue()


def write(folder, shards, per):
    os.makedirs(folder)
    img = [jpeg(i) for i in range(16)]
    for k in range(shards):
        with tarfile.open(os.path.join(folder, "t-%06d.tar" % k), "w",
                          format=tarfile.USTAR_FORMAT) as t:
            for j in range(per):
                key = "s%06d_%04d" % (k, j)
                for ext, data in (("jpg", img[j % 16]),
                                  ("cls", str(j % 10).encode())):
                    ti = tarfile.TarInfo("%s.%s" % (key, ext))
                    ti.size, ti.mtime, ti.mode = len(data), 0, 0o444
                    t.addfile(ti, io.BytesIO(data))
    return "t-{000000..%06d}.tar" % (shards - 1)


def timed(fn, repeat):
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def measure(name, url, local, n, repeat, root):
    caches = iter(range(10 ** 6))

    def build():
        os.environ["XDG_CACHE_HOME"] = os.path.join(root, "c-%s-%d" % (name, next(caches)))
        os.makedirs(os.environ["XDG_CACHE_HOME"])
        assert len(sluice.Dataset(url)) == n

    t_build = timed(build, repeat)
    cache = os.path.join(os.environ["XDG_CACHE_HOME"], "sluice")
    side = [f for f in os.listdir(cache) if f.startswith("sidecar-")]
    t_side = timed(lambda: len(sluice.Dataset(url)), repeat)
    print("%-6s build %.3f s   sidecar %.3f s   local %.3f s   "
          "(sidecar %d bytes)" % (name, t_build, t_side, local,
                                  os.path.getsize(os.path.join(cache,
                                                               side[0]))))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shards", type=int, default=1000)
    ap.add_argument("--per", type=int, default=32)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--s3", action="store_true")
    a = ap.parse_args()
    root = tempfile.mkdtemp(prefix="bench_remote_wds.")
    try:
        www = os.path.join(root, "www")
        pattern = write(os.path.join(www, "set"), a.shards, a.per)
        n = a.shards * a.per
        local = timed(lambda: len(sluice.Dataset(
            os.path.join(www, "set", pattern))), a.repeat)
        print("%d shards of %d samples, %.1f MB" % (
            a.shards, a.per, sum(os.path.getsize(os.path.join(www, "set", f))
                                 for f in os.listdir(
                                     os.path.join(www, "set"))) / 1e6))
        import httpserver
        srv = httpserver.Nginx(os.path.join(root, "nginx"), www).start()
        try:
            measure("http", "http://127.0.0.1:%d/set/%s" % (srv.port, pattern),
                    local, n, a.repeat, root)
        finally:
            srv.stop()
        if a.s3:
            import s3server
            s3 = s3server.S3Server(os.path.join(root, "s3")).start()
            try:
                s3.upload_folder(os.path.join(www, "set"), "bench", "set/")
                os.environ.update(s3.env())
                measure("s3", "s3://bench/set/" + pattern, local, n,
                        a.repeat, root)
            finally:
                s3.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
