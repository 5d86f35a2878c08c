"""examples/train_torch.py: two epochs on CPU, the loss falls, and a run
interrupted and resumed from its checkpoint sees exactly the same batches."""

import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples"))


@pytest.fixture(scope="module")
def jpeg_dataset(tmp_path_factory):
    cli = os.environ.get("SLUICE_BIN")
    if not cli or not os.path.exists(cli):
        pytest.skip("SLUICE_BIN (the sluice command) not set")
    d = tmp_path_factory.mktemp("demo")
    subprocess.run([cli, "synth", str(d / "img"), "--count", "160",
                    "--classes", "4"], check=True, capture_output=True)
    subprocess.run([cli, "pack", str(d / "img"), str(d / "demo.lmdb")],
                   check=True, capture_output=True)
    return str(d / "demo.lmdb")


def test_train_two_epochs_loss_falls_and_resume_reproduces(jpeg_dataset,
                                                           tmp_path):
    import train_torch
    losses, full = train_torch.train(jpeg_dataset, 2)
    assert len(losses) == 2 and losses[1] < losses[0]
    ckpt = str(tmp_path / "ck.pt")
    _, first = train_torch.train(jpeg_dataset, 2, ckpt=ckpt,
                                 stop_after=(0, 3))
    assert len(first) == 3
    _, rest = train_torch.train(jpeg_dataset, 2, ckpt=ckpt, resume=True)
    assert first + rest == full


@pytest.mark.parametrize("recipe", ["torchvision", "timm"])
def test_train_with_a_recipe_and_soft_targets(jpeg_dataset, tmp_path, recipe):
    """docs/RECIPES.md's recipes in the example: it trains on the soft targets
    and a resumed run sees the same batches."""
    import train_torch
    losses, full = train_torch.train(jpeg_dataset, 2, recipe=recipe)
    assert len(losses) == 2 and all(l == l and l > 0 for l in losses)
    ckpt = str(tmp_path / ("ck_%s.pt" % recipe))
    _, first = train_torch.train(jpeg_dataset, 2, ckpt=ckpt, stop_after=(0, 3),
                                 recipe=recipe)
    _, rest = train_torch.train(jpeg_dataset, 2, ckpt=ckpt, resume=True,
                                recipe=recipe)
    assert first + rest == full
