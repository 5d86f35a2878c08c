"""The Python, shell and INI blocks of the README and docs/ marked for this
file, run as written on the test dataset: the training loop, resuming
mid-epoch, two ranks launched with the environment variables torchrun would
set (and stopped by Ctrl-C), and torchvision's reference recipe. Every
marked block must be one that a test here runs."""

import glob
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time

import pytest

import sluice

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
PAGES = [os.path.join(ROOT, "README.md")] + sorted(
    glob.glob(os.path.join(ROOT, "docs", "*.md")))
MARK = "<!-- python/tests/test_readme.py runs this block -->"

# What each test looks for in a marked block: (language, a string in it).
KINDS = {
    "loop": ("python", "torch.save(loader.state_dict()"),
    "resume": ("python", 'state = torch.load("ck.pt")'),
    "elastic": ("python", "world_size=new_world"),
    "mix": ("python", "weights=[3, 1]"),
    "launch": ("sh", "WORLD_SIZE=2"),
    "recipe": ("ini", "auto = trivial"),
}


def marked_blocks():
    """(page, language, code) of every marked block of the README and
    docs/."""
    out = []
    for page in PAGES:
        text = open(page, encoding="utf-8").read()
        for part in text.split(MARK)[1:]:
            m = re.match(r"\s*```(\w+)\n(.*?)```", part, re.S)
            assert m, "%s: a marked block is not a fenced code block" % page
            out.append((os.path.relpath(page, ROOT), m.group(1), m.group(2)))
    return out


def kind_of(lang, code):
    kinds = [k for k, (l, s) in KINDS.items() if l == lang and s in code]
    return kinds[0] if len(kinds) == 1 else None


def blocks(kind):
    got = [(page, code) for page, lang, code in marked_blocks()
           if kind_of(lang, code) == kind]
    assert got, "no marked %s block in the README or docs/" % kind
    return got


def test_every_marked_block_is_run():
    """A block marked for this file that no test here recognises would
    silently go untested; each kind of block is somewhere."""
    found = marked_blocks()
    for page, lang, code in found:
        assert kind_of(lang, code), \
            "%s: a marked %s block no test runs:\n%s" % (page, lang, code)
    assert {kind_of(l, c) for _, l, c in found} == set(KINDS)


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
    [(page, code)] = blocks("resume")
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
    exec(compile(code, page, "exec"), env)
    env["loader"].close()
    assert seen == whole[1][4:] + whole[2]


def test_elastic_resume_recipe(dataset, tmp_path, monkeypatch, capsys):
    """docs/PYTHON.md's elastic block: rank 0's state of 2 ranks, 3 batches
    into epoch 1, resumed on 3 ranks: with what the 2 ranks had read, each
    sample of epoch 1 exactly once, then epoch 2 on 3 ranks once."""
    torch = pytest.importorskip("torch")
    [(page, code)] = blocks("elastic")
    ini = write_ini(tmp_path / "cfg", dataset)
    before = []
    for r in range(2):
        with sluice.Loader(str(ini), batch_size=8, drop_last=False, rank=r,
                           world_size=2) as ld:
            ld.set_epoch(1)
            for _ in range(3):
                b = ld.next()
                before += indices(b)[:b.valid]
            if r == 0:
                torch.save({"loader": ld.state_dict()},
                           str(tmp_path / "ck.pt"))
    monkeypatch.chdir(tmp_path)
    code = code.replace('"train.ini"', repr(str(ini)))
    code = code.replace("batch_size=256", "batch_size=8, drop_last=False")
    seen = {1: list(before), 2: []}
    for r in range(3):
        env = {"sluice": sluice, "torch": torch, "epochs": 3, "rank": r,
               "new_world": 3,
               "step": lambda b: seen[b.epoch].extend(indices(b)[:b.valid])}
        exec(compile(code, page, "exec"), env)
        env["loader"].close()
    n = len(sluice.Dataset(str(dataset)))
    assert sorted(seen[1]) == list(range(n))
    assert sorted(seen[2]) == list(range(n))
    assert "'samples_read': 48" in capsys.readouterr().out


def test_mix_recipe(dataset, tmp_path):
    """docs/PYTHON.md's mixing block on two local datasets (the test set
    and a copy of it): three quarters of each epoch from the first, and
    batch.sources as the indices say."""
    torch = pytest.importorskip("torch")
    [(page, code)] = blocks("mix")
    ini = write_ini(tmp_path / "cfg", dataset)
    code = code.replace('"train.ini"', repr(str(ini)))
    code = code.replace('"imagenet/"', repr(str(dataset)))
    code = code.replace('"s3://bucket/synthetic/"', repr(str(dataset)))
    code = code.replace("batch_size=256", "batch_size=8, drop_last=False")
    got = []
    env = {"sluice": sluice, "torch": torch, "epochs": 2,
           "step": lambda x, s: got.extend(s.tolist())}
    exec(compile(code, page, "exec"), env)
    env["loader"].close()
    n = len(sluice.Dataset(str(dataset)))
    assert len(got) == 2 * 2 * n
    # 2n x 3/4 a epoch, a tie of remainders going to the first dataset.
    assert got.count(0) == 2 * ((3 * 2 * n + 3) // 4)


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
    [(page, code)] = blocks("launch")
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


SLEEPER = r"""
import os, sys, time
with open(os.path.join(sys.argv[1], "pid%s" % os.environ["RANK"]), "w") as f:
    f.write(str(os.getpid()))
time.sleep(600)
"""


def alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_readme_two_rank_launch_stops_its_ranks(tmp_path, sig):
    """Run as a script, the launch block ends both ranks on Ctrl-C (SIGINT
    to the terminal's foreground process group, which the ranks of a
    script's `&` ignore) or on a TERM to the script."""
    [(page, code)] = blocks("launch")
    sleeper = tmp_path / "sleeper.py"
    sleeper.write_text(SLEEPER)
    script = tmp_path / "launch.sh"
    script.write_text(code.replace("python3 train.py", "%s %s %s" % (
        sys.executable, sleeper, tmp_path)))
    p = subprocess.Popen(["bash", str(script)], cwd=str(tmp_path),
                         start_new_session=True)
    pids = []
    try:
        deadline = time.monotonic() + 60
        while len(pids) < 2 and time.monotonic() < deadline:
            pids = [int((tmp_path / ("pid%d" % k)).read_text())
                    for k in range(2) if (tmp_path / ("pid%d" % k)).exists()
                    and (tmp_path / ("pid%d" % k)).read_text()]
            time.sleep(0.05)
        assert len(pids) == 2, "the ranks did not start"
        if sig == signal.SIGINT:
            os.killpg(p.pid, sig)  # what Ctrl-C in a terminal does
        else:
            os.kill(p.pid, sig)
        assert p.wait(timeout=30) != 0
        deadline = time.monotonic() + 30
        while any(alive(q) for q in pids) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(alive(q) for q in pids), "a rank outlived the script"
    finally:
        for q in pids:
            if alive(q):
                os.kill(q, signal.SIGKILL)
        if p.poll() is None:
            p.kill()
            p.wait()


def test_readme_training_loop(dataset, tmp_path, monkeypatch):
    """The Python loop of the README (and of docs/PYTHON.md), as written."""
    torch = pytest.importorskip("torch")
    ini = write_ini(tmp_path / "cfg", dataset)
    monkeypatch.chdir(tmp_path)
    for page, code in blocks("loop"):
        code = code.replace('"train.ini"', repr(str(ini)))
        code = code.replace("batch_size=256", "batch_size=8")
        code = code.replace("workers=8", "workers=2")
        steps = []
        env = {"epochs": 2,
               "step": lambda x, y: steps.append((x.shape[0], y.shape[0]))}
        exec(compile(code, page, "exec"), env)
        with sluice.Loader(str(ini), batch_size=8) as ld:
            n = len(ld)
        assert len(steps) == 2 * n and all(a == b > 0 for a, b in steps)
        assert os.path.exists("loader.pt")
        os.remove("loader.pt")


@pytest.fixture(scope="module")
def class_dataset(tmp_path_factory):
    """40 photos of 5 classes with no float targets (the batch mix makes
    its soft targets from the labels)."""
    path = tmp_path_factory.mktemp("cls") / "cls.lmdb"
    w = sluice.Writer(str(path))
    for i in range(40):
        wd, ht = 48 + i % 7, 40 + i % 5
        px = bytes((i * 7 + k) % 251 for k in range(wd * ht * 3))
        w.add_pixels(px, wd, ht, 3, label=i % 5)
    w.commit()
    w.close()
    return str(path)


def test_reference_recipe(class_dataset, tmp_path):
    """docs/RECIPES.md's torchvision reference recipe: every key exists, it
    trains at 176 px with the policy and the batch mix on, and the same
    file in eval mode gives the 224 px center crops of a 232 resize."""
    [(page, code)] = blocks("recipe")
    ini = tmp_path / "recipe.ini"
    ini.write_text("[dataset]\npath = %s\n[loader]\nworkers = 2\n%s"
                   % (class_dataset, code))
    host = {"loader.batch_size": 8, "device.backend": "host"}
    with sluice.Loader(str(ini), **host) as ld:
        kinds = set()
        for b in ld.epoch(0):
            assert b.resolution == (176, 176)
            kinds.add(b.mix[0])
        assert kinds <= {"mixup", "cutmix"}
    with sluice.Loader(str(ini), **host, **{"loader.mode": "eval"}) as ld:
        for b in ld.epoch(0):
            assert b.resolution == (224, 224) and b.mix[0] == "none"
    # The center crop is the reference's: Resize(232) then CenterCrop(224).
    ratio = [line for line in code.splitlines()
             if line.startswith("center_ratio")][0]
    ratio = float(ratio.split("=")[1].split(";")[0])
    assert int(224 / ratio + 1e-9) == 232
