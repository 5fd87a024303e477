#!/usr/bin/env bash
# Does HotSpot's -XX:-DoJVMTIVirtualThreadTransitions deadlock virtual threads
# that contend on a monitor? MonitorContention (16 virtual threads, 2
# carriers, 10 s; no agent) RUNS times with the flag and without, per Java:
#   flag_hang.sh RUNS JAVA_HOME...
# A Java home may be a runtime without javac: TOOLS_HOME=/a/jdk compiles.
# Prints one line per run: the Java, the flag or not, what the run printed.
set -uo pipefail
runs=$1
shift
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"${TOOLS_HOME:-$1}/bin/javac" --release 21 -d "$work" "$here/MonitorContention.java" || exit 1
flag="-XX:+UnlockExperimentalVMOptions -XX:-DoJVMTIVirtualThreadTransitions"
for home in "$@"; do
  version=$("$home/bin/java" -version 2>&1 | head -n 1)
  for ((r = 1; r <= runs; r++)); do
    for f in "" "$flag"; do
      # shellcheck disable=SC2086 # the flag is two words
      out=$(timeout 120 "$home/bin/java" -Djdk.virtualThreadScheduler.parallelism=2 $f -cp "$work" MonitorContention 16 10)
      echo "$version | $([ -n "$f" ] && echo flag || echo "no flag") | ${out:-no output (timeout?)}"
    done
  done
done
