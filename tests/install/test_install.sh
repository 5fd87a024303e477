#!/usr/bin/env bash
# Installs the build tree into a scratch prefix, then builds and runs a
# consumer through pkg-config and through CMake's find_package.
set -euo pipefail
build_dir=$1
src_dir=$(cd "$(dirname "$0")" && pwd)
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build_dir" --prefix "$prefix" >/dev/null

export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
cc "$src_dir/consumer.c" $(pkg-config --cflags --libs threadtime) -Wl,-rpath,"$prefix/lib" -o "$prefix/by-pkgconfig"
"$prefix/by-pkgconfig"

cmake -S "$src_dir" -B "$prefix/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$prefix/cmake-build" >/dev/null
"$prefix/cmake-build/consumer"
"$prefix/bin/threadtime" version
echo "1 passed, 0 failed"
