/**
 * threadtime: per-thread CPU clocks, a flyweight event log and virtual-thread
 * CPU accounting. Only {@code io.threadtime} is exported: the hook classes
 * ({@code io.threadtime.boot}, which the agent puts on the boot class path
 * for {@code java.base}) and the relocated ASM ({@code io.threadtime.shaded.asm})
 * stay inside, so jlink can take the module. Compiled after shading (see the
 * pom): ASM is then part of this JAR, not a module it requires.
 */
module io.threadtime {
    requires java.instrument;
    requires java.management;
    // HotSpotDiagnosticMXBean: whether HotSpot's transition path is on.
    requires jdk.management;

    exports io.threadtime;
}
