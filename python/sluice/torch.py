"""PyTorch helper: ``for images, labels in sluice.torch.batches(loader, e)``.

The tensors are views of the loader's slot made with torch.from_dlpack; the
slot is held until both are freed (the DLPack deleter, on any thread)."""

import torch as _torch


def batches(loader, epoch, copy=False):
    """Yields (images, labels) torch tensors for each batch of ``epoch``.
    ``copy=True`` gives owned tensors (clones) and frees the slot at once."""
    for b in loader.epoch(epoch):
        images = _torch.from_dlpack(b.images)
        labels = _torch.from_dlpack(b.labels)
        if copy:
            images, labels = images.clone(), labels.clone()
        del b
        yield images, labels
