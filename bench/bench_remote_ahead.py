"""A remote sharded dataset's cold and warm epochs with fetch-ahead on and
off (issue 38's fetch-ahead), in one run, through a local SeaweedFS
(python/tests/s3server.py: `weed` from the test venv) on loopback.

Makes --images ImageNet-like JPEGs (`sluice synth --imagenet`), packs them
into --shards shards (`sluice pack --shards`), uploads them, then for each
of --repeat rounds and each mode (on: io.prefetch_shards = --depth,
io.fetch_threads = --threads; off: 0), alternated: a fresh cache, epoch 0 of one loader (cold: every
shard fetched), then epoch 0 of another on that cache (warm: none). Prints the
median images/s of each and the ratios cold/warm, on/off; and the stats'
fetch counters of the last round. Not a test: no assertion on time.

  PYTHONPATH=build/python:python/tests SLUICE_BIN=build/tools/sluice \\
    PATH=build/venv-test/bin:$PATH build/venv-test/bin/python3 \\
    bench/bench_remote_ahead.py [--images 1200] [--shards 24] [--workers 1]
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
import s3server


def epoch_rate(ld, epoch):
    t0 = time.perf_counter()
    n = 0
    for b in ld.epoch(epoch):
        n += b.n
        b = None
    return n / (time.perf_counter() - t0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--images", type=int, default=1200)
    ap.add_argument("--shards", type=int, default=24)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--depth", type=int, default=4)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--order", default="quasi_random")
    ap.add_argument("--window", type=int, default=4)
    ap.add_argument("--res", type=int, default=224)
    a = ap.parse_args()
    cli = os.environ.get("SLUICE_BIN") or sluice._cli()
    root = tempfile.mkdtemp(prefix="bench_remote_")
    server = None
    try:
        jpegs, packed = os.path.join(root, "jpegs"), os.path.join(root, "set")
        subprocess.run([cli, "synth", jpegs, "--count", str(a.images),
                        "--imagenet"], check=True, stdout=subprocess.DEVNULL)
        subprocess.run([cli, "pack", jpegs, packed, "--shards",
                        str(a.shards)], check=True, stdout=subprocess.DEVNULL)
        size = sum(os.path.getsize(os.path.join(packed, n))
                   for n in os.listdir(packed))
        server = s3server.S3Server(os.path.join(root, "s3")).start()
        server.upload_folder(packed, "bench", "set/")
        os.environ.update(server.env())
        base = {"dataset.path": "s3://bench/set/",
                "loader.batch_size": 32, "loader.workers": a.workers,
                "loader.order": a.order, "loader.quasi_window": a.window,
                "resolution.max": a.res, "augment.dtype": "u8",
                "device.backend": "host", "loader.seed": 1}
        modes = {"on": {"io.prefetch_shards": a.depth,
                        "io.fetch_threads": a.threads},
                 "off": {"io.prefetch_shards": 0}}
        rates = {(m, e): [] for m in modes for e in ("cold", "warm")}
        last = {}
        for r in range(a.repeat):
            for m, extra in modes.items():
                cache = os.path.join(root, "cache-%s-%d" % (m, r))
                o = {**base, **extra, "io.cache_dir": cache}
                # Each epoch 0 of a new loader: the same start-up costs,
                # the cache empty, then full.
                with sluice.Loader(o) as ld:
                    rates[(m, "cold")].append(epoch_rate(ld, 0))
                    cold = ld.stats()
                with sluice.Loader(o) as ld:
                    rates[(m, "warm")].append(epoch_rate(ld, 0))
                    warm = ld.stats()
                last[m] = (cold, warm)
                shutil.rmtree(cache)
        print("%d images (%.1f MB in %d shards) at s3://bench/set/ "
              "(SeaweedFS, loopback); %d worker(s), order %s (window %d), "
              "%d px; prefetch %d shards, %d threads; median of %d"
              % (a.images, size / 1e6, a.shards, a.workers, a.order,
                 a.window, a.res, a.depth, a.threads, a.repeat))
        med = {k: statistics.median(v) for k, v in rates.items()}
        for m in modes:
            cold, warm = last[m]
            print("fetch-ahead %-3s  cold %7.1f img/s  warm %7.1f img/s  "
                  "cold/warm %.3f   (cold epoch: %d fetches, %d misses, "
                  "%.2f s waiting; warm: %d fetches)"
                  % (m, med[(m, "cold")], med[(m, "warm")],
                     med[(m, "cold")] / med[(m, "warm")], cold["fetches"],
                     cold["cache_misses"], cold["fetch_wait_ns"] / 1e9,
                     warm["fetches"]))
        print("on/off: cold %.3f, warm %.3f"
              % (med[("on", "cold")] / med[("off", "cold")],
                 med[("on", "warm")] / med[("off", "warm")]))
        print("runs (img/s): " + "; ".join(
            "%s %s %s" % (m, e, " ".join("%.1f" % x for x in v))
            for (m, e), v in rates.items()))
    finally:
        if server:
            server.stop()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
