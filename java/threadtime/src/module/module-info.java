/**
 * threadtime: per-thread CPU clocks, a flyweight event log and the reading
 * side of virtual-thread CPU accounting, with no dependencies. The
 * {@code -javaagent} that charges virtual threads and runs probes is the
 * artifact {@code threadtime-agent} (module {@code io.threadtime.agent}),
 * which carries these classes too.
 */
module io.threadtime {
    requires java.management;
    // HotSpotDiagnosticMXBean: whether HotSpot's transition path is on.
    requires jdk.management;

    exports io.threadtime;
}
