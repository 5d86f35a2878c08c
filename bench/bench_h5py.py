#!/usr/bin/env python3
"""sluice against the usual PyTorch way of reading an h5py array, in one
process and one run.

The set: a chunked, gzip-compressed (N, H, W, 3) uint8 `images` beside
`labels` (N,), written by h5py (--make, or kept from an earlier run when
its shape matches). Both loaders read it with random-resized crops (scale
0.08-1, ratio 3/4-4/3, flip 0.5, u8 CHW/NCHW output at RES x RES), the same
number of workers and the same batch size:

  torch   torch.utils.data.DataLoader(shuffle=True, persistent workers)
          over a Dataset that opens the file with h5py lazily, in each
          worker (never in the parent), reads ds[i] and crops it.
          torchvision's RandomResizedCrop / RandomHorizontalFlip when
          `import torchvision` works, else the same algorithm in torch
          (torchvision's get_params: 10 tries, then the centre crop;
          bilinear antialiased resize by torch.nn.functional.interpolate,
          rounded to u8), which the output names.
  sluice  the Python binding (`import sluice`, PYTHONPATH=build/python),
          loader.order = quasi_random, augment.filter = bilinear.

Rounds alternate A B B A ... (one epoch each), so the machine's noise falls
on both; each epoch is timed from the end of its first --skip batches to its
last. CPU time is that of the whole process tree (/proc), torch's workers
included. The figures are the medians of the per-pair ratios sluice / torch
of images/s and of images per CPU-second. For sluice it also reports chunk
decompressions per epoch (the loader's chunk_unfilters) / chunks, and one
more epoch in random order with the same chunk cache for contrast.

    PYTHONPATH=build/python /usr/bin/python3 bench/bench_h5py.py /tmp/h5bench.h5 \\
        --make --n 1024 --size 256 --chunk 16 --res 224 --workers 2 --batch 64 --pairs 4

Prints one `RESULT {...}` line per epoch and a summary line (case
"h5py_vs_sluice")."""
import argparse
import json
import math
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers"))
from cputime import tree_cpu_seconds  # noqa: E402

SCALE = (0.08, 1.0)
RATIO = (3.0 / 4.0, 4.0 / 3.0)


def chunk_shape(n, size, chunk):
    """The chunk shape of --chunk: K whole images, or `auto`, what h5py's
    auto-chunking picks for a compressed array (it cuts the images: each
    spans several chunks)."""
    if chunk == "auto":
        from h5py._hl.filters import guess_chunk
        return tuple(guess_chunk((n, size, size, 3), None, 1))
    return (int(chunk), size, size, 3)


def make(path, n, size, chunk, level):
    """Smooth random images with a little noise (gzip shrinks them by about
    half, as it does photographs' pixels), in chunks of `chunk_shape`."""
    import h5py
    import numpy as np

    rng = np.random.default_rng(15)
    tmp = path + ".tmp"
    with h5py.File(tmp, "w") as f:
        ds = f.create_dataset("images", (n, size, size, 3), dtype="u1",
                              chunks=chunk_shape(n, size, chunk), compression="gzip",
                              compression_opts=level)
        f.create_dataset("labels", data=rng.integers(0, 10, n).astype("i8"))
        cell = max(1, size // 8)
        for s in range(0, n, 64):
            k = min(64, n - s)
            base = rng.integers(0, 256, (k, 8, 8, 3)).astype(np.int16)
            img = np.repeat(np.repeat(base, cell, axis=1), cell, axis=2)[:, :size, :size]
            img = img + rng.integers(-6, 7, img.shape)
            ds[s:s + k] = np.clip(img, 0, 255).astype(np.uint8)
    os.replace(tmp, path)


def torch_loader(args):
    import h5py  # noqa: F401  (imported here; the file is opened in the workers)
    import torch
    from torch.utils.data import DataLoader, Dataset

    torch.set_num_threads(1)
    try:
        import torchvision
        from torchvision.transforms import v2 as T

        tf = T.Compose([T.RandomResizedCrop(args.res, scale=SCALE, ratio=RATIO, antialias=True),
                        T.RandomHorizontalFlip()])
        how = "torchvision %s transforms.v2" % torchvision.__version__
    except ImportError:
        tf = TorchRRC(torch, args.res)
        how = "torch-only RandomResizedCrop (torchvision's algorithm; no torchvision here)"

    path, n = args.path, args.n

    class H5(Dataset):
        def __init__(self):
            self.f = self.ds = self.labels = None

        def __len__(self):
            return n

        def __getitem__(self, i):
            if self.ds is None:  # first use, in the worker
                import h5py

                self.f = h5py.File(path, "r")
                self.ds, self.labels = self.f["images"], self.f["labels"]
            x = torch.from_numpy(self.ds[i]).permute(2, 0, 1)  # HWC -> CHW view
            return tf(x), int(self.labels[i])

    def init(_):
        torch.set_num_threads(1)

    dl = DataLoader(H5(), batch_size=args.batch, shuffle=True, num_workers=args.workers,
                    persistent_workers=True, drop_last=False, worker_init_fn=init,
                    prefetch_factor=2)

    def epoch(e, skip):
        i = m = 0
        t0 = c0 = None
        for x, _ in dl:
            assert x.dtype == torch.uint8 and tuple(x.shape[1:]) == (3, args.res, args.res)
            i += 1
            if i == skip:
                t0, c0 = time.perf_counter(), tree_cpu_seconds()
            elif i > skip:
                m += x.shape[0]
        return m, time.perf_counter() - t0, tree_cpu_seconds() - c0

    return epoch, "torch %s, h5py, %s" % (torch.__version__, how)


class TorchRRC:
    """torchvision's RandomResizedCrop(res, scale, ratio, antialias=True)
    then RandomHorizontalFlip(0.5) on a CHW uint8 tensor, in torch."""

    def __init__(self, torch, res):
        self.torch, self.res = torch, res

    def params(self, h, w):
        torch = self.torch
        area = h * w
        lr = (math.log(RATIO[0]), math.log(RATIO[1]))
        for _ in range(10):
            ta = area * torch.empty(1).uniform_(SCALE[0], SCALE[1]).item()
            ar = math.exp(torch.empty(1).uniform_(lr[0], lr[1]).item())
            cw = int(round(math.sqrt(ta * ar)))
            ch = int(round(math.sqrt(ta / ar)))
            if 0 < cw <= w and 0 < ch <= h:
                i = torch.randint(0, h - ch + 1, size=(1,)).item()
                j = torch.randint(0, w - cw + 1, size=(1,)).item()
                return i, j, ch, cw
        r = w / h
        if r < RATIO[0]:
            cw, ch = w, int(round(w / RATIO[0]))
        elif r > RATIO[1]:
            ch, cw = h, int(round(h * RATIO[1]))
        else:
            cw, ch = w, h
        return (h - ch) // 2, (w - cw) // 2, ch, cw

    def __call__(self, x):
        torch = self.torch
        i, j, ch, cw = self.params(x.shape[1], x.shape[2])
        c = x[:, i:i + ch, j:j + cw].unsqueeze(0).float()
        y = torch.nn.functional.interpolate(c, size=(self.res, self.res), mode="bilinear",
                                            align_corners=False, antialias=True)
        y = y.round_().clamp_(0, 255).to(torch.uint8)[0]
        if torch.rand(1).item() < 0.5:
            y = y.flip(-1)
        return y


def sluice_settings(args, order):
    return {"dataset.path": args.path, "dataset.chunk_cache": args.chunk_cache,
            "loader.batch_size": args.batch, "loader.workers": args.workers,
            "loader.order": order, "loader.quasi_window": args.quasi_window,
            "loader.drop_last": "false", "loader.io": args.io,
            "resolution.schedule": "constant", "resolution.min": args.res,
            "resolution.max": args.res, "augment.crop": "random_resized",
            "augment.scale": "0.08, 1.0", "augment.ratio": "0.75, 1.3333333",
            "augment.flip": "0.5", "augment.dtype": "u8", "augment.layout": "nchw",
            "augment.filter": "bilinear", "device.backend": "host"}


class SluiceLoader:
    def __init__(self, args, order):
        import numpy as np
        import sluice

        self.np, self.res = np, args.res
        self.ld = sluice.Loader(sluice_settings(args, order))

    def epoch(self, e, skip):
        i = m = 0
        t0 = c0 = None
        for b in self.ld.epoch(e):
            x = self.np.from_dlpack(b.images)
            assert x.dtype == self.np.uint8 and x.shape[1:] == (3, self.res, self.res)
            i += 1
            if i == skip:
                t0, c0 = time.perf_counter(), tree_cpu_seconds()
            elif i > skip:
                m += b.valid
        return m, time.perf_counter() - t0, tree_cpu_seconds() - c0

    def unfilters(self):
        return self.ld.stats()["chunk_unfilters"]

    def close(self):
        self.ld.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("path", help="the HDF5 file (written by --make when missing or of another shape)")
    ap.add_argument("--make", action="store_true", help="write the set with h5py if needed")
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--size", type=int, default=256, help="H = W of the stored images")
    ap.add_argument("--chunk", default="16",
                    help="samples per chunk, or auto (h5py's auto-chunking: images span chunks)")
    ap.add_argument("--level", type=int, default=4, help="gzip level")
    ap.add_argument("--res", type=int, default=224)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--pairs", type=int, default=4)
    ap.add_argument("--skip", type=int, default=2)
    ap.add_argument("--io", default="auto")
    ap.add_argument("--chunk-cache", default="128MiB", help="sluice's dataset.chunk_cache")
    ap.add_argument("--quasi-window", type=int, default=4, help="sluice's loader.quasi_window")
    args = ap.parse_args()

    import h5py

    want = (args.n, args.size, args.size, 3)
    ok = False
    if os.path.exists(args.path):
        with h5py.File(args.path, "r") as f:
            d = f.get("images")
            ok = (d is not None and d.shape == want and
                  d.chunks == chunk_shape(args.n, args.size, args.chunk))
    if not ok:
        if not args.make:
            sys.exit("bench_h5py.py: %s is missing or not a %s array; pass --make" % (args.path, want))
        make(args.path, args.n, args.size, args.chunk, args.level)
    cshape = chunk_shape(args.n, args.size, args.chunk)
    chunks = math.ceil(args.n / cshape[0])  # rows of chunks: what sluice undoes
    stored = os.path.getsize(args.path)

    # torch's workers are forked (and kept) before sluice's threads exist.
    tepoch, tversion = torch_loader(args)
    tepoch(0, args.skip)
    sl = SluiceLoader(args, "quasi_random")
    sl.epoch(0, args.skip)

    ratios = {"images_per_s": [], "images_per_cpu_s": []}
    rates = {"sluice": [], "torch": []}
    per_core = {"sluice": [], "torch": []}
    unf = []
    e = 1
    for p in range(args.pairs):
        order = ("sluice", "torch") if p % 2 == 0 else ("torch", "sluice")
        got = {}
        for name in order:
            if name == "sluice":
                u0 = sl.unfilters()
                m, s, c = sl.epoch(e, args.skip)
                unf.append(sl.unfilters() - u0)
            else:
                m, s, c = tepoch(e, args.skip)
            e += 1
            got[name] = (m / s, m / c if c > 0 else float("nan"))
            rates[name].append(m / s)
            per_core[name].append(got[name][1])
            print("RESULT " + json.dumps({"case": "epoch", "loader": name, "pair": p, "images": m,
                                          "seconds": round(s, 4), "cpu_s": round(c, 3),
                                          "images_per_s": round(m / s, 1),
                                          "images_per_cpu_s": round(got[name][1], 1)}), flush=True)
        ratios["images_per_s"].append(got["sluice"][0] / got["torch"][0])
        ratios["images_per_cpu_s"].append(got["sluice"][1] / got["torch"][1])
    sl.close()

    # Contrast: random order, same cache (whole epoch's decompressions).
    rnd = SluiceLoader(args, "random")
    u0 = rnd.unfilters()
    rnd.epoch(0, args.skip)
    unf_random = rnd.unfilters() - u0
    rnd.close()

    med = statistics.median
    out = {"case": "h5py_vs_sluice", "n": args.n, "stored": "%dx%dx3 u8" % (args.size, args.size),
           "chunk": list(cshape), "chunk_rows": chunks, "gzip": args.level, "file_bytes": stored,
           "res": args.res, "workers": args.workers, "batch": args.batch, "pairs": args.pairs,
           "cpus": os.cpu_count(), "torch": tversion,
           "ratio_images_per_s": round(med(ratios["images_per_s"]), 3),
           "ratio_images_per_cpu_s": round(med(ratios["images_per_cpu_s"]), 3),
           "ratios_images_per_s": [round(r, 3) for r in ratios["images_per_s"]],
           "ratios_images_per_cpu_s": [round(r, 3) for r in ratios["images_per_cpu_s"]],
           "sluice_images_per_s_median": round(med(rates["sluice"]), 1),
           "torch_images_per_s_median": round(med(rates["torch"]), 1),
           "sluice_images_per_cpu_s_median": round(med(per_core["sluice"]), 1),
           "torch_images_per_cpu_s_median": round(med(per_core["torch"]), 1),
           "sluice_chunk_cache": args.chunk_cache, "sluice_quasi_window": args.quasi_window,
           "quasi_random_unfilters_per_epoch": unf,
           "quasi_random_unfilters_per_chunk_row": round(max(unf) / chunks, 3),
           "random_unfilters_per_chunk_row": round(unf_random / chunks, 3)}
    print("RESULT " + json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
