#!/usr/bin/env bash
# The GPU path on a GPU machine, in one go (< 8 minutes): builds sluice with
# CUDA, runs the `gpu`-labelled tests (a missing device is then a failure),
# runs bench_gpu, and prints its table last.
#
#   bench/gpu.sh [build-dir]        (default: build-gpu-bench)
#   BENCH_GPU_ARGS="--batch 256 --res 224 --batches 40 --budget 1024"
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-gpu-bench}
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
export PATH=/usr/local/cuda/bin:$PATH

gen=() keep=(-- -k)
command -v ninja >/dev/null && gen=(-G Ninja) keep=(-- -k 0)
echo "== configure ($build)"
timeout 180 cmake -S "$root" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DSLUICE_CUDA=ON -DSLUICE_BUILD_EXAMPLES=OFF >"$log/configure" 2>&1 ||
  { tail -30 "$log/configure"; echo "gpu.sh: configure failed"; exit 1; }
echo "== build"
# Keep going past targets of other parts of the tree that fail to build: the
# GPU path needs only its own; ctest reports any gpu test that did not build.
if ! timeout 300 cmake --build "$build" -j "$(nproc)" "${keep[@]}" >"$log/build" 2>&1; then
  grep -E "FAILED|error" "$log/build" | head -20
  echo "gpu.sh: some targets failed to build; going on with what built"
fi
[ -x "$build/bench/bench_gpu" ] || { tail -40 "$log/build"; echo "gpu.sh: bench_gpu did not build"; exit 1; }

echo "== ctest -L gpu"
status=0
(cd "$build" && SLUICE_REQUIRE_GPU=1 timeout 240 ctest -L gpu --output-on-failure) \
  >"$log/ctest" 2>&1 || status=1
tail -25 "$log/ctest"

echo "== bench_gpu ${BENCH_GPU_ARGS:-}"
# shellcheck disable=SC2086
timeout 240 "$build/bench/bench_gpu" ${BENCH_GPU_ARGS:-} >"$log/bench" 2>&1 || status=1
grep -v '^|' "$log/bench" || true
echo
echo "gpu tests: $(grep -E 'tests passed|tests failed' "$log/ctest" || echo 'did not finish')"
grep '^|' "$log/bench" || echo "bench_gpu printed no table (status $status)"
exit $status
