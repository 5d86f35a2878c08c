#!/usr/bin/env bash
# clang-format (Debian 12's clang-format-14, .clang-format at the root) over
# every tracked C and CUDA source. Usage: scripts/format.sh [--check]
#   --check: change nothing; list the files that differ and exit 1 if any.
set -euo pipefail
cd "$(dirname "$0")/.."
fmt=$(command -v clang-format-14 || command -v clang-format || true)
if [[ -z "$fmt" ]]; then
  echo "format: clang-format not found (apt-get install clang-format-14)" >&2
  exit 1
fi
mapfile -t files < <(git ls-files '*.c' '*.h' '*.cu' '*.cuh')
if [[ "${1:-}" == "--check" ]]; then
  bad=()
  for f in "${files[@]}"; do
    "$fmt" --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
  done
  if [[ ${#bad[@]} -gt 0 ]]; then
    echo "format: not clang-formatted (run scripts/format.sh):" >&2
    printf '  %s\n' "${bad[@]}" >&2
    exit 1
  fi
  echo "format: ${#files[@]} files clang-formatted"
else
  "$fmt" -i "${files[@]}"
fi
