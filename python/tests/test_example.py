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


def _run_example(args, **kw):
    return subprocess.run(
        [sys.executable, "-u", os.path.join(HERE, "..", "..", "examples",
                                            "train_torch.py")] + args,
        capture_output=True, text=True, timeout=300, **kw)


def _interrupt_after(args, prefix):
    """Runs the example, sends a real SIGINT once a stdout line starts with
    prefix; returns (exit status, stdout, stderr)."""
    import signal
    # A runner started as `cmd &` from a script ignores SIGINT, which the
    # child would inherit: it gets the default, so KeyboardInterrupt works.
    p = subprocess.Popen(
        [sys.executable, "-u", os.path.join(HERE, "..", "..", "examples",
                                            "train_torch.py")] + args,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    seen = []
    try:
        for line in p.stdout:
            seen.append(line)
            if line.startswith(prefix):
                break
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
    return p.returncode, "".join(seen) + out, err


def state_position(state):
    """(epoch, next batch) of a train_torch checkpoint's loader state."""
    import struct
    return struct.unpack_from("<QQ", bytes(state["loader"]["state"]), 16)


def test_command_line_saves_each_epoch_and_refuses_a_missing_resume(
        jpeg_dataset, tmp_path):
    # issue 40: --ckpt wrote nothing from the command line, and --resume
    # with a missing file started afresh without a word.
    ckpt = tmp_path / "ck.pt"
    r = _run_example([jpeg_dataset, "--epochs", "2", "--ckpt", str(ckpt),
                      "--resume"])
    assert r.returncode != 0
    assert "no checkpoint" in r.stderr and str(ckpt) in r.stderr
    assert not ckpt.exists()
    r = _run_example([jpeg_dataset, "--epochs", "2", "--ckpt", str(ckpt)])
    assert r.returncode == 0, r.stderr
    state = torch.load(str(ckpt))
    assert set(state) == {"model", "opt", "loader"}
    assert state_position(state) == (1, 10)  # 160 samples, batches of 16
    # Resumed at the end of the last epoch: nothing left to train.
    r = _run_example([jpeg_dataset, "--epochs", "2", "--ckpt", str(ckpt),
                      "--resume"])
    assert r.returncode == 0, r.stderr
    assert "epoch" not in r.stdout


def test_ctrl_c_saves_a_checkpoint_that_resumes(jpeg_dataset, tmp_path):
    # A real SIGINT once epoch 1 is done: the example saves where the last
    # completed step left the loader and exits 130; --resume goes on from
    # there (interrupted again once it has trained an epoch).
    ckpt = tmp_path / "ck.pt"
    args = [jpeg_dataset, "--epochs", "1000", "--ckpt", str(ckpt)]
    rc, out, err = _interrupt_after(args, "epoch 1:")
    assert rc == 130, err
    assert "interrupted: checkpoint saved to %s" % ckpt in out
    epoch, batch = state_position(torch.load(str(ckpt)))
    assert epoch >= 1
    rc, out, err = _interrupt_after(args + ["--resume"], "epoch ")
    assert rc == 130, err
    first = out.splitlines()[0]
    assert first.startswith("epoch %d:" % (epoch if batch < 10 else epoch + 1))
