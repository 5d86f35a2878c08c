#!/usr/bin/env bash
# The distributed-packing tests (python/tests/test_parallel.py): Ray Data on
# a local cluster and PySpark on local[2] (Debian's OpenJDK), in a venv of
# their own so that neither touches the system's Python. Usage:
#   tests/dist/run.sh BUILD_DIR [VENV_DIR]
# BUILD_DIR holds the built module (BUILD_DIR/python); VENV_DIR (default
# BUILD_DIR/venv-dist) is made and filled on first use (~1.5 min, ~1 GB).
set -euo pipefail
build=$(cd "${1:?usage: tests/dist/run.sh BUILD_DIR [VENV_DIR]}" && pwd)
venv=${2:-$build/venv-dist}
here=$(cd "$(dirname "$0")/../.." && pwd)
if ! command -v java >/dev/null; then
  echo "tests/dist: java not found (apt-get install openjdk-17-jre-headless)" >&2
  exit 1
fi
if [[ ! -x "$venv/bin/python" ]]; then
  /usr/bin/python3 -m venv "$venv"
  "$venv/bin/pip" install -q "ray[data]==2.60.0" "pyspark==4.3.0" pytest numpy
fi
export PYTHONPATH="$build/python" PYTHONDONTWRITEBYTECODE=1
export RAY_USAGE_STATS_ENABLED=0 RAY_DISABLE_IMPORT_WARNING=1
export SLUICE_BIN="$build/tools/sluice"
cd "$here/python/tests"
exec "$venv/bin/python" -m pytest -q -p no:cacheprovider -rs test_parallel.py
