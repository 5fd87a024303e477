#!/bin/sh
# The calling thread's CPU time in Java through the fast clock: FastClockBench run RUNS
# times (default 5) on each JDK named (default: 17 25), the JDKs taking
# turns, then the median of each benchmark over the runs, and the ratio the
# issue bounds (threadTime / jdk <= 0.1) beside the floor (counter: a bare
# cycle-counter read through the same kind of call). JDK 17 calls through
# JNI, 22+ through FFM. Build first: make bench-java-build.
# Usage: java/benchmarks/fastclock.sh [RUNS] [JDK...]
set -eu
cd "$(dirname "$0")/../.."
runs=${1:-5}
[ $# -gt 0 ] && shift
jdks=${*:-17 25}
jar=java/benchmarks/target/benchmarks.jar
[ -f "$jar" ] || { echo "fastclock.sh: $jar missing; run make bench-java-build first" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
i=1
while [ "$i" -le "$runs" ]; do
    for v in $jdks; do
        java="$(java/jdks.sh home "$v")/bin/java"
        "$java" -jar "$jar" FastClockBench -rf csv -rff "$tmp/$v-$i.csv" >"$tmp/$v-$i.log" 2>&1 ||
            { cat "$tmp/$v-$i.log" >&2; exit 1; }
    done
    i=$((i + 1))
done
echo "threadtime: the calling thread's CPU time, ns per call, median of $runs runs (JMH average time each)"
echo "host: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
for v in $jdks; do
    # JMH's CSV: "Benchmark","Mode","Threads","Samples","Score",...
    cat "$tmp/$v"-*.csv | awk -F, -v jdk="$v" '
        NR > 1 && $1 !~ /Benchmark/ {
            gsub(/"/, "", $1); sub(/.*\./, "", $1)
            n[$1]++; s[$1, n[$1]] = $5 + 0
        }
        function median(b,   k, i, j, t, a) {
            k = n[b]
            for (i = 1; i <= k; i++) a[i] = s[b, i]
            for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
            return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
        }
        END {
            printf "JDK %s:", jdk
            for (b in n) { m[b] = median(b); printf "  %s %.1f", b, m[b] }
            printf "\n  threadTime / jdk = %.3f (floor 0.1); counter / jdk = %.3f; threadTime / counter = %.2f\n",
                m["threadTime"] / m["jdk"], m["counter"] / m["jdk"], m["threadTime"] / m["counter"]
        }'
done
