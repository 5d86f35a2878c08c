#!/usr/bin/env bash
# Quick start command 1: the main job on an embedded default.
# Installs what is missing, builds, generates a small image folder, packs it
# into an LMDB file with `sluice pack`, and trains a toy C loop on it with a
# progressive-resolution curriculum. Idempotent; everything lands in out/demo.
# Usage: scripts/demo.sh [IMAGE_FOLDER]   (default: generated images)
# On a GPU machine with the CUDA toolkit the batches land in device memory.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
build=build-release
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C "$build" >/dev/null
sluice=$build/tools/sluice
work=out/demo
mkdir -p "$work"

src=${1:-}
if [[ -z "$src" ]]; then
  src=$work/images
  if [[ ! -d "$src" ]]; then
    echo "== generating a small image folder ($src)"
    "$sluice" synth "$src" --count 600 --classes 4 --seed 7 --imagenet
  fi
fi

echo "== packing $src into $work/train.lmdb"
# --levels: the 128-192 px epochs of the curriculum below decode most crops
# from the 3/4 or 1/2 copy of each image (docs/FORMATS.md, Resolution levels).
"$sluice" pack "$src" "$work/train.lmdb" --max-side 320 --levels 3/4,1/2 \
  --threads 2 --force
"$sluice" info "$work/train.lmdb"

# The embedded default: examples/curriculum.ini, a progressive-resolution
# curriculum (128 px in epoch 0, 192 px from epoch 4), on the packed data.
config=examples/curriculum.ini
"$sluice" config --check "$config"
"$sluice" schedule "$config" --epochs 5
echo "== training loop"
"$build/examples/train_loop" "$config" --epochs 5 --set dataset.path="$work/train.lmdb"
