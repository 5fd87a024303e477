#!/usr/bin/env bash
# Regenerates java_vthreads.trace, the virtual-thread trace that
# python/tests/test_trace_pairs.py reads: JavaVthreads.java under the
# threadtime -javaagent, which probes its work() method. Needs a JDK 21+
# (javac) and the threadtime JAR.   usage: make_java_vthreads_trace.sh [threadtime.jar]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
jar="${1:-$(ls "$here"/../../../java/agent/target/threadtime-agent-*.jar | grep -v -e '-sources\.jar$' -e '-javadoc\.jar$' | head -n 1)}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
javac -d "$out" "$here/JavaVthreads.java"
java -javaagent:"$jar"=probe=JavaVthreads::work,out="$here/java_vthreads.trace" -cp "$out" JavaVthreads
