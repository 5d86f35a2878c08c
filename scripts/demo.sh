#!/usr/bin/env bash
# Quick start command 1: the main job on an embedded default.
# Installs what is missing for the build (scripts/deps.sh --build: Debian's
# -dev packages, nothing from PyPI), builds, generates a small image folder, packs it
# into an LMDB file with `sluice pack`, and trains a toy C loop on it with a
# progressive-resolution curriculum. Idempotent; everything lands in out/demo.
# Usage: scripts/demo.sh [--batch-size N] [--build DIR] [--out DIR] [IMAGE_FOLDER]
#   IMAGE_FOLDER   your images (default: generated ones)
#   --batch-size N the loop's batch (default: 64, or a quarter of the images
#                  when there are fewer than 256, so that every epoch has
#                  batches however small the folder)
#   --build DIR    use an existing build of sluice (no install, no build)
#   --out DIR      where the packed file goes (default: out/demo)
# On a GPU machine with the CUDA toolkit the batches land in device memory.
set -euo pipefail
usage() { sed -n '6,12s/^# \{0,1\}//p' "$0" >&2; exit 2; }
batch='' build='' work=out/demo src=''
while [[ $# -gt 0 ]]; do
  case $1 in
  --batch-size) [[ $# -ge 2 && $2 =~ ^[1-9][0-9]*$ ]] || usage; batch=$2; shift 2 ;;
  --build) [[ $# -ge 2 ]] || usage; build=$(realpath "$2"); shift 2 ;;
  --out) [[ $# -ge 2 ]] || usage; work=$(realpath -m "$2"); shift 2 ;;
  -h | --help) usage ;;
  -*) echo "demo.sh: unknown option $1" >&2; usage ;;
  *) [[ -z "$src" ]] || usage; src=$(realpath "$1"); shift ;;
  esac
done
cd "$(dirname "$0")/.."
if [[ -z "$build" ]]; then
  # Only what the demo runs: libsluice, `sluice` and the examples (no tests,
  # benchmarks or Python module, so none of their packages).
  scripts/deps.sh --build
  build=build-demo
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DSLUICE_BUILD_TESTS=OFF -DSLUICE_BUILD_BENCH=OFF -DSLUICE_PYTHON=OFF >/dev/null
  ninja -C "$build" sluice_cli train_loop >/dev/null
fi
sluice=$build/tools/sluice
mkdir -p "$work"

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
"$sluice" info "$work/train.lmdb" | tee "$work/info.txt"

# The batch: the curriculum's 64, or a quarter of a small folder's images
# (drop_last = true: a batch larger than the data would leave no batch).
count=$(awk '$1 == "samples:" { print $2 }' "$work/info.txt")
if [[ -z "$batch" ]]; then
  batch=64
  if [[ "$count" =~ ^[0-9]+$ ]] && ((count < 4 * batch)); then
    batch=$((count / 4 > 0 ? count / 4 : 1))
  fi
fi
echo "== batch size $batch ($count images)"

# The embedded default: examples/curriculum.ini, a progressive-resolution
# curriculum (128 px in epoch 0, 192 px from epoch 4), on the packed data.
config=examples/curriculum.ini
"$sluice" config --check "$config"
"$sluice" schedule "$config" --epochs 5
echo "== training loop"
"$build/examples/train_loop" "$config" --epochs 5 \
  --set dataset.path="$work/train.lmdb" --set loader.batch_size="$batch"
