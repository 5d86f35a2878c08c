#!/usr/bin/env bash
# The whole path on generated data: make an image folder, pack it, train.
#   examples/quickstart.sh [BUILD_DIR] [WORK_DIR]
# Uses BUILD_DIR/tools/sluice and BUILD_DIR/examples/train_loop (default
# build/), writes into WORK_DIR (default a temporary directory).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}
work=${2:-$(mktemp -d)}
mkdir -p "$work"
sluice=$build/tools/sluice
"$sluice" synth "$work/images" --count 512 --classes 10 --imagenet
"$sluice" pack "$work/images" "$work/train.lmdb" --force
"$sluice" schedule "$here/curriculum.ini" --epochs 6
"$build/examples/train_loop" "$here/curriculum.ini" --epochs 6 \
  --set dataset.path="$work/train.lmdb"
echo "data in $work"
