#!/usr/bin/env bash
# What a mount plus an unmount costs, per configuration: YieldBench (one
# virtual thread, Thread.yield(), one carrier, 300,000 yields, best of 5
# rounds) in one JVM per configuration, RUNS rounds interleaved, medians; and
# `threadtime bench` sched_self (the exact mode's clock read) once per round,
# in the same run. Each JVM also gives its carrier's own CPU time per
# yield (best round): on a loaded host the wall figure counts the time the
# carrier waited for a CPU, this one does not; both are tabled.
# none+flag+2reads: no agent, the loop itself reading the carrier's CPU
# clock around each yield as the exact mode's hooks do.
# javaagent-exact reads it as ThreadTime does (the cycle counter while the
# kernel shows no switch); javaagent-exact-syscall with fastclock=off, one
# system call per read, as before the fast clock.
#   yield.sh JAVA_HOME AGENT_SO THREADTIME_JAR THREADTIME_CLI [RUNS=5]
# JAVA_HOME may be a runtime without javac: TOOLS_HOME=/a/jdk compiles.
# CONFIGS="none jvmti-exact ..." runs only those (no agent is always kept).
# BASELINE_AGENT=/another/libthreadtime_vthreads.so adds its mounted and
# exact modes (baseline-jvmti-mounted, -exact) to the same run: a change to
# the JVMTI agent measured before and after, side by side.
# BASELINE_JAR=/another/threadtime.jar does the same for the -javaagent: each
# javaagent-* configuration that runs gets a baseline-javaagent-* twin, run
# right after it with that JAR as the agent and on the class path. Several
# JARs, space-separated, give twins baseline-, baseline2-, ... in that order.
# Prints a Markdown table; every run's figures go to stderr as they come.
set -euo pipefail
java_home=$1 agent=$2 jar=$3 cli=$4 runs=${5:-5}
tools=${TOOLS_HOME:-$java_home}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../../scripts/bench-lib.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$tools/bin/javac" --release 21 -d "$work/classes" -cp "$jar" "$here/YieldBench.java" "$here/BenchClocks.java"
# The ThreadLocal route: a benchmark-only agent, the JAR's transformer calling TlHooks.
"$tools/bin/javac" --release 21 -d "$work/tl-hooks" "$here/threadlocal/TlHooks.java"
"$tools/bin/jar" cf "$work/tl-hooks.jar" -C "$work/tl-hooks" .
"$tools/bin/javac" --release 21 -d "$work/tl-agent" -cp "$jar" "$here/threadlocal/ThreadLocalRoute.java"
printf 'Premain-Class: io.threadtime.agent.vthreads.ThreadLocalRoute\nCan-Retransform-Classes: true\n' >"$work/manifest"
"$tools/bin/jar" cfm "$work/tl-agent.jar" "$work/manifest" -C "$work/tl-agent" .

flag="-XX:+UnlockExperimentalVMOptions -XX:-DoJVMTIVirtualThreadTransitions"
ja="-javaagent:$jar"
configs=(none none+flag none+flag+2reads empty-javaagent empty-javaagent+flag
  javaagent-mounted javaagent-mounted+flag javaagent-mounted-table+flag javaagent-exact javaagent-exact+flag
  javaagent-exact-syscall javaagent-exact-syscall+flag threadlocal-mounted+flag
  jvmti-events-empty jvmti-mounted jvmti-exact)
declare -A args=([none]="" [none+flag]="$flag" [none+flag+2reads]="$flag"
  [empty-javaagent]="$ja=events=off" [empty-javaagent+flag]="$flag $ja=events=off"
  [javaagent-mounted]="$ja=mode=mounted" [javaagent-mounted+flag]="$flag $ja=mode=mounted"
  [javaagent-mounted-table+flag]="$flag $ja=mode=mounted,accounts=table"
  [javaagent-exact]="$ja=mode=exact" [javaagent-exact+flag]="$flag $ja=mode=exact"
  [javaagent-exact-syscall]="$ja=mode=exact,fastclock=off" [javaagent-exact-syscall+flag]="$flag $ja=mode=exact,fastclock=off"
  [threadlocal-mounted+flag]="$flag -javaagent:$work/tl-agent.jar=$work/tl-hooks.jar"
  [jvmti-events-empty]="-agentpath:$agent=events=empty" [jvmti-mounted]="-agentpath:$agent=mode=mounted"
  [jvmti-exact]="-agentpath:$agent=mode=exact")
if [ -n "${CONFIGS:-}" ]; then
  read -r -a configs <<<"none ${CONFIGS/none /}"
fi
if [ -n "${BASELINE_AGENT:-}" ]; then
  configs+=(baseline-jvmti-mounted baseline-jvmti-exact)
  args[baseline-jvmti-mounted]="-agentpath:$BASELINE_AGENT=mode=mounted"
  args[baseline-jvmti-exact]="-agentpath:$BASELINE_AGENT=mode=exact"
fi
declare -A cps # a configuration's class path, where it is not $jar
if [ -n "${BASELINE_JAR:-}" ]; then
  read -r -a baselines <<<"$BASELINE_JAR"
  with_baseline=()
  for c in "${configs[@]}"; do
    with_baseline+=("$c")
    [[ $c == javaagent-* ]] || continue
    for i in "${!baselines[@]}"; do
      b=baseline$([ "$i" -eq 0 ] || echo $((i + 1)))-$c
      with_baseline+=("$b")
      args[$b]=${args[$c]//$ja/-javaagent:${baselines[$i]}}
      cps[$b]=${baselines[$i]}
    done
  done
  configs=("${with_baseline[@]}")
fi
declare -A ns cpu
sched=""
for ((r = 1; r <= runs; r++)); do
  for c in "${configs[@]}"; do
    # shellcheck disable=SC2086 # the configuration's options are words
    cp=${cps[$c]:-$jar}
    out=$("$java_home/bin/java" -Xshare:auto -Djdk.virtualThreadScheduler.parallelism=1 \
      --enable-native-access=ALL-UNNAMED ${args[$c]} -cp "$cp:$work/classes" YieldBench 300000 5 \
      $([ "$c" = none+flag+2reads ] && echo reads) 2>/dev/null)
    echo "run $r $c: $out" >&2
    ns[$c]+="$(echo "$out" | awk '{print $3}') "
    cpu[$c]+="$(echo "$out" | awk '{print $4}') "
  done
  s=$(bench_p50 "$cli" sched_self)
  echo "run $r sched_self p50: $s" >&2
  sched+="$s "
done

base=$(echo "${ns[none]}" | median)
cpu_base=$(echo "${cpu[none]}" | median)
version=$("$java_home/bin/java" -version 2>&1 | head -n 1)
echo "Thread.yield() on one carrier, best of 5 rounds of 300,000 per JVM, $runs interleaved JVMs, $version, $(nproc) CPUs"
echo "sched_self (threadtime bench, p50, median of $runs): $(echo "$sched" | median) ns"
echo
echo "| configuration | median ns/yield | over no agent | carrier CPU ns/yield | over no agent | each run (wall) | each run (CPU) |"
echo "|---|---:|---:|---:|---:|---|---|"
for c in "${configs[@]}"; do
  m=$(echo "${ns[$c]}" | median)
  mc=$(echo "${cpu[$c]}" | median)
  printf '| %s | %.0f | %+.0f | %.0f | %+.0f | %s| %s|\n' "$c" "$m" "$(echo "$m - $base" | bc -l)" \
    "$mc" "$(echo "$mc - $cpu_base" | bc -l)" "${ns[$c]}" "${cpu[$c]}"
done
