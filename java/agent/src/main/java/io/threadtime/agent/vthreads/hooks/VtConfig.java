package io.threadtime.agent.vthreads.hooks;

import java.lang.invoke.MethodHandle;

/**
 * What the {@code java.lang.instrument} agent hands to {@link VtHooks} before
 * that class is initialized, where its constants come from (constants, so
 * that the JIT compiles the clock read into the hooks). Also the agent's
 * state, which any class loader can read.
 */
public final class VtConfig {
    /** The class whose instances get the account fields: one per virtual thread. */
    public static final String CONTINUATION_CLASS = "java.lang.VirtualThread$VThreadContinuation";
    /** The account fields' names, as {@code io.threadtime.ContinuationFields} adds them. */
    public static final String TOTAL_FIELD = "threadtime$total", MARK_FIELD = "threadtime$mark",
            CARRIER_FIELD = "threadtime$carrier", SEQ_FIELD = "threadtime$seq";

    // The states, shared with the JVMTI agent, whose vt_state codes in
    // jvmti/agent/agent.c are the same numbers (StateCodesTest reads them
    // there): io.threadtime.VirtualThreadCpu reads either through these.
    /** Not installed: this JVM runs without the agent (or without its hooks). */
    public static final int ABSENT = -1;
    /** Installed but not charging: this JDK's VirtualThread has another shape,
     * or the hooks could not be put in; the agent said why on stderr. */
    public static final int PASSIVE = 0;
    /** Loaded with {@code events=off} (the JVMTI agent also with {@code events=empty}): nothing charged. */
    public static final int EVENTS_OFF = 1;
    /** Charging the carrier's CPU clock. */
    public static final int EXACT = 2;
    /** Charging time mounted. */
    public static final int MOUNTED = 3;
    /** Hooks in for the event log's mount and unmount markers only; nothing charged. */
    public static final int MARKERS = 4;

    static MethodHandle clock;        // ()J, the clock stretches are measured with
    static MethodHandle carrierClock; // (J)J, that clock read for a carrier by thread id
    static MethodHandle current;      // ()J, the threadtime API's current-thread CPU time
    static String clockName = "none";
    static double nsPerTick = 1;      // the clock's unit, in ns
    static boolean account;           // whether the hooks charge (install() was called)
    static boolean fields;            // accounts in the continuations (VtFields), not the table
    static MethodHandle mountMark;    // (J)V, tt_event_mount, or null: no markers
    static MethodHandle unmountMark;  // (J)V, tt_event_unmount
    static MethodHandle mountName;    // (Thread, Thread)V: names a virtual thread and its carrier, once
    private static volatile int state = ABSENT;

    private VtConfig() {}

    /** Called once by the agent, before the hooks are put in. */
    public static void install(MethodHandle clock, MethodHandle carrierClock, MethodHandle current, String clockName,
            double nsPerTick) {
        VtConfig.nsPerTick = nsPerTick;
        VtConfig.clock = clock;
        VtConfig.carrierClock = carrierClock;
        VtConfig.current = current;
        VtConfig.clockName = clockName;
        VtConfig.account = true;
    }

    /**
     * Called by the agent before the hooks are put in, once it has added the
     * account fields to the virtual threads' continuation class and opened
     * {@code java.lang} to this module: the hooks keep the accounts there.
     * Null then; else why the fields cannot be reached, and the table is used.
     */
    public static String useFields() {
        try {
            Class.forName(VtFields.class.getName(), true, null);
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
        VtConfig.mountMark = mount;
        VtConfig.unmountMark = unmount;
    }

    /**
     * Called by the agent with {@link #markers}: what the mount hook calls
     * after the marker with the virtual thread and its carrier, so that the
     * trace names both (once each: the handle's own business).
     */
    public static void names(MethodHandle mountName) {
        VtConfig.mountName = mountName;
    }

    /** Set by the agent once it knows whether the hooks are in. */
    public static void state(int s) {
        state = s;
    }

    /** One of the constants above. */
    public static int state() {
        return state;
    }

    /** Whether the hooks keep the accounts in the threads' continuations
     * ({@link VtFields}), not in the table ({@link VtAccounts}). */
    public static boolean accountsInThreads() {
        return fields;
    }

    /** The clock's name: "thread-cpu-fast (rseq+tsc)", "thread-cpu (syscall: why)", "tsc", "monotonic",
     * or "none". */
    public static String clockName() {
        return state == EXACT || state == MOUNTED ? clockName : "none";
    }
}
