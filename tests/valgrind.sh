#!/usr/bin/env bash
# Memcheck over the tests that decode, augment, read and write datasets:
#   tests/valgrind.sh BUILD_DIR [TEST...]
# (default tests: test_codecs test_augment test_source test_pack
# test_loader_data; a build without sanitizers, e.g. RelWithDebInfo).
# Exits 1 when valgrind reports an error or a definite/indirect leak, in the
# test or in a process it starts (test_pack runs the `sluice` CLI).
#
# JSIMD_FORCENONE=1: libjpeg-turbo's SIMD routines read row padding that
# they never initialise and memcheck's lane-wise approximation of SIMD
# instructions carries that into the output pixels, so every decode is
# reported as depending on uninitialised memory (libjpeg-turbo issues 238,
# 619: a known false positive). The C paths are checked instead.
set -u
build=${1:?usage: tests/valgrind.sh BUILD_DIR [TEST...]}
shift
tests=("$@")
[ ${#tests[@]} -gt 0 ] ||
  tests=(test_codecs test_augment test_source test_pack test_loader_data)
command -v valgrind >/dev/null || { echo "valgrind not found" >&2; exit 77; }
export JSIMD_FORCENONE=1
# valgrind's allocator holds memory of its own: RSS-growth checks stand down.
export SLUICE_TEST_VALGRIND=1
export SLUICE_TEST_TMP=${SLUICE_TEST_TMP:-$(mktemp -d)}
export SLUICE_BIN=${SLUICE_BIN:-$build/tools/sluice}
logs=$(mktemp -d)
rc=0
for t in "${tests[@]}"; do
  exe=$(find "$build/tests" -type f -name "$t" -perm -u+x | head -n 1)
  if [ -z "$exe" ]; then
    echo "$t: not built in $build" >&2
    rc=1
    continue
  fi
  valgrind --error-exitcode=1 --leak-check=full --trace-children=yes \
    --errors-for-leak-kinds=definite,indirect --log-file="$logs/$t.%p.log" \
    "$exe" >"$logs/$t.out" 2>&1
  status=$?
  # Every process's own log is read, whatever the test's status: a `sluice`
  # run that a test expects to fail (exit 1) hides valgrind's exit code.
  # (A process killed by SIGKILL writes no summary; that is not an error.)
  bad=$(grep -L 'ERROR SUMMARY: 0 errors' "$logs/$t".*.log |
    xargs -r grep -l 'ERROR SUMMARY: [1-9]')
  if [ "$status" -eq 0 ] && [ -z "$bad" ]; then
    echo "$t: clean"
  else
    echo "$t: FAILED (exit $status; valgrind logs below, test output in" \
      "$logs/$t.out)"
    for log in $bad; do
      grep -v '^==[0-9]*== *$' "$log" | head -n 60
    done
    [ -n "$bad" ] || tail -n 20 "$logs/$t.out"
    rc=1
  fi
done
exit $rc
