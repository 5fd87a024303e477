#!/usr/bin/env bash
# vthread-hang-soak.sh JAVA JAR [RUNS] [BASELINE_JAR]
#
# Runs ProbeAgentTest's virtual-thread child (20 virtual threads x 10 probed
# calls that burn and sleep, -javaagent mode=exact, probe.cpu=on) RUNS times
# (default 40) under JAR's agent, alternating with BASELINE_JAR's if given,
# and counts the runs that did not end within 60 s: the deadlock of a hook
# that customized a method handle inside an unmount (jvmti/README.md, "Who
# owns what") showed as such hangs, 3 in 80 runs on JDK 21. A hung child's
# thread stacks are kept in the temporary directory, which is printed.
# Needs java/agent/target/test-classes (make test-java, or
# mvn -pl threadtime,agent -DskipITs package).
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ $# -lt 2 ]; then
  echo "usage: $0 JAVA JAR [RUNS] [BASELINE_JAR]" >&2
  exit 2
fi
java=$1 runs=${3:-40}
jars=("$2")
[ $# -ge 4 ] && jars+=("$4")
classes=java/agent/target/test-classes
[ -d "$classes/example" ] || { echo "$0: no $classes/example (build the tests first)" >&2; exit 2; }
tmp=$(mktemp -d)
declare -A hung
for jar in "${jars[@]}"; do hung[$jar]=0; done
for i in $(seq "$runs"); do
  for jar in "${jars[@]}"; do
    "$java" --enable-native-access=ALL-UNNAMED --add-opens java.base/java.lang=ALL-UNNAMED \
      "-javaagent:$jar=mode=exact,probe=example.ProbeApp::burnAndSleep,probe.cpu=on,out=$tmp/t.ttrace" \
      -cp "$classes" example.ProbeApp vcpu 20 10 > "$tmp/out" 2>&1 &
    pid=$!
    for _ in $(seq 120); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    if kill -0 "$pid" 2>/dev/null; then
      hung[$jar]=$((hung[$jar] + 1))
      timeout 20 "$(dirname "$java")/jcmd" "$pid" Thread.print > "$tmp/hung-$i-$(basename "$jar").txt" 2>&1 || true
      kill -9 "$pid"
      wait "$pid" 2>/dev/null || true
    elif ! wait "$pid"; then
      echo "run $i ($jar) failed:" >&2
      cat "$tmp/out" >&2
    fi
    rm -f "$tmp/t.ttrace"
  done
done
for jar in "${jars[@]}"; do
  echo "$jar: ${hung[$jar]} of $runs runs hung"
done
echo "stacks of hung runs, if any: $tmp"
