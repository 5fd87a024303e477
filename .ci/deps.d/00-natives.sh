#!/usr/bin/env bash
# The toolchain of the shipped natives (docs/platforms.md): zig's bundled
# clang, whose targets carry a glibc version (x86_64-linux-gnu.2.17), so the
# JAR's libraries, the wheel's extension and a release libthreadtime.so link
# against glibc 2.17's symbols on both arches with no sysroot. It comes from
# the ziglang wheel on PyPI, in a venv of its own at $TT_ZIG_DIR (default
# /opt/threadtime-zig), where scripts/zig.sh finds it.
# Skipped when that zig is already there at the pinned version.
set -euo pipefail
version=0.17.0
dest=${TT_ZIG_DIR:-/opt/threadtime-zig}
if [ -x "$dest/bin/zig" ] && [ "$("$dest/bin/zig" version)" = "$version" ]; then
  exit 0
fi
rm -rf "$dest.tmp"
python3 -m venv "$dest.tmp"
"$dest.tmp/bin/pip" install -q "ziglang==$version"
zig=$("$dest.tmp/bin/python" -c 'import ziglang, os; print(os.path.join(os.path.dirname(ziglang.__file__), "zig"))')
rm -rf "$dest"
mv "$dest.tmp" "$dest"
# The venv moved: point at the zig inside its new place (zig finds its lib/
# beside the resolved executable, so a symlink is enough).
ln -sf "${zig/#$dest.tmp/$dest}" "$dest/bin/zig"
"$dest/bin/zig" version
