#!/usr/bin/env bash
# The virtual-thread agents' benchmark: RUNS rounds, each running every
# configuration in turn (interleaved, so drift on a shared machine hits all
# alike), then the median wall time of each and its ratio to no agent:
# no agent, with and without HotSpot's transition flag
# (-XX:-DoJVMTIVirtualThreadTransitions); the JVMTI agent loaded with events
# off (the capability only), with the events delivered to callbacks that do
# nothing (HotSpot's cost of posting them), in mounted and exact mode; the
# -javaagent with no hooks (events=off), in mounted and exact mode, with the
# flag and without, and in mounted mode with its accounts in its table rather
# than in the threads (accounts=table, the fallback); and no agent with the
# threads themselves reading the clock the mounted mode (counter; monotonic
# where the counter is not trusted) or the exact mode (cpu) reads, where the
# hooks would: the floor under each mode. The exact mode reads the carrier's
# clock as ThreadTime does (the cycle counter while the kernel shows no
# switch); -syscall configurations turn that off (fastclock=off), one system
# call per read as before the fast clock.
#   run.sh JAVA_HOME AGENT_SO API_JAR [RUNS=5] [THREADS=1000000] [YIELDS=4] [IN_FLIGHT=10000]
# IN_FLIGHT bounds the threads alive at once (0: none); see VThreadBench.java.
# JAVA_HOME may be a runtime without javac: TOOLS_HOME=/a/jdk compiles.
# Prints a Markdown table of wall time and of the JVM's CPU time over the
# timed run, and the extra JVM CPU per mount+unmount against no agent; every
# run's figures go to stderr as they come.
set -euo pipefail
java_home=$1 agent=$2 jar=$3 runs=${4:-5} threads=${5:-1000000} yields=${6:-4} in_flight=${7:-10000}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../../scripts/bench-lib.sh"
classes=$(mktemp -d)
trap 'rm -rf "$classes"' EXIT
"${TOOLS_HOME:-$java_home}/bin/javac" --release 21 -d "$classes" -cp "$jar" "$here/VThreadBench.java" "$here/BenchClocks.java"

flag="-XX:+UnlockExperimentalVMOptions -XX:-DoJVMTIVirtualThreadTransitions"
ja="-javaagent:$jar"
configs=(none none+flag none+flag+counter-reads none+flag+monotonic-reads none+flag+cpu-reads events-off events-empty mounted exact
  javaagent-empty+flag javaagent-mounted+flag javaagent-mounted-table+flag javaagent-exact+flag
  javaagent-exact-syscall+flag javaagent-mounted javaagent-exact javaagent-exact-syscall)
declare -A option=([none]= [none+flag]="$flag" [none+flag+counter-reads]="$flag -Dbench.reads=counter"
  [none+flag+monotonic-reads]="$flag -Dbench.reads=monotonic" [none+flag+cpu-reads]="$flag -Dbench.reads=cpu" [events-off]="-agentpath:$agent=events=off"
  [events-empty]="-agentpath:$agent=events=empty" [mounted]="-agentpath:$agent=mode=mounted"
  [exact]="-agentpath:$agent=mode=exact" [javaagent-empty+flag]="$flag $ja=events=off"
  [javaagent-mounted+flag]="$flag $ja=mode=mounted" [javaagent-exact+flag]="$flag $ja=mode=exact"
  [javaagent-mounted-table+flag]="$flag $ja=mode=mounted,accounts=table"
  [javaagent-mounted]="$ja=mode=mounted" [javaagent-exact]="$ja=mode=exact"
  [javaagent-exact-syscall+flag]="$flag $ja=mode=exact,fastclock=off"
  [javaagent-exact-syscall]="$ja=mode=exact,fastclock=off")
# CONFIGS="none javaagent-mounted+flag ..." runs only those (no agent is always kept).
if [ -n "${CONFIGS:-}" ]; then
  read -r -a configs <<<"none ${CONFIGS/none /}"
fi
declare -A wall cpu
for ((r = 1; r <= runs; r++)); do
  for c in "${configs[@]}"; do
    # shellcheck disable=SC2086 # the configuration's options are words
    out=$("$java_home/bin/java" -Xms1g -Xmx1g --enable-native-access=ALL-UNNAMED ${option[$c]} \
      -cp "$jar:$classes" VThreadBench "$threads" "$yields" "$in_flight" 2>/dev/null)
    echo "run $r $c: $out" >&2
    wall[$c]+="$(echo "$out" | awk '{print $2}') "
    cpu[$c]+="$(echo "$out" | awk '{print $3}') "
  done
done

wall_base=$(echo "${wall[none]}" | median)
cpu_base=$(echo "${cpu[none]}" | median)
version=$("$java_home/bin/java" -version 2>&1 | head -n 1)
echo "$threads virtual threads x $yields yields, at most $in_flight alive at once, $runs interleaved runs, $version, $(nproc) CPUs"
echo
echo "| configuration | median wall ms | x no agent | median JVM CPU ms | x no agent | extra CPU ns per mount+unmount | wall, each run (ms) | CPU, each run (ms) |"
echo "|---|---:|---:|---:|---:|---:|---|---|"
for c in "${configs[@]}"; do
  w=$(echo "${wall[$c]}" | median)
  u=$(echo "${cpu[$c]}" | median)
  printf '| %s | %.0f | %.2f | %.0f | %.2f | %.0f | %s| %s|\n' "$c" "$w" "$(echo "$w / $wall_base" | bc -l)" \
    "$u" "$(echo "$u / $cpu_base" | bc -l)" "$(echo "($u - $cpu_base) * 1000000 / ($threads * ($yields + 1))" | bc -l)" \
    "${wall[$c]}" "${cpu[$c]}"
done
