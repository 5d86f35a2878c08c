#!/usr/bin/env python3
"""The foreign-layout rows (issue 27): the same images in the layouts people
already have, written by those layouts' own clients, and the readers those
people run today, as torch Datasets for bench/peers/peer.py (which times them
exactly like its other peers: same transforms, workers, batch and skip).

    foreign.py prepare --data IMAGES --cache DIR --layouts pickle,msgpack,...
                       [--sluice SLUICE] [--manifest FILE] [--prep-log FILE]

writes each layout it can (a layout whose client package this interpreter
lacks is left for another interpreter: run.sh tries bench/venv's, then
/usr/bin/python3), checks that `sluice info` opens it (when --sluice is
given; a reader not in this sluice yet is a 'note' in the prep log and the
row is skipped), and appends `LAYOUT PATH` to the manifest the harness reads.

One entry of LAYOUTS per layout: how to write it (`write`), the reader its
users run (`dataset`: a function returning a torch Dataset or
IterableDataset and whether the DataLoader may shuffle it) and the client
modules both need. To add a layout: write those two functions and add the
entry here, and the row in bench/sluice_cases.py's FOREIGN.
"""
import argparse
import io
import os
import pickle
import sys

sys.dont_write_bytecode = True


def image_folder(data):
    """(path, label) in torchvision ImageFolder's order: classes sorted by
    name, files sorted in each (no torch needed to write)."""
    classes = sorted(d for d in os.listdir(data) if os.path.isdir(os.path.join(data, d)))
    out = []
    for label, c in enumerate(classes):
        for root, _, files in sorted(os.walk(os.path.join(data, c))):
            for f in sorted(files):
                if f.lower().endswith((".jpg", ".jpeg", ".png", ".webp")):
                    out.append((os.path.join(root, f), label))
    return out


def _read(path):
    with open(path, "rb") as f:
        return f.read()


# ---------------------------------------------------------------- writers

def write_pickle_lmdb(samples, out):
    """Efficient-PyTorch's folder2lmdb.py: a single-file environment (the
    path is not a directory), keys str(idx) in ASCII, values
    pickle.dumps((raw_bytes, label)) at pickle's default protocol, then
    __keys__ and __len__ (pickled)."""
    import lmdb

    db = lmdb.open(out, subdir=os.path.isdir(out), map_size=1 << 40, readonly=False,
                   meminit=False, map_async=True)
    txn = db.begin(write=True)
    for idx, (path, label) in enumerate(samples):
        txn.put(u"{}".format(idx).encode("ascii"), pickle.dumps((_read(path), label)))
        if idx % 5000 == 0:
            txn.commit()
            txn = db.begin(write=True)
    txn.commit()
    keys = [u"{}".format(k).encode("ascii") for k in range(len(samples))]
    with db.begin(write=True) as txn:
        txn.put(b"__keys__", pickle.dumps(keys))
        txn.put(b"__len__", pickle.dumps(len(keys)))
    db.sync()
    db.close()
    return out


def write_msgpack_lmdb(samples, out):
    """tensorpack's LMDBSerializer.save: keys '{:08}'.format(idx), values
    msgpack.dumps([raw_bytes, label], use_bin_type=True) (the datapoint of
    its dataflow over raw files), then __keys__ (msgpack)."""
    import lmdb
    import msgpack

    db = lmdb.open(out, subdir=os.path.isdir(out), map_size=1 << 40, readonly=False,
                   meminit=False, map_async=True)
    txn = db.begin(write=True)
    for idx, (path, label) in enumerate(samples):
        txn.put(u"{:08}".format(idx).encode("ascii"),
                msgpack.dumps([_read(path), label], use_bin_type=True))
        if (idx + 1) % 5000 == 0:
            txn.commit()
            txn = db.begin(write=True)
    txn.commit()
    keys = [u"{:08}".format(k).encode("ascii") for k in range(len(samples))]
    with db.begin(write=True) as txn:
        txn.put(b"__keys__", msgpack.dumps(keys, use_bin_type=True))
    db.sync()
    db.close()
    return out


def write_tfrecord(samples, out):
    """One TFRecord file of tf.train.Example with TF's ImageNet converter's
    feature names (image/encoded, image/class/label), written by the
    `tfrecord` package's TFRecordWriter, and its index (tfrecord2idx) that
    the package's reader needs to split the file across workers."""
    from tfrecord.tools.tfrecord2idx import create_index
    from tfrecord.writer import TFRecordWriter

    w = TFRecordWriter(out)
    for path, label in samples:
        w.write({"image/encoded": (_read(path), "byte"), "image/class/label": (label, "int")})
    w.close()
    create_index(out, out + ".idx")
    return out


def write_webdataset(samples, out):
    """WebDataset shards by webdataset's ShardWriter (`__key__`, `jpg`,
    `cls`), in shuffled order as its users write them, 8 shards or more so
    that workers split them; OUT is a directory, the returned path a
    `.shards` list file (one shard a line), which sluice and the peer read."""
    import random

    import webdataset as wds

    os.makedirs(out, exist_ok=True)
    order = list(samples)
    random.Random(1).shuffle(order)
    per = max(1, -(-len(order) // 8))
    with wds.ShardWriter(os.path.join(out, "shard-%06d.tar"), maxcount=per, verbose=0) as sink:
        for i, (path, label) in enumerate(order):
            ext = "png" if path.lower().endswith(".png") else "jpg"
            sink.write({"__key__": "s%08d" % i, ext: _read(path), "cls": str(label).encode()})
    shards = sorted(f for f in os.listdir(out) if f.endswith(".tar"))
    listing = os.path.join(out, "train.shards")
    with open(listing, "w") as f:
        f.write("".join(s + "\n" for s in shards))
    return listing


# ---------------------------------------------------------------- readers

def _pil(buf):
    from PIL import Image

    return Image.open(io.BytesIO(buf)).convert("RGB")


def folder2lmdb_dataset(path, tf):
    """Efficient-PyTorch's ImageFolderLMDB: py-lmdb read-only without the
    lock, __keys__/__len__ unpickled at construction, one read transaction
    and pickle.loads per sample, PIL decode, torchvision transforms. The
    environment is opened lazily in each worker (the usual fix of its
    fork-after-open bug) rather than in __init__."""
    import lmdb
    from torch.utils.data import Dataset

    def open_env():
        return lmdb.open(path, subdir=os.path.isdir(path), readonly=True, lock=False,
                         readahead=False, meminit=False)

    class ImageFolderLMDB(Dataset):
        def __init__(self):
            env = open_env()
            with env.begin(write=False) as txn:
                self.length = pickle.loads(txn.get(b"__len__"))
                self.keys = pickle.loads(txn.get(b"__keys__"))
            env.close()
            self.env = None

        def __len__(self):
            return self.length

        def __getitem__(self, index):
            if self.env is None:
                self.env = open_env()
            with self.env.begin(write=False) as txn:
                byteflow = txn.get(self.keys[index])
            imgbuf, target = pickle.loads(byteflow)
            return tf(_pil(imgbuf)), target

    return ImageFolderLMDB(), True


def msgpack_lmdb_dataset(path, tf):
    """A tensorpack LMDB read from PyTorch: the same Dataset as folder2lmdb's
    with msgpack.loads (raw=False, as tensorpack's loads) in place of
    pickle.loads. (tensorpack's own dataflow, LMDBSerializer.load +
    MultiProcessRunnerZMQ, is not installed here.)"""
    import lmdb
    import msgpack
    from torch.utils.data import Dataset

    def open_env():
        return lmdb.open(path, subdir=os.path.isdir(path), readonly=True, lock=False,
                         readahead=False, meminit=False)

    class MsgpackLMDB(Dataset):
        def __init__(self):
            env = open_env()
            with env.begin(write=False) as txn:
                self.keys = msgpack.loads(txn.get(b"__keys__"), raw=False)
            env.close()
            self.env = None

        def __len__(self):
            return len(self.keys)

        def __getitem__(self, index):
            if self.env is None:
                self.env = open_env()
            with self.env.begin(write=False) as txn:
                dp = msgpack.loads(txn.get(self.keys[index]), raw=False)
            return tf(_pil(dp[0])), dp[1]

    return MsgpackLMDB(), True


def tfrecord_dataset(path, tf):
    """The `tfrecord` package's TFRecordDataset (an IterableDataset; with the
    index each worker reads its part of the file), a 256-record shuffle
    queue, PIL decode and the transforms in its transform hook."""
    from tfrecord.torch.dataset import TFRecordDataset

    def decode(f):
        return tf(_pil(bytes(f["image/encoded"]))), int(f["image/class/label"][0])

    return TFRecordDataset(path, path + ".idx", {"image/encoded": "byte", "image/class/label": "int"},
                           shuffle_queue_size=256, transform=decode), False


def webdataset_dataset(path, tf):
    """webdataset's pipeline as its README trains ImageNet: shuffled shards,
    a 1000-sample shuffle buffer, decode("pil"), to_tuple, the transforms;
    run by peer.py in a WebLoader (webdataset's DataLoader)."""
    import webdataset as wds

    with open(path) as f:
        urls = [os.path.join(os.path.dirname(path), s.strip()) for s in f if s.strip()]
    ds = (wds.WebDataset(urls, shardshuffle=len(urls), empty_check=False).shuffle(1000)
          .decode("pil").to_tuple("jpg;jpeg;png", "cls").map_tuple(tf, int))
    return ds, False


# One entry a layout: its writer, the reader its users run (the peer, by its
# name in peer.py), the client modules both import, its name in the cache.
LAYOUTS = {
    "pickle": {"write": write_pickle_lmdb, "dataset": folder2lmdb_dataset, "peer": "torch_folder2lmdb",
               "modules": ["lmdb"], "file": "data.pickle.lmdb"},
    "msgpack": {"write": write_msgpack_lmdb, "dataset": msgpack_lmdb_dataset, "peer": "torch_msgpack_lmdb",
                "modules": ["lmdb", "msgpack"], "file": "data.msgpack.lmdb"},
    "tfrecord": {"write": write_tfrecord, "dataset": tfrecord_dataset, "peer": "torch_tfrecord",
                 "modules": ["tfrecord"], "file": "data.tfrecord"},
    "webdataset": {"write": write_webdataset, "dataset": webdataset_dataset, "peer": "wds_webloader",
                   "modules": ["webdataset"], "file": "data.wds"},
}
PEERS = {v["peer"]: k for k, v in LAYOUTS.items()}


def missing_modules(layout):
    import importlib

    out = []
    for m in LAYOUTS[layout]["modules"]:
        try:
            importlib.import_module(m)
        except ImportError:
            out.append(m)
    return out


def prepare(args):
    import shutil
    import subprocess

    samples = image_folder(args.data)
    if not samples:
        print("foreign.py: no images in class subfolders of %s" % args.data, file=sys.stderr)
        return 1
    rc = 0
    listed = set()
    if args.manifest and os.path.exists(args.manifest):
        with open(args.manifest) as f:
            # `LAYOUT PATH` (ready) or `skip LAYOUT` (noted once already)
            listed = {w[-1] if w[0] == "skip" else w[0] for w in (line.split() for line in f) if w}
    for layout in [x for x in args.layouts.split(",") if x]:
        if layout not in LAYOUTS:
            print("foreign.py: unknown layout %s (have %s)" % (layout, ", ".join(LAYOUTS)), file=sys.stderr)
            rc = 2
            continue
        if layout in listed:
            continue
        write, name = LAYOUTS[layout]["write"], LAYOUTS[layout]["file"]
        out = os.path.join(args.cache, name)
        done = os.path.join(args.cache, name + ".done")
        if os.path.exists(done):
            with open(done) as f:
                path = f.read().strip()
        else:
            miss = missing_modules(layout)
            if miss and args.last:
                _log(args, "note", "%s: no interpreter tried has %s (bench/setup_peers.sh installs it): "
                     "row skipped" % (layout, ", ".join(miss)))
                continue
            if miss:
                print("foreign.py: %s: %s lacks %s; left for another interpreter"
                      % (layout, sys.executable, ", ".join(miss)), file=sys.stderr)
                continue
            for p in (out, out + "-lock"):
                if os.path.isdir(p):
                    shutil.rmtree(p)
                elif os.path.exists(p):
                    os.remove(p)
            print("foreign.py: writing %s (%d images) with %s" % (out, len(samples), sys.executable),
                  file=sys.stderr)
            path = write(samples, out)
            with open(done, "w") as f:
                f.write(path + "\n")
        if args.sluice:
            r = subprocess.run([args.sluice, "info", path], capture_output=True, text=True)
            if r.returncode != 0:
                why = (r.stderr or r.stdout).strip().splitlines()
                _log(args, "note", "%s: this sluice does not read %s (%s): row skipped"
                     % (layout, path, why[-1] if why else "rc %d" % r.returncode))
                if args.manifest:
                    with open(args.manifest, "a") as f:
                        f.write("skip %s\n" % layout)
                continue
        if args.manifest:
            with open(args.manifest, "a") as f:
                f.write("%s %s\n" % (layout, path))
    return rc


def _log(args, kind, msg):
    print("foreign.py: %s" % msg, file=sys.stderr)
    if args.prep_log:
        with open(args.prep_log, "a") as f:
            f.write("%s foreign %s\n" % (kind, msg))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("--data", required=True)
    p.add_argument("--cache", required=True)
    p.add_argument("--layouts", default=",".join(LAYOUTS))
    p.add_argument("--sluice")
    p.add_argument("--manifest")
    p.add_argument("--prep-log")
    p.add_argument("--last", action="store_true",
                   help="the last interpreter tried: a layout it cannot write is noted as skipped")
    args = ap.parse_args()
    return prepare(args)


if __name__ == "__main__":
    sys.exit(main())
