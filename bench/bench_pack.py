"""Parallel packing into shards, in one run (issue 37's pack bench).

Synthesizes --count ImageNet-like JPEGs (`sluice synth --imagenet`), then
packs them into shards, --repeat times each, alternated:
  pack-1     `sluice pack IMAGES OUT --shards S --threads 1`
  pack-2     the same with --threads 2
  ray-2      examples/pack_parallel.py --engine ray --tasks 2 (a local
             ray.init(num_cpus=2); the engine's start is inside the time)
  spark-2    the same with --engine spark on local[2]
and prints the median images/s of each and its ratio to pack-1. The
engines run only where they import (tests/dist/run.sh's venv has both):

  PYTHONPATH=build/python SLUICE_BIN=build/tools/sluice \\
    build/venv-dist/bin/python bench/bench_pack.py [--count 2000]
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(HERE, "..", "examples", "pack_parallel.py")


def sluice_bin():
    b = os.environ.get("SLUICE_BIN")
    if b:
        return b
    import sluice
    return sluice._cli()


def importable(name):
    try:
        __import__(name)
        return True
    except ImportError:
        return False


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--count", type=int, default=2000)
    ap.add_argument("--shards", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--dir", default=None)
    a = ap.parse_args()
    root = a.dir or tempfile.mkdtemp(prefix="bench_pack.")
    os.makedirs(root, exist_ok=True)
    images = os.path.join(root, "images")
    if not os.path.isdir(images):
        subprocess.run([sluice_bin(), "synth", images, "--imagenet",
                        "--count", str(a.count), "--classes", "10"],
                       check=True, stdout=subprocess.DEVNULL)
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1",
               PYSPARK_SUBMIT_ARGS="--master local[2] pyspark-shell",
               RAY_USAGE_STATS_ENABLED="0")
    runs = {
        "pack-1": [sluice_bin(), "pack", images, None, "--shards",
                   str(a.shards), "--threads", "1"],
        "pack-2": [sluice_bin(), "pack", images, None, "--shards",
                   str(a.shards), "--threads", "2"],
    }
    if importable("ray"):
        runs["ray-2"] = [sys.executable, EXAMPLE, images, None, "--engine",
                         "ray", "--tasks", "2"]
    if importable("pyspark"):
        runs["spark-2"] = [sys.executable, EXAMPLE, images, None,
                           "--engine", "spark", "--tasks", "2"]
    times = {k: [] for k in runs}
    for _ in range(a.repeat):
        for name, cmd in runs.items():
            out = os.path.join(root, "out-" + name)
            shutil.rmtree(out, ignore_errors=True)
            cmd = [out if c is None else c for c in cmd]
            t = time.perf_counter()
            p = subprocess.run(cmd, env=env, capture_output=True, text=True)
            dt = time.perf_counter() - t
            if p.returncode != 0:
                print("%s failed:\n%s" % (name, p.stderr[-2000:]))
                return 1
            times[name].append(dt)
    base = statistics.median(times["pack-1"])
    print("%d JPEGs (sluice synth --imagenet), %d shards, %d cores, "
          "median of %d" % (a.count, a.shards, os.cpu_count() or 1, a.repeat))
    for name, ts in times.items():
        m = statistics.median(ts)
        print("%-8s %8.0f images/s  %5.2fx pack-1  (%.2f s)" %
              (name, a.count / m, base / m, m))
    return 0


if __name__ == "__main__":
    sys.exit(main())
