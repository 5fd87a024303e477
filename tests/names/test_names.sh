#!/bin/sh
# A name that starts tt_ (one underscore) is the public API's: every global
# function or object named so in the threadtime command (the CLI's code,
# the preload's file code and the core, linked in statically) must be one
# libthreadtime exports. Private names take tt__, as in src/ (and libuv's
# uv_/uv__). Types and static inlines have no symbol to see.
#   test_names.sh NM LIBTHREADTIME_SO EXECUTABLE...
set -eu
nm=$1 lib=$2
shift 2
public=$(mktemp "${TMPDIR:-/tmp}/test_names.XXXXXX")
trap 'rm -f "$public"' EXIT
"$nm" -D --defined-only "$lib" | awk '{ sub(/@.*/, "", $3); print $3 }' | sort -u >"$public"
[ -s "$public" ] || { echo "no symbol exported by $lib"; exit 1; }
private=$(for exe; do "$nm" --defined-only "$exe" | awk '$2 ~ /^[A-Z]$/ && $3 ~ /^tt_[^_]/ { print $3 }'; done |
    sort -u | comm -23 - "$public")
if [ -n "$private" ]; then
    echo "tt_ names that libthreadtime does not export (private names take tt__):"
    echo "$private"
    exit 1
fi
echo "ok: every tt_ symbol of $* is exported by $(basename "$lib")"
