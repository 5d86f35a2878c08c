"""The README's Python recipes (the blocks marked for this file), run as
written on the test dataset: resuming mid-epoch, and two ranks launched
with the environment variables torchrun would set."""

import json
import os
import re
import socket
import subprocess
import sys

import pytest

import sluice

README = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                      "README.md")
MARK = "<!-- python/tests/test_readme.py runs this block -->"


def readme_blocks():
    text = open(README, encoding="utf-8").read()
    out = []
    for part in text.split(MARK)[1:]:
        m = re.match(r"\s*```(\w+)\n(.*?)```", part, re.S)
        assert m, "a marked README block is not a fenced code block"
        out.append((m.group(1), m.group(2)))
    return out


def write_ini(folder, dataset):
    """train.ini in folder, naming the dataset relative to it."""
    folder.mkdir(exist_ok=True)
    ini = folder / "train.ini"
    ini.write_text("[dataset]\npath = %s\n[loader]\nworkers = 2\nseed = 7\n"
                   "[resolution]\nmax = 32\n[augment]\ndtype = u8\n"
                   % os.path.relpath(dataset, folder))
    return ini


def indices(b):
    return memoryview(b.indices).tolist()


def test_readme_resume_recipe(dataset, tmp_path, monkeypatch):
    torch = pytest.importorskip("torch")
    lang, code = readme_blocks()[0]
    assert lang == "python" and "load_state_dict" in code
    ini = write_ini(tmp_path / "cfg", dataset)
    epochs = 3
    with sluice.Loader(str(ini), batch_size=8) as ld:
        whole = [[indices(b) for b in ld.epoch(e)] for e in range(epochs)]
        ld.set_epoch(1)
        for _ in range(4):
            ld.next()
        torch.save({"loader": ld.state_dict()}, str(tmp_path / "ck.pt"))
    seen = []
    # Run from elsewhere: the INI's relative dataset.path is its folder's.
    monkeypatch.chdir(tmp_path)
    code = code.replace('"train.ini"', repr(str(ini)))
    code = code.replace("batch_size=256", "batch_size=8")
    env = {"sluice": sluice, "torch": torch, "epochs": epochs,
           "step": lambda b: seen.append(indices(b))}
    exec(compile(code, "README.md", "exec"), env)
    env["loader"].close()
    assert seen == whole[1][4:] + whole[2]


TRAIN = r"""
import json, os, sys
import torch.distributed as dist
import sluice
dist.init_process_group("gloo")
with sluice.Loader(sys.argv[1], batch_size=8) as ld:
    got = [i for b in ld.epoch(0) for i in memoryview(b.indices).tolist()]
    n = len(ld)
with open(os.path.join(sys.argv[2], "rank%s.json" % os.environ["RANK"]),
          "w") as f:
    json.dump({"n": n, "indices": got}, f)
dist.destroy_process_group()
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_readme_two_rank_launch(dataset, tmp_path):
    pytest.importorskip("torch.distributed")
    import torch.distributed as dist
    if not dist.is_available() or not dist.is_gloo_available():
        pytest.skip("torch.distributed without gloo")
    lang, code = readme_blocks()[1]
    assert lang == "sh" and "WORLD_SIZE=2" in code
    ini = write_ini(tmp_path / "cfg", dataset)
    train = tmp_path / "train.py"
    train.write_text(TRAIN)
    code = code.replace("python3 train.py", "%s %s %s %s" % (
        sys.executable, train, ini, tmp_path))
    code = code.replace("29500", str(free_port()))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.dirname(os.path.dirname(os.path.abspath(sluice.__file__)))]
        + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    r = subprocess.run(["bash", "-c", code], cwd=str(tmp_path), timeout=300,
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    assert all((tmp_path / ("rank%d.json" % k)).exists() for k in range(2)), \
        r.stdout + r.stderr
    ranks = [json.loads((tmp_path / ("rank%d.json" % k)).read_text())
             for k in range(2)]
    assert ranks[0]["n"] == ranks[1]["n"] > 0
    a, b = (set(x["indices"]) for x in ranks)
    assert not a & b  # disjoint
    assert len(a) + len(b) == 2 * ranks[0]["n"] * 8  # drop_last: whole ones
