package io.threadtime.vthreads;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

/**
 * CPU time of virtual threads, which {@link ThreadMXBean} reports as -1.
 * <p>
 * The figures come from the threadtime-vthreads JVMTI agent, loaded at start
 * with {@code -agentpath:/path/to/libthreadtime_vthreads.so} (options:
 * {@code mode=exact|mounted}, {@code events=on|off}). At every mount the agent
 * notes the carrier's clock, at every unmount it adds the difference to the
 * virtual thread's own account, so a thread's figure follows it across parks,
 * sleeps, blocking I/O and moves between carriers. This class looks for the
 * agent once, when it is first used.
 * <p>
 * For a platform thread every method answers what {@link ThreadMXBean} does,
 * so code that measures tasks need not care which kind of thread runs them.
 * Without the agent, virtual threads get -1, as from the platform.
 */
public final class VirtualThreadCpu {
    /** What the agent is doing in this JVM. */
    public enum Mode {
        /** The agent is not loaded: virtual threads read -1, as from the platform. */
        ABSENT,
        /** Loaded, but this JVM lacks JVMTI 21, the virtual-thread capability or
         * the mount events; the agent said which on stderr and stays out of the way. */
        PASSIVE,
        /** Loaded with {@code events=off}: the JVM runs with virtual-thread support
         * switched on for JVMTI, but nothing is charged (for cost comparisons). */
        EVENTS_OFF,
        /** Charging each stretch on a carrier with the carrier's precise CPU clock:
         * one system call per mount and unmount. */
        EXACT,
        /** Charging each stretch on a carrier with the cycle counter: a few ns per
         * mount and unmount, but it counts time mounted, including time the carrier
         * was descheduled or blocked while the thread was pinned. */
        MOUNTED;

        /** True when virtual threads are being charged. */
        public boolean charging() {
            return this == EXACT || this == MOUNTED;
        }
    }

    private static final Mode MODE = modeOf(Agent.probe());
    private static final ThreadMXBean PLATFORM = ManagementFactory.getThreadMXBean();

    private VirtualThreadCpu() {}

    private static Mode modeOf(int state) {
        switch (state) {
            case Agent.EVENTS_OFF: return Mode.EVENTS_OFF;
            case Agent.EXACT: return Mode.EXACT;
            case Agent.MOUNTED: return Mode.MOUNTED;
            case Agent.ABSENT: return Mode.ABSENT;
            default: return Mode.PASSIVE;
        }
    }

    /** What the agent is doing in this JVM. */
    public static Mode mode() {
        return MODE;
    }

    /** The clock virtual threads are charged with: "thread-cpu" (exact mode),
     * "tsc" or "cntvct" (the cycle counter), "monotonic-raw" (mounted mode where
     * the counter is not trusted), or "none" when nothing is charged. */
    public static String clock() {
        return MODE.charging() ? Agent.clock() : "none";
    }

    /**
     * CPU time of the calling thread, ns. For a virtual thread: what the agent
     * charged it since its first mount (-1 if the agent is not charging, or if
     * the thread was already running when the agent attached and has not been
     * mounted since). For a platform thread: {@link ThreadMXBean#getCurrentThreadCpuTime()}.
     */
    public static long currentThreadCpuTime() {
        if (!Thread.currentThread().isVirtual())
            return PLATFORM.getCurrentThreadCpuTime();
        return MODE.charging() ? Agent.currentCpuTime() : -1;
    }

    /**
     * CPU time of {@code thread}, ns; -1 if it has not started or has ended, as
     * {@link ThreadMXBean#getThreadCpuTime(long)} answers. For another virtual
     * thread that is running, the figure includes its current stretch on its
     * carrier. Reading another virtual thread costs a few microseconds: the JVM
     * briefly holds that thread's mount transitions.
     */
    public static long threadCpuTime(Thread thread) {
        if (thread == Thread.currentThread())
            return currentThreadCpuTime();
        if (!thread.isVirtual())
            return PLATFORM.getThreadCpuTime(thread.threadId());
        if (!MODE.charging() || !thread.isAlive())
            return -1;
        return Agent.cpuTime(thread, thread.threadId());
    }

    /** Bytes the agent's accounts occupy (64 per live virtual thread plus each
     * carrier's spares); 0 when nothing is charged. */
    public static long accountMemoryBytes() {
        return MODE.charging() ? Agent.accountBytes() : 0;
    }
}
