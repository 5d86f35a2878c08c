"""A small CNN trained from a sluice dataset with torch, on CPU or GPU.

    python examples/train_torch.py DATASET [--epochs 4] [--ckpt ck.pt] [--resume]
                                   [--recipe plain|torchvision|timm]

The progressive schedule grows the resolution from 32 to 64 px over the
epochs; the checkpoint holds the model, the optimiser and the loader's
state_dict, so --resume continues with exactly the batches an
uninterrupted run would have given. With --ckpt the checkpoint is written
after each epoch and on Ctrl-C (then at the last completed step); --resume
refuses a checkpoint file that does not exist. --recipe torchvision trains with
torchvision's reference recipe (TrivialAugmentWide, RandomErasing 0.1,
Mixup 0.2 / CutMix 1.0, label smoothing 0.1), timm with RandAugment
rand-m9-mstd0.5 and DeiT's mixing: the loader then gives soft targets.
"""

import argparse
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

import sluice


def make_model(classes):
    return nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, classes))


# The recipes as loader keys (docs/RECIPES.md).
RECIPES = {
    "plain": {},
    "torchvision": {"augment.auto": "trivial", "augment.erasing": 0.1,
                    "augment.mixup": 0.2, "augment.cutmix": 1.0,
                    "augment.label_smoothing": 0.1},
    "timm": {"augment.auto": "randaugment", "augment.auto_ops": 2,
             "augment.auto_magnitude": 9, "augment.auto_bins": 11,
             "augment.auto_magnitude_std": 0.5, "augment.auto_fill": "124,116,104",
             "augment.erasing": 0.25,
             "augment.mixup": 0.8, "augment.cutmix": 1.0,
             "augment.label_smoothing": 0.1},
}


def loader_options(dataset, epochs, batch_size=16, recipe="plain"):
    return dict(RECIPES[recipe], **{
        "dataset.path": dataset,
        "loader.batch_size": batch_size,
        "loader.workers": 2,
        "resolution.schedule": "linear",
        "resolution.min": 32,
        "resolution.max": 64,
        "resolution.start_epoch": 0,
        "resolution.end_epoch": max(1, epochs - 1),
        "resolution.multiple": 16,
        "augment.dtype": "fp32",
    })


def save(path, model, opt, loader_state):
    """Writes the checkpoint atomically: a crash while writing leaves the
    previous one."""
    tmp = path + ".tmp"
    torch.save({"model": model.state_dict(), "opt": opt.state_dict(),
                "loader": loader_state}, tmp)
    os.replace(tmp, path)


def train(dataset, epochs, ckpt=None, resume=False, stop_after=None,
          device="cpu", recipe="plain"):
    """Trains; returns (mean loss per epoch, the batches' sample indices).
    With ckpt, saves a checkpoint after each epoch and on KeyboardInterrupt
    (the loader's state as the last completed step left it; then re-raises).
    resume=True loads ckpt, which must exist. stop_after=(epoch, batch)
    saves a checkpoint there and returns (a simulated interruption)."""
    if resume and not (ckpt and os.path.exists(ckpt)):
        raise FileNotFoundError(
            "--resume: no checkpoint %r to resume from (run without --resume "
            "to start afresh)" % ckpt)
    torch.manual_seed(0)
    losses, seen = [], []
    with sluice.Loader(loader_options(dataset, epochs, recipe=recipe)) as loader:
        classes = max(1, len(sluice.Dataset(dataset).class_names))
        model = make_model(classes).to(device)
        opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        start = 0
        if resume:
            state = torch.load(ckpt)
            model.load_state_dict(state["model"])
            opt.load_state_dict(state["opt"])
            loader.load_state_dict(state["loader"])
            start = loader.stats()["epoch"]
            batches = iter(loader)  # the rest of the saved epoch
        else:
            batches = loader.epoch(start)
        done = loader.state_dict()  # as the last completed step left it
        try:
            for epoch in range(start, epochs):
                if epoch != start:
                    batches = loader.epoch(epoch)
                model.train()
                total, count = 0.0, 0
                for b in batches:
                    x = torch.from_dlpack(b.images).to(device)
                    y = torch.from_dlpack(b.labels).long().to(device)
                    soft = recipe != "plain"  # mixed, smoothed targets
                    if soft:
                        y = torch.from_dlpack(b.targets).to(device)
                    seen.append(memoryview(b.indices).tolist())
                    v = b.valid
                    del b
                    if soft:  # cross entropy against soft targets
                        loss = -(y[:v] * F.log_softmax(model(x[:v]), 1)).sum(1).mean()
                    else:
                        loss = F.cross_entropy(model(x[:v]), y[:v])
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
                    done = loader.state_dict()
                    total += loss.item()
                    count += 1
                    if stop_after == (epoch, len(seen)):
                        save(ckpt, model, opt, done)
                        return losses, seen
                if count == 0:  # resumed at the end of an epoch
                    continue
                losses.append(total / count)
                print("epoch %d: %d px, loss %.4f" % (
                    epoch, loader.resolution(epoch), losses[-1]), flush=True)
                if ckpt:
                    save(ckpt, model, opt, done)
        except KeyboardInterrupt:
            if ckpt:
                # The loader's state now also counts a batch whose step did
                # not finish; `done` is where the saved model stands.
                save(ckpt, model, opt, done)
                print("interrupted: checkpoint saved to %s after %d steps"
                      % (ckpt, len(seen)), flush=True)
            raise
    return losses, seen


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dataset")
    ap.add_argument("--epochs", type=int, default=4)
    ap.add_argument("--ckpt")
    ap.add_argument("--resume", action="store_true")
    ap.add_argument("--recipe", default="plain", choices=sorted(RECIPES))
    a = ap.parse_args()
    if a.resume and not a.ckpt:
        ap.error("--resume needs --ckpt FILE")
    if a.resume and not os.path.exists(a.ckpt):
        ap.error("--resume: no checkpoint %s (run without --resume to start "
                 "afresh)" % a.ckpt)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    try:
        train(a.dataset, a.epochs, a.ckpt, a.resume, device=device,
              recipe=a.recipe)
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
