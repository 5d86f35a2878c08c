#!/usr/bin/env python3
"""Fallback ImageNet-like image generator (PIL + numpy), used by run.sh only when
`sluice synth` is not available.

Writes DIR/<class>/<n>.jpg: about 500x375 (a few portrait or other sizes
mixed in), quality 90, photograph-like content (smooth colour fields, edges,
multi-octave texture and grain) so that files weigh about 100 KB like
ImageNet's. Deterministic for a given --seed.

    synth.py OUT_DIR --count 3000 --classes 10 --seed 1
"""
import argparse
import os
import sys

import numpy as np
from PIL import Image, ImageDraw, ImageFilter


def texture(rng, h, w):
    """Multi-octave value noise in [-1, 1], shape (h, w)."""
    out = np.zeros((h, w), np.float32)
    amp, total = 1.0, 0.0
    for cells in (3, 8, 24, 80):
        small = rng.standard_normal((cells * h // w + 2, cells + 2)).astype(np.float32)
        img = Image.fromarray(small, mode="F").resize((w, h), Image.BICUBIC)
        out += amp * np.asarray(img)
        total += amp
        amp *= 0.85
    return out / total


def image(rng, w, h):
    base = rng.uniform(40, 215, 3)
    tint = rng.uniform(-60, 60, (3,))
    a = np.empty((h, w, 3), np.float32)
    shade = texture(rng, h, w)
    for c in range(3):
        a[..., c] = base[c] + tint[c] * shade + 50 * texture(rng, h, w)
    pic = Image.fromarray(np.clip(a, 0, 255).astype(np.uint8))
    draw = ImageDraw.Draw(pic)
    for _ in range(rng.integers(4, 14)):
        x0, y0 = rng.integers(0, w), rng.integers(0, h)
        x1, y1 = x0 + rng.integers(10, w // 2), y0 + rng.integers(10, h // 2)
        colour = tuple(int(v) for v in rng.integers(0, 256, 3))
        if rng.random() < 0.5:
            draw.ellipse((x0, y0, x1, y1), fill=colour)
        else:
            draw.polygon([(x0, y0), (x1, y0 + rng.integers(-40, 40)), (x0 + rng.integers(-40, 40), y1)],
                         fill=colour)
    pic = pic.filter(ImageFilter.GaussianBlur(rng.uniform(0.4, 1.2)))
    a = np.asarray(pic).astype(np.float32)
    a += rng.normal(0, rng.uniform(18, 24), a.shape)  # sensor grain: brings q90 files to ~100 KB
    return Image.fromarray(np.clip(a, 0, 255).astype(np.uint8))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--count", type=int, default=3000)
    ap.add_argument("--classes", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--quality", type=int, default=90)
    args = ap.parse_args()
    sizes = [(500, 375)] * 8 + [(375, 500), (500, 333)]
    total = 0
    for i in range(args.count):
        rng = np.random.default_rng([args.seed, i])
        w, h = sizes[i % len(sizes)]
        d = os.path.join(args.out, "class%03d" % (i % args.classes))
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, "%06d.jpg" % i)
        image(rng, w, h).save(path, quality=args.quality)
        total += os.path.getsize(path)
    print("synth.py: %d images, %.1f KB mean, in %s" % (args.count, total / 1024 / max(1, args.count), args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
