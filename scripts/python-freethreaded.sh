#!/usr/bin/env bash
# A free-threaded CPython (configure --disable-gil) for the Python binding's
# tests: `make test-python-freethreaded` (python/python.mk). Neither Debian
# bookworm nor PyPI ships one, so this builds CPython from the source Debian's
# archive serves, checked against its SHA-256, into a cache directory:
#   ${TT_CPYTHON_FT_DIR:-${XDG_CACHE_HOME:-~/.cache}/threadtime/cpython-3.13.5t}
# A finished build is reused (its stamp file says so); nothing is written
# outside that directory, except the Debian build packages it installs when
# they are missing (as root, like scripts/deps.sh).
# A plain build (no PGO/LTO, no test run), ~10-20 min on 2 loaded cores.
# Prints the interpreter's path (the only line on stdout).
set -euo pipefail

version=3.13.5
sha256=93e583f243454e6e9e4588ca2c2662206ad961659863277afcdb96801647d640
url=http://deb.debian.org/debian/pool/main/p/python3.13/python3.13_$version.orig.tar.xz
dir=${TT_CPYTHON_FT_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/threadtime/cpython-${version}t}
prefix=$dir/prefix
python=$prefix/bin/python${version%.*}t
stamp=$dir/built

log() { echo "python-freethreaded: $*" >&2; }

if [ -e "$stamp" ] && [ -x "$python" ]; then
  echo "$python"
  exit 0
fi

mkdir -p "$dir"
# One build at a time per cache directory; the second caller waits, then reuses it.
exec 9>"$dir/lock"
flock 9
if [ -e "$stamp" ] && [ -x "$python" ]; then
  echo "$python"
  exit 0
fi

# ssl and zlib for pip, libffi for ctypes, bz2 and lzma for the archives
# PyPI's sdists may come in.
apt_needed=()
for pkg in gcc make pkg-config xz-utils curl libssl-dev zlib1g-dev libffi-dev libbz2-dev liblzma-dev; do
  dpkg -s "$pkg" >/dev/null 2>&1 || apt_needed+=("$pkg")
done
if [ ${#apt_needed[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    log "missing Debian packages: ${apt_needed[*]} (run as root or install them)"
    exit 1
  fi
  log "installing ${apt_needed[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get update -q >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${apt_needed[@]}" >&2
fi

tarball=$dir/python3.13_$version.orig.tar.xz
if ! echo "$sha256  $tarball" | sha256sum -c --status - 2>/dev/null; then
  log "downloading $url"
  curl -fsSL --retry 3 -o "$tarball.part" "$url"
  if ! echo "$sha256  $tarball.part" | sha256sum -c --status -; then
    log "checksum mismatch for $url (want $sha256, got $(sha256sum "$tarball.part" | cut -d' ' -f1))"
    rm -f "$tarball.part"
    exit 1
  fi
  mv "$tarball.part" "$tarball"
fi

start=$(date +%s)
rm -rf "$dir/src" "$prefix"
mkdir -p "$dir/src"
tar -xJf "$tarball" -C "$dir/src" --strip-components=1
log "building CPython $version with --disable-gil into $prefix (log: $dir/build.log)"
if ! (cd "$dir/src" &&
      ./configure --disable-gil --disable-test-modules --prefix="$prefix" --with-ensurepip=install &&
      make -j"$(nproc)" &&
      make install) >"$dir/build.log" 2>&1; then
  tail -n 40 "$dir/build.log" >&2
  log "build failed (whole log: $dir/build.log)"
  exit 1
fi
if [ "$("$python" -c 'import sys; print(sys._is_gil_enabled())')" != False ]; then
  log "$python runs with the GIL enabled: not a free-threaded build"
  exit 1
fi
rm -rf "$dir/src"
log "built in $(( $(date +%s) - start )) s"
touch "$stamp"
echo "$python"
