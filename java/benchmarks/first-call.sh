#!/bin/sh
# The first call in a fresh JVM: what ThreadTime.currentThreadCpuTime()'s
# first call costs (loading the classes, extracting or finding the native
# library, linking the backend), beside the JDK's own bean's first
# getCurrentThreadCpuTime() and a first System.nanoTime() (the floor), each
# in its own JVM, RUNS times (default 9) per JDK (default: 17 25; a runtime
# is enough), the JVMs taking turns; medians and minimums, ms. The minimum is
# the run the loaded host disturbed least. On JDK 22+ also ffm-link: the CPU
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
        long t0 = System.nanoTime();
        long v;
        switch (a[0]) {
            case "threadtime": v = io.threadtime.ThreadTime.currentThreadCpuTime(); break;
            case "bean": v = java.lang.management.ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime(); break;
            default: v = System.nanoTime(); break;
        }
        long t1 = System.nanoTime();
        System.out.println(a[0] + " " + (t1 - t0) / 1e6 + " " + (v != 0));
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
        System.out.println("ffm-link " + cpu / 1e6 + " true");
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
echo "first call in a fresh JVM, ms, median and minimum of $runs JVMs each (host: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg))"
for v in $jdks; do
    for what in nanoTime bean threadtime $([ "$v" -ge 22 ] && echo ffm-link); do
        awk -v jdk="$v" -v w="$what" '$1 == jdk && $2 == w { print $3 }' "$tmp/out" | sort -n |
            awk -v jdk="$v" -v w="$what" '{ a[NR] = $1 } END { printf "JDK %-3s %-11s median %8.1f  min %8.1f\n", jdk, w, NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2, a[1] }'
    done
done
