"""ImageNet-like JPEGs cut from real photographs, for bench/run.sh --data.

Synthetic images (sluice synth) compress and decode unlike photographs; a
few real photos cut into many random windows come closer to ImageNet's
statistics. Each image: a random 60-100% window of one of the photos
(random position), resized to 340-440 x 320-400 (bicubic), JPEG q75-95,
4:2:0, in one of --classes class folders. Deterministic for a --seed.

  /usr/bin/python3 bench/photo_like.py OUT --count 1500 PHOTO.jpg...
  bench/run.sh --data OUT ...

PIL (python3-pil) only.
"""
import argparse
import os
import random
import sys

from PIL import Image


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("photos", nargs="+")
    ap.add_argument("--count", type=int, default=1500)
    ap.add_argument("--classes", type=int, default=10)
    ap.add_argument("--seed", type=int, default=24)
    a = ap.parse_args(argv)
    rng = random.Random(a.seed)
    photos = [Image.open(p).convert("RGB") for p in a.photos]
    for c in range(a.classes):
        os.makedirs(os.path.join(a.out, "c%02d" % c), exist_ok=True)
    total = 0
    for i in range(a.count):
        im = photos[i % len(photos)]
        W, H = im.size
        s = rng.uniform(0.6, 1.0)
        w, h = max(1, int(W * s)), max(1, int(H * s))
        x, y = rng.randint(0, W - w), rng.randint(0, H - h)
        ow, oh = rng.randint(340, 440), rng.randint(320, 400)
        out = im.crop((x, y, x + w, y + h)).resize((ow, oh), Image.BICUBIC)
        path = os.path.join(a.out, "c%02d" % (i % a.classes), "%05d.jpg" % i)
        out.save(path, quality=rng.randint(75, 95), subsampling=2)
        total += os.path.getsize(path)
    print("%d images, mean %.1f KB" % (a.count, total / a.count / 1000))


if __name__ == "__main__":
    main(sys.argv[1:])
