/**
 * threadtime's {@code -javaagent}: the API ({@code io.threadtime}, which this
 * JAR carries too, so one JAR is both the agent and the API) plus what the
 * agent alone needs: its options and start-up ({@code io.threadtime.agent}),
 * the virtual-thread accounting ({@code io.threadtime.agent.vthreads}), the
 * probes ({@code io.threadtime.agent.probes}), the hook classes it puts on
 * the boot class path for {@code java.base} (the {@code hooks} package of
 * each) and the relocated ASM ({@code io.threadtime.shaded.asm}). Only the
 * API is exported. Compiled after shading (see the pom): ASM is then part of
 * this JAR, not a module it requires.
 */
module io.threadtime.agent {
    requires java.instrument;
    requires java.management;
    // HotSpotDiagnosticMXBean: whether HotSpot's transition path is on.
    requires jdk.management;
    // sun.misc.Signal: java -jar ... run waits for the command as a shell does.
    requires jdk.unsupported;

    exports io.threadtime;
}
