#!/usr/bin/env bash
# Regenerates java_names.trace, which python/tests/test_trace.py reads: the
# Java test's child (java/agent/src/test/java/example/NamesApp.java)
# under the threadtime -javaagent, whose trace names main, a platform thread,
# a virtual thread ("worker-v") and its carrier with their Java names
# (format 1.2). Needs a JDK 21+ (javac) and the threadtime JAR.
#   usage: make_java_names_trace.sh [threadtime.jar]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
jar="${1:-$(ls "$here"/../../../java/agent/target/threadtime-agent-*.jar | grep -v -e '-sources\.jar$' -e '-javadoc\.jar$' | head -n 1)}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
javac -cp "$jar" -d "$out" "$here/../../../java/agent/src/test/java/example/NamesApp.java"
java --enable-native-access=ALL-UNNAMED -javaagent:"$jar"=probe=example.NamesApp::work,out="$here/java_names.trace" \
    -cp "$out:$jar" example.NamesApp
