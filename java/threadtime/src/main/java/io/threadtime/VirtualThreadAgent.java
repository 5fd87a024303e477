package io.threadtime;

/**
 * The natives of the virtual-thread JVMTI agent ({@code libthreadtime_vthreads.so},
 * built from {@code jvmti/agent}). The agent library exports them itself:
 * HotSpot binds a native it cannot find in the class loader's libraries to a
 * symbol of a loaded agent library, so nothing is loaded from Java. Without
 * the agent every call throws {@link UnsatisfiedLinkError}, which
 * {@link #probe()} turns into {@link #ABSENT}.
 */
final class VirtualThreadAgent {
    /** Not loaded (the natives do not bind). */
    static final int ABSENT = -1;
    /** Loaded, but this JVM lacks what it needs; it said why on stderr. */
    static final int PASSIVE = 0;
    /** Loaded with {@code events=off} (the capability only) or {@code events=empty}
     * (the mount events posted to callbacks that do nothing): nothing charged. */
    static final int EVENTS_OFF = 1;
    /** Charging the carrier's CPU clock. */
    static final int EXACT = 2;
    /** Charging time mounted, read from the cycle counter. */
    static final int MOUNTED = 3;

    private VirtualThreadAgent() {}

    /** The agent's state: one of the constants above, never {@link #ABSENT}. */
    static native int state();

    /** Name of the clock segments are measured with, or "none". */
    static native String clock();

    /** CPU time of the calling virtual thread, ns; -1 without an account. */
    static native long currentCpuTime();

    /** CPU time of {@code thread} (virtual, whose id is {@code id}), ns; -1
     * without an account or once the thread has ended. */
    static native long cpuTime(Thread thread, long id);

    /** Bytes the agent's accounts occupy, live and spare. */
    static native long accountBytes();

    /** Accounts held by virtual threads now. */
    static native long accountsInUse();

    /** The agent's state, or {@link #ABSENT} when it is not loaded. */
    static int probe() {
        try {
            return state();
        } catch (UnsatisfiedLinkError notLoaded) {
            return ABSENT;
        }
    }
}
