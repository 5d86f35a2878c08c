"""The wheel on a GPU machine (bench/gpu.sh's `wheel` step): the CUDA
backend that the wheel carries as libsluice_cuda.so, opened at run time
against the machine's CUDA runtime, gives the same batches as the host
backend, bit for bit, handed to torch on the device through DLPack.

    check_wheel_gpu.py WORKDIR     with the wheel importable and torch (CUDA)
"""
import os
import subprocess
import sys

import sluice
import torch

work = sys.argv[1]


def check(cond, what):
    if not cond:
        sys.exit("check_wheel_gpu.py: FAILED: " + what)
    print("check_wheel_gpu.py: ok:", what)


check(torch.cuda.is_available(), "torch sees a CUDA device")
pkg = os.path.dirname(sluice.__file__)
check(os.path.exists(os.path.join(pkg, "libsluice_cuda.so")),
      "the wheel carries libsluice_cuda.so (%s)" % pkg)

photos, packed = os.path.join(work, "photos"), os.path.join(work, "photos.lmdb")
subprocess.run([sys.executable, "-m", "sluice", "synth", photos, "--count", "64",
                "--classes", "4", "--imagenet"], check=True)
subprocess.run([sys.executable, "-m", "sluice", "pack", "--quiet", photos, packed],
               check=True)


def epoch(backend, dtype, layout):
    """Every batch of epoch 0 as CPU tensors, and the backend's note."""
    out = []
    with sluice.Loader(path=packed, batch_size=16, workers=2, seed=11,
                       resolution_max=96, augment_dtype=dtype,
                       augment_layout=layout, backend=backend) as ld:
        for b in ld.epoch(0):
            x = torch.from_dlpack(b.images)
            check(x.is_cuda == (backend == "cuda"),
                  "%s batch lives on the %s" % (backend, "device" if x.is_cuda else "host"))
            out.append((x.cpu().clone(), torch.from_dlpack(b.labels).cpu().clone()))
        note = ld.stats()["backend_note"]
    return out, note


for dtype, layout in (("u8", "nhwc"), ("fp16", "nchw"), ("bf16", "nhwc"),
                      ("fp32", "nchw")):
    host, _ = epoch("host", dtype, layout)
    dev, note = epoch("cuda", dtype, layout)
    print("check_wheel_gpu.py: cuda backend:", note)
    check(len(host) == len(dev) == 4, "%s/%s: 4 batches each" % (dtype, layout))
    for i, ((hx, hy), (dx, dy)) in enumerate(zip(host, dev)):
        same = hx.dtype == dx.dtype and hx.shape == dx.shape and torch.equal(
            hx.view(torch.uint8) if hx.dtype == torch.bfloat16 else hx,
            dx.view(torch.uint8) if dx.dtype == torch.bfloat16 else dx)
        if not same and hx.shape == dx.shape:
            diff = (hx.float() - dx.float()).abs().max().item()
            print("check_wheel_gpu.py: batch %d max |host - cuda| = %g" % (i, diff))
        check(same and torch.equal(hy, dy),
              "%s/%s batch %d: cuda equals host bit for bit %s" %
              (dtype, layout, i, tuple(dx.shape)))
print("check_wheel_gpu.py: all checks passed")
