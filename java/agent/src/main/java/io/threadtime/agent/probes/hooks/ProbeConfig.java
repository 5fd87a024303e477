package io.threadtime.agent.probes.hooks;

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
    // Probes on virtual threads whose CPU is charged to their own account
    // (installVirtual); all null otherwise, and every call goes as above.
    static MethodHandle isVirtual;   // (Thread)Z  Thread.isVirtual
    static MethodHandle beginPlain;  // (I)J       tt_probe_begin
    static MethodHandle account;     // ()J        the current virtual thread's account, ns; -1 without one
    static MethodHandle endMeasured; // (IJJIZ)V   tt_probe_end_measured
    static int measure;              // what the account counts: 1 CPU (exact mode), 2 time mounted
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

    /**
     * Called by the agent before {@link #install} when virtual threads are
     * charged (mode=exact or mounted, or the JVMTI agent): a probe on a virtual
     * thread then records a plain begin and an end carrying the difference
     * of the thread's account across the call. Ignored after install.
     */
    public static synchronized void installVirtual(MethodHandle isVirtual, MethodHandle beginPlain,
            MethodHandle account, MethodHandle endMeasured, int measure) {
        if (installed) {
            return;
        }
        ProbeConfig.isVirtual = isVirtual;
        ProbeConfig.beginPlain = beginPlain;
        ProbeConfig.account = account;
        ProbeConfig.endMeasured = endMeasured;
        ProbeConfig.measure = measure;
    }

    /** Whether {@link #install} has run. */
    public static boolean installed() {
        return installed;
    }
}
