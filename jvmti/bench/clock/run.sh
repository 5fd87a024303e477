#!/bin/sh
# Mounted mode's clock: System.nanoTime() against rdtsc through a critical
# FFM downcall, on a JDK 22+.   clock/run.sh JDK_22_PLUS_HOME
set -eu
jdk=$1
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -O2 -shared -fPIC -o "$work/librdtsc.so" "$here/rdtsc.c"
"$jdk/bin/javac" -d "$work" "$here/ClockCost.java"
"$jdk/bin/java" --enable-native-access=ALL-UNNAMED -cp "$work" ClockCost "$work/librdtsc.so"
