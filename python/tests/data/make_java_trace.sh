#!/usr/bin/env bash
# Regenerates java_events.trace, the trace python/tests/test_trace.py reads
# as "written by Java": JavaTrace.java run against the threadtime JAR (which
# carries its native library). The tests use the checked-in file, so they
# need no JVM.   usage: make_java_trace.sh [threadtime.jar]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
jar="${1:-$(ls "$here"/../../../java/agent/target/threadtime-agent-*.jar | grep -v -e '-sources\.jar$' -e '-javadoc\.jar$' | head -n 1)}"
java -cp "$jar" "$here/JavaTrace.java" "$here/java_events.trace"
