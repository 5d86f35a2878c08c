#!/usr/bin/env bash
# shellcheck disable=SC2317 # functions that `step` runs through bash -c
# The GPU path on a GPU machine, in one command, under 8 minutes, from what
# travels with the working tree: unpacks the dependency bundle that
# bench/gpu_bundle.sh made (.gpu-deps/bundle.tar.gz: the machine has CUDA,
# CMake, ninja and Python but no -dev packages and no registry), builds
# sluice with CUDA against it, and runs
#   1. ctest -L gpu (SLUICE_REQUIRE_GPU=1: a missing device fails),
#   2. bench_gpu: ring H2D ÷ plain pinned memcpy, the step stall with a real
#      producer, VRAM taken ÷ budget, convert kernel GB/s, the kernel against
#      the CPU formula,
#   3. the fp16/bf16 sweep: bench_gpu per dtype × layout × resolution,
#   4. the Python binding's tests (ctest -L python) when its module built,
#   5. the wheel's CUDA backend against its host backend, when dist/ holds
#      a wheel (scripts/wheel.sh) that travelled with the tree.
# Everything lands in $OUT: gpu.log (all output) and gpu.json (each step's
# status and seconds, and bench_gpu's measurements).
#
#   bench/gpu.sh                    OUT defaults to out/gpu
#   BENCH_GPU_ARGS="--batch 256 --res 224 --batches 40 --budget 1024"
#   SLUICE_GPU_PYTHON=/path/python3 the Python for the module (default: python3)
#   SLUICE_GPU_REHEARSE=1           no GPU here: build, run the tests that
#                                   need none, skip the device steps
#                                   (bench/gpu_rehearse.sh sets it)
#
# docs/TUNING.md ("The device check") gives the `run` call that starts it.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$root/out/gpu}
build=${SLUICE_GPU_BUILD:-/tmp/sluice-gpu-build}
# A build folder configured from another checkout cannot be reused.
if [ -f "$build/CMakeCache.txt" ] &&
  ! grep -qx "CMAKE_HOME_DIRECTORY:INTERNAL=$root" "$build/CMakeCache.txt"; then
  rm -rf "$build"
fi
deps=${SLUICE_GPU_DEPS:-/tmp/sluice-deps}
bundle=$root/.gpu-deps/bundle.tar.gz
mkdir -p "$OUT"
log=$OUT/gpu.log
steps=$OUT/steps.tsv
: >"$log"
: >"$steps"
start=$(date +%s)
deadline=$((start + ${SLUICE_GPU_BUDGET_S:-465})) # 7¾ minutes in all
export PATH=/usr/local/cuda/bin:$PATH

say() { echo "$*" | tee -a "$log"; }
# step NAME LIMIT_S CMD...: runs CMD under the smaller of LIMIT_S and the
# time left, output to the log, and records "name status seconds" for the
# JSON. Returns CMD's status (124 when it ran out of time).
step() {
  local name=$1 limit=$2
  shift 2
  local left=$((deadline - $(date +%s)))
  [ "$left" -lt "$limit" ] && limit=$left
  if [ "$limit" -lt 5 ]; then
    say "== $name: skipped (out of time)"
    printf '%s\tskipped-time\t0\n' "$name" >>"$steps"
    return 124
  fi
  say "== $name (limit ${limit}s)"
  local t0 rc
  t0=$(date +%s)
  # Through bash, so CMD may be one of the functions below (export -f).
  timeout --kill-after=5 "$limit" bash -c '"$@"' "$name" "$@" >>"$log" 2>&1
  rc=$?
  printf '%s\t%s\t%s\n' "$name" "$rc" "$(($(date +%s) - t0))" >>"$steps"
  say "== $name: status $rc, $(($(date +%s) - t0)) s"
  return $rc
}
skip() { # skip NAME WHY
  say "== $1: skipped ($2)"
  printf '%s\tskipped\t0\t%s\n' "$1" "$2" >>"$steps"
}

have_gpu=0
if [ "${SLUICE_GPU_REHEARSE:-0}" != 1 ] && command -v nvidia-smi >/dev/null &&
  nvidia-smi -L >>"$log" 2>&1; then
  have_gpu=1
fi
say "sluice device check: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?'), $(uname -m), $(nproc) cores, gpu: $have_gpu"

# ---- The dependency bundle --------------------------------------------------
status=0
if [ ! -f "$bundle" ]; then
  say "gpu.sh: $bundle is missing: run bench/gpu_bundle.sh where apt-get works, and carry .gpu-deps"
  exit 1
fi
unpack() {
  rm -rf "$deps" && mkdir -p "$deps" && tar -C "$deps" -xzf "$bundle" &&
    find "$deps" -name '*.pc' -print0 | xargs -0 sed -i "s#@SLUICE_DEPS@#$deps#g"
}
export -f unpack
export deps bundle build OUT
step unpack 60 unpack || exit 1
libdirs=$deps/usr/lib/x86_64-linux-gnu:$deps/usr/lib/x86_64-linux-gnu/hdf5/serial
export PKG_CONFIG=$deps/bin/pkg-config
export PKG_CONFIG_LIBDIR=$deps/usr/lib/x86_64-linux-gnu/pkgconfig:$deps/usr/share/pkgconfig
export PKG_CONFIG_PATH=
export CMAKE_PREFIX_PATH=$deps/usr

# ---- Configure and build ---------------------------------------------------
# The Python that builds the module and runs its tests (PyTorch's there).
py=${SLUICE_GPU_PYTHON:-$(command -v python3 || echo /usr/bin/python3)}
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
# Debian's multiarch headers (libjpeg's jconfig.h) sit where the system
# compiler looks only under /usr. The build tree's binaries find the bundle by RUNPATH (CMake adds the
# directories of the libraries they link); what those load in turn, by
# LD_LIBRARY_PATH, set only for the steps that run them.
step configure 120 cmake -S "$root" -B "$build" "${gen[@]}" \
  -DCMAKE_BUILD_TYPE=Release -DSLUICE_CUDA=ON -DSLUICE_BUILD_EXAMPLES=OFF \
  -DPKG_CONFIG_EXECUTABLE="$PKG_CONFIG" -DCMAKE_PREFIX_PATH="$deps/usr" \
  "-DCMAKE_C_FLAGS=-isystem $deps/usr/include/x86_64-linux-gnu" \
  "-DCMAKE_BUILD_RPATH=${libdirs//:/;}" -DSLUICE_PYTEST_PYTHON="$py" \
  -DPython3_EXECUTABLE="$py" ||
  { say "gpu.sh: configure failed (see $log)"; exit 1; }
# Keep going past targets that fail: ctest reports a test that did not build.
step build 300 cmake --build "$build" -j "$(nproc)" -- -k 0 || status=1
export LD_LIBRARY_PATH=$libdirs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

# ---- Run -------------------------------------------------------------------
# Every library libsluice loads is found, and the bundle's come from it.
libcheck() {
  local so
  so=$(find "$build" -maxdepth 1 -name 'libsluice.so.*.*' | head -1)
  [ -n "$so" ] || { echo "no libsluice.so"; return 1; }
  ldd "$so"
  ! ldd "$so" | grep -q 'not found'
}
export -f libcheck
step libs 20 libcheck || status=1
ctest_args=(--output-on-failure --test-dir "$build")
if [ "$have_gpu" = 1 ]; then
  SLUICE_REQUIRE_GPU=1 step ctest-gpu 150 ctest "${ctest_args[@]}" -L gpu || status=1
  bench=$build/bench/bench_gpu
  if [ -x "$bench" ]; then
    # shellcheck disable=SC2086
    step bench-gpu 90 "$bench" ${BENCH_GPU_ARGS:-} --json "$OUT/bench.jsonl" || status=1
    sweep() {
      local rc=0 dt lay res
      for dt in fp16 bf16; do
        for lay in nchw nhwc; do
          for res in 160 224; do
            "$bench" --batch 256 --res "$res" --batches 24 --dtype "$dt" \
              --layout "$lay" --quick --json "$OUT/bench.jsonl" || rc=1
          done
        done
      done
      return "$rc"
    }
    export -f sweep
    export bench
    step sweep-fp16-bf16 90 sweep || status=1
  else
    skip bench-gpu "bench_gpu did not build"
    status=1
  fi
else
  skip ctest-gpu "no GPU"
  skip bench-gpu "no GPU"
  skip sweep-fp16-bf16 "no GPU"
  # What runs without a device: the gpu tests skip, the device unit tests
  # run, so the binaries are seen to load the bundle's libraries.
  step ctest-nogpu 150 ctest "${ctest_args[@]}" -L 'gpu|unit' \
    -R 'device|ring|twin|gpu' || status=1
fi
if ls "$build"/python/sluice/_sluice*.so >/dev/null 2>&1; then
  # -V: pytest's own report (and a skip's reason) reaches the log.
  PYTHONUNBUFFERED=1 step python 120 ctest "${ctest_args[@]}" -V -L python || status=1
else
  skip python "module not built (no Python development headers: see the configure output)"
fi

# The wheel, when one travelled in dist/ (scripts/wheel.sh): its CUDA
# backend (libsluice_cuda.so, opened at run time) against this machine's
# CUDA runtime, batch for batch equal to its host backend, through DLPack
# into torch. Its own libraries only: no LD_LIBRARY_PATH into the bundle.
whl=$(find "$root/dist" -maxdepth 1 -name 'sluice-*.whl' 2>/dev/null | head -1)
if [ -n "$whl" ] && [ "$have_gpu" = 1 ]; then
  wheel() {
    local site=/tmp/sluice-wheel/site work=/tmp/sluice-wheel/work
    rm -rf /tmp/sluice-wheel && mkdir -p "$work" || return 1
    "$py" -m pip install --no-deps --no-index --target "$site" "$whl" || return 1
    ldconfig -p | grep -E 'libcudart' || echo "wheel: no libcudart in ldconfig's cache"
    env -u LD_LIBRARY_PATH PYTHONPATH="$site" "$py" "$root/tests/wheel/check_wheel_gpu.py" "$work"
  }
  export -f wheel
  export whl py root
  step wheel 90 wheel || status=1
else
  skip wheel "$([ -z "$whl" ] && echo 'no dist/sluice-*.whl' || echo 'no GPU')"
fi

# ---- Report ----------------------------------------------------------------
"$py" - "$steps" "$OUT/bench.jsonl" "$OUT/gpu.json" "$have_gpu" "$status" \
  "$(($(date +%s) - start))" <<'EOF' || say "gpu.sh: could not write gpu.json"
import json, os, sys
steps_f, bench_f, out_f, have_gpu, status, wall = sys.argv[1:7]
steps = []
for line in open(steps_f):
    f = line.rstrip("\n").split("\t")
    steps.append({"step": f[0], "status": f[1], "seconds": int(f[2]),
                  **({"why": f[3]} if len(f) > 3 else {})})
bench = []
if os.path.exists(bench_f):
    bench = [json.loads(l) for l in open(bench_f) if l.strip()]
json.dump({"gpu": have_gpu == "1", "ok": status == "0",
           "wall_seconds": int(wall), "steps": steps, "bench": bench},
          open(out_f, "w"), indent=1)
EOF
rm -f "$steps"
say ""
grep -E '^\| ' "$log" | tail -12 || true
say "gpu.sh: $([ $status = 0 ] && echo ok || echo FAILED) in $(($(date +%s) - start)) s; $OUT/gpu.json, $log"
exit $status
