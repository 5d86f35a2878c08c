#!/usr/bin/env bash
# End-to-end checks of the loader's user entry points on a tiny dataset made
# with `sluice synth` + `sluice pack`:
#   schedule  `sluice schedule` prints the linear curriculum
#   loop      examples/train_loop runs 3 epochs at 32, 48, 64 px
#   mpi       mpirun -np 2 examples/mpi_shard: ranks disjoint and covering
#   demo      scripts/demo.sh on an existing build and 49 images
#   install   installs the build and builds examples/ on its own against it
#             with find_package(sluice), then runs that train_loop
# Usage: check_examples.sh MODE BUILD_DIR SOURCE_DIR SCRATCH_DIR [PROGRAM]
set -euo pipefail
mode=$1 build=$2 src=$3 scratch=$4/loader-examples-$1 prog=${5:-}
sluice=${SLUICE_BIN:-$build/tools/sluice}
rm -rf "$scratch"
mkdir -p "$scratch"
"$sluice" synth "$scratch/imgs" --count 60 --classes 3 --max-side 96 --seed 3 >/dev/null
"$sluice" pack "$scratch/imgs" "$scratch/train.lmdb" --quiet >/dev/null
cat >"$scratch/train.ini" <<EOF
[dataset]
path = $scratch/train.lmdb
[loader]
batch_size = 8
workers = 2
order = quasi_random
drop_last = false
[resolution]
schedule = linear
min = 32
max = 64
start_epoch = 0
end_epoch = 2
multiple = 16
[augment]
dtype = fp16
[device]
backend = host
EOF

check_loop_output() { # the epochs' resolutions follow the schedule
  grep -Eq '^0 +32x32 +8 ' "$1" && grep -Eq '^1 +48x48 +8 ' "$1" &&
    grep -Eq '^2 +64x64 +8 ' "$1" || { cat "$1"; echo "unexpected output"; exit 1; }
}

case $mode in
schedule)
  "$sluice" schedule "$scratch/train.ini" --epochs 4 | tee "$scratch/out.txt"
  grep -Eq '^0 +32x32 +48.0 KiB' "$scratch/out.txt"
  grep -Eq '^1 +48x48 ' "$scratch/out.txt"
  grep -Eq '^3 +64x64 +192.0 KiB' "$scratch/out.txt"
  grep -q '60 samples, 8 batches per epoch' "$scratch/out.txt"
  if "$sluice" schedule "$scratch/train.ini" --epochs 0 2>/dev/null; then
    echo "--epochs 0 accepted"; exit 1
  fi
  ;;
loop)
  "$prog" "$scratch/train.ini" --epochs 3 | tee "$scratch/out.txt"
  check_loop_output "$scratch/out.txt"
  ;;
mpi)
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  # OpenMPI itself leaks at MPI_Finalize; LeakSanitizer would blame the test.
  export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
  for order in sequential random quasi_random; do
    mpirun -np 2 --allow-run-as-root --oversubscribe "$prog" \
      "$scratch/train.lmdb" --order $order --epochs 2 --batch 7
    mpirun -np 2 --allow-run-as-root --oversubscribe "$prog" \
      "$scratch/train.lmdb" --order $order --epochs 1 --batch 7 --drop-last
  done
  ;;
install)
  prefix=$scratch/prefix
  cmake --install "$build" --prefix "$prefix" >/dev/null
  cmake -S "$src/examples" -B "$scratch/ex-build" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
  cmake --build "$scratch/ex-build" --target train_loop >/dev/null
  LD_LIBRARY_PATH="$prefix/lib:$prefix/lib64:$prefix/lib/x86_64-linux-gnu" \
    "$scratch/ex-build/train_loop" "$scratch/train.ini" --epochs 3 | tee "$scratch/out.txt"
  check_loop_output "$scratch/out.txt"
  ;;
demo)
  # scripts/demo.sh on a folder of 49 images (issue 40): fewer than the
  # curriculum's batch of 64, so the demo sizes its batch to the data.
  "$sluice" synth "$scratch/imgs49" --count 49 --classes 3 --max-side 96 \
    --seed 5 >/dev/null
  "$src/scripts/demo.sh" --build "$build" --out "$scratch/demo" \
    "$scratch/imgs49" >"$scratch/out.txt" 2>&1 || { cat "$scratch/out.txt"; exit 1; }
  grep -q '^== batch size 12 (49 images)' "$scratch/out.txt" ||
    { cat "$scratch/out.txt"; echo "no batch size line"; exit 1; }
  grep -Eq '^4 +192x192 +4 ' "$scratch/out.txt" ||
    { cat "$scratch/out.txt"; echo "no epoch 4 at 192 px"; exit 1; }
  "$src/scripts/demo.sh" --build "$build" --out "$scratch/demo" \
    --batch-size 7 "$scratch/imgs49" >"$scratch/out.txt" 2>&1 ||
    { cat "$scratch/out.txt"; exit 1; }
  grep -q '^== batch size 7 (49 images)' "$scratch/out.txt"
  ;;
*)
  echo "unknown mode $mode"; exit 2 ;;
esac
echo "loader $mode check: ok"
