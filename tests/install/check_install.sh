#!/usr/bin/env bash
# Installs the build into a scratch prefix, then builds an outside program
# against it twice: with find_package(sluice CONFIG) and with pkg-config.
# Usage: check_install.sh BUILD_DIR SOURCE_DIR SCRATCH_DIR
set -euo pipefail
build=$1 src=$2 scratch=$3/install-test
rm -rf "$scratch"
mkdir -p "$scratch"
prefix=$scratch/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
test -x "$prefix/bin/sluice"
"$prefix/bin/sluice" --version

# 1. CMake package
cmake -S "$src/tests/install/consumer" -B "$scratch/cmake-build" \
  -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$scratch/cmake-build" >/dev/null
LD_LIBRARY_PATH="$prefix/lib:$prefix/lib64:$prefix/lib/x86_64-linux-gnu" \
  "$scratch/cmake-build/consumer"

# 2. pkg-config
pcdir=$(dirname "$(find "$prefix" -name sluice.pc | head -n1)")
static=
[[ -e "$pcdir/../libsluice.so" ]] || static=--static   # a static libsluice needs its private deps
flags=$(PKG_CONFIG_PATH="$pcdir" pkg-config $static --cflags --libs sluice)
cc -std=c11 -Wall -Werror -o "$scratch/pc-consumer" "$src/tests/install/consumer/main.c" $flags
LD_LIBRARY_PATH="$prefix/lib:$prefix/lib64:$prefix/lib/x86_64-linux-gnu" \
  "$scratch/pc-consumer"

# 3. pkg-config with the rpath docs/BUILDING.md gives: runs without LD_LIBRARY_PATH.
if [[ -z $static ]]; then
  libdir=$(PKG_CONFIG_PATH="$pcdir" pkg-config --variable=libdir sluice)
  cc -std=c11 -Wall -Werror -o "$scratch/pc-rpath-consumer" \
    "$src/tests/install/consumer/main.c" $flags -Wl,-rpath,"$libdir"
  env -u LD_LIBRARY_PATH "$scratch/pc-rpath-consumer"
fi
echo "install test: cmake package and pkg-config both ok"
