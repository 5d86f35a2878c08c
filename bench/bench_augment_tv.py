#!/usr/bin/env python3
"""The torchvision side of bench_augment: each recipe op of torchvision's
functional API on one res x res uint8 tensor (and TrivialAugmentWide /
RandAugment / AutoAugment on a PIL image, as a DataLoader worker runs them),
one thread, microseconds per image (median of rounds), beside sluice's
bench_augment figures for the same op when its path is given:

    bench_augment_tv.py [--bench-augment build/bench/bench_augment] [--res 224]

Prints a markdown table: op, torchvision us, sluice us, torchvision / sluice.
"""
import argparse
import json
import statistics
import subprocess
import time

import numpy as np
import torch
import torchvision.transforms as T
import torchvision.transforms.functional as F
from PIL import Image


def timed(fn, x, images, rounds):
    per = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(images):
            fn(x)
        per.append((time.perf_counter() - t0) / images * 1e6)
    return statistics.median(per)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench-augment", help="sluice's bench_augment binary")
    ap.add_argument("--res", type=int, default=224)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--images", type=int, default=50)
    args = ap.parse_args()
    torch.set_num_threads(1)
    rng = np.random.default_rng(1)
    r = args.res
    grad = (np.arange(r)[None, :, None] * 200 // r + np.arange(3)[None, None, :] * 20)
    img = (grad + rng.integers(0, 30, (r, r, 3))).astype(np.uint8)
    t = torch.from_numpy(img.transpose(2, 0, 1).copy())
    pil = Image.fromarray(img)
    ta, ra = T.TrivialAugmentWide(), T.RandAugment(2, 9, num_magnitude_bins=11)
    aa = T.AutoAugment(T.AutoAugmentPolicy.IMAGENET)
    cj = T.ColorJitter(0.4, 0.4, 0.4, 0.1)
    ops = {
        "adjust_brightness": lambda x: F.adjust_brightness(x, 1.3),
        "adjust_contrast": lambda x: F.adjust_contrast(x, 1.3),
        "adjust_saturation": lambda x: F.adjust_saturation(x, 1.3),
        "adjust_hue": lambda x: F.adjust_hue(x, 0.1),
        "adjust_sharpness": lambda x: F.adjust_sharpness(x, 1.5),
        "posterize": lambda x: F.posterize(x, 4),
        "solarize": lambda x: F.solarize(x, 128),
        "autocontrast": F.autocontrast,
        "equalize": F.equalize,
        "rgb_to_grayscale": lambda x: F.rgb_to_grayscale(x, 3),
        "rotate_nearest": lambda x: F.rotate(x, 20.0),
        "rotate_bilinear": lambda x: F.rotate(x, 20.0, T.InterpolationMode.BILINEAR),
        "gaussian_blur_23": lambda x: F.gaussian_blur(x, [23, 23], [1.5, 1.5]),
        "color_jitter_0.4_0.4_0.4_0.1": cj,
    }
    tv = {k: timed(f, t, args.images, args.rounds) for k, f in ops.items()}
    for k, f in (("trivial_augment_wide", ta), ("randaugment_n2_m9_mstd0.5", ra),
                 ("autoaugment_imagenet", aa)):
        tv[k] = timed(f, pil, args.images, args.rounds)  # PIL, as a worker runs it
    ours = {}
    if args.bench_augment:
        out = subprocess.run([args.bench_augment, "--res", str(r)], capture_output=True, text=True,
                             check=True).stdout
        for line in out.splitlines():
            if line.startswith("RESULT "):
                rec = json.loads(line[7:])
                ours[rec["op"]] = rec["us_per_image"]
    print("| op (%d px, one thread) | torchvision µs | sluice µs | torchvision ÷ sluice |" % r)
    print("|---|---|---|---|")
    for k, v in tv.items():
        s = ours.get(k)
        print("| %s | %.0f | %s | %s |" % (k, v, "%.0f" % s if s else "—", "%.1f×" % (v / s) if s else "—"))


if __name__ == "__main__":
    main()
