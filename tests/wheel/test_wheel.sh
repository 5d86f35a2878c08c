#!/usr/bin/env bash
# Installs the wheel as a user without a compiler or -dev packages would,
# and uses it: in a private mount namespace, /usr is overlaid and every file
# of these Debian packages is deleted from the overlay:
#   - each library the wheel bundles (its .dist-info/licenses/ names them),
#   - every -dev package, the C/C++ compilers and binutils,
#   - the CUDA toolkit and runtime (/usr/local/cuda*, /usr/local/lib/libcudart*),
# except the packages /usr/bin/python3, its extension modules and numpy
# load themselves (a user's Python has its own copies of those; the test
# says which). Debian's torch loads some bundled ones too (LMDB, HDF5,
# libjpeg...): they are hidden after the torch step. Then a fresh venv (--system-site-packages, for
# Debian's torch and numpy) installs the wheel with pip and
# check_wheel.py imports sluice, packs a folder through the `sluice` console
# script, trains an epoch with torch, reads an h5py file and a Caffe LMDB
# written beforehand by h5py and py-lmdb, checks that every library the
# installed files need resolves into the wheel, and that device.backend =
# cuda says the CUDA runtime is missing.
# Needs root (unshare -m, mount -t overlay); the host's /usr is untouched.
#
#   tests/wheel/test_wheel.sh [WHEEL]    default: dist/sluice-*.whl, built by
#                                        scripts/wheel.sh when missing
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
whl=${1:-}
if [[ -z "$whl" ]]; then
  ls "$root"/dist/sluice-*.whl >/dev/null 2>&1 || "$root/scripts/wheel.sh"
  whl=$(ls "$root"/dist/sluice-*.whl)
fi
whl=$(readlink -f "$whl")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/ov/upper" "$work/ov/work" "$work/fixtures" "$work/run"

# The fixtures, by the real clients, while their libraries are visible.
/usr/bin/python3 "$root/tests/wheel/make_fixtures.py" "$work/fixtures"

# What to hide.
bundled=$(python3 -m zipfile -l "$whl" | awk '{print $1}' |
  sed -n 's|^sluice-[^/]*\.dist-info/licenses/\(.*\)\.copyright$|\1|p')
[[ -n "$bundled" ]] || { echo "test_wheel.sh: the wheel names no bundled library" >&2; exit 1; }
toolchain=$(dpkg-query -W -f='${Package}\n' | grep -E \
  -e '-dev$' -e '^(gcc|g\+\+|cpp|clang|llvm)(-[0-9]+)?$' -e '^binutils' \
  -e '^lib(gcc|stdc\+\+)-[0-9]+-dev$' || true)
# The packages the Python side loads itself (what /proc/self/maps shows
# once numpy, or numpy and torch, are imported). Debian's torch loads LMDB,
# HDF5, libjpeg and more of what the wheel bundles, so the test runs in two
# steps: the torch epoch with those kept, then the rest with them hidden too.
loaded() {
  /usr/bin/python3 -c "import $1
for line in open('/proc/self/maps'):
    f = line.split()[-1]
    if f.startswith('/') and '.so' in f:
        print(f)" | sort -u | xargs -r readlink -f | while read -r f; do
    dpkg -S "$f" 2>/dev/null || dpkg -S "${f#/usr}" 2>/dev/null || true
  done | cut -d: -f1 | sort -u
}
keep_numpy=$(loaded numpy)
keep_torch=$(loaded numpy,torch)
hide=() later=()
for p in $bundled $toolchain; do
  p=${p%%:*}
  if grep -qx "$p" <<<"$keep_numpy"; then
    echo "test_wheel.sh: $p is loaded by Python or numpy themselves: kept" >&2
  elif grep -qx "$p" <<<"$keep_torch"; then
    later+=("$p")
  else
    hide+=("$p")
  fi
done
echo "test_wheel.sh: hiding ${#hide[@]} packages; ${#later[@]} more, which Debian's torch loads, after the torch step: ${later[*]}"

export WORK=$work WHL=$whl ROOT=$root HIDE="${hide[*]}" LATER="${later[*]:-}"
# shellcheck disable=SC2016 # expanded by the inner bash, from the exports
unshare -m --propagation private bash -c '
  set -euo pipefail
  mount -t overlay overlay -o lowerdir=/usr,upperdir=$WORK/ov/upper,workdir=$WORK/ov/work /usr
  hide_packages() {
    local n=0
    for p in "$@"; do
      for f in $(dpkg -L "$p" 2>/dev/null); do
        case $f in /usr/*|/lib/*|/lib64/*) ;; *) continue ;; esac
        if [ -f "$f" ] || [ -L "$f" ]; then rm -f "$f"; n=$((n + 1)); fi
      done
    done
    echo "test_wheel.sh: $n files hidden"
  }
  hide_packages $HIDE
  rm -rf /usr/local/cuda* /usr/local/lib/libcudart* /usr/local/bin/nvcc
  echo "test_wheel.sh: the CUDA toolkit and runtime hidden"
  for f in /usr/include/stdio.h /usr/include/lmdb.h /usr/include/hdf5/serial/hdf5.h \
      /usr/lib/x86_64-linux-gnu/libturbojpeg.so.0 /usr/lib/x86_64-linux-gnu/liburing.so.2; do
    if [ -e "$f" ]; then echo "test_wheel.sh: $f still visible" >&2; exit 1; fi
  done
  for c in cc gcc clang nvcc; do
    if command -v $c >/dev/null 2>&1; then
      echo "test_wheel.sh: $c is still visible" >&2; exit 1
    fi
  done
  /usr/bin/python3 -m venv --system-site-packages "$WORK/venv"
  "$WORK/venv/bin/pip" install -q --no-index --disable-pip-version-check "$WHL"
  cd "$WORK/run"
  "$WORK/venv/bin/python" "$ROOT/tests/wheel/check_wheel.py" --torch \
    "$WORK/fixtures" "$WORK/run"
  hide_packages $LATER
  for f in /usr/lib/x86_64-linux-gnu/liblmdb.so.0 /usr/lib/x86_64-linux-gnu/libjpeg.so.62 \
      /usr/lib/x86_64-linux-gnu/libhdf5_serial.so.103; do
    if [ -e "$f" ]; then echo "test_wheel.sh: $f still visible" >&2; exit 1; fi
  done
  rm -rf "$WORK/run" && mkdir "$WORK/run"
  SLUICE_EXPECT_NO_CUDART=1 "$WORK/venv/bin/python" "$ROOT/tests/wheel/check_wheel.py" \
    "$WORK/fixtures" "$WORK/run"
'
