package io.threadtime.boot;

import java.lang.invoke.MethodHandle;

/**
 * What the agent hands to {@link Probes} before that class is initialized:
 * the core's probe calls as method handles, read once into {@code Probes}'
 * static finals so that the JIT compiles each probe into a direct native call.
 */
public final class ProbeConfig {
    static MethodHandle begin; // (I)J     tt_probe_begin or tt_probe_begin_cpu
    static MethodHandle end;   // (IJZ)V   tt_probe_end or tt_probe_end_cpu
    static MethodHandle line;  // (I)V     tt_event
    private static volatile boolean installed;

    private ProbeConfig() {}

    /** Called once by the agent, before any probe is put in; later calls are ignored. */
    public static synchronized void install(MethodHandle begin, MethodHandle end, MethodHandle line) {
        if (installed) {
            return;
        }
        ProbeConfig.begin = begin;
        ProbeConfig.end = end;
        ProbeConfig.line = line;
        installed = true;
    }

    /** Whether {@link #install} has run. */
    public static boolean installed() {
        return installed;
    }
}
