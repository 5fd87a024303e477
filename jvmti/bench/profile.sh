#!/usr/bin/env bash
# Where the time of a mount plus an unmount goes: YieldBench (one virtual
# thread, Thread.yield(), one carrier, 5 rounds of 300,000 yields) under
# `perf record -e cpu-clock` (the kernel's software clock: no hardware PMU
# is needed, which a VM often lacks), one JVM per configuration. The
# carrier's samples (a fixed period of CPU time each) are grouped by where
# they fell, and each group is given in ns per yield over all the rounds:
#   hotspot-jvmti  libjvm.so functions of JVMTI's transition and event
#                  posting (JvmtiExport, JvmtiVTMSTransitionDisabler,
#                  JvmtiThreadState, the JNI handle blocks and handle marks
#                  the posting allocates, SharedRuntime::notify_jvmti_*, the
#                  JVMTI function wrappers such as GetThreadLocalStorage)
#   hotspot-other  the rest of libjvm.so (the continuation's freeze and thaw,
#                  GC barriers, ...)
#   java           JIT-compiled and interpreted Java (the scheduler, the loop)
#   agent          libthreadtime_vthreads.so (the agent's callbacks, clock
#                  wrapper, accounts)
#   natives        libthreadtime_java.so, the JAR's natives: the -javaagent's
#                  clock reads (tt_self_fast_ns, the cycle counter); the JIT's
#                  JNI wrappers around them count as java
#   clock-user     the clock read's user side: libc's clock_gettime and the
#                  vDSO (which passes a CPU clock id on to the system call)
#   kernel         kernel code: nearly all of it the clock_gettime system
#                  call in exact mode (its share with events=empty is the
#                  rest: timer interrupts, page faults)
#   other          everything else (libc, ld.so's __tls_get_addr, ...)
#   profile.sh JAVA_HOME AGENT_SO THREADTIME_JAR [CONFIG...]
# CONFIG is an -agentpath option string (default: events=empty mode=mounted
# mode=exact); "none" runs without an agent; "javaagent:OPTIONS" runs the
# JAR's -javaagent with OPTIONS, "javaagent+flag:OPTIONS" also with
# -XX:-DoJVMTIVirtualThreadTransitions (JDK 21). BASELINE_AGENT=/other.so adds
# its mounted and exact modes (as baseline:mode=...). Needs perf (Debian
# linux-perf) with permission to sample the kernel (root, or
# kernel.perf_event_paranoid <= 1). Prints a Markdown table; perf's files
# go to a temporary directory removed at exit.
set -euo pipefail
java_home=$1 agent=$2 jar=$3
shift 3
configs=("$@")
[ ${#configs[@]} -gt 0 ] || configs=(events=empty mode=mounted mode=exact)
if [ -n "${BASELINE_AGENT:-}" ]; then
  configs+=(baseline:mode=mounted baseline:mode=exact)
fi
tools=${TOOLS_HOME:-$java_home}
command -v perf >/dev/null || { echo "profile.sh: perf is not installed (Debian: linux-perf)" >&2; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$tools/bin/javac" --release 21 -d "$work/classes" -cp "$jar" "$here/YieldBench.java" "$here/BenchClocks.java"
yields=300000 rounds=5
period=100000 # ns of the carrier's CPU time per sample
echo "Thread.yield() on one carrier, $rounds x $yields yields per JVM, perf cpu-clock every $((period / 1000)) us of CPU, $("$java_home/bin/java" -version 2>&1 | head -n 1)"
echo
echo "| configuration | best round ns/yield | sampled ns/yield | hotspot-jvmti | hotspot-other | java | agent | natives | clock-user | kernel | other |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for c in "${configs[@]}"; do
  case $c in
  none) opt=() ;;
  baseline:*) opt=("-agentpath:$BASELINE_AGENT=${c#baseline:}") ;;
  javaagent:*) opt=("-javaagent:$jar=${c#javaagent:}") ;;
  javaagent+flag:*) opt=(-XX:+UnlockExperimentalVMOptions -XX:-DoJVMTIVirtualThreadTransitions
    "-javaagent:$jar=${c#javaagent+flag:}") ;;
  *) opt=("-agentpath:$agent=$c") ;;
  esac
  out=$(perf record -q -e cpu-clock -c "$period" -o "$work/perf.data" -- "$java_home/bin/java" \
    -Djdk.virtualThreadScheduler.parallelism=1 --enable-native-access=ALL-UNNAMED "${opt[@]}" \
    -cp "$jar:$work/classes" YieldBench "$yields" "$rounds" 2>/dev/null)
  best=$(echo "$out" | awk '{print $3}')
  # The carrier is the scheduler's one ForkJoinPool worker (perf keeps 15 characters of a name).
  perf report -i "$work/perf.data" --no-children --sort comm,dso,sym -F sample,comm,dso,sym -q -t ';' 2>/dev/null |
    awk -F';' -v c="$c" -v best="$best" -v per=$((period)) -v n=$((yields * rounds)) '
      function trim(s) { gsub(/^[ \t]+|[ \t]+$/, "", s); return s }
      trim($2) == "ForkJoinPool-1-" {
        s = trim($1) + 0; dso = trim($3); sym = trim($4); sub(/^\[[.k]\] /, "", sym)
        if (dso == "libjvm.so")
          g = sym ~ /[Jj]vmti|JNIHandle|HandleMark|VTMS|notify_jvmti|JavaFrameAnchor|push_jni_handle|jni_handle_block/ ? "hotspot-jvmti" : "hotspot-other"
        else if (dso ~ /^\[JIT\]/ || dso ~ /perf-[0-9]+\.map/) g = "java"
        else if (dso ~ /threadtime_vthreads/) g = "agent"
        else if (dso ~ /threadtime_java/) g = "natives"
        else if (dso == "[vdso]" || (dso ~ /^libc/ && sym ~ /clock_gettime/)) g = "clock-user"
        else if (dso == "[kernel.kallsyms]") g = "kernel"
        else g = "other"
        t[g] += s; all += s
      }
      END {
        f = per / n
        printf "| %s | %s | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f |\n", c, best, all * f,
          t["hotspot-jvmti"] * f, t["hotspot-other"] * f, t["java"] * f, t["agent"] * f, t["natives"] * f,
          t["clock-user"] * f, t["kernel"] * f, t["other"] * f
      }'
done
