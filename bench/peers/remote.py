#!/usr/bin/env python3
"""The remote rows (issue 38): the bench's images converted by each remote
peer's own writer, the readers those peers' users run against a server
(for bench/peers/peer.py, which times them like its other peers), and the
open time of a remote sluice dataset.

    remote.py prepare --data IMAGES --out DIR --format litdata|mds|wds [--shard-mb 16]
        litdata: litdata.optimize (LitData's own converter), one item a
                 sample {"image": the JPEG file's bytes, "label": int}
        mds:     streaming.MDSWriter (Mosaic Streaming's own writer),
                 columns image: jpeg (the file's bytes kept), label: int
        wds:     webdataset.ShardWriter (jpg, cls), samples shuffled as
                 its users write them
        Each into DIR, flat (what bench/remote_rows.py uploads or serves),
        chunks/shards of about --shard-mb MB.

    remote.py open LIBSLUICE URL --cache DIR [--repeat 3]
        sl_dataset_open of URL (ctypes, standard library only) with
        io.cache_dir = a fresh folder under DIR (cold: nothing cached), then
        again on that cache (warm); prints `RESULT {"case": "remote_open",
        "cold_s": median, "warm_s": median, "samples": N, ...}`.

Readers (peer.py --path URL --cache DIR; the cache folder is the peer's
own: the harness empties it for a cold epoch and keeps it for the warm one):
  litdata_s3   litdata.StreamingDataset(input_dir=s3://..., cache_dir,
               shuffle=True) in litdata.StreamingDataLoader; the S3
               endpoint from AWS_ENDPOINT_URL_S3 (boto3's variable); with
               allow_http added to LitData's obstore client options (see
               litdata_allow_http: without it LitData cannot fetch from an
               http:// endpoint)
  mosaic_s3    streaming.StreamingDataset(remote=s3://..., local=cache,
               shuffle=True, batch_size) in a torch DataLoader; the endpoint
               from S3_ENDPOINT_URL (Mosaic's variable)
  wds_http     webdataset.WebDataset(http URLs, shardshuffle, cache_dir)
               + shuffle(1000) + decode("pil"), in its WebLoader (as
               foreign.py's webdataset reader, over HTTP)
All decode with PIL and apply peer.py's torch_pil transforms.
"""
import argparse
import ctypes as C
import io
import json
import os
import shutil
import statistics
import sys
import time

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def image_folder(data):
    from foreign import image_folder as f

    return f(data)


# ---------------------------------------------------------------- writers

def _litdata_item(item):
    """litdata.optimize's fn: one sample (top level: its workers pickle it)."""
    path, label = item
    with open(path, "rb") as f:
        return {"image": f.read(), "label": int(label)}


def write_litdata(samples, out, shard_mb):
    from litdata import optimize

    optimize(fn=_litdata_item, inputs=samples, output_dir=out, chunk_bytes="%dMB" % shard_mb,
             num_workers=1, mode="overwrite")


def write_mds(samples, out, shard_mb):
    from PIL import Image
    from streaming import MDSWriter

    with MDSWriter(out=out, columns={"image": "jpeg", "label": "int"},
                   size_limit="%dmb" % shard_mb) as w:
        for path, label in samples:
            with Image.open(path) as im:  # a JpegImageFile: MDS keeps the file's bytes
                w.write({"image": im, "label": int(label)})


def write_wds(samples, out, shard_mb):
    import random

    import webdataset as wds

    order = list(samples)
    random.Random(1).shuffle(order)
    with wds.ShardWriter(os.path.join(out, "shard-%06d.tar"), maxsize=shard_mb * 1000 * 1000,
                         maxcount=10 ** 9, verbose=0) as sink:
        for i, (path, label) in enumerate(order):
            with open(path, "rb") as f:
                sink.write({"__key__": "s%08d" % i, "jpg": f.read(), "cls": str(label).encode()})


WRITERS = {"litdata": write_litdata, "mds": write_mds, "wds": write_wds}
# The client modules each format needs (writer and reader).
MODULES = {"litdata": ["litdata", "torch", "torchvision"], "mds": ["streaming", "torch", "torchvision"],
           "wds": ["webdataset", "torch", "torchvision"]}
PEERS = {"litdata_s3": "litdata", "mosaic_s3": "mds", "wds_http": "wds"}


def wds_urls(base, folder):
    """webdataset brace pattern of the shards in folder at URL base."""
    names = sorted(f for f in os.listdir(folder) if f.endswith(".tar"))
    return base.rstrip("/") + "/shard-{000000..%06d}.tar" % (len(names) - 1)


def prepare(a):
    samples = image_folder(a.data)
    if not samples:
        sys.exit("remote.py: no images in class subfolders of %s" % a.data)
    if os.path.exists(a.out):
        shutil.rmtree(a.out)
    os.makedirs(a.out)
    t = time.perf_counter()
    WRITERS[a.format](samples, a.out, a.shard_mb)
    files = os.listdir(a.out)
    print("RESULT " + json.dumps({"case": "remote_prepare", "format": a.format, "files": len(files),
                                  "bytes": sum(os.path.getsize(os.path.join(a.out, f)) for f in files),
                                  "seconds": round(time.perf_counter() - t, 2)}), flush=True)
    return 0


# ---------------------------------------------------------------- readers

def _pil(buf):
    from PIL import Image

    return Image.open(io.BytesIO(buf)).convert("RGB")


def litdata_allow_http():
    """LitData fetches chunks with obstore, building its S3Store from the
    boto3 client's endpoint but with client options of its own
    (litdata.streaming.downloader._OBSTORE_CLIENT_OPTIONS) that lack
    obstore's allow_http: against an http:// endpoint (this bench's
    loopback SeaweedFS) every chunk GET fails with "HTTP error: builder
    error ... BadScheme", and AWS_ALLOW_HTTP=true in the environment does
    not help (those client options replace the ones read from it). The one
    change made here: allow_http added to LitData's own options (only when
    the endpoint is http://; a no-op where the module has no such name)."""
    from litdata.streaming import downloader

    opts = getattr(downloader, "_OBSTORE_CLIENT_OPTIONS", None)
    endpoint = os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL") or ""
    if isinstance(opts, dict) and endpoint.startswith("http://"):
        downloader._OBSTORE_CLIENT_OPTIONS = dict(opts, allow_http=True)
        return True
    return False


def litdata_dataset(url, cache, tf):
    import litdata

    litdata_allow_http()

    class DS(litdata.StreamingDataset):
        def __getitem__(self, index):
            s = super().__getitem__(index)
            return tf(_pil(s["image"])), s["label"]

    return DS(input_dir=url, cache_dir=cache, shuffle=True, seed=1)


def mosaic_dataset(url, cache, tf, batch):
    from streaming import StreamingDataset
    from streaming.base.util import clean_stale_shared_memory

    clean_stale_shared_memory()

    class DS(StreamingDataset):
        def __getitem__(self, index):
            s = super().__getitem__(index)
            return tf(s["image"].convert("RGB")), s["label"]

    return DS(remote=url, local=cache, shuffle=True, shuffle_seed=1, batch_size=batch)


def wds_dataset(url, cache, tf):
    import webdataset as wds

    urls = list(wds.shardlists.expand_urls(url))
    os.makedirs(cache, exist_ok=True)
    return (wds.WebDataset(urls, shardshuffle=len(urls), empty_check=False, cache_dir=cache)
            .shuffle(1000).decode("pil").to_tuple("jpg;jpeg;png", "cls").map_tuple(tf, int))


def loader(args, tf, kw):
    """(iterable of (x, y) batches, client description) for peer args.peer."""
    from importlib.metadata import version

    if args.peer == "litdata_s3":
        import litdata

        ds = litdata_dataset(args.path, args.cache, tf)
        kw = dict(kw)
        kw.pop("worker_init_fn", None)  # StreamingDataLoader sets its own
        return litdata.StreamingDataLoader(ds, **kw), "litdata %s" % version("litdata")
    if args.peer == "mosaic_s3":
        from torch.utils.data import DataLoader

        return (DataLoader(mosaic_dataset(args.path, args.cache, tf, args.batch), **kw),
                "mosaicml-streaming %s" % version("mosaicml-streaming"))
    import webdataset as wds

    return wds.WebLoader(wds_dataset(args.path, args.cache, tf), **kw), "webdataset %s" % version("webdataset")


# ---------------------------------------------------------------- open

def open_times(a):
    lib = C.CDLL(a.lib)
    lib.sl_config_create.argtypes = [C.POINTER(C.c_void_p)]
    lib.sl_config_set.argtypes = [C.c_void_p, C.c_char_p, C.c_char_p]
    lib.sl_config_errmsg.argtypes = [C.c_void_p]
    lib.sl_config_errmsg.restype = C.c_char_p
    lib.sl_config_destroy.argtypes = [C.c_void_p]
    lib.sl_dataset_open.argtypes = [C.POINTER(C.c_void_p), C.c_void_p]
    lib.sl_dataset_errmsg.argtypes = [C.c_void_p]
    lib.sl_dataset_errmsg.restype = C.c_char_p
    lib.sl_dataset_count.argtypes = [C.c_void_p]
    lib.sl_dataset_count.restype = C.c_uint64
    lib.sl_dataset_close.argtypes = [C.c_void_p]

    def one(cache):
        cfg = C.c_void_p()
        if lib.sl_config_create(C.byref(cfg)) != 0:
            sys.exit("remote.py: sl_config_create failed")
        for k, v in (("dataset.path", a.url), ("io.cache_dir", cache)):
            if lib.sl_config_set(cfg, k.encode(), v.encode()) != 0:
                sys.exit("remote.py: %s = %s: %s" % (k, v, lib.sl_config_errmsg(cfg).decode()))
        ds = C.c_void_p()
        t = time.perf_counter()
        st = lib.sl_dataset_open(C.byref(ds), cfg)
        dt = time.perf_counter() - t
        lib.sl_config_destroy(cfg)
        if st != 0:
            msg = lib.sl_dataset_errmsg(ds).decode() if ds else "status %d" % st
            sys.exit("remote.py: open %s: %s" % (a.url, msg))
        n = lib.sl_dataset_count(ds)
        lib.sl_dataset_close(ds)
        return dt, n

    cold, warm, n = [], [], 0
    for r in range(a.repeat):
        cache = os.path.join(a.cache, "open-%d" % r)
        shutil.rmtree(cache, ignore_errors=True)
        os.makedirs(cache)
        dt, n = one(cache)
        cold.append(dt)
        dt, _ = one(cache)
        warm.append(dt)
        shutil.rmtree(cache, ignore_errors=True)
    print("RESULT " + json.dumps({"case": "remote_open", "url": a.url, "samples": n,
                                  "cold_s": round(statistics.median(cold), 4),
                                  "warm_s": round(statistics.median(warm), 4),
                                  "cold_runs": [round(x, 4) for x in cold],
                                  "warm_runs": [round(x, 4) for x in warm]}), flush=True)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("--data", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--format", required=True, choices=sorted(WRITERS))
    p.add_argument("--shard-mb", type=int, default=16)
    o = sub.add_parser("open")
    o.add_argument("lib")
    o.add_argument("url")
    o.add_argument("--cache", required=True)
    o.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    return prepare(a) if a.cmd == "prepare" else open_times(a)


if __name__ == "__main__":
    sys.exit(main())
