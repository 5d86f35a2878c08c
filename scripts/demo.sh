#!/usr/bin/env bash
# Quick start command 1: the main job on an embedded default.
# Installs what is missing, builds, generates a small image folder, packs it
# into an LMDB file with `sluice pack`, and trains a toy C loop on it with a
# progressive-resolution curriculum. Idempotent; everything lands in out/demo.
# Usage: scripts/demo.sh [IMAGE_FOLDER]   (default: generated images)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
build=build
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
"$sluice" pack "$src" "$work/train.lmdb" --max-side 256 --threads 2 --force
"$sluice" info "$work/train.lmdb"

cat > "$work/train.ini" <<INI
; The embedded default: a progressive-resolution curriculum on the demo data.
[dataset]
path = $work/train.lmdb
[loader]
batch_size = 32
workers = 2
order = quasi_random
seed = 1
[resolution]
schedule = linear
min = 128
max = 192
start_epoch = 1
end_epoch = 3
multiple = 32
[augment]
dtype = fp16
layout = nchw
[device]
backend = auto
INI
"$sluice" config --check "$work/train.ini"
"$sluice" schedule "$work/train.ini" --epochs 4
echo "== training loop"
"$build/examples/train_loop" "$work/train.ini" 4
