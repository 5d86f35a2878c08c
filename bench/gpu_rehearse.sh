#!/usr/bin/env bash
# Rehearses bench/gpu.sh here as a bare GPU machine would run it: in a
# private mount namespace, /usr is overlaid and every file of the packages
# the bundle carries is deleted from the overlay (headers, .so links, .pc
# files and the libraries themselves), so configure, build and tests can
# only find what .gpu-deps/bundle.tar.gz brings. Libraries the toolchain
# itself loads (cmake's libcurl, gcc's libzstd, Python's libssl, ...) stay:
# the GPU machine has its own. The device steps are skipped (no GPU here).
# Needs root (unshare -m, mount -t overlay); the host's /usr is untouched.
#
#   bench/gpu_rehearse.sh           OUT defaults to out/gpu-rehearsal
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export OUT=${OUT:-$root/out/gpu-rehearsal}
[ -f "$root/.gpu-deps/bundle.tar.gz" ] || "$root/bench/gpu_bundle.sh"
ov=$(mktemp -d)
trap 'rm -rf "$ov"' EXIT
mkdir -p "$ov/upper" "$ov/work" "$OUT"

# The packages whose libraries the build's own tools load: kept.
tools="cmake ninja bash sh tar gzip sed find timeout git python3 nvcc
  $(cc -print-prog-name=cc1) $(cc -print-prog-name=as) $(cc -print-prog-name=ld)
  /usr/local/cuda/nvvm/bin/cicc /usr/local/cuda/bin/ptxas
  /usr/local/cuda/bin/fatbinary /usr/local/cuda/bin/nvlink"
keep=$(for t in $tools; do
  p=$(command -v "$t" || echo "$t")
  [ -e "$p" ] && ldd "$(readlink -f "$p")" 2>/dev/null
done | awk '/=>/ && $3 ~ /^\// {print $3}' | sort -u | xargs -r readlink -f |
  while read -r f; do dpkg -S "$f" 2>/dev/null || dpkg -S "${f#/usr}" 2>/dev/null; done |
  cut -d: -f1 | sort -u)
# Python's own extension modules (ssl, ctypes, ...) too.
pylibs=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["platstdlib"])')/lib-dynload
keep="$keep $(find "$pylibs" -name '*.so' -exec ldd {} \; 2>/dev/null |
  awk '/=>/ && $3 ~ /^\// {print $3}' | sort -u | xargs -r readlink -f |
  while read -r f; do dpkg -S "$f" 2>/dev/null || dpkg -S "${f#/usr}" 2>/dev/null; done |
  cut -d: -f1 | sort -u)"
hide=()
kept=()
for p in $("$root/bench/gpu_bundle.sh" --list); do
  if echo "$keep" | grep -qx "$p"; then kept+=("$p"); else hide+=("$p"); fi
done
echo "gpu_rehearse.sh: hiding ${#hide[@]} packages: ${hide[*]}"
echo "gpu_rehearse.sh: kept for the toolchain: ${kept[*]}"

# A Python with numpy and pytest, as the GPU machine's has, for the
# binding's tests.
for py in python3 /usr/bin/python3; do
  if "$py" -c 'import numpy, pytest' 2>/dev/null; then
    export SLUICE_GPU_PYTHON=${SLUICE_GPU_PYTHON:-$(command -v "$py")}
    break
  fi
done
export SLUICE_GPU_REHEARSE=1 SLUICE_GPU_BUILD=${SLUICE_GPU_BUILD:-/tmp/sluice-gpu-rehearsal}
export SLUICE_GPU_DEPS=/tmp/sluice-deps-rehearsal HIDE="${hide[*]}" OV=$ov ROOT=$root
# shellcheck disable=SC2016 # expanded by the inner bash, from the exports
unshare -m --propagation private bash -c '
  set -e
  mount -t overlay overlay -o lowerdir=/usr,upperdir=$OV/upper,workdir=$OV/work /usr
  n=0
  for p in $HIDE; do
    for f in $(dpkg -L "$p" 2>/dev/null); do
      case $f in /usr/*|/lib/*|/lib64/*) ;; *) continue ;; esac
      if [ -f "$f" ] || [ -L "$f" ]; then rm -f "$f"; n=$((n + 1)); fi
    done
  done
  echo "gpu_rehearse.sh: $n files hidden"
  for f in /usr/include/lmdb.h /usr/include/hdf5/serial/hdf5.h /usr/include/cmocka.h \
      /usr/lib/x86_64-linux-gnu/libhdf5_serial.so.103 /usr/lib/x86_64-linux-gnu/pkgconfig/inih.pc; do
    if [ -e "$f" ]; then echo "gpu_rehearse.sh: $f still visible"; exit 1; fi
  done
  "$ROOT/bench/gpu.sh"
'
