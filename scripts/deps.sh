#!/usr/bin/env bash
# Installs what a bare machine lacks for the build and every test: Debian
# packages listed in .ci/deps.d/*.apt (plus the C toolchain), then each
# component's own step in .ci/deps.d/*.sh, in name order: 00-natives.sh (the
# toolchain of the shipped natives) comes first, because the Java step builds
# the JAR's natives with it. Quick when all is present.
set -euo pipefail
cd "$(dirname "$0")/.."

apt_needed=()
want() { dpkg -s "$1" >/dev/null 2>&1 || apt_needed+=("$1"); }
for pkg in cmake ninja-build gcc g++ make pkg-config; do want "$pkg"; done
for f in .ci/deps.d/*.apt; do
  [ -e "$f" ] || continue
  while read -r pkg; do
    [ -n "$pkg" ] && want "$pkg"
  done < <(grep -v '^#' "$f")
done
if [ ${#apt_needed[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "deps: missing Debian packages: ${apt_needed[*]} (run as root or install them)" >&2
    exit 1
  fi
  echo "deps: installing ${apt_needed[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${apt_needed[@]}"
fi
for f in .ci/deps.d/*.sh; do
  [ -e "$f" ] || continue
  echo "deps: $f"
  bash "$f"
done
