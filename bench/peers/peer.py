#!/usr/bin/env python3
"""One peer data loader, one measurement: read every image of a folder of class
subfolders (torchvision ImageFolder layout) with random-resized-crop to RES,
random horizontal flip and uint8 output, in batches, with W workers.

Prints one line on stdout:
  RESULT {"peer": ..., "res": R, "workers": W, "images": N, "seconds": S,
          "images_per_s": X, "cpu_s": C, "images_per_cpu_s": Y, "version": ...,
          "first_batch_s": from the epoch's start to its first batch,
          "images_per_s_all": the whole epoch, first batches included}
(cpu_s: CPU time of the process tree, workers included, over the timed part)
for one epoch, timed from the end of its first --skip batches (worker start,
JIT compilation and the first prefetch are not counted) to its last batch.
Any failure exits non-zero with the reason on stderr.

Peers:
  torch_pil       torch DataLoader + torchvision transforms, PIL decode (ImageFolder)
  torch_tvio      torch DataLoader + torchvision.io.decode_jpeg (libjpeg-turbo) +
                  transforms.v2 on tensors
  dali_cpu        NVIDIA DALI pipeline on the CPU: fn.readers.file +
                  fn.decoders.image_random_crop(device="cpu") + fn.resize + fn.flip
  ffcv            FFCV Loader over a .beton written from the same folder
                  (--beton PATH; written once if missing)
  spdl            Meta's SPDL (Scalable and Performant Data Loading):
                  spdl.io.load_image per file with an FFmpeg filter graph
                  (crop with torchvision's RandomResizedCrop draw, scale
                  bilinear to RES x RES, hflip half the time, rgb24), decoded
                  through the system's FFmpeg libraries (Debian 12: FFmpeg 5,
                  libavfilter8, libavdevice59...), W decode threads (SPDL
                  releases the GIL), batches stacked into a uint8 array
  torch_det       detection: torch DataLoader over a COCO instances file
                  (--coco PATH, bench/det_data.py) + torchvision.io.decode_jpeg,
                  --detect rrc (RandomResizedCrop) or iou_crop (RandomIoUCrop,
                  then Resize to RES x RES) + RandomHorizontalFlip +
                  SanitizeBoundingBoxes, boxes moved with the image: with
                  transforms.v2 and tv_tensors (torchvision >= 0.16) their
                  classes; on an older torchvision (Debian's 0.14 has no box
                  transforms) the same get_params and functional crops with
                  the boxes moved in torch here (labelled "no v2" in version).
                  Batches: images stacked, targets a list, as detection
                  references collate.

Foreign-layout peers (bench/peers/foreign.py; --path is the file that
`foreign.py prepare` wrote): the reader each layout's users run, as a torch
Dataset with PIL decode and the torch_pil transforms:
  torch_folder2lmdb   folder2lmdb's ImageFolderLMDB (py-lmdb + pickle.loads)
  torch_msgpack_lmdb  the same over a tensorpack LMDB (msgpack.loads)
  torch_tfrecord      the `tfrecord` package's TFRecordDataset
  wds_webloader       webdataset's WebDataset pipeline in its WebLoader

Remote peers (issue 38; bench/peers/remote.py; --path is the URL of the
peer's own copy on the bench's servers, --cache its local cache folder):
  litdata_s3   LitData StreamingDataset + StreamingDataLoader over S3
  mosaic_s3    Mosaic Streaming StreamingDataset + DataLoader over S3
  wds_http     webdataset's WebDataset (cache_dir) in its WebLoader over HTTP

Same parameters for all: scale (0.08, 1), ratio (3/4, 4/3), flip 0.5, bilinear
(antialiased) resize, uint8.

--recipe (torch and DALI peers): rrc (the above), tv (torchvision's
reference recipe without its batch mixing: + TrivialAugmentWide +
RandomErasing(0.1)), timm (+ RandAugment(2, 9, 11 bins) +
RandomErasing(0.25)); mixing is left to the GPU, as in sluice's rows. DALI
runs its own auto_aug policies (nvidia.dali.auto_aug, CPU samples) and
RandomErasing with fn.erase (the box clamped into the image rather than
redrawn).
"""
import argparse
import json
import math
import os
import sys
import time

from cputime import tree_cpu_seconds

SCALE = (0.08, 1.0)
RATIO = (3.0 / 4.0, 4.0 / 3.0)


def recipe_transforms(T, recipe):
    """The recipe's ops after RandomResizedCrop + flip: (on the image,
    on the uint8 tensor)."""
    if recipe == "tv":
        return [T.TrivialAugmentWide()], [T.RandomErasing(p=0.1)]
    if recipe == "timm":
        return ([T.RandAugment(num_ops=2, magnitude=9, num_magnitude_bins=11)],
                [T.RandomErasing(p=0.25)])
    return [], []


def torch_loader(args, decoder):
    import torch
    import torchvision
    from torch.utils.data import DataLoader, Dataset

    torch.set_num_threads(1)
    folder = torchvision.datasets.ImageFolder(args.data)
    samples = folder.samples
    if decoder == "pil":
        from torchvision import transforms as T

        pre, post = recipe_transforms(T, args.recipe)
        tf = T.Compose([T.RandomResizedCrop(args.res, scale=SCALE, ratio=RATIO),
                        T.RandomHorizontalFlip()] + pre + [T.PILToTensor()] + post)

        class DS(Dataset):
            def __len__(self):
                return len(samples)

            def __getitem__(self, i):
                path, label = samples[i]
                return tf(folder.loader(path)), label
    else:
        from torchvision.io import ImageReadMode, decode_jpeg, read_file
        from torchvision.transforms import v2 as T

        pre, post = recipe_transforms(T, args.recipe)
        tf = T.Compose([T.RandomResizedCrop(args.res, scale=SCALE, ratio=RATIO, antialias=True),
                        T.RandomHorizontalFlip()] + pre + post)

        class DS(Dataset):
            def __len__(self):
                return len(samples)

            def __getitem__(self, i):
                path, label = samples[i]
                return tf(decode_jpeg(read_file(path), mode=ImageReadMode.RGB)), label

    def init(_):
        torch.set_num_threads(1)

    dl = DataLoader(DS(), batch_size=args.batch, shuffle=True, num_workers=args.workers,
                    persistent_workers=args.workers > 0, drop_last=False,
                    worker_init_fn=init, prefetch_factor=2 if args.workers > 0 else None)

    def epoch(mark):
        for i, (x, y) in enumerate(dl):
            assert x.dtype == torch.uint8 and x.shape[-1] == args.res
            mark(i, x.shape[0])

    return epoch, "torch %s torchvision %s" % (torch.__version__, torchvision.__version__)


def foreign_loader(args):
    """A foreign-layout peer: foreign.py's Dataset for the layout, the
    torch_pil transforms, a DataLoader (webdataset: its WebLoader) with the
    same workers, batch and prefetch as torch_pil's."""
    import torch
    import torchvision
    from torch.utils.data import DataLoader
    from torchvision import transforms as T

    import foreign

    torch.set_num_threads(1)
    layout = foreign.PEERS[args.peer]
    tf = T.Compose([T.RandomResizedCrop(args.res, scale=SCALE, ratio=RATIO),
                    T.RandomHorizontalFlip(), T.PILToTensor()])
    ds, shuffle = foreign.LAYOUTS[layout]["dataset"](args.path, tf)

    def init(_):
        torch.set_num_threads(1)

    kw = dict(batch_size=args.batch, num_workers=args.workers, persistent_workers=args.workers > 0,
              drop_last=False, worker_init_fn=init, prefetch_factor=2 if args.workers > 0 else None)
    if layout == "webdataset":
        import webdataset as wds

        dl = wds.WebLoader(ds, **kw)
    else:
        dl = DataLoader(ds, shuffle=shuffle, **kw)

    def epoch(mark):
        for i, (x, y) in enumerate(dl):
            assert x.dtype == torch.uint8 and x.shape[-1] == args.res
            mark(i, x.shape[0])

    from importlib.metadata import version
    client = ", ".join("%s %s" % (m, version(m)) for m in foreign.LAYOUTS[layout]["modules"])
    return epoch, "torch %s torchvision %s %s" % (torch.__version__, torchvision.__version__, client)


def remote_loader(args):
    """A remote peer (issue 38): remote.py's reader of the peer's own copy at
    --path (a URL) with its own cache folder --cache, the torch_pil
    transforms, the same workers, batch and prefetch as torch_pil's."""
    import torch
    import torchvision
    from torchvision import transforms as T

    import remote

    torch.set_num_threads(1)
    tf = T.Compose([T.RandomResizedCrop(args.res, scale=SCALE, ratio=RATIO),
                    T.RandomHorizontalFlip(), T.PILToTensor()])

    def init(_):
        torch.set_num_threads(1)

    kw = dict(batch_size=args.batch, num_workers=args.workers, persistent_workers=args.workers > 0,
              drop_last=False, worker_init_fn=init, prefetch_factor=2 if args.workers > 0 else None)
    dl, client = remote.loader(args, tf, kw)

    def epoch(mark):
        for i, (x, y) in enumerate(dl):
            assert x.dtype == torch.uint8 and x.shape[-1] == args.res
            mark(i, x.shape[0])

    return epoch, "torch %s torchvision %s %s" % (torch.__version__, torchvision.__version__, client)


def dali_random_erasing(images, p):
    """torchvision's RandomErasing(p, scale=(0.02, 0.33), ratio=(0.3, 3.3),
    value=0) with DALI's ops: area and log-uniform aspect drawn as there, the
    box clamped into the image instead of torchvision's ten tries to fit."""
    import nvidia.dali.fn as fn
    import nvidia.dali.math as dmath

    if fn.random.coin_flip(probability=p):
        area = fn.random.uniform(range=[0.02, 0.33])
        ratio = dmath.exp(fn.random.uniform(range=[math.log(0.3), math.log(3.3)]))
        h = dmath.min(dmath.sqrt(area * ratio), 1.0)
        w = dmath.min(dmath.sqrt(area / ratio), 1.0)
        y = fn.random.uniform(range=[0.0, 1.0]) * (1.0 - h)
        x = fn.random.uniform(range=[0.0, 1.0]) * (1.0 - w)
        images = fn.erase(images, anchor=fn.stack(y, x), shape=fn.stack(h, w),
                          axis_names="HW", normalized_anchor=True,
                          normalized_shape=True, fill_value=0)
    return images


def dali_loader(args):
    import nvidia.dali as dali
    import nvidia.dali.fn as fn
    import nvidia.dali.types as types

    # The recipes' ops need DALI's conditional execution (its automatic
    # augmentations are written with `if`), on the CPU since DALI 1.25.
    @dali.pipeline_def(batch_size=args.batch, num_threads=args.workers, device_id=None,
                       seed=1, prefetch_queue_depth=2,
                       enable_conditionals=args.recipe != "rrc")
    def pipe():
        jpegs, labels = fn.readers.file(file_root=args.data, random_shuffle=True, name="Reader")
        images = fn.decoders.image_random_crop(jpegs, device="cpu", output_type=types.RGB,
                                               random_area=list(SCALE),
                                               random_aspect_ratio=list(RATIO), num_attempts=10)
        images = fn.resize(images, resize_x=args.res, resize_y=args.res,
                           interp_type=types.INTERP_LINEAR, antialias=True)
        images = fn.flip(images, horizontal=fn.random.coin_flip(probability=0.5))
        if args.recipe == "tv":
            from nvidia.dali.auto_aug import trivial_augment
            images = trivial_augment.trivial_augment_wide(images, num_magnitude_bins=31)
            images = dali_random_erasing(images, 0.1)
        elif args.recipe == "timm":
            from nvidia.dali.auto_aug import rand_augment
            images = rand_augment.rand_augment(images, n=2, m=9, num_magnitude_bins=11)
            images = dali_random_erasing(images, 0.25)
        return images, labels

    p = pipe()
    p.build()
    size = p.epoch_size("Reader")
    batches = math.ceil(size / args.batch)

    def epoch(mark):
        for i in range(batches):
            images, labels = p.run()
            assert images.as_tensor().shape()[1] == args.res
            mark(i, len(images))

    return epoch, "nvidia-dali %s" % dali.__version__


def spdl_loader(args):
    """SPDL: one spdl.io.load_image per file on a pool of W threads, the
    crop, scale and flip as an FFmpeg filter graph. The crop's area and
    aspect ratio are drawn as torchvision's RandomResizedCrop draws them
    (log-uniform ratio) and clamped into the image in the filter's own
    expressions (the image size is known only there): one draw, where
    torchvision redraws up to ten times before its centre-crop fallback."""
    import random
    from concurrent.futures import ThreadPoolExecutor
    from importlib.metadata import version

    import numpy as np
    import spdl.io

    exts = (".jpg", ".jpeg", ".png", ".JPEG", ".JPG")
    classes = sorted(d for d in os.listdir(args.data) if os.path.isdir(os.path.join(args.data, d)))
    samples = [(os.path.join(args.data, c, f), k) for k, c in enumerate(classes)
               for f in sorted(os.listdir(os.path.join(args.data, c))) if f.endswith(exts)]
    rng = random.Random(1)
    log_ratio = (math.log(RATIO[0]), math.log(RATIO[1]))

    def one(job):
        path, area, ratio, u, v, flip = job
        fd = ("crop=w='min(iw,sqrt({a}*iw*ih*{r}))':h='min(ih,sqrt({a}*iw*ih/{r}))'"
              ":x='(iw-ow)*{u}':y='(ih-oh)*{v}',scale={res}:{res}:flags=bilinear,{flip}"
              "format=pix_fmts=rgb24").format(a=area, r=ratio, u=u, v=v, res=args.res,
                                              flip="hflip," if flip else "")
        return spdl.io.to_numpy(spdl.io.load_image(path, filter_desc=fd))

    pool = ThreadPoolExecutor(max_workers=args.workers)

    def epoch(mark):
        order = samples[:]
        rng.shuffle(order)
        jobs = [(p, rng.uniform(*SCALE), math.exp(rng.uniform(*log_ratio)), rng.random(), rng.random(),
                 rng.random() < 0.5) for p, _ in order]
        labels = [k for _, k in order]
        # Batches in order, the next batch's files decoding while this one is
        # stacked (pool.map keeps every thread busy across batch boundaries).
        images = pool.map(one, jobs)
        for i in range(0, len(jobs), args.batch):
            n = min(args.batch, len(jobs) - i)
            x = np.stack([next(images) for _ in range(n)])
            y = np.asarray(labels[i:i + n], dtype=np.int64)
            assert x.dtype == np.uint8 and x.shape[1:] == (args.res, args.res, 3) and len(y) == n
            mark(i // args.batch, n)

    return epoch, "spdl %s" % version("spdl")


def ffcv_loader(args):
    import numpy as np
    import torchvision
    from ffcv.fields import IntField, RGBImageField
    from ffcv.fields.decoders import IntDecoder, RandomResizedCropRGBImageDecoder
    from ffcv.loader import Loader, OrderOption
    from ffcv.transforms import RandomHorizontalFlip, ToTensor
    from ffcv.writer import DatasetWriter

    if not os.path.exists(args.beton):
        ds = torchvision.datasets.ImageFolder(args.data)
        tmp = args.beton + ".tmp"
        # Keep the images as JPEG at their size (<= 512 px side), quality 90.
        w = DatasetWriter(tmp, {"image": RGBImageField(write_mode="jpg", max_resolution=512,
                                                       jpeg_quality=90),
                                "label": IntField()}, num_workers=args.workers)
        w.from_indexed_dataset(ds)
        os.rename(tmp, args.beton)
    loader = Loader(args.beton, batch_size=args.batch, num_workers=args.workers,
                    order=OrderOption.RANDOM, os_cache=True, drop_last=False,
                    pipelines={"image": [RandomResizedCropRGBImageDecoder((args.res, args.res),
                                                                          scale=SCALE, ratio=RATIO),
                                         RandomHorizontalFlip(), ToTensor()],
                               "label": [IntDecoder(), ToTensor()]})

    def epoch(mark):
        for i, (x, y) in enumerate(loader):
            assert x.dtype == np.uint8 or str(x.dtype) == "torch.uint8"
            assert x.shape[1] == args.res or x.shape[-1] == args.res
            mark(i, x.shape[0])

    from importlib.metadata import version
    return epoch, "ffcv %s" % version("ffcv")  # ffcv.__version__ is stale in 1.0.x


def _det_boxes_fallback(T, F, torch, res, detect):
    """Box-aware RandomResizedCrop / RandomIoUCrop + Resize + flip +
    SanitizeBoundingBoxes(min_size=1) for torchvision without v2 boxes:
    the crop from torchvision's own get_params (RandomIoUCrop's, written as
    v2's _get_params), the pixels through F.resized_crop, the boxes moved
    and clipped here."""
    import random

    def iou_params(w, h, boxes):
        opts = [0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0]
        while True:
            mj = opts[int(torch.randint(len(opts), ()))]
            if mj >= 1.0:
                return None
            for _ in range(40):
                r = 0.3 + 0.7 * torch.rand(2)
                nw, nh = int(w * r[0]), int(h * r[1])
                if nh == 0 or not (0.5 <= nw / nh <= 2.0):
                    continue
                r = torch.rand(2)
                left, top = int((w - nw) * r[0]), int((h - nh) * r[1])
                if nw == 0 or nh == 0:
                    continue
                cx = 0.5 * (boxes[:, 0] + boxes[:, 2])
                cy = 0.5 * (boxes[:, 1] + boxes[:, 3])
                inside = (left < cx) & (cx < left + nw) & (top < cy) & (cy < top + nh)
                if not inside.any():
                    continue
                b = boxes[inside]
                iw = (torch.minimum(b[:, 2], torch.tensor(left + nw)) -
                      torch.maximum(b[:, 0], torch.tensor(left))).clamp(min=0)
                ih = (torch.minimum(b[:, 3], torch.tensor(top + nh)) -
                      torch.maximum(b[:, 1], torch.tensor(top))).clamp(min=0)
                inter = iw * ih
                union = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1]) + nw * nh - inter
                if (inter / union).max() < mj:
                    continue
                return top, left, nh, nw, inside

    def tf(img, boxes, labels):
        h, w = img.shape[-2:]
        keep = torch.ones(len(boxes), dtype=torch.bool)
        if detect == "rrc":
            top, left, ch, cw = T.RandomResizedCrop.get_params(img, SCALE, RATIO)
        else:
            p = iou_params(w, h, boxes)
            top, left, ch, cw = (0, 0, h, w) if p is None else p[:4]
            if p is not None:
                keep = p[4]
        img = F.resized_crop(img, top, left, ch, cw, [res, res], antialias=True)
        b = boxes.clone()
        b[:, 0::2] = ((b[:, 0::2] - left) * (res / cw)).clamp(0, res)
        b[:, 1::2] = ((b[:, 1::2] - top) * (res / ch)).clamp(0, res)
        if random.random() < 0.5:
            img = F.hflip(img)
            b[:, [0, 2]] = res - b[:, [2, 0]]
        keep &= ((b[:, 2] - b[:, 0]) >= 1) & ((b[:, 3] - b[:, 1]) >= 1)
        return img, b[keep], labels[keep]
    return tf


def torch_det_loader(args):
    import torch
    import torchvision
    from torch.utils.data import DataLoader, Dataset
    from torchvision.io import ImageReadMode, decode_jpeg, read_file

    torch.set_num_threads(1)
    with open(args.coco) as f:
        coco = json.load(f)
    cats = {c["id"]: k for k, c in enumerate(sorted(coco["categories"], key=lambda c: c["id"]))}
    per_image = {im["id"]: [] for im in coco["images"]}
    for a in coco["annotations"]:
        x, y, w, h = a["bbox"]
        per_image[a["image_id"]].append((x, y, x + w, y + h, cats[a["category_id"]]))
    items = [(os.path.join(args.data, im["file_name"]), per_image[im["id"]])
             for im in coco["images"]]
    try:
        from torchvision import tv_tensors
        from torchvision.transforms import v2 as T2
        crop = (T2.RandomResizedCrop(args.res, scale=SCALE, ratio=RATIO, antialias=True)
                if args.detect == "rrc" else
                T2.Compose([T2.RandomIoUCrop(), T2.Resize((args.res, args.res), antialias=True)]))
        v2 = T2.Compose([crop, T2.RandomHorizontalFlip(), T2.SanitizeBoundingBoxes()])

        def tf(img, boxes, labels):
            bb = tv_tensors.BoundingBoxes(boxes, format="XYXY", canvas_size=tuple(img.shape[-2:]))
            out, tgt = v2(tv_tensors.Image(img), {"boxes": bb, "labels": labels})
            return out.as_subclass(torch.Tensor), tgt["boxes"].as_subclass(torch.Tensor), tgt["labels"]
        note = ""
    except ImportError:
        from torchvision import transforms as T
        import torchvision.transforms.functional as F
        tf = _det_boxes_fallback(T, F, torch, args.res, args.detect)
        note = " (no v2: functional crops, boxes moved in torch)"

    class DS(Dataset):
        def __len__(self):
            return len(items)

        def __getitem__(self, i):
            path, anns = items[i]
            img = decode_jpeg(read_file(path), mode=ImageReadMode.RGB)
            boxes = torch.tensor([a[:4] for a in anns], dtype=torch.float32).reshape(-1, 4)
            labels = torch.tensor([a[4] for a in anns], dtype=torch.int64)
            return tf(img, boxes, labels)

    def collate(batch):
        return (torch.stack([b[0] for b in batch]),
                [{"boxes": b[1], "labels": b[2]} for b in batch])

    def init(_):
        torch.set_num_threads(1)

    dl = DataLoader(DS(), batch_size=args.batch, shuffle=True, num_workers=args.workers,
                    persistent_workers=args.workers > 0, drop_last=False, collate_fn=collate,
                    worker_init_fn=init, prefetch_factor=2 if args.workers > 0 else None)

    def epoch(mark):
        for i, (x, targets) in enumerate(dl):
            assert x.dtype == torch.uint8 and x.shape[-1] == args.res
            mark(i, x.shape[0])

    return epoch, "torch %s torchvision %s%s" % (torch.__version__, torchvision.__version__, note)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("peer", choices=["torch_pil", "torch_tvio", "dali_cpu", "ffcv", "spdl", "torch_det", "torch_folder2lmdb",
                                     "torch_msgpack_lmdb", "torch_tfrecord", "wds_webloader",
                                     "litdata_s3", "mosaic_s3", "wds_http"])
    ap.add_argument("--data", help="folder of class subfolders of JPEGs (all but the foreign-layout peers)")
    ap.add_argument("--res", type=int, default=224)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--skip", type=int, default=3, help="untimed batches at the epoch's start")
    ap.add_argument("--beton", help="ffcv: dataset file (written if missing)")
    ap.add_argument("--path", help="foreign-layout peers: the file foreign.py prepare wrote; "
                    "remote peers: the URL of their copy")
    ap.add_argument("--cache", help="remote peers: their local cache folder")
    ap.add_argument("--recipe", default="rrc", choices=["rrc", "tv", "timm"],
                    help="torch peers: the transforms after the crop (see above)")
    ap.add_argument("--coco", help="torch_det: COCO instances JSON (file_name relative to --data)")
    ap.add_argument("--detect", default="rrc", choices=["rrc", "iou_crop"],
                    help="torch_det: the box-aware crop before the flip")
    ap.add_argument("--prepare", action="store_true",
                    help="only build what the peer needs (ffcv: the .beton), then exit")
    args = ap.parse_args()
    if args.workers < 1:
        ap.error("--workers must be >= 1")
    if args.recipe != "rrc" and args.peer in ("ffcv", "spdl"):
        ap.error("--recipe %s: %s has none of these ops" % (args.recipe, args.peer))
    if args.recipe != "rrc" and args.path:
        ap.error("--recipe %s: the foreign-layout peers run rrc only" % args.recipe)
    if args.peer in ("litdata_s3", "mosaic_s3", "wds_http"):
        if not args.path or not args.cache:
            ap.error("%s needs --path URL and --cache DIR" % args.peer)
        epoch, version = remote_loader(args)
    elif args.peer in ("torch_folder2lmdb", "torch_msgpack_lmdb", "torch_tfrecord", "wds_webloader"):
        if not args.path:
            ap.error("%s needs --path" % args.peer)
        epoch, version = foreign_loader(args)
    elif not args.data:
        ap.error("%s needs --data" % args.peer)
    elif args.peer == "torch_pil":
        epoch, version = torch_loader(args, "pil")
    elif args.peer == "torch_tvio":
        epoch, version = torch_loader(args, "tvio")
    elif args.peer == "torch_det":
        if not args.coco:
            ap.error("torch_det needs --coco")
        epoch, version = torch_det_loader(args)
    elif args.peer == "dali_cpu":
        epoch, version = dali_loader(args)
    elif args.peer == "spdl":
        epoch, version = spdl_loader(args)
    else:
        if not args.beton:
            ap.error("ffcv needs --beton")
        epoch, version = ffcv_loader(args)
    if args.prepare:
        return 0
    state = {"t0": None, "n": 0, "batches": 0, "n_all": 0, "first": None}

    def mark(i, n):
        state["batches"] = i + 1
        state["n_all"] += n
        if state["first"] is None:
            state["first"] = time.perf_counter()
        if i + 1 == args.skip:
            state["t0"] = time.perf_counter()
            state["c0"] = tree_cpu_seconds()
        elif i + 1 > args.skip:
            state["n"] += n

    ts = time.perf_counter()  # the whole epoch (its iterator made, workers started): images_per_s_all
    epoch(mark)
    t1 = time.perf_counter()
    cpu = tree_cpu_seconds() - state.get("c0", 0)
    if state["t0"] is None or state["n"] == 0:
        sys.exit("peer.py: only %d batches in the epoch; need more than --skip %d"
                 % (state["batches"], args.skip))
    dt = t1 - state["t0"]
    n = state["n"]
    extra = {"crop": args.detect} if args.peer == "torch_det" else {}
    print("RESULT " + json.dumps({**extra, "peer": args.peer, "recipe": args.recipe, "res": args.res,
                                  "workers": args.workers,
                                  "batch": args.batch, "images": n, "seconds": round(dt, 4),
                                  "images_per_s": round(n / dt, 2), "cpu_s": round(cpu, 3),
                                  "images_per_cpu_s": round(n / cpu, 2) if cpu > 0 else None,
                                  "first_batch_s": round(state["first"] - ts, 4), "images_all": state["n_all"],
                                  "images_per_s_all": round(state["n_all"] / (t1 - ts), 2),
                                  "version": version}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
