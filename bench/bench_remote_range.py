"""Range reads (io.remote_read = ranges) against the shard cache for a
fully random order (issue 38), in one run, through a local SeaweedFS
(python/tests/s3server.py: `weed` from the test venv) on loopback.

Makes --images ImageNet-like JPEGs (`sluice synth --imagenet`), packs them
into --shards shards (`sluice pack --shards`), uploads them, then for each
of --repeat rounds, alternated, epoch 0 of a new loader with
loader.order = random in each mode:
  local        the same shards on local disk (the ceiling)
  cache-cold   the shard cache, empty, large enough for the whole set
  cache-warm   the same cache again, full: no network
  cache-small  an empty cache of --small-shards shards' bytes: with a random
               order every shard is in use all epoch, so shards are fetched
               again and again
  ranges       io.remote_read = ranges, io.range_requests = --requests:
               each sample by a range request, nothing cached
  ranges-http  the same from nginx over HTTP (python/tests/httpserver.py;
               skipped without nginx): no signing, a server that costs
               little CPU on this machine's cores
Prints the median images/s of each, the ratios to local, and the bytes each
epoch fetched. Not a test: no assertion on time. Loopback has next to no
latency; a real store's tens of milliseconds a request are what
io.range_requests covers (in flight = latency x samples a second).

  PYTHONPATH=build/python:python/tests SLUICE_BIN=build/tools/sluice \\
    PATH=build/venv-test/bin:$PATH build/venv-test/bin/python3 \\
    bench/bench_remote_range.py [--images 1200] [--shards 24] [--workers 1]
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import sluice
import httpserver
import s3server


def epoch(o):
    """Epoch 0 of a new loader on o: images/s and its stats."""
    with sluice.Loader(o) as ld:
        t0 = time.perf_counter()
        n = 0
        for b in ld.epoch(0):
            n += b.n
            b = None
        rate = n / (time.perf_counter() - t0)
        return rate, ld.stats()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--images", type=int, default=1200)
    ap.add_argument("--shards", type=int, default=24)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--requests", type=int, default=64)
    ap.add_argument("--small-shards", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--res", type=int, default=224)
    a = ap.parse_args()
    cli = os.environ.get("SLUICE_BIN") or sluice._cli()
    root = tempfile.mkdtemp(prefix="bench_range_")
    server = web = None
    try:
        jpegs = os.path.join(root, "jpegs")
        packed = os.path.join(root, "www", "set")
        os.makedirs(os.path.dirname(packed))
        subprocess.run([cli, "synth", jpegs, "--count", str(a.images),
                        "--imagenet"], check=True, stdout=subprocess.DEVNULL)
        subprocess.run([cli, "pack", jpegs, packed, "--shards",
                        str(a.shards)], check=True, stdout=subprocess.DEVNULL)
        sizes = [os.path.getsize(os.path.join(packed, n))
                 for n in os.listdir(packed) if n != "sluice.index"]
        server = s3server.S3Server(os.path.join(root, "s3")).start()
        server.upload_folder(packed, "bench", "set/")
        os.environ.update(server.env())
        try:
            web = httpserver.Nginx(os.path.join(root, "nginx"),
                                   os.path.join(root, "www")).start()
        except RuntimeError as e:
            print("ranges-http skipped: %s" % e)
        base = {"loader.batch_size": 32, "loader.workers": a.workers,
                "loader.order": "random", "resolution.max": a.res,
                "augment.dtype": "u8", "device.backend": "host",
                "loader.seed": 1}
        url = "s3://bench/set/"
        small = a.small_shards * max(sizes)
        rates = {m: [] for m in ("local", "cache-cold", "cache-warm",
                                 "cache-small", "ranges", "ranges-http")
                 if m != "ranges-http" or web}
        fetched = {}
        for r in range(a.repeat):
            big = os.path.join(root, "cache-big-%d" % r)
            tiny = os.path.join(root, "cache-small-%d" % r)
            runs = [
                ("local", {"dataset.path": packed}),
                ("cache-cold", {"dataset.path": url, "io.cache_dir": big}),
                ("cache-warm", {"dataset.path": url, "io.cache_dir": big}),
                ("cache-small", {"dataset.path": url, "io.cache_dir": tiny,
                                 "io.cache_bytes": small}),
                ("ranges", {"dataset.path": url, "io.cache_dir": tiny,
                            "io.remote_read": "ranges",
                            "io.range_requests": a.requests}),
            ]
            if web:
                runs.append(("ranges-http", {
                    "dataset.path": "http://127.0.0.1:%d/set/" % web.port,
                    "io.cache_dir": tiny, "io.remote_read": "ranges",
                    "io.range_requests": a.requests}))
            for m, extra in runs:
                rate, st = epoch({**base, **extra})
                rates[m].append(rate)
                fetched[m] = (st["fetches"], st["bytes_fetched"],
                              st["fetch_wait_ns"] / 1e9)
            shutil.rmtree(big)
            shutil.rmtree(tiny)
        print("%d images (%.1f MB in %d shards) at %s (SeaweedFS, loopback); "
              "%d worker(s), order random, %d px; small cache %d shards "
              "(%.1f MB); %d range requests in flight; median of %d"
              % (a.images, sum(sizes) / 1e6, a.shards, url, a.workers,
                 a.res, a.small_shards, small / 1e6, a.requests, a.repeat))
        med = {m: statistics.median(v) for m, v in rates.items()}
        for m in rates:
            n, b, w = fetched.get(m, (0, 0, 0))
            print("%-12s %7.1f img/s  %.3f x local   last epoch: %5d "
                  "fetches, %7.1f MB, %.2f s waiting"
                  % (m, med[m], med[m] / med["local"], n, b / 1e6, w))
        print("ranges / cache-cold %.3f, ranges / cache-small %.3f"
              % (med["ranges"] / med["cache-cold"],
                 med["ranges"] / med["cache-small"]))
        print("runs (img/s): " + "; ".join(
            "%s %s" % (m, " ".join("%.1f" % x for x in v))
            for m, v in rates.items()))
    finally:
        if web:
            web.stop()
        if server:
            server.stop()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
