#!/usr/bin/env bash
# Runs the zig whose clang builds the shipped natives (docs/platforms.md);
# `scripts/zig.sh --path` prints where it is. The one place that says where
# to look: $TT_ZIG if set, else $TT_ZIG_DIR/bin/zig (default
# /opt/threadtime-zig, where .ci/deps.d/00-natives.sh installs it), else the
# first zig on PATH. cmake/zig.cmake and python/python.mk ask here.
set -euo pipefail
zig=${TT_ZIG:-${TT_ZIG_DIR:-/opt/threadtime-zig}/bin/zig}
if [ ! -x "$zig" ]; then
  zig=$(command -v zig) || {
    echo "zig.sh: no zig at $zig nor on PATH; scripts/deps.sh installs it (.ci/deps.d/00-natives.sh), or set TT_ZIG" >&2
    exit 1
  }
fi
if [ "${1:-}" = --path ]; then
  echo "$zig"
else
  exec "$zig" "$@"
fi
