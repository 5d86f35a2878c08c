#!/usr/bin/env python3
"""sluice's loader measured exactly like the peers (bench/peers/peer.py):
libsluice through its public C API (ctypes, standard library only), one
epoch, timed from the end of its first --skip batches to its last batch,
random-resized-crop to RES + flip 0.5, uint8 NCHW output on the host.

Prints `RESULT {"case": "loader", "res", "workers", "images", "seconds",
"images_per_s", "bytes_read" (the dataset bytes the epoch read),
"first_batch_s" (from the epoch's start to its first batch),
"images_per_s_all" (the whole epoch, first batches included), ...}`, and
with --epochs E > 1 one `RESULT {"case": "rss",
"epoch": e, "rss_kb": ...}` line at the end of each epoch (the timed figure
is then the last epoch's).

    sluice_loader.py LIBSLUICE DATASET --res 224 --workers 2 --batch 64 --io auto

--detect rrc|iou_crop (a dataset with boxes, bench/det_data.py): the
detection row, RandomResizedCrop or RandomIoUCrop + flip 0.5 with every
sample's boxes moved into the batch (loader.max_boxes 0: the dataset's
largest count); prints `RESULT {"case": "detection", "crop", ...,
"boxes": kept boxes delivered}`.
"""
import argparse
import ctypes as C
import json
import sys
import time

from cputime import tree_cpu_seconds


class Batch(C.Structure):  # include/sluice.h: sl_batch
    _fields_ = [("data", C.c_void_p), ("labels", C.POINTER(C.c_int32)),
                ("indices", C.POINTER(C.c_uint64)), ("n", C.c_uint32), ("height", C.c_uint32),
                ("width", C.c_uint32), ("channels", C.c_uint32), ("dtype", C.c_int),
                ("layout", C.c_int), ("on_device", C.c_int), ("box_capacity", C.c_uint32),
                ("ready", C.c_void_p),
                ("bytes", C.c_size_t), ("epoch", C.c_uint64), ("index", C.c_uint64),
                ("slot", C.c_uint64), ("targets", C.POINTER(C.c_float)), ("target_width", C.c_uint32),
                ("valid", C.c_uint32), ("mix_kind", C.c_uint32), ("mix_lambda", C.c_float),
                ("mix_box", C.c_uint32 * 4), ("boxes", C.POINTER(C.c_float)),
                ("box_labels", C.POINTER(C.c_int32)), ("box_counts", C.POINTER(C.c_uint32))]


SL_OK, SL_END = 0, 1

# The recipes of bench/peers/peer.py --recipe, as sluice keys: torchvision's
# reference (TrivialAugmentWide + RandomErasing(0.1)) and timm's
# (rand-m9-mstd0.5 + RandomErasing(0.25)); mixing is left to the GPU.
RECIPES = {
    "rrc": {},
    "tv": {"augment.auto": "trivial", "augment.erasing": "0.1"},
    "timm": {"augment.auto": "randaugment", "augment.auto_ops": "2",
             "augment.auto_magnitude": "9", "augment.auto_bins": "11",
             "augment.auto_magnitude_std": "0.5", "augment.auto_fill": "124, 116, 104",
             "augment.erasing": "0.25"},
}


def bind(path):
    """libsluice at path, with the argument and result types of the calls a
    loop makes (include/sluice.h)."""
    lib = C.CDLL(path)
    lib.sl_config_errmsg.restype = C.c_char_p
    lib.sl_loader_errmsg.restype = C.c_char_p
    lib.sl_config_set.argtypes = [C.c_void_p, C.c_char_p, C.c_char_p]
    lib.sl_loader_open.argtypes = [C.POINTER(C.c_void_p), C.c_void_p]
    lib.sl_loader_start_epoch.argtypes = [C.c_void_p, C.c_uint64]
    lib.sl_loader_next.argtypes = [C.c_void_p, C.POINTER(Batch)]
    lib.sl_batch_release.argtypes = [C.c_void_p, C.POINTER(Batch), C.c_void_p]
    lib.sl_loader_close.argtypes = [C.c_void_p]
    lib.sl_config_destroy.argtypes = [C.c_void_p]
    lib.sl_config_errmsg.argtypes = [C.c_void_p]
    lib.sl_loader_errmsg.argtypes = [C.c_void_p]
    lib.sl_loader_stats_get.argtypes = [C.c_void_p, C.c_void_p]
    return lib


# sl_loader_stats (include/sluice.h): 360 bytes, bytes_read at offset 176
# (after epoch, batches, samples, skipped, failed, bad[16], nbad + pad).
STATS_BYTES, STATS_BYTES_READ = 360, 176


def bytes_read(lib, ld):
    """The loader's bytes_read counter: dataset bytes the workers read."""
    buf = (C.c_uint8 * 4096)()  # room for a larger struct of a newer build
    if lib.sl_loader_stats_get(ld, buf) != SL_OK:
        return None
    return int.from_bytes(bytes(buf[STATS_BYTES_READ:STATS_BYTES_READ + 8]), "little")


def rss_kb():
    """VmRSS, RssAnon and RssFile of this process, KiB (mapped dataset pages
    count in RssFile: page cache, not memory the loader allocated)."""
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            key = line.split(":")[0]
            if key in ("VmRSS", "RssAnon", "RssFile", "RssShmem"):
                out[key] = int(line.split()[1])
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("lib", help="path of libsluice.so")
    ap.add_argument("dataset", help="LMDB or HDF5 file made by sluice pack")
    ap.add_argument("--res", type=int, default=224)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--io", default="auto")
    ap.add_argument("--filter", default="box", help="augment.filter: box | bilinear")
    ap.add_argument("--planes", action="store_true",
                    help="augment.jpeg_planes = true (decode JPEGs to YCbCr planes)")
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--recipe", default="rrc", choices=sorted(RECIPES),
                    help="the ops after the crop: " + "; ".join(
                        "%s: %s" % (k, ", ".join("%s=%s" % kv for kv in v.items()) or "none")
                        for k, v in sorted(RECIPES.items())))
    ap.add_argument("--skip", type=int, default=3, help="untimed batches at the epoch's start")
    ap.add_argument("--detect", choices=["rrc", "iou_crop"],
                    help="detection: the crop, with the dataset's boxes moved into the batches")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="any other sluice key (repeatable; last wins), e.g. io.cache_dir=DIR "
                         "loader.order=quasi_random for the remote rows")
    args = ap.parse_args()

    lib = bind(args.lib)
    cfg = C.c_void_p()
    if lib.sl_config_create(C.byref(cfg)) != SL_OK:
        sys.exit("sluice_loader.py: sl_config_create failed")
    settings = {"dataset.path": args.dataset, "loader.batch_size": args.batch,
                "loader.workers": args.workers, "loader.order": "random", "loader.drop_last": "true",
                "loader.io": args.io, "resolution.schedule": "constant", "resolution.min": args.res,
                "resolution.max": args.res, "augment.crop": "random_resized",
                "augment.scale": "0.08, 1.0", "augment.ratio": "0.75, 1.3333333", "augment.flip": "0.5",
                "augment.dtype": "u8", "augment.layout": "nchw", "augment.filter": args.filter,
                "device.backend": "host"}
    if args.planes:  # only when asked: a --baseline build older than the option rejects the key
        settings["augment.jpeg_planes"] = "true"
    settings.update(RECIPES[args.recipe])
    for kv in args.set:
        k, eq, v = kv.partition("=")
        if not eq:
            ap.error("--set %s: want KEY=VALUE" % kv)
        settings[k.strip()] = v.strip()
    if args.detect:
        settings.update({"augment.crop": "random_resized" if args.detect == "rrc" else "iou_crop",
                         "loader.max_boxes": "0"})
    for k, v in settings.items():
        if lib.sl_config_set(cfg, k.encode(), str(v).encode()) != SL_OK:
            sys.exit("sluice_loader.py: %s = %s: %s" % (k, v, lib.sl_config_errmsg(cfg).decode()))
    ld = C.c_void_p()
    if lib.sl_loader_open(C.byref(ld), cfg) != SL_OK:
        sys.exit("sluice_loader.py: open: %s" % lib.sl_loader_errmsg(ld).decode())
    lib.sl_config_destroy(cfg)

    b = Batch()
    out = None
    read0 = 0
    for epoch in range(args.epochs):
        ts = time.perf_counter()  # the whole epoch, first batch included: images_per_s_all
        lib.sl_loader_start_epoch(ld, epoch)
        i, n, t0, c0, nbox, n_all, t_first = 0, 0, None, 0.0, 0, 0, None
        while True:
            st = lib.sl_loader_next(ld, C.byref(b))
            if st == SL_END:
                break
            if st != SL_OK:
                sys.exit("sluice_loader.py: epoch %d: %s" % (epoch, lib.sl_loader_errmsg(ld).decode()))
            if b.dtype != 0 or b.width != args.res or b.on_device:
                sys.exit("sluice_loader.py: batch is dtype %d, %dx%d, on_device %d; want u8 %d on host"
                         % (b.dtype, b.width, b.height, b.on_device, args.res))
            i += 1
            n_all += b.n
            if t_first is None:
                t_first = time.perf_counter()
            if i == args.skip:
                t0 = time.perf_counter()
                c0 = tree_cpu_seconds()
            elif i > args.skip:
                n += b.n
                if args.detect:  # the boxes are read, as a training step would
                    if not b.box_capacity:
                        sys.exit("sluice_loader.py: --detect on a dataset without boxes")
                    nbox += sum(b.box_counts[j] for j in range(b.n))
            lib.sl_batch_release(ld, C.byref(b), None)
        t1 = time.perf_counter()
        cpu = tree_cpu_seconds() - c0 if t0 is not None else 0
        if t0 is None or n == 0:
            sys.exit("sluice_loader.py: only %d batches in the epoch; need more than --skip %d"
                     % (i, args.skip))
        out = {"case": "detection" if args.detect else "loader", "recipe": args.recipe, "res": args.res, "workers": args.workers,
               "batch": args.batch,
               "io": args.io, "filter": args.filter, "planes": args.planes, "images": n, "seconds": round(t1 - t0, 4),
               "images_per_s": round(n / (t1 - t0), 2), "cpu_s": round(cpu, 3),
               "images_per_cpu_s": round(n / cpu, 2) if cpu > 0 else None,
               "first_batch_s": round(t_first - ts, 4), "images_all": n_all,
               "images_per_s_all": round(n_all / (t1 - ts), 2)}
        read1 = bytes_read(lib, ld)
        if read1 is not None:  # the epoch's, with what the next prefetched
            out["bytes_read"] = read1 - read0
            read0 = read1
        if args.detect:
            out.update({"crop": args.detect, "boxes": nbox})
        if args.epochs > 1:
            m = rss_kb()
            print("RESULT " + json.dumps({"case": "rss", "epoch": epoch, "rss_kb": m.get("VmRSS"),
                                          "anon_kb": m.get("RssAnon"), "file_kb": m.get("RssFile"),
                                          "workers": args.workers, "io": args.io}), flush=True)
    lib.sl_loader_close(ld)
    print("RESULT " + json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
