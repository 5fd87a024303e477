#!/usr/bin/env bash
# What a probe adds per call to a small method (ProbeBench.madd, 8
# multiply-adds), per configuration: one JVM each, RUNS rounds interleaved,
# each JVM the best of 7 rounds; medians. Figures are the calling thread's
# CPU time per call (on a shared machine, wall time also counts the time
# the thread waited for a CPU); the wall figures are in each run's line. Beside it in the same run:
# JFR's jdk.MethodTiming on the same method (JDK 25+, JEP 520's filter) and
# `threadtime bench` fast_self (the calling thread's CPU clock read without a
# system call, tt_self_fast_ns), against which probe.cpu=on is
# judged, and virt_self (one raw CPU clock read, its floor before that).
# On JDK 21+ the same on a virtual thread (rows vt-*: its carrier's CPU time
# per call): bare, the agent in mode=exact without probes, and probe.cpu=on
# with mode=exact, where a call reads the thread's own account at both ends
# (probe.cpu=on on a virtual thread); "added over bare" there is over vt-bare.
#   run.sh THREADTIME_JAR THREADTIME_CLI [RUNS=5] [JDK feature versions...=17 25]
# BASELINE_JAR=/another/threadtime.jar adds baseline-probe and
# baseline-probe-cpu, that JAR's agent in the same rounds: a change measured
# before and after, side by side.
# Prints a Markdown table; each run's figures go to stderr as they come.
set -euo pipefail
jar=$1 cli=$2 runs=${3:-5}
jdks=("${@:4}")
[ ${#jdks[@]} -gt 0 ] || jdks=(17 25)
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../../scripts/bench-lib.sh"
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$("$root/java/jdks.sh" home 17)/bin/javac" --release 17 -d "$work/classes" "$here/ProbeBench.java"

probe="-javaagent:$jar=probe=ProbeBench::madd,out=$work/probe.ttrace"
declare -A args=([bare]="" [probe]="$probe" [probe-jni]="-Dthreadtime.backend=jni $probe"
  [probe-cpu]="-javaagent:$jar=probe=ProbeBench::madd,probe.cpu=on,out=$work/cpu.ttrace"
  [jfr-method-timing]="-XX:StartFlightRecording:method-timing=ProbeBench::madd,filename=$work/x.jfr"
  [vt-bare]="" [vt-exact]="-javaagent:$jar=mode=exact"
  [vt-probe-cpu]="-javaagent:$jar=mode=exact,probe=ProbeBench::madd,probe.cpu=on,out=$work/vcpu.ttrace")
# calls per round: the slow configurations get fewer, the same ns/call
declare -A calls=([bare]=20000000 [probe]=20000000 [probe-jni]=20000000 [probe-cpu]=500000
  [jfr-method-timing]=5000000 [vt-bare]=20000000 [vt-exact]=20000000 [vt-probe-cpu]=500000)
if [ -n "${BASELINE_JAR:-}" ]; then
  args[baseline-probe]="-javaagent:$BASELINE_JAR=probe=ProbeBench::madd,out=$work/base.ttrace"
  args[baseline-probe-cpu]="-javaagent:$BASELINE_JAR=probe=ProbeBench::madd,probe.cpu=on,out=$work/base-cpu.ttrace"
  calls[baseline-probe]=${calls[probe]} calls[baseline-probe-cpu]=${calls[probe-cpu]}
fi
configs() {
  echo bare probe probe-cpu
  [ -z "${BASELINE_JAR:-}" ] || echo baseline-probe baseline-probe-cpu
  [ "$1" -lt 22 ] || echo probe-jni
  [ "$1" -lt 25 ] || echo jfr-method-timing
  [ "$1" -lt 21 ] || echo vt-bare vt-exact vt-probe-cpu
}
declare -A ns
virt="" fast=""
for ((r = 1; r <= runs; r++)); do
  for v in "${jdks[@]}"; do
    java=$("$root/java/jdks.sh" runtime "$v")/bin/java
    for c in $(configs "$v"); do
      # shellcheck disable=SC2086 # the configuration's options are words
      vt=()
      case $c in vt-*) vt=(--add-opens java.base/java.lang=ALL-UNNAMED) ;; esac
      out=$("$java" --enable-native-access=ALL-UNNAMED "${vt[@]}" ${args[$c]} -cp "$work/classes" ProbeBench "${calls[$c]}" 7 ${vt:+virtual} 2>/dev/null | grep "^ns_per_call")
      echo "run $r jdk$v $c: $out" >&2
      ns[$v/$c]+="$(echo "$out" | awk '{print $2}') "
    done
  done
  s=$(bench_p50 "$cli" virt_self)
  echo "run $r virt_self p50: $s" >&2
  virt+="$s "
  s=$(bench_p50 "$cli" fast_self)
  echo "run $r fast_self p50: $s" >&2
  fast+="$s "
done

v_self=$(echo "$virt" | median)
f_self=$(echo "$fast" | median)
echo "ProbeBench.madd (8 multiply-adds), CPU time per call, best of 7 rounds per JVM, $runs interleaved JVMs per row, medians; $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "virt_self (threadtime bench, p50, median of $runs): $v_self ns; fast_self: $f_self ns"
echo
echo "| JDK | configuration | CPU ns/call | added over bare | floor | each run |"
echo "|---|---|---:|---:|---|---|"
for v in "${jdks[@]}"; do
  bare=$(echo "${ns[$v/bare]}" | median)
  vt_bare=""
  [ "$v" -lt 21 ] || vt_bare=$(echo "${ns[$v/vt-bare]}" | median)
  jfr_added=""
  [ "$v" -lt 25 ] || jfr_added=$(awk -v a="$(echo "${ns[$v/jfr-method-timing]}" | median)" -v b="$bare" 'BEGIN {print a - b}')
  for c in $(configs "$v"); do
    m=$(echo "${ns[$v/$c]}" | median)
    base=$bare
    case $c in vt-*) base=$vt_bare ;; esac
    added=$(awk -v a="$m" -v b="$base" 'BEGIN {printf "%.1f", a - b}')
    floor=""
    case $c in
    probe | probe-jni | baseline-probe)
      floor=$(awk -v x="$added" 'BEGIN {print (x <= 30) ? "<= 30 ns: met" : "<= 30 ns: NOT met"}')
      [ -z "$jfr_added" ] || floor+=$(awk -v x="$added" -v j="$jfr_added" \
        'BEGIN {printf "; %.2fx what JFR adds (<= 0.5x: %s)", x / j, (x <= 0.5 * j) ? "met" : "NOT met"}') ;;
    probe-cpu | baseline-probe-cpu)
      floor=$(awk -v x="$added" -v s="$f_self" \
        'BEGIN {printf "<= 2 x fast_self + 40 = %.0f ns: %s", 2 * s + 40, (x <= 2 * s + 40) ? "met" : "NOT met"}') ;;
    esac
    echo "| $v | $c | $m | $([ "$c" = bare ] || [ "$c" = vt-bare ] && echo - || echo "$added") | $floor | ${ns[$v/$c]}|"
  done
done
