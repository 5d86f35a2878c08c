"""Sharded datasets against one file, in one run (issue 37's bench).

Writes SHARDS shards of PER samples each (tiny raw images: the open and
index costs are per sample and per shard, not per pixel), with one writer
process per core, then:
  index   `sluice.index(folder)` from scratch, and a refresh (nothing new)
  open    sluice.Dataset(folder) warm, median of --repeat opens
  loader  an epoch of the loader over the shards and over the same samples
          in one LMDB, alternated --repeat times: median images/s of each
          and their ratio (goal >= 0.97)

  python3 bench/bench_shards.py [--shards 1000] [--per 1000] [--side 32]
Run with PYTHONPATH=build/python (a build's module) or an installed wheel.
"""

import argparse
import multiprocessing as mp
import os
import random
import statistics
import sys
import tempfile
import time

import sluice


def write_part(args):
    path, first, n, side = args
    rng = random.Random(first)
    w = sluice.Writer(path)
    px = bytes(rng.getrandbits(8) for _ in range(side * side * 3))
    for i in range(n):
        w.add_pixels(px, side, side, 3, label=(first + i) % 10)
    w.commit()
    w.close()


def timed(fn):
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def epoch_rate(path, side):
    opts = {"dataset.path": path, "loader.batch_size": 256,
            "loader.workers": os.cpu_count() or 1, "resolution.max": side,
            "augment.dtype": "u8", "device.backend": "host",
            "loader.drop_last": False}
    with sluice.Loader(opts) as ld:
        n = 0
        t = time.perf_counter()
        for b in ld.epoch(0):
            n += b.n
        return n / (time.perf_counter() - t)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shards", type=int, default=1000)
    ap.add_argument("--per", type=int, default=1000)
    ap.add_argument("--side", type=int, default=32)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--dir", default=None)
    a = ap.parse_args()
    root = a.dir or tempfile.mkdtemp(prefix="bench_shards.")
    folder = os.path.join(root, "set")
    os.makedirs(folder, exist_ok=True)
    jobs = [(os.path.join(folder, "part-%05d.lmdb" % k), k * a.per, a.per,
             a.side) for k in range(a.shards)]
    t = time.perf_counter()
    with mp.Pool() as pool:
        pool.map(write_part, jobs, chunksize=4)
    write_s = time.perf_counter() - t
    one = os.path.join(root, "one.lmdb")
    write_part((one, 0, a.shards * a.per, a.side))

    idx = os.path.join(folder, "sluice.index")
    if os.path.exists(idx):
        os.remove(idx)
    first = timed(lambda: sluice.index(folder))
    again = statistics.median(timed(lambda: sluice.index(folder))
                              for _ in range(a.repeat))
    opens = statistics.median(timed(lambda: sluice.Dataset(folder))
                              for _ in range(a.repeat))
    open_one = statistics.median(timed(lambda: sluice.Dataset(one))
                                 for _ in range(a.repeat))
    rs, r1 = [], []
    for _ in range(a.repeat):
        rs.append(epoch_rate(folder, a.side))
        r1.append(epoch_rate(one, a.side))
    ms, m1 = statistics.median(rs), statistics.median(r1)
    n = a.shards * a.per
    print("%d shards x %d samples (%d), %dx%d raw, %d cores" %
          (a.shards, a.per, n, a.side, a.side, os.cpu_count() or 1))
    print("write (pool)     %8.2f s" % write_s)
    print("index, new       %8.1f ms (reads every shard whole)" % (first * 1e3))
    print("index, refresh   %8.1f ms (median of %d)" % (again * 1e3, a.repeat))
    print("open, shards     %8.1f ms (warm, median of %d)" %
          (opens * 1e3, a.repeat))
    print("open, one file   %8.1f ms" % (open_one * 1e3))
    print("loader, shards   %8.0f images/s (median of %d)" % (ms, a.repeat))
    print("loader, one file %8.0f images/s" % m1)
    print("shards / one     %8.3f" % (ms / m1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
