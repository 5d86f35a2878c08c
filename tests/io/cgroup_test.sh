#!/usr/bin/env bash
# Out-of-core proof: runs io_ooc (every loader.io backend, random and
# quasi-random order, 2 epochs, every byte checked) inside a cgroup v1
# memory group limited to LIMIT MiB, on a dataset at least 4x the limit.
# Passes when every run exits 0 and the group's OOM killer never fired.
# Skips (exit 77) with the reason where the cgroup cannot be made.
# Usage: cgroup_test.sh IO_OOC [LIMIT_MIB]      (needs root)
set -u
bin=$1
limit_mib=${2:-64}
data_mib=$((limit_mib * 4 + 16))
tmp=${SLUICE_TEST_TMP:-/tmp}
data=$tmp/io_ooc_${data_mib}.bin

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

# The dataset is written outside the group; each run drops it from the
# page cache first so that its pages are charged to the group as read.
"$bin" make "$data" "$data_mib" || exit 1

oom_kills() { awk '$1 == "oom_kill" {print $2}' "$cg/memory.oom_control"; }
fail=0
for backend in mmap pread uring uring-direct auto; do
  for order in random quasi; do
    echo 1 >"$cg/memory.force_empty" 2>/dev/null # start from an empty group
    echo 0 >"$cg/memory.failcnt"
    echo 0 >"$cg/memory.max_usage_in_bytes"
    before=$(oom_kills)
    # The subshell joins the group, then becomes io_ooc.
    (echo "$BASHPID" >"$cg/cgroup.procs" &&
      exec "$bin" read "$data" "$data_mib" "$backend" --epochs 2 \
        --workers 2 --order "$order" --pool "${POOL_MIB:-16}" --drop)
    rc=$?
    after=$(oom_kills)
    peak=$(($(cat "$cg/memory.max_usage_in_bytes") >> 20))
    echo "  $backend/$order: exit $rc, cgroup peak ${peak} MiB of" \
      "${limit_mib} MiB, failcnt $(cat "$cg/memory.failcnt"), oom_kill" \
      "${before:-?} -> ${after:-?}"
    if [ "$rc" != 0 ] || [ "${after:-0}" != "${before:-0}" ]; then
      echo "FAIL: $backend/$order in a ${limit_mib} MiB cgroup"
      fail=1
    fi
  done
done
[ $fail = 0 ] && echo "PASS: all backends read a ${data_mib} MiB dataset" \
  "in a ${limit_mib} MiB memory cgroup"
exit $fail
