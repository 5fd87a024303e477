package io.threadtime.agent.vthreads.hooks;

import java.lang.invoke.MethodHandle;

/**
 * What the {@code java.lang.instrument} agent hands to {@link VirtualThreadHooks} before
 * that class is initialized, where its constants come from (constants, so
 * that the JIT compiles the clock read into the hooks). Also the hooks'
 * mode, which any class loader can read.
 */
public final class HookConfig {
    /** The class whose instances get the account fields: one per virtual thread. */
    public static final String CONTINUATION_CLASS = "java.lang.VirtualThread$VThreadContinuation";
    /** The account fields' names, as {@code io.threadtime.agent.vthreads.ContinuationFields} adds them:
     * the CPU account, then where the time off a CPU went (see {@link ContinuationAccounts}). */
    public static final String TOTAL_FIELD = "threadtime$total", MARK_FIELD = "threadtime$mark",
            CARRIER_FIELD = "threadtime$carrier", SEQ_FIELD = "threadtime$seq", READY_FIELD = "threadtime$ready",
            SINCE_FIELD = "threadtime$since", WAIT_FIELD = "threadtime$wait", PINNED_FIELD = "threadtime$pinned",
            PARKED_FIELD = "threadtime$parked", MOUNTED_FIELD = "threadtime$mounted";

    static MethodHandle clock;        // ()J, the clock stretches are measured with
    static MethodHandle carrierClock; // (J)J, that clock read for a carrier by thread id
    static MethodHandle current;      // ()J, the threadtime API's current-thread CPU time
    static String clockName = "none";
    static double nsPerTick = 1;      // the clock's unit, in ns
    static MethodHandle wall;         // ()J, the wall clock of the waits; null: the clock above is one (mounted mode)
    static double wallNsPerTick = 1;  // its unit, in ns
    static boolean account;           // whether the hooks charge (install() was called)
    static boolean fields;            // accounts in the continuations (ContinuationAccounts), not the table
    static MethodHandle mountMark;    // (J)V, tt_event_mount, or null: no markers
    static MethodHandle unmountMark;  // (J)V, tt_event_unmount
    static MethodHandle mountName;    // (Thread, Thread)V: names a virtual thread and its carrier, once
    // What the hooks do: set by the agent before they go in, read by any
    // class loader's copy of the API (io.threadtime.JavaagentAccounts).
    private static volatile String mode;        // a VirtualThreadCpu.Mode constant's name; null: not set up
    private static volatile boolean charging;   // whether that mode charges (Mode.charging())

    private HookConfig() {}

    /** Called once by the agent, before the hooks are put in. */
    public static void install(MethodHandle clock, MethodHandle carrierClock, MethodHandle current, String clockName,
            double nsPerTick, MethodHandle wall, double wallNsPerTick) {
        HookConfig.nsPerTick = nsPerTick;
        HookConfig.wall = wall;
        HookConfig.wallNsPerTick = wall == null ? nsPerTick : wallNsPerTick;
        HookConfig.clock = clock;
        HookConfig.carrierClock = carrierClock;
        HookConfig.current = current;
        HookConfig.clockName = clockName;
        HookConfig.account = true;
    }

    /**
     * Called by the agent before the hooks are put in, once it has added the
     * account fields to the virtual threads' continuation class and opened
     * {@code java.lang} to this module: the hooks keep the accounts there.
     * Null then; else why the fields cannot be reached, and the table is used.
     */
    public static String useFields() {
        try {
            Class.forName(ContinuationAccounts.class.getName(), true, null);
        } catch (ClassNotFoundException | LinkageError e) {
            Throwable cause = e instanceof ExceptionInInitializerError && e.getCause() != null ? e.getCause() : e;
            return "its fields could not be reached: " + cause;
        }
        fields = true;
        return null;
    }

    /**
     * Called by the agent before the hooks are put in when the event log is
     * to get a marker into the carrier's ring at every mount and unmount,
     * carrying the virtual thread's id.
     */
    public static void markers(MethodHandle mount, MethodHandle unmount) {
        HookConfig.mountMark = mount;
        HookConfig.unmountMark = unmount;
    }

    /**
     * Called by the agent with {@link #markers}: what the mount hook calls
     * after the marker with the virtual thread and its carrier, so that the
     * trace names both (once each: the handle's own business).
     */
    public static void names(MethodHandle mountName) {
        HookConfig.mountName = mountName;
    }

    /** Set by the agent once it knows whether the hooks are in: the name of
     * the {@code io.threadtime.VirtualThreadCpu.Mode} they are in, and
     * whether that mode charges. This class, on the boot class path, cannot
     * see that type: the agent hands both over. */
    public static void mode(String name, boolean charges) {
        charging = charges;
        mode = name;
    }

    /** The mode's name; null until the agent has set the hooks up. */
    public static String mode() {
        return mode;
    }

    /** Whether the hooks keep the accounts in the threads' continuations
     * ({@link ContinuationAccounts}), not in the table ({@link TableAccounts}). */
    public static boolean accountsInThreads() {
        return fields;
    }

    /** The clock's name: "thread-cpu-fast (rseq+tsc)", "thread-cpu (syscall: why)", "tsc", "monotonic",
     * or "none". */
    public static String clockName() {
        return charging ? clockName : "none";
    }
}
