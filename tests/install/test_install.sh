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

# threadtime run preloads the library installed beside the binary, never the
# build tree's (which is still there): the truth is the loader's own map of
# the command, /proc/self/maps read by cat.
mapped() { # the preload library mapped into a command run by threadtime $1
    "$1" run --report "$prefix/report" -- cat /proc/self/maps | awk '/libthreadtime_run/ { print $6; exit }'
}
want=$(realpath "$prefix/lib/libthreadtime_run.so")
got=$(mapped "$prefix/bin/threadtime")
[ "$got" = "$want" ] || { echo "FAIL: installed threadtime run preloaded '$got', want '$want'"; exit 1; }
# Moved elsewhere, it follows its own location, not the prefix it was built for.
mkdir "$prefix/moved"
mv "$prefix/bin" "$prefix/lib" "$prefix/moved/"
got=$(mapped "$prefix/moved/bin/threadtime")
[ "$got" = "$(realpath "$prefix/moved/lib/libthreadtime_run.so")" ] || { echo "FAIL: moved threadtime run preloaded '$got'"; exit 1; }
# Without its library it says so and runs nothing (the build tree's is no stand-in).
rm "$prefix/moved/lib/libthreadtime_run.so"
if "$prefix/moved/bin/threadtime" run -- touch "$prefix/ran" 2>"$prefix/err"; then
    echo "FAIL: threadtime run without its library succeeded"; exit 1
fi
grep -q "no preload library" "$prefix/err" && [ ! -e "$prefix/ran" ] ||
    { echo "FAIL: threadtime run without its library: $(cat "$prefix/err")"; exit 1; }
echo "2 passed, 0 failed"
