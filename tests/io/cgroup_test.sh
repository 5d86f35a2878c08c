#!/usr/bin/env bash
# Out-of-core proof. Inside a cgroup v1 memory group limited to LIMIT MiB,
# on datasets at least 4x the limit, for every loader.io backend (mmap,
# pread, uring, uring + O_DIRECT, auto) and both orders (random, quasi):
#   1. io_ooc, a reader loop over a plain file, checks every byte;
#   2. io_ooc_loader (when given) runs the whole loader on an LMDB of raw
#      images; every backend's epoch hashes must be identical.
# Passes when every run exits 0, the group's OOM killer never fired and the
# hashes agree. Skips (exit 77) with the reason where the cgroup cannot be
# made. Usage: cgroup_test.sh IO_OOC LIMIT_MIB [IO_OOC_LOADER]   (root)
set -u
bin=$1
limit_mib=${2:-64}
loader_bin=${3:-}
data_mib=$((limit_mib * 4 + 16))
tmp=${SLUICE_TEST_TMP:-/tmp}
data=$tmp/io_ooc_${data_mib}.bin
lmdb=$tmp/io_ooc_${data_mib}.lmdb

skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "not root: cannot create a memory cgroup"
root=/sys/fs/cgroup/memory
[ -w "$root" ] || skip "no writable cgroup v1 memory controller at $root"
parent=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ {print $3}' /proc/self/cgroup)
cg=$root${parent%/}/sluice_io_test_$$
mkdir "$cg" 2>/dev/null || skip "cannot create $cg"
cleanup() {
  echo 1 >"$cg/memory.force_empty" 2>/dev/null
  rmdir "$cg" 2>/dev/null || echo "note: could not remove $cg"
}
trap cleanup EXIT
echo $((limit_mib << 20)) >"$cg/memory.limit_in_bytes" ||
  skip "cannot set $cg/memory.limit_in_bytes"
# No swap either, where swap is accounted.
echo $((limit_mib << 20)) >"$cg/memory.memsw.limit_in_bytes" 2>/dev/null

oom_kills() { awk '$1 == "oom_kill" {print $2}' "$cg/memory.oom_control"; }
fail=0
out=$(mktemp)
trap 'rm -f "$out"; cleanup' EXIT

# in_group LABEL CMD...: runs CMD inside the group from an empty start;
# its stdout is left in $out.
in_group() {
  local label=$1
  shift
  echo 1 >"$cg/memory.force_empty" 2>/dev/null
  echo 0 >"$cg/memory.failcnt"
  echo 0 >"$cg/memory.max_usage_in_bytes"
  local before after rc peak
  before=$(oom_kills)
  # The subshell joins the group, then becomes the program.
  (echo "$BASHPID" >"$cg/cgroup.procs" && exec "$@") >"$out"
  rc=$?
  after=$(oom_kills)
  peak=$(($(cat "$cg/memory.max_usage_in_bytes") >> 20))
  sed 's/^/    /' "$out"
  echo "  $label: exit $rc, cgroup peak ${peak} MiB of ${limit_mib} MiB," \
    "failcnt $(cat "$cg/memory.failcnt"), oom_kill ${before:-?} -> ${after:-?}"
  if [ "$rc" != 0 ] || [ "${after:-0}" != "${before:-0}" ]; then
    echo "FAIL: $label in a ${limit_mib} MiB cgroup"
    fail=1
  fi
}

# The datasets are written outside the group; each run drops its file from
# the page cache first so that the pages are charged to the group as read.
"$bin" make "$data" "$data_mib" || exit 1
for backend in mmap pread uring uring-direct auto; do
  for order in random quasi; do
    in_group "reader $backend/$order" "$bin" read "$data" "$data_mib" \
      "$backend" --epochs 2 --workers 2 --order "$order" \
      --pool "${POOL_MIB:-16}" --drop
  done
done

if [ -n "$loader_bin" ]; then
  # Cached between runs, but rebuilt by a newer build (its layout may have
  # changed since).
  [ "$lmdb" -nt "$loader_bin" ] || "$loader_bin" make "$lmdb" "$data_mib" ||
    exit 1
  for order in random quasi_random; do
    ref=
    for backend in mmap pread uring uring-direct auto; do
      in_group "loader $backend/$order" "$loader_bin" run "$lmdb" \
        "$backend" "$order" 2 --drop
      hashes=$(grep '^epoch' "$out" | tr '\n' ' ')
      if [ -z "$ref" ]; then
        ref=$hashes
      elif [ "$hashes" != "$ref" ]; then
        echo "FAIL: loader $backend/$order batches differ from mmap's"
        fail=1
      fi
    done
  done
fi
[ $fail = 0 ] && echo "PASS: every backend read ${data_mib} MiB datasets" \
  "in a ${limit_mib} MiB memory cgroup"
exit $fail
