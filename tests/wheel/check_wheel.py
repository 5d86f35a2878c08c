"""Run by the venv's Python, inside test_wheel.sh's bare namespace, with the
wheel installed: what a user without a compiler or -dev packages does.

    check_wheel.py --torch FIXTURES WORKDIR   pack a folder, train an epoch
    check_wheel.py FIXTURES WORKDIR           everything else, with the
                                              libraries torch loads hidden too
"""
import json
import os
import subprocess
import sys
import sysconfig
import time

t0 = time.perf_counter()
import sluice  # noqa: E402

import_ms = (time.perf_counter() - t0) * 1000
with_torch = sys.argv[1] == "--torch"
fixtures, work = sys.argv[-2], sys.argv[-1]
expect = json.load(open(os.path.join(fixtures, "expect.json")))
pkg = os.path.dirname(sluice.__file__)
venv_site = sysconfig.get_paths()["platlib"]


def check(cond, what):
    if not cond:
        sys.exit("check_wheel.py: FAILED: " + what)
    print("check_wheel.py: ok:", what)


check(pkg.startswith(venv_site), "sluice imported from the venv (%s)" % pkg)
print("check_wheel.py: import sluice took %.1f ms" % import_ms)

# Every library the installed files need resolves, to sluice.libs/ or to
# one that auditwheel's manylinux policies (manylinux_2_12 and later) let a
# wheel take from the system: glibc, libstdc++, zlib, libexpat (the `sluice`
# command's VOC reader); the CUDA runtime is left to run time.
system_ok = ("libc.so", "libm.so", "libdl.so", "librt.so", "libpthread.so",
             "ld-linux", "linux-vdso", "libgcc_s.so", "libstdc++.so",
             "libz.so", "libresolv.so", "libexpat.so.1")
elves = [os.path.join(pkg, "_sluice.abi3.so"), os.path.join(pkg, "bin", "sluice"),
         os.path.join(pkg, "libsluice_cuda.so")]
for elf in elves:
    if not os.path.exists(elf):
        check(elf.endswith("libsluice_cuda.so"), "%s is in the wheel" % elf)
        continue
    for line in subprocess.run(["ldd", elf], capture_output=True, text=True,
                               check=True).stdout.splitlines():
        name = line.split()[0]
        if "libcudart" in name:
            continue
        check("not found" not in line, "%s finds %s" % (os.path.basename(elf), name))
        if "sluice.libs" not in line:
            check(name.startswith(system_ok) or name.startswith("/lib"),
                  "%s takes %s from the system only where manylinux allows" %
                  (os.path.basename(elf), name))

# The console script and python -m sluice run the bundled command.
venv_bin = os.path.dirname(sys.executable)
subprocess.run([os.path.join(venv_bin, "sluice"), "synth", os.path.join(work, "photos"),
                "--count", "48", "--classes", "4", "--imagenet"], check=True)
packed = os.path.join(work, "photos.lmdb")
subprocess.run([sys.executable, "-m", "sluice", "pack", "--quiet",
                os.path.join(work, "photos"), packed], check=True)
ds = sluice.Dataset(packed)
check(len(ds) == 48, "pack made a dataset of the folder's 48 photos")

# An epoch of training with torch over the packed folder.
if with_torch:
    import torch

    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, stride=2), torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(8, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    seen, losses = 0, []
    with sluice.Loader(path=packed, batch_size=8, workers=2, augment_dtype="fp32",
                       augment_layout="nchw", resolution_max=64) as loader:
        for batch in loader.epoch(0):
            x = torch.from_dlpack(batch.images)
            y = torch.from_dlpack(batch.labels).long()
            loss = torch.nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            seen += x.shape[0]
            losses.append(float(loss))
    check(seen == 48 and all(l == l for l in losses),
          "a torch training epoch saw every sample (%d), finite losses" % seen)
    print("check_wheel.py: torch step passed")
    sys.exit(0)

# An epoch without torch: every sample once, the backend's reason said.
seen = 0
with sluice.Loader(path=packed, batch_size=8, workers=2, resolution_max=64) as loader:
    for batch in loader.epoch(0):
        seen += batch.valid if hasattr(batch, "valid") else 8
    note = loader.stats()["backend_note"]
check(seen == 48, "an epoch over the packed folder saw every sample (%d)" % seen)
check(bool(note), "the host backend says why it was chosen: %s" % note)

# An h5py file and a Caffe LMDB, read in place.
h5 = sluice.Dataset(os.path.join(fixtures, "arrays.h5"))
e = expect["h5"]
check(len(h5) == len(e["labels"]), "h5py file: %d samples" % len(h5))
for i in range(len(h5)):
    px, label, _ = h5[i]
    check(list(px.shape) == e["shape"] and int(px.astype("int64").sum()) == e["sums"][i]
          and label == e["labels"][i], "h5py sample %d: pixels and label" % i)
caffe = sluice.Dataset(os.path.join(fixtures, "caffe.mdb"))
check(len(caffe) == len(expect["caffe"]), "Caffe LMDB: %d samples" % len(caffe))
for i, c in enumerate(expect["caffe"]):
    px, label, _ = caffe[i]
    check(int(px.astype("int64").sum()) == c["rgb_hwc_sum"]
          and [int(v) for v in px[0, 0]] == c["first_pixel_rgb"] and label == c["label"],
          "Caffe sample %d: RGB pixels and label" % i)

# The CUDA backend: asked for, it fails with the reason (no GPU here, or no
# CUDA runtime in this namespace), naming what it tried.
try:
    sluice.Loader(path=packed, batch_size=8, backend="cuda")
    check(False, "backend=cuda without a GPU fails")
except sluice.Error as err:
    msg = str(err)
    if os.environ.get("SLUICE_EXPECT_NO_CUDART"):
        check("libcudart" in msg and "libsluice_cuda.so" in msg,
              "backend=cuda without a CUDA runtime names it: %s" % msg)
    else:
        check("CUDA" in msg, "backend=cuda without a GPU says why: %s" % msg)
print("check_wheel.py: all checks passed; import %.1f ms" % import_ms)
