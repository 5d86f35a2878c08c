"""What mixing costs (issue 39's bench): the loader over two datasets mixed
by weight against the same samples in one file, alternated in one run.

Writes A (--count x 3/4 samples) and B (the rest) and ONE (A's then B's
samples) as sluice LMDBs of raw --side x --side images (the per-sample
costs are the mix's, not the decoder's), then reads an epoch of
dataset.mix = A, B with weights 3, 1 (an epoch takes exactly A's and B's
sizes, so both runs read the same number of samples) and an epoch of ONE,
--repeat times each, alternated: median images/s and their ratio (goal
>= 0.97). quasi_random (the default order) and random are both timed.

  PYTHONPATH=build/python python3 bench/bench_mix.py [--count 200000]
"""

import argparse
import os
import random
import statistics
import sys
import tempfile
import time

import sluice


def write(path, first, n, side):
    rng = random.Random(first)
    px = bytes(rng.getrandbits(8) for _ in range(side * side * 3))
    w = sluice.Writer(path, replace=True)
    for i in range(n):
        w.add_pixels(px, side, side, 3, label=(first + i) % 10)
    w.commit()
    w.close()


def rate(opts):
    with sluice.Loader(opts) as ld:
        n = 0
        t = time.perf_counter()
        for b in ld.epoch(0):
            n += b.valid
        return n / (time.perf_counter() - t)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--count", type=int, default=200000)
    ap.add_argument("--side", type=int, default=16)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--dir", default=None)
    a = ap.parse_args()
    root = a.dir or tempfile.mkdtemp(prefix="bench_mix.")
    os.makedirs(root, exist_ok=True)
    na = a.count * 3 // 4
    pa, pb, one = (os.path.join(root, n) for n in ("a.lmdb", "b.lmdb",
                                                    "one.lmdb"))
    write(pa, 0, na, a.side)
    write(pb, na, a.count - na, a.side)
    write(one, 0, a.count, a.side)
    base = {"loader.batch_size": 256, "loader.workers": os.cpu_count() or 1,
            "resolution.max": a.side, "augment.dtype": "u8",
            "device.backend": "host", "loader.drop_last": False}
    print("%d samples (%d + %d), %dx%d raw, %d cores, median of %d" %
          (a.count, na, a.count - na, a.side, a.side, os.cpu_count() or 1,
           a.repeat))
    for order in ("quasi_random", "random"):
        mixed = dict(base, **{"dataset.mix": "%s, %s" % (pa, pb),
                              "dataset.weights": "3, 1",
                              "loader.order": order})
        single = dict(base, **{"dataset.path": one, "loader.order": order})
        rm, rs = [], []
        for _ in range(a.repeat):
            rm.append(rate(mixed))
            rs.append(rate(single))
        m, s = statistics.median(rm), statistics.median(rs)
        print("%-12s mixed %9.0f images/s  one file %9.0f  ratio %.3f" %
              (order, m, s, m / s))
    return 0


if __name__ == "__main__":
    sys.exit(main())
