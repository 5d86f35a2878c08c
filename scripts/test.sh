#!/usr/bin/env bash
# Quick start command 2: install what is missing, build with -Werror, run the
# whole test suite (everything but GPU-only tests). Idempotent. The tests'
# PyPI packages go into BUILD_DIR/venv-test (scripts/test-venv.sh), whose
# interpreter runs the fixture writers and the Python module's tests.
# Usage: scripts/test.sh [BUILD_DIR]   (default: build)
#   SLUICE_BUILD_TYPE=Release scripts/test.sh ...: another CMake build type
#   (default RelWithDebInfo; CI tests the Release build a package ships).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh --extra
build=${1:-build}
py=$(scripts/test-venv.sh "$(realpath -m "$build")/venv-test")
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE="${SLUICE_BUILD_TYPE:-RelWithDebInfo}" \
  -DSLUICE_WERROR=ON -DSLUICE_TEST_PYTHON="$py" -DSLUICE_PYTEST_PYTHON="$py" >/dev/null
ninja -C "$build"
cd "$build"
ctest -LE gpu --output-on-failure -j2
