#!/usr/bin/env bash
# sluice benchmarks: one command, every comparison, one run.
#
#   bench/run.sh [--smoke] [--data DIR] [--count N] [--rounds N] [--res LIST]
#                [--workers LIST] [--batch N] [--peers LIST] [--no-setup]
#                [--keep-benchmarks] [--baseline REV] [--rows LIST] [--layouts LIST]
#
# 1. Builds sluice in Release (SLUICE_BENCH_BUILD, default build-bench/).
# 2. Data: DIR (or SLUICE_BENCH_DATA), a folder of class subfolders of JPEGs;
#    by default N generated ImageNet-like images (`sluice synth --imagenet`:
#    ~500x375, q90, ~100 KB), packed to LMDB and HDF5 with `sluice pack`, and
#    to an FFCV .beton when FFCV is installed.
# 3. Installs the peers into bench/venv (bench/setup_peers.sh; a peer that
#    does not install is reported with its error).
# 4. Runs bench/harness.py: decode ceiling (tjDecompress2) and sluice
#    decode+augment per core; sluice loader end to end with each worker count,
#    format and io backend; the peers with the same images, transforms and
#    worker counts; the training recipes at 224 px (or the largest --res) on
#    one worker (the fewest --workers): sluice (bench/peers/sluice_loader.py
#    --recipe) against torch_pil and torch_tvio (bench/peers/peer.py
#    --recipe), each of rrc (RandomResizedCrop + flip), tv (+ augment.auto =
#    trivial, augment.erasing = 0.1: TrivialAugmentWide + RandomErasing) and
#    timm (+ augment.auto = randaugment, auto_ops 2, auto_magnitude 9,
#    auto_bins 11, auto_magnitude_std 0.5, auto_fill, augment.erasing =
#    0.25), with sluice's cost of each against its rrc; detection at the same
#    resolution and worker count, one run: the images with COCO-style boxes
#    (bench/det_data.py: a COCO instances JSON and the same boxes packed to
#    LMDB), sluice (peers/sluice_loader.py --detect rrc|iou_crop) against a
#    torch DataLoader with the same box-aware transforms (peers/peer.py
#    torch_det: transforms.v2 where torchvision has them); peak memory of
#    each; sluice RSS over 5 epochs.
#    The foreign-layout rows (issue 27), at 224 px (or the largest --res)
#    with each worker count: the same images written by each layout's own
#    client (bench/peers/foreign.py prepare: folder2lmdb's pickled LMDB by
#    py-lmdb + pickle, tensorpack's msgpack LMDB, a TFRecord file by the
#    `tfrecord` package, WebDataset shards by webdataset's ShardWriter),
#    sluice reading each in place against the reader its users run
#    (folder2lmdb's ImageFolderLMDB, a msgpack Dataset, tfrecord's
#    TFRecordDataset, webdataset's WebLoader), same transforms and workers.
#    A layout whose client package is missing, or that this sluice does
#    not read yet, is skipped with a note.
#    The remote rows (issue 38; bench/remote_rows.py), at 224 px (or the
#    largest --res) with each worker count: the same images on a loopback
#    SeaweedFS (python/tests/s3server.py) as `sluice pack --shards` shards
#    and as LitData's (litdata.optimize) and Mosaic Streaming's (MDSWriter)
#    own conversions, and as webdataset ShardWriter tar shards on nginx
#    (python/tests/httpserver.py); sluice's cold-cache epoch (empty
#    io.cache_dir), warm-cache epoch and the same shards read locally,
#    against LitData's StreamingDataset (S3), Mosaic's StreamingDataset (S3)
#    and webdataset's WebLoader (HTTP), each cold (its cache emptied) and
#    warm; the open time of the images in 1,000 shards at s3://; issue 38's
#    ratio goals. A "sluice range" row (io.remote_read = ranges) runs only when
#    libsluice knows that key (range mode, another branch), else a note.
#    No weed/boto3/nginx: the rows are skipped with a note; a peer whose
#    client is missing from bench/venv likewise.
# 5. Writes bench/results/<date>-<host>.json, .md and .png plots and updates
#    BENCHMARKS.md (bench/report.py).
#
# Environment: SLUICE_BENCH_BUILD, SLUICE_BENCH_DATA, SLUICE_BENCH_VENV,
# SLUICE_BENCH_JOBS (ninja -j, default 2), SLUICE_BENCH_CMAKE_ARGS (extra
# cmake arguments, e.g. -DSLUICE_CUDA=OFF), SLUICE_BENCH_HARNESS_ARGS (extra
# bench/harness.py arguments, e.g. --io-all-res).
#
# --smoke: a few hundred images, one round, no installs, peers only where
# already installed, results under the build dir (BENCHMARKS.md untouched).
# For CI: exits non-zero when any part fails, so the harness cannot rot.
# --keep-benchmarks: a full run whose results stay in bench/results/ only
# (BENCHMARKS.md's results section is not rewritten: for a narrower run).
# --baseline REV: also builds git revision REV (a temporary worktree, `git
# worktree add --detach`, removed at exit) with the same build type and
# cmake arguments in its own build dir ($build-REV/build), packs the images with
# its own `sluice pack` (LMDB, and with levels when it has them), and runs
# its bench_decode and its sluice loader rows (LMDB io=mmap, levels below
# 224 px) in the same rounds as the current build's, labelled sluice@REV:
# every speed claim against REV is a ratio measured in one run.
# --rows LIST: only these sections (harness.py --rows): decode, loader,
# recipes, detection, drift, efficiency, binding, formats, foreign, remote;
# e.g. --rows foreign, or --rows remote (the remote rows alone).
# --layouts LIST: the foreign layouts to prepare (default pickle,msgpack,
# tfrecord,webdataset).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=${SLUICE_BENCH_BUILD:-$root/build-bench}
venv=${SLUICE_BENCH_VENV:-$here/venv}
data=${SLUICE_BENCH_DATA:-}
smoke=0 setup=1 keep=0 baseline="" rows=all layouts=pickle,msgpack,tfrecord,webdataset count="" rounds="" res="" workers="" batch="" peers="" jobs=${SLUICE_BENCH_JOBS:-2}

usage() { sed -n '2,80p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
  case $1 in
    --smoke) smoke=1 ;;
    --data) data=$2; shift ;;
    --count) count=$2; shift ;;
    --rounds) rounds=$2; shift ;;
    --res) res=$2; shift ;;
    --workers) workers=$2; shift ;;
    --batch) batch=$2; shift ;;
    --peers) peers=$2; shift ;;
    --no-setup) setup=0 ;;
    --keep-benchmarks) keep=1 ;;
    --baseline) baseline=$2; shift ;;
    --rows) rows=$2; shift ;;
    --layouts) layouts=$2; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "run.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
if [ $smoke = 1 ]; then
  count=${count:-240} rounds=${rounds:-1} res=${res:-224,128} workers=${workers:-1}
  batch=${batch:-32} setup=0
  peer_res=${res%%,*}
else
  count=${count:-3000} rounds=${rounds:-3} res=${res:-224,160,128} workers=${workers:-1,2}
  batch=${batch:-64}
  peer_res=$res
fi
peers=${peers:-torch_pil,torch_tvio,dali_cpu,ffcv,spdl}
say() { printf '\n== %s\n' "$*" >&2; }

py=python3
command -v python3 >/dev/null || py=/usr/bin/python3
[ -x "$venv/bin/python" ] && py=$venv/bin/python
if [ $smoke = 1 ]; then
  say "smoke: harness unit tests"
  "$py" "$here/test_harness.py" || { echo "run.sh: harness unit tests failed" >&2; exit 1; }
fi

# ---------------------------------------------------------------- build
say "build: Release in $build"
# Tests stay configured (not built): bench/ uses tests/support helpers.
mkdir -p "$build"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSLUICE_BUILD_TESTS=ON \
  -DSLUICE_BUILD_EXAMPLES=OFF -DSLUICE_BUILD_BENCH=ON ${SLUICE_BENCH_CMAKE_ARGS:-} >"$build/bench-cmake.log" 2>&1 ||
  { cat "$build/bench-cmake.log" >&2; echo "run.sh: cmake failed" >&2; exit 1; }
# The harness's programs, those that exist in this tree (bench/CMakeLists.txt).
targets=$(ninja -C "$build" -t targets all 2>/dev/null |
  sed -n 's/^\(bench_decode\|bench_loader\|bench_formats\|_sluice\): .*/\1/p' | sort -u)
nice ninja -C "$build" -j"$jobs" sluice_cli sluice >&2 ||
  { echo "run.sh: building the sluice CLI and library failed" >&2; exit 1; }
built_fail=""
for t in $targets; do
  nice ninja -C "$build" -j"$jobs" "$t" >&2 || built_fail="$built_fail $t"
done
[ -z "$built_fail" ] || echo "run.sh: these bench targets did not build:$built_fail" >&2
sluice=$build/tools/sluice
has_cmd() { "$sluice" "$1" --help >/dev/null 2>&1; }

# ---------------------------------------------------------------- baseline
base_build="" base_label="" base_sluice=""
if [ -n "$baseline" ]; then
  rev=$(git -C "$root" rev-parse --verify --short=7 "$baseline^{commit}") ||
    { echo "run.sh: --baseline $baseline is not a commit of this repository" >&2; exit 2; }
  base_label=sluice@$rev base_src=$build-$rev/src base_build=$build-$rev/build
  # The worktree is temporary (removed at exit); the build dir stays, and
  # the worktree comes back at the same path, so ninja and ccache reuse it.
  cleanup_baseline() {
    git -C "$root" worktree remove --force "$base_src" 2>/dev/null || true
    rm -rf "$base_src"
  }
  cleanup_baseline
  trap cleanup_baseline EXIT
  say "baseline: $base_label (git worktree $base_src, build $base_build)"
  mkdir -p "$base_build"
  # --force: a run killed before its cleanup leaves the path registered.
  git -C "$root" worktree add --force --detach "$base_src" "$rev" >&2 ||
    { echo "run.sh: git worktree add $rev failed" >&2; exit 1; }
  cmake -S "$base_src" -B "$base_build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSLUICE_BUILD_TESTS=ON \
    -DSLUICE_BUILD_EXAMPLES=OFF -DSLUICE_BUILD_BENCH=ON ${SLUICE_BENCH_CMAKE_ARGS:-} >"$base_build/bench-cmake.log" 2>&1 ||
    { cat "$base_build/bench-cmake.log" >&2; echo "run.sh: cmake of $base_label failed" >&2; exit 1; }
  nice ninja -C "$base_build" -j"$jobs" sluice_cli sluice >&2 ||
    { echo "run.sh: building $base_label failed" >&2; exit 1; }
  if ninja -C "$base_build" -t targets all 2>/dev/null | grep -q '^bench_decode:'; then
    nice ninja -C "$base_build" -j"$jobs" bench_decode >&2 || built_fail="$built_fail $base_label/bench_decode"
  fi
  base_sluice=$base_build/tools/sluice
fi

# ---------------------------------------------------------------- peers
if [ $setup = 1 ]; then
  say "peers: bench/setup_peers.sh"
  "$here/setup_peers.sh" || echo "run.sh: setup_peers.sh failed; peers it did not install are reported" >&2
fi
vpy=$venv/bin/python

# ---------------------------------------------------------------- data
if [ -n "$data" ]; then
  images=$(cd "$data" && pwd)
  cache=$build/bench-data/$(printf '%s' "$images" | cksum | cut -d' ' -f1)
  say "data: $images (given)"
  # Repack when the folder changed (names, sizes, times).
  sig=$(find "$images" -type f -printf '%s %T@ %P\n' | sort | cksum)
  if [ "$(cat "$cache/source.sig" 2>/dev/null)" != "$sig" ]; then
    rm -rf "$cache"
    mkdir -p "$cache"
    printf '%s\n' "$sig" >"$cache/source.sig"
  fi
else
  cache=$build/bench-data/synth-$count
  images=$cache/images
  if [ ! -f "$cache/images.done" ]; then
    rm -rf "$images"
    mkdir -p "$cache"
    if has_cmd synth; then
      say "data: sluice synth --imagenet --count $count"
      nice "$sluice" synth "$images" --imagenet --count "$count" --classes 10 --seed 1 >&2
    elif [ -x "$vpy" ] && "$vpy" -c 'import PIL, numpy' 2>/dev/null; then
      say "data: sluice synth missing; bench/peers/synth.py --count $count"
      nice "$vpy" "$here/peers/synth.py" "$images" --count "$count" --classes 10 --seed 1 >&2
    else
      echo "run.sh: no image generator (sluice synth, or PIL in $venv); give --data DIR" >&2
      exit 1
    fi
    touch "$cache/images.done"
  fi
fi
mkdir -p "$cache"
prep=$cache/prep.log   # 'error MSG' / 'note MSG' lines for the harness's report
: >"$prep"
for t in $built_fail; do echo "error $t did not build" >>"$prep"; done
lmdb="" hdf5="" beton="" lmdb_levels="" base_lmdb="" base_levels=""
if has_cmd pack; then
  for fmt in lmdb hdf5; do
    out=$cache/data.$fmt
    # Packed again by every new sluice binary: what pack writes (layout
    # version, JPEG restart layout) may have changed; it takes seconds.
    packer=$(cksum <"$sluice" | cut -d' ' -f1)
    if [ -f "$cache/$fmt.done" ] && [ "$(cat "$cache/$fmt.done")" != "$packer" ]; then
      echo "run.sh: $out was packed by another sluice build; packing it again" >&2
      rm -f "$cache/$fmt.done"
    fi
    if [ ! -f "$cache/$fmt.done" ]; then
      say "data: sluice pack --format $fmt"
      rm -rf "$out"
      if nice "$sluice" pack "$images" "$out" --format "$fmt" >&2 </dev/null; then
        printf '%s\n' "$packer" >"$cache/$fmt.done"
      else
        echo "run.sh: sluice pack to $fmt failed" >&2
        echo "error sluice pack --format $fmt failed" >>"$prep"
      fi
    fi
    [ -f "$cache/$fmt.done" ] && eval "$fmt=\$out"
  done
  # The same images with resolution levels (the harness's levels rows,
  # below 224 px), when this pack has --levels.

  if "$sluice" pack --help 2>&1 | grep -q -- --levels; then
    out=$cache/data.lmdb_levels
    packer=$(cksum <"$sluice" | cut -d' ' -f1)
    if [ "$(cat "$cache/lmdb_levels.done" 2>/dev/null)" != "$packer" ]; then
      say "data: sluice pack --format lmdb --levels 3/4,1/2"
      rm -rf "$out" "$cache/lmdb_levels.done"
      if nice "$sluice" pack "$images" "$out" --format lmdb --levels 3/4,1/2 >&2 </dev/null; then
        printf '%s\n' "$packer" >"$cache/lmdb_levels.done"
      else
        echo "error sluice pack --levels 3/4,1/2 failed" >>"$prep"
      fi
    fi
    [ -f "$cache/lmdb_levels.done" ] && lmdb_levels=$out
  fi
  # The baseline's own packs (what its reader expects), LMDB and levels.
  if [ -n "$base_sluice" ]; then
    bpacker=$(cksum <"$base_sluice" | cut -d' ' -f1)
    for kind in lmdb lmdb_levels; do
      out=$cache/$base_label/data.$kind args=(--format lmdb)
      if [ $kind = lmdb_levels ]; then
        "$base_sluice" pack --help 2>&1 | grep -q -- --levels || continue
        args+=(--levels 3/4,1/2)
      fi
      if [ "$(cat "$out.done" 2>/dev/null)" != "$bpacker" ]; then
        say "data: $base_label sluice pack ${args[*]}"
        rm -rf "$out" "$out.done"
        mkdir -p "$cache/$base_label"
        if nice "$base_sluice" pack "$images" "$out" "${args[@]}" >&2 </dev/null; then
          printf '%s\n' "$bpacker" >"$out.done"
        else
          echo "error $base_label sluice pack ${args[*]} failed" >>"$prep"
        fi
      fi
      [ -f "$out.done" ] && { [ $kind = lmdb ] && base_lmdb=$out || base_levels=$out; }
    done
  fi
else
  echo "run.sh: 'sluice pack' is not there yet: no LMDB/HDF5, no sluice loader runs" >&2
  echo "note sluice pack is not in this tree yet: no LMDB/HDF5 datasets" >>"$prep"
fi
if [[ ",$peers," == *,ffcv,* ]] && [ -x "$vpy" ] && "$vpy" -c 'import ffcv' 2>/dev/null &&
   { [ $smoke = 0 ] || [ -f "$cache/data.beton" ]; }; then
  if [ ! -f "$cache/data.beton" ]; then
    say "data: FFCV .beton"
    MALLOC_MMAP_THRESHOLD_=16777216 MALLOC_TRIM_THRESHOLD_=134217728 \
      nice "$vpy" "$here/peers/peer.py" ffcv --prepare --data "$images" --beton "$cache/data.beton" \
      --workers 2 >&2 2>"$cache/beton.log" ||
      echo "error ffcv .beton: $(tail -3 "$cache/beton.log" | tr '\n' ' ')" | tee -a "$prep" >&2
  fi
  [ -f "$cache/data.beton" ] && beton=$cache/data.beton
fi

# The detection set: COCO-style boxes for the same images, as a COCO
# instances file for the torch peer and packed with them for sluice (made
# again by every new libsluice, as the packs above).
det_lmdb="" det_json=""
lib=$build/libsluice.so
if [ -f "$lib" ] && { [ "$rows" = all ] || [[ ",$rows," == *,detection,* ]]; }; then
  packer=$(cksum <"$lib" | cut -d' ' -f1)
  if [ "$(cat "$cache/det.done" 2>/dev/null)" != "$packer" ]; then
    say "data: detection boxes (bench/det_data.py)"
    rm -rf "$cache/det.lmdb" "$cache/det.lmdb-lock" "$cache/det.json" "$cache/det.done"
    if nice "$py" "$here/det_data.py" "$lib" "$images" "$cache/det.json" "$cache/det.lmdb" >&2; then
      printf '%s\n' "$packer" >"$cache/det.done"
    else
      echo "error bench/det_data.py failed" >>"$prep"
    fi
  fi
  [ -f "$cache/det.done" ] && det_lmdb=$cache/det.lmdb det_json=$cache/det.json
fi

# The foreign layouts, written by their own clients: bench/venv's
# interpreter first, then Debian's for what it lacks (foreign.py skips a
# layout already listed; --last notes what none could write).
manifest=$cache/foreign.manifest
: >"$manifest"
if [ "$rows" = all ] || [[ ",$rows," == *,foreign,* ]]; then
  say "data: foreign layouts ($layouts)"
  fpys=()
  [ -x "$vpy" ] && fpys+=("$vpy")
  [ -x /usr/bin/python3 ] && [ "$vpy" != /usr/bin/python3 ] && fpys+=(/usr/bin/python3)
  n=${#fpys[@]}
  for i in "${!fpys[@]}"; do
    last=""
    [ $((i + 1)) = "$n" ] && last=--last
    nice "${fpys[$i]}" "$here/peers/foreign.py" prepare --data "$images" --cache "$cache" \
      --layouts "$layouts" --sluice "$sluice" --manifest "$manifest" --prep-log "$prep" $last >&2 ||
      echo "error foreign.py prepare with ${fpys[$i]} failed" >>"$prep"
  done
  [ "$n" = 0 ] && echo "note foreign: no Python interpreter to write the foreign layouts" >>"$prep"
fi

# ---------------------------------------------------------------- run
stamp=$(date -u +%Y-%m-%d)-$(hostname -s)
if [ $smoke = 1 ]; then
  outdir=$build/bench-smoke
else
  outdir=$here/results
fi
mkdir -p "$outdir" "$build/bench-formats"
json=$outdir/$stamp.json
say "harness -> $json"
rc=0
"$py" "$here/harness.py" --build "$build" --images "$images" ${lmdb:+--lmdb "$lmdb"} \
  ${hdf5:+--hdf5 "$hdf5"} ${lmdb_levels:+--lmdb-levels "$lmdb_levels"} ${beton:+--beton "$beton"} \
  ${det_lmdb:+--det-lmdb "$det_lmdb"} ${det_json:+--det-json "$det_json"} --venv "$venv" --out "$json" --res "$res" \
  --peer-res "$peer_res" --workers "$workers" --batch "$batch" --rounds "$rounds" --peers "$peers" \
  --mode "$([ $smoke = 1 ] && echo smoke || echo full)" --prep-log "$prep" \
  --formats-dir "$build/bench-formats" --rows "$rows" --foreign-manifest "$manifest" \
  ${base_build:+--baseline-build "$base_build" --baseline-label "$base_label"} \
  ${base_lmdb:+--baseline-lmdb "$base_lmdb"} ${base_levels:+--baseline-lmdb-levels "$base_levels"} \
  ${SLUICE_BENCH_HARNESS_ARGS:-} || rc=$?
[ -f "$json" ] || { echo "run.sh: the harness wrote no results" >&2; exit 1; }

say "report"
report_args=("$json")
[ $smoke = 1 ] || [ $keep = 1 ] || report_args+=(--benchmarks "$root/BENCHMARKS.md")
"$py" "$here/report.py" "${report_args[@]}" || { echo "run.sh: report failed" >&2; exit 1; }
exit $rc
