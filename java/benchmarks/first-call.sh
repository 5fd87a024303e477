#!/bin/sh
# The first call in a fresh JVM: what ThreadTime.currentThreadCpuTime()'s
# first call costs (loading the classes, extracting or finding the native
# library, linking the backend), beside the JDK's own bean's first
# getCurrentThreadCpuTime() and a first System.nanoTime() (the floor), each
# in its own JVM, RUNS times (default 9) per JDK (default: 17 25; a runtime
# is enough), the JVMs taking turns; medians and minimums, ms. The minimum is
# the run the loaded host disturbed least. Wall time is the verdict; beside
# it, the median CPU time of the calling thread over the call (its
# /proc/thread-self/schedstat run time, read after a Thread.yield() so that
# the kernel has brought it up to date), which a loaded host disturbs far
# less: it counts no wait for a CPU, nor work on other threads (the JIT's,
# threadtime's fast-clock decision). On JDK 22+ also ffm-link: the CPU
# the FFM backend's linker thread spends, off the first call, on the fast
# clock's handle once that call has been made 100 times (ms, its last
# sample). Never part of the tests.
# Usage: java/benchmarks/first-call.sh JAR [RUNS] [JDK...]
set -eu
cd "$(dirname "$0")/../.."
jar=$(realpath "$1")
shift
runs=${1:-9}
[ $# -gt 0 ] && shift
jdks=${*:-17 25}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/FirstCall.java" <<'EOF'
public class FirstCall {
    public static void main(String[] a) throws Exception {
        if (a[0].equals("ffm-link")) {
            link();
            return;
        }
        long c0 = cpu();
        long t0 = System.nanoTime();
        long v;
        switch (a[0]) {
            case "threadtime": v = io.threadtime.ThreadTime.currentThreadCpuTime(); break;
            case "bean": v = java.lang.management.ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime(); break;
            default: v = System.nanoTime(); break;
        }
        long t1 = System.nanoTime();
        long c1 = cpu();
        System.out.println(a[0] + " " + (t1 - t0) / 1e6 + " " + (v != 0) + " " + (c1 - c0) / 1e6);
    }

    /** This thread's run time so far, ns: the first field of its schedstat,
     *  which the kernel updates at a switch, a tick or a yield. */
    static long cpu() throws Exception {
        Thread.yield();
        byte[] b = new byte[64];
        int n;
        try (java.io.FileInputStream in = new java.io.FileInputStream("/proc/thread-self/schedstat")) {
            n = in.read(b);
        }
        long v = 0;
        for (int i = 0; i < n && b[i] >= '0' && b[i] <= '9'; i++) {
            v = v * 10 + (b[i] - '0');
        }
        return v;
    }

    /** JDK 22+: the CPU the FFM backend's linker thread spends on the fast
     *  clock's handle, asked for at the 100th call (its last sample, ms). */
    static void link() throws Exception {
        java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
        for (int i = 0; i < 150; i++) {
            io.threadtime.ThreadTime.currentThreadCpuTime();
        }
        Thread linker = null;
        for (int i = 0; i < 10_000 && linker == null; i++) {
            for (Thread t : Thread.getAllStackTraces().keySet()) {
                if (t.getName().equals("threadtime-ffm-link")) {
                    linker = t;
                }
            }
            Thread.sleep(1);
        }
        long cpu = -1;
        while (linker != null && linker.isAlive()) {
            long c = mx.getThreadCpuTime(linker.getId());
            cpu = c > 0 ? c : cpu;
            Thread.sleep(1);
        }
        System.out.println("ffm-link " + cpu / 1e6 + " true -");
    }
}
EOF
"$(java/jdks.sh home 17)/bin/javac" -d "$tmp" -cp "$jar" "$tmp/FirstCall.java"
# the extracted library exists before the first run, as after any earlier use
"$(java/jdks.sh home 17)/bin/java" -cp "$jar:$tmp" FirstCall threadtime >/dev/null
i=1
while [ "$i" -le "$runs" ]; do
    for v in $jdks; do
        java="$(java/jdks.sh runtime "$v")/bin/java"
        for what in nanoTime bean threadtime $([ "$v" -ge 22 ] && echo ffm-link); do
            "$java" --enable-native-access=ALL-UNNAMED -cp "$jar:$tmp" FirstCall "$what" | sed "s/^/$v /" >>"$tmp/out"
        done
    done
    i=$((i + 1))
done
echo "first call in a fresh JVM, ms, median and minimum of $runs JVMs each, and the calling thread's median CPU time"
echo "(host: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg))"
# median of the numbers on stdin, or - when there are none
median() {
    sort -n | awk '{ a[NR] = $1 } END { if (NR == 0) print "-"; else printf "%.1f", NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}
for v in $jdks; do
    for what in nanoTime bean threadtime $([ "$v" -ge 22 ] && echo ffm-link); do
        wall=$(awk -v jdk="$v" -v w="$what" '$1 == jdk && $2 == w { print $3 }' "$tmp/out" | median)
        min=$(awk -v jdk="$v" -v w="$what" '$1 == jdk && $2 == w { print $3 }' "$tmp/out" | sort -n | head -1)
        cpu=$(awk -v jdk="$v" -v w="$what" '$1 == jdk && $2 == w && $5 != "-" { print $5 }' "$tmp/out" | median)
        printf "JDK %-3s %-11s median %8.1f  min %8.1f  cpu %6s\n" "$v" "$what" "$wall" "$min" "$cpu"
    done
done
