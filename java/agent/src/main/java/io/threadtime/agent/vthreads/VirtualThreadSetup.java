package io.threadtime.agent.vthreads;

import io.threadtime.AgentAccess;
import io.threadtime.ThreadTimeMXBean;
import io.threadtime.VirtualThreadCpu;
import io.threadtime.VirtualThreadCpu.Mode;
import io.threadtime.agent.AgentLog;
import io.threadtime.agent.AgentOptions;
import io.threadtime.agent.HookClassPath;
import io.threadtime.agent.vthreads.hooks.VirtualThreadHooks;
import java.lang.instrument.Instrumentation;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.Map;
import java.util.Set;

/**
 * The agent's virtual-thread accounting: the hooks put into
 * {@code java.lang.VirtualThread} (see {@link VirtualThreadTransformer}),
 * the clock they charge, and where the accounts live (fields added to the
 * threads' continuations, see {@link ContinuationFields}, or a table).
 */
public final class VirtualThreadSetup {
    private VirtualThreadSetup() {}

    /**
     * How many times the hooks are run before they go in: past the 128th
     * call of each method handle they invoke (see {@link #install}).
     */
    static final int WARM_UP_ROUNDS = 200;

    /**
     * The VirtualThread hooks (JDK 21+): accounting in the mode asked for
     * (exact by default), plus the event log's mount and unmount markers when
     * the agent runs the log; with the log (probe=, probes=, out=, ring=) and
     * no mode= given, the markers alone, so that probes cost no clock reads
     * per mount.
     */
    public static void install(AgentOptions o, Instrumentation inst) {
        // The one decision of what the hooks will do; what follows sets that up.
        Mode mode = o.modeGiven || !o.runsLog() ? o.mode : Mode.MARKERS;
        Boolean transitionsOn = AgentAccess.transitionsOn();
        if (AgentAccess.jvmtiMode().charging()) {
            AgentLog.warn("the JVMTI virtual-thread agent is loaded and charging; this agent's VirtualThread hooks stay out"
                    + (o.runsLog() ? " (so the trace has no virtual-thread markers)" : ""));
            return;
        }
        if (!HookClassPath.append(inst)) {
            return;
        }
        try {
            if (Class.forName(VirtualThreadHooks.class.getName(), false, null) != VirtualThreadHooks.class) {
                AgentLog.warn("the VirtualThread hooks were already loaded from the class path; they stay out");
                return;
            }
        } catch (ClassNotFoundException e) {
            AgentLog.warn("the VirtualThread hooks are not on the boot class path (" + e + "); they stay out");
            return;
        }
        if (!o.hooks) {
            report(Mode.EVENTS_OFF);
            return;
        }
        // A note, not a warning: the path costs ~90-100 ns per mount and
        // unmount, and on JDK 24+ switching it off is worse (see FLAG_HANG).
        if (Boolean.TRUE.equals(transitionsOn)) {
            AgentLog.debug("HotSpot's JVMTI transition path is on: each virtual-thread mount and unmount goes through "
                    + "it, ~90 ns more per Thread.yield() on JDK 25 and ~100 ns on JDK 21 (docs/benchmarks.md); "
                    + (AgentAccess.MONITORS_UNMOUNT
                            ? "leave it on with this JDK: under -XX:-" + AgentAccess.TRANSITIONS_FLAG + " "
                                    + AgentAccess.FLAG_HANG
                            : "-XX:+UnlockExperimentalVMOptions -XX:-" + AgentAccess.TRANSITIONS_FLAG
                                    + " switches it off (then no JVMTI agent gets virtual-thread events; see "
                                    + "java/README.md for what still works)"));
        } else if (Boolean.FALSE.equals(transitionsOn) && AgentAccess.MONITORS_UNMOUNT) {
            AgentLog.warn("-XX:-" + AgentAccess.TRANSITIONS_FLAG + " on JDK " + Runtime.version().feature()
                    + ": under it " + AgentAccess.FLAG_HANG + "; leave the flag out with this JDK (the accounting "
                    + "works without it)");
        }
        try {
            AgentAccess.linkNow(); // the FFM handles the hooks call: before the warm-up, not inside a mount
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            if (o.runsLog()) {
                MethodType mark = MethodType.methodType(void.class, long.class);
                VirtualThreadHooks.names(AgentAccess.mountedNames());
                VirtualThreadHooks.markers(AgentAccess.backend("eventMount", mark),
                        AgentAccess.backend("eventUnmount", mark));
            }
            Object warmUp = null; // a continuation for the warm-up, when the accounts are in them
            if (mode.charging()) {
                installClock(mode, lookup, inst);
                if (!o.table) {
                    warmUp = fieldsInContinuations(inst);
                }
                if (warmUp == null) {
                    // The table's readers look at VirtualThread.state to tell a
                    // thread not yet run (it reads 0) from one without an account.
                    try {
                        openJavaLang(inst);
                    } catch (RuntimeException e) {
                        AgentLog.warn("could not open java.lang to the hooks (" + e
                                + "); a virtual thread that has not run yet reads -1, not 0");
                    }
                }
            }
            VirtualThreadHooks.settle(); // its constants, before any hook runs
            // Nothing may be loaded, initialized or linked for the first time
            // inside a hook: a carrier runs them in the middle of a mount, and
            // with HotSpot's transition path on, a class being initialized by a
            // thread that waits for that mount to end deadlocks (seen once:
            // a carrier in mount() waiting for TableAccounts' initializer, whose
            // thread waited in the VM). One round trip through the hooks on
            // this thread, under its own id, which no virtual thread has,
            // does all of it now (the log does not run yet: no marker is written),
            // on a continuation of its own when the accounts are in them.
            // Not one round trip but WARM_UP_ROUNDS: a method handle called
            // where it is not a constant (an interpreted hook) rebuilds itself
            // at its 128th call, defining a class ("customization"; the JDK
            // caps the threshold at 127), and inside a mount that deadlocked
            // too (JDK 21, 3 of 80 runs of a probe test: a carrier in unmount()
            // waiting in MethodHandle.customize, found by a test that hung CI).
            Thread self = Thread.currentThread();
            for (int i = 0; i < WARM_UP_ROUNDS; i++) {
                VirtualThreadHooks.ready(warmUp, 1, 1L << 1); // a runnable state
                VirtualThreadHooks.mount(self, self, warmUp);
                VirtualThreadHooks.pinned(warmUp);
                VirtualThreadHooks.unpinned(warmUp);
                VirtualThreadHooks.unmount(self, warmUp, i & 1, 1); // a park, then a yield
            }
            VirtualThreadHooks.end(self, warmUp);
            if (o.runsLog()) {
                AgentAccess.warmUpNames(WARM_UP_ROUNDS);
            }
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            AgentLog.warn("could not set up the clock (" + e + "); the agent stays passive");
            report(Mode.PASSIVE);
            return;
        }
        instrument(inst, mode);
    }

    /** What the hooks do, for every class loader's copy of the API: the
     * mode's name and whether it charges, which the hook classes cannot ask
     * the mode itself (they cannot see its type). */
    private static void report(Mode mode) {
        VirtualThreadHooks.mode(mode.name(), mode.charging());
    }

    /**
     * Has {@link ContinuationFields} add the account fields to the virtual
     * threads' continuation class as it loads, loads it, makes one instance
     * for the hooks' warm-up, and opens {@code java.lang} to the hooks'
     * module, whose handles on those fields need it; the hooks then keep the
     * accounts there, and this returns the instance. Where any of that cannot
     * be done, one line says why, the hooks keep the accounts in a table (a
     * lookup at each mount and unmount, a lock at each thread's first mount
     * and end), and this returns null.
     */
    private static Object fieldsInContinuations(Instrumentation inst) {
        ContinuationFields fields = new ContinuationFields();
        inst.addTransformer(fields, false);
        String why;
        Object warmUp = null;
        try {
            Class<?> cont = Class.forName(VirtualThreadHooks.CONTINUATION_CLASS, false, null);
            why = fields.mismatch();
            if (why == null) {
                warmUp = instance(cont);
                openJavaLang(inst);
                why = VirtualThreadHooks.useFields();
            }
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            Throwable cause = e;
            while (cause.getCause() != null) {
                cause = cause.getCause();
            }
            why = cause instanceof UnsupportedOperationException
                    ? "this JVM runs virtual threads without continuations (" + cause + ")"
                    : "it could not be prepared: " + cause;
        } finally {
            inst.removeTransformer(fields);
        }
        if (why != null) {
            AgentLog.warn("the accounts go in a table, not in the virtual threads: " + why
                    + "; that costs a lookup per mount and unmount");
            return null;
        }
        return warmUp;
    }

    /** Opens {@code java.lang} to the hooks' module (the boot class path's),
     * for their handles on {@code VirtualThread}'s and its continuation's fields. */
    private static void openJavaLang(Instrumentation inst) {
        inst.redefineModule(Object.class.getModule(), Set.of(), Map.of(),
                Map.of("java.lang", Set.of(VirtualThreadHooks.class.getModule())), Set.of(), Map.of());
    }

    /**
     * An instance of the continuation class, never run, made without a
     * constructor: no virtual thread is made, so {@code VirtualThread}'s own
     * initialization (its scheduler, read from system properties the program
     * may still set) is left for the program's first virtual thread. It does
     * initialize {@code jdk.internal.vm.Continuation} if the JVM has not yet
     * (JDK 25 has at start-up), which reads
     * {@code jdk.preserveScopedValueCache}; and it fails where the JVM has no
     * continuations, whose virtual threads are OS threads.
     */
    private static Object instance(Class<?> cont) throws ReflectiveOperationException {
        Class<?> unsafeClass = Class.forName("sun.misc.Unsafe");
        java.lang.reflect.Field f = unsafeClass.getDeclaredField("theUnsafe");
        f.setAccessible(true);
        return unsafeClass.getMethod("allocateInstance", Class.class).invoke(f.get(null), cont);
    }

    /** The accounting's clocks, for the hooks. */
    private static void installClock(Mode mode, MethodHandles.Lookup lookup, Instrumentation inst)
            throws ReflectiveOperationException {
        MethodHandle clock, carrierClock;
        String clockName;
        double nsPerTick = 1;
        if (mode == Mode.EXACT) {
            // The carrier's own clock, without a system call while the kernel
            // shows that the carrier was not switched out (FastClock).
            clock = AgentAccess.fastClockReader();
            carrierClock = lookup.findVirtual(ThreadTimeMXBean.class, "getThreadCpuTime",
                    MethodType.methodType(long.class, long.class)).bindTo(ThreadTimeMXBean.getInstance());
            String how = AgentAccess.fastClockName();
            clockName = (how.startsWith("syscall") ? "thread-cpu (" : "thread-cpu-fast (") + how + ")";
        } else {
            // The cycle counter where the core's calibration trusts it (cheaper
            // than System.nanoTime() here), else System.nanoTime().
            double hz = AgentAccess.cycleHz();
            if (hz > 0) {
                clock = AgentAccess.cycleReader();
                nsPerTick = 1e9 / hz;
                clockName = "tsc";
            } else {
                clock = lookup.findStatic(System.class, "nanoTime", MethodType.methodType(long.class));
                clockName = "monotonic";
            }
            carrierClock = MethodHandles.dropArguments(clock, 0, long.class);
        }
        // The waits' wall clock: the one mounted mode reads, else the cycle
        // counter, else System.nanoTime().
        MethodHandle wall = null;
        double wallNsPerTick = 1;
        if (mode == Mode.EXACT) {
            double hz = AgentAccess.cycleHz();
            wall = hz > 0 ? AgentAccess.cycleReader()
                    : lookup.findStatic(System.class, "nanoTime", MethodType.methodType(long.class));
            wallNsPerTick = hz > 0 ? 1e9 / hz : 1;
            if (hz > 0 && AgentAccess.STAMPED_CLOCK) {
                stampedClock(inst);
            }
        }
        MethodHandle current = lookup.findStatic(VirtualThreadCpu.class, "currentThreadCpuTime",
                MethodType.methodType(long.class));
        VirtualThreadHooks.install(clock, carrierClock, current, clockName, nsPerTick, wall, wallNsPerTick);
    }

    /**
     * Exact mode's mount reads the CPU clock and the wall clock's counter in
     * one native call, which leaves the counter value in a slot of the OS
     * thread that the hook loads with {@code Unsafe.getLong} (an intrinsic):
     * through JNI (JDK 21) a second call cost ~30 ns per mount, ~17 ns more
     * than this. JDK 22+ makes the two calls, each a critical FFM downcall:
     * this measured no cheaper there (docs/where-time-went.md). That load needs
     * {@code jdk.internal.misc} exported to the hooks; where that cannot be
     * done, one line says so and the mount makes the two calls.
     */
    private static void stampedClock(Instrumentation inst) {
        try {
            inst.redefineModule(Object.class.getModule(), Set.of(),
                    Map.of("jdk.internal.misc", Set.of(VirtualThreadHooks.class.getModule())), Map.of(), Set.of(), Map.of());
            VirtualThreadHooks.stamped(AgentAccess.stampedClockReader(), AgentAccess.stampSlotReader());
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            AgentLog.warn("the mount reads the wall clock in a second native call (" + e + ")");
        }
    }

    /** The transformer in, VirtualThread retransformed, the mode reported. */
    private static void instrument(Instrumentation inst, Mode mode) {
        Class<?> target;
        try {
            target = Class.forName("java.lang.VirtualThread", false, null);
        } catch (ClassNotFoundException e) {
            AgentLog.warn("JDK " + Runtime.version() + " has no java.lang.VirtualThread; the agent stays passive");
            report(Mode.PASSIVE);
            return;
        }
        if (!inst.isRetransformClassesSupported() || !inst.isModifiableClass(target)) {
            AgentLog.warn("this JVM cannot retransform java.lang.VirtualThread; the agent stays passive");
            report(Mode.PASSIVE);
            return;
        }
        // The transformer stays registered: another agent retransforming
        // VirtualThread later (the OpenTelemetry agent does) has the JVM start
        // again from the original bytes and run every retransform-capable
        // transformer, ours included, so the hooks stay in.
        VirtualThreadTransformer transformer = new VirtualThreadTransformer();
        inst.addTransformer(transformer, true);
        String why;
        try {
            // The mode first: a hook may run as soon as the class is replaced.
            report(mode);
            inst.retransformClasses(target);
            why = transformer.mismatch();
        } catch (Throwable t) {
            why = "retransforming it failed: " + t;
        }
        if (why != null) {
            inst.removeTransformer(transformer);
            report(Mode.PASSIVE);
            AgentLog.warn("java.lang.VirtualThread of JDK " + Runtime.version() + " is not a shape this agent knows (" + why
                    + "); nothing instrumented, virtual threads read -1");
        }
    }

}
