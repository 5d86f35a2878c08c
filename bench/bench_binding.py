#!/usr/bin/env python3
"""The Python binding's rate against the C loader's, in one process and one
run: the same dataset and settings (u8 NCHW, random-resized crop to RES,
flip 0.5, as bench/peers/sluice_loader.py), two loaders open side by side,
one driven through libsluice's C API (ctypes: one call per batch, what a C
loop does) and one through `import sluice`, epochs alternating A B B A ...
so the machine's noise falls on both. Each epoch is timed from the end of
its first --skip batches to its last; the figure is the median of the
per-pair ratios binding / C. Then the binding runs --rss-epochs more epochs
and its VmRSS and RssAnon are read at the end of each (flat: no growth per
epoch).

    PYTHONPATH=build/python bench/bench_binding.py build/libsluice.so DATASET \\
        --res 160 --workers 2 --batch 64 --pairs 5

Prints one `RESULT {...}` line per epoch and a summary line (case
"binding_vs_c")."""
import argparse
import ctypes as C
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers"))
from sluice_loader import SL_END, SL_OK, Batch, bind, rss_kb  # noqa: E402


def settings(args):
    return {"dataset.path": args.dataset, "loader.batch_size": args.batch,
            "loader.workers": args.workers, "loader.order": "random", "loader.drop_last": "true",
            "loader.io": args.io, "resolution.schedule": "constant", "resolution.min": args.res,
            "resolution.max": args.res, "augment.crop": "random_resized",
            "augment.scale": "0.08, 1.0", "augment.ratio": "0.75, 1.3333333", "augment.flip": "0.5",
            "augment.dtype": "u8", "augment.layout": "nchw", "device.backend": "host"}


class CLoader:
    """A loader driven through the C API with ctypes."""

    def __init__(self, lib, conf):
        self.lib = lib = bind(lib)
        cfg = C.c_void_p()
        if lib.sl_config_create(C.byref(cfg)) != SL_OK:
            sys.exit("bench_binding.py: sl_config_create failed")
        for k, v in conf.items():
            if lib.sl_config_set(cfg, k.encode(), str(v).encode()) != SL_OK:
                sys.exit("bench_binding.py: %s = %s: %s" % (k, v, lib.sl_config_errmsg(cfg).decode()))
        self.ld = C.c_void_p()
        st = lib.sl_loader_open(C.byref(self.ld), cfg)
        lib.sl_config_destroy(cfg)
        if st != SL_OK:
            sys.exit("bench_binding.py: open: %s" % lib.sl_loader_errmsg(self.ld).decode())
        self.b = Batch()

    def epoch(self, e, skip):
        lib, b = self.lib, self.b
        lib.sl_loader_start_epoch(self.ld, e)
        i = n = 0
        t0 = None
        while True:
            st = lib.sl_loader_next(self.ld, C.byref(b))
            if st == SL_END:
                break
            if st != SL_OK:
                sys.exit("bench_binding.py: C epoch %d: %s" % (e, lib.sl_loader_errmsg(self.ld).decode()))
            i += 1
            if i == skip:
                t0 = time.perf_counter()
            elif i > skip:
                n += b.n
            lib.sl_batch_release(self.ld, C.byref(b), None)
        return n, time.perf_counter() - t0 if t0 else None

    def close(self):
        self.lib.sl_loader_close(self.ld)


class PyLoader:
    """The same loader through the binding; each batch's images are taken
    as a NumPy view (zero copy), as a training loop would."""

    def __init__(self, conf):
        import numpy as np
        import sluice
        self.np = np
        self.ld = sluice.Loader(dict(conf))

    def epoch(self, e, skip):
        i = n = 0
        t0 = None
        for b in self.ld.epoch(e):
            self.np.from_dlpack(b.images)
            i += 1
            if i == skip:
                t0 = time.perf_counter()
            elif i > skip:
                n += b.valid
        return n, time.perf_counter() - t0 if t0 else None

    def close(self):
        self.ld.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("lib", help="path of libsluice.so (the one the binding links)")
    ap.add_argument("dataset")
    ap.add_argument("--res", type=int, default=160)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--io", default="auto")
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--skip", type=int, default=3)
    ap.add_argument("--rss-epochs", type=int, default=5)
    args = ap.parse_args()

    conf = settings(args)
    c, py = CLoader(args.lib, conf), PyLoader(conf)
    ratios, rates = [], {"c": [], "binding": []}
    e = 0
    for p in range(args.pairs):
        order = (("c", c), ("binding", py)) if p % 2 == 0 else (("binding", py), ("c", c))
        got = {}
        for name, ld in order:
            n, s = ld.epoch(e, args.skip)
            e += 1
            if not s or n == 0:
                sys.exit("bench_binding.py: too few batches per epoch for --skip %d" % args.skip)
            got[name] = n / s
            rates[name].append(n / s)
            print("RESULT " + json.dumps({"case": "epoch", "api": name, "pair": p, "images": n,
                                          "seconds": round(s, 4), "images_per_s": round(n / s, 1)}),
                  flush=True)
        ratios.append(got["binding"] / got["c"])
    c.close()
    rss = []
    for _ in range(args.rss_epochs):
        py.epoch(e, args.skip)
        e += 1
        m = rss_kb()
        rss.append((m.get("VmRSS"), m.get("RssAnon")))
    py.close()
    out = {"case": "binding_vs_c", "res": args.res, "workers": args.workers, "batch": args.batch,
           "pairs": args.pairs, "ratio_median": round(statistics.median(ratios), 3),
           "ratios": [round(r, 3) for r in ratios],
           "c_images_per_s_median": round(statistics.median(rates["c"]), 1),
           "binding_images_per_s_median": round(statistics.median(rates["binding"]), 1),
           "binding_rss_kb": [r for r, _ in rss], "binding_anon_kb": [a for _, a in rss]}
    print("RESULT " + json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
