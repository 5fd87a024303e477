package io.threadtime.otel;

import io.threadtime.CpuTimes;
import io.threadtime.ThreadTime;
import io.threadtime.VirtualThreadCpu;
import io.threadtime.VirtualThreadTimes;

/**
 * The calling thread's CPU time, as a span or an observation needs it: a
 * platform thread's consistent user/system split ({@link ThreadTime#currentThreadTimes()}),
 * a virtual thread's account from threadtime's virtual-thread accounting.
 * <p>
 * Two mechanisms keep virtual-thread accounts, and {@link VirtualThreadCpu}
 * reads whichever runs, looked for once, from any class loader (an
 * OpenTelemetry extension's included):
 * <ol>
 * <li>the {@code -javaagent:threadtime-agent.jar} agent, whose hook classes
 *     live on the boot class path, where {@code VirtualThreadCpu} finds them
 *     by name;</li>
 * <li>the JVMTI agent ({@code -agentpath:...libthreadtime_vthreads.so}),
 *     whose natives bind to the agent library from whichever class loader
 *     holds the threadtime classes.</li>
 * </ol>
 * Without either, virtual threads have no figure ({@link Mark#total} = -1)
 * and {@link #limitation()} says so in one line.
 */
public final class CpuClock {
    /** Where virtual threads' figures come from. */
    public enum VirtualSource {
        /** {@code -javaagent:threadtime-agent.jar}, through its hook classes on the boot class path. */
        JAVAAGENT,
        /** The JVMTI agent, through its natives. */
        JVMTI,
        /** Nothing: virtual threads have no CPU figure. */
        NONE
    }

    private static final VirtualSource SOURCE;
    /** True when the virtual-thread figure is time mounted rather than CPU time. */
    private static final boolean MOUNTED;
    private static final String LIMITATION;

    static {
        VirtualThreadCpu.Mode mode = Runtime.version().feature() >= 21 ? VirtualThreadCpu.mode() : VirtualThreadCpu.Mode.ABSENT;
        if (!mode.charging()) {
            SOURCE = VirtualSource.NONE;
        } else {
            SOURCE = VirtualThreadCpu.mechanism() == VirtualThreadCpu.Mechanism.JAVAAGENT ? VirtualSource.JAVAAGENT
                    : VirtualSource.JVMTI;
        }
        MOUNTED = mode == VirtualThreadCpu.Mode.MOUNTED;
        LIMITATION = limitation(mode);
    }

    private CpuClock() {}

    private static String limitation(VirtualThreadCpu.Mode mode) {
        int feature = Runtime.version().feature();
        if (feature < 21) {
            return "JDK " + feature + " has no virtual threads; spans get the CPU time of platform threads only";
        }
        if (SOURCE != VirtualSource.NONE) {
            return null;
        }
        String why = mode != VirtualThreadCpu.Mode.ABSENT
                ? "the virtual-thread agent is loaded but does not charge (" + VirtualThreadCpu.mechanism() + ", mode "
                        + mode + ")"
                : "no virtual-thread accounting in this JVM (add -javaagent:threadtime-agent.jar=mode=exact"
                        + " or -agentpath:<libthreadtime_vthreads.so>=mode=exact)";
        return why + "; only spans on platform threads get CPU time";
    }

    /** Where virtual threads' figures come from in this JVM. */
    public static VirtualSource virtualSource() {
        return SOURCE;
    }

    /** True when a virtual thread's figure is time mounted on a carrier
     * ({@code mode=mounted}), not CPU time. */
    public static boolean virtualIsMountedTime() {
        return MOUNTED;
    }

    /** One line saying what this JVM cannot measure and why; null when every
     * thread, platform or virtual, has a figure. */
    public static String limitation() {
        return LIMITATION;
    }

    /** The calling thread's CPU time now; never throws (a failure reads as
     * no figure, said once in the log). */
    public static Mark mark() {
        Thread self = Thread.currentThread();
        return ThreadTime.isVirtual(self) ? new Mark(self, true, -1, -1, virtualNanos(), -1, -1, -1)
                : platformMark(self, -1);
    }

    /**
     * As {@link #mark()}, with where the thread's time off a CPU went too:
     * a platform thread's run-queue wait
     * ({@link ThreadTime#currentThreadRunWait()}), read before the CPU clock
     * here and after it in {@link Mark#elapsed()}; a virtual thread's time
     * waiting for a carrier and pinned, where its accounting keeps them
     * ({@link VirtualThreadCpu#currentThreadTimes()}: the {@code -javaagent}).
     */
    public static Mark markWithWaits() {
        Thread self = Thread.currentThread();
        return ThreadTime.isVirtual(self) ? virtualMark(self) : platformMark(self, runWait());
    }

    /** A platform thread's CPU split, with a run-queue wait read before it (-1: none). */
    private static Mark platformMark(Thread self, long wait) {
        if (platformFailure == null) {
            try {
                CpuTimes t = ThreadTime.currentThreadTimes();
                return new Mark(self, false, t.userNanos(), t.systemNanos(), t.totalNanos(), wait, -1, -1);
            } catch (RuntimeException | LinkageError e) {
                failed(e);
            }
        }
        return new Mark(self, false, -1, -1, -1, wait, -1, -1);
    }

    /** A virtual thread's CPU figure with its carrier wait and pinned time (-1 where not kept). */
    private static Mark virtualMark(Thread self) {
        if (SOURCE == VirtualSource.NONE) {
            return new Mark(self, true, -1, -1, -1, -1, -1, -1);
        }
        VirtualThreadTimes t = VirtualThreadCpu.currentThreadTimes();
        return new Mark(self, true, -1, -1, t.cpuNanos(), -1, t.carrierWaitNanos(), t.pinnedNanos());
    }

    /** Set once a run-queue wait read failed (a kernel without schedstat): no read is tried again. */
    private static volatile boolean noRunWait;

    /** The calling platform thread's run-queue wait, ns; -1 once a read failed (said once in the log). */
    private static long runWait() {
        if (noRunWait) {
            return -1;
        }
        try {
            return ThreadTime.currentThreadRunWait();
        } catch (RuntimeException | LinkageError e) {
            noRunWait = true;
            System.getLogger("io.threadtime.otel").log(System.Logger.Level.WARNING,
                    "threadtime-otel: reading the run-queue wait failed; spans get no run-queue wait from now on", e);
            return -1;
        }
    }

    /** What made platform-thread reads fail (the native library did not load,
     * the kernel refused); null while they work. */
    private static volatile Throwable platformFailure;

    /** Stops platform-thread reads, saying why once on stderr. */
    static synchronized void disablePlatform(String why) {
        if (platformFailure == null) {
            platformFailure = new IllegalStateException(why);
            System.err.println("threadtime-otel: " + why);
        }
    }

    private static synchronized void failed(Throwable e) {
        if (platformFailure == null) {
            platformFailure = e;
            System.getLogger("io.threadtime.otel").log(System.Logger.Level.WARNING,
                    "threadtime-otel: reading platform threads' CPU time failed; spans get no CPU time from now on", e);
        }
    }

    private static long virtualNanos() {
        return SOURCE == VirtualSource.NONE ? -1 : VirtualThreadCpu.currentThreadCpuTime();
    }

    /**
     * The calling thread's CPU time at one instant: a platform thread's
     * consistent split (ns; {@code user + system == total}), or a virtual
     * thread's account ({@code user} and {@code system} -1). {@code total}
     * is -1 when the thread has no figure.
     */
    public static final class Mark {
        final Thread thread;
        final boolean virtual;
        final long user;
        final long system;
        final long total;
        /** The run-queue wait, ns; -1 where not read or unknown. */
        final long wait;
        /** A virtual thread's time waiting for a carrier and pinned, ns; -1 where not read or unknown. */
        final long carrierWait;
        final long pinned;

        Mark(Thread thread, boolean virtual, long user, long system, long total, long wait, long carrierWait,
                long pinned) {
            this.thread = thread;
            this.virtual = virtual;
            this.user = user;
            this.system = system;
            this.total = total;
            this.wait = wait;
            this.carrierWait = carrierWait;
            this.pinned = pinned;
        }

        /** Whether the calling thread is the one that took this mark. */
        public boolean onCallingThread() {
            return Thread.currentThread() == thread;
        }

        /** Whether this thread had a figure when the mark was taken. */
        public boolean measured() {
            return total >= 0;
        }

        /** Whether the mark was taken on a virtual thread. */
        public boolean isVirtual() {
            return virtual;
        }

        /**
         * CPU time the calling thread spent since this mark, as a mark of
         * differences; null if the caller is not the thread that took this
         * mark or either reading has no figure. The waits are read again
         * (a run-queue wait after the CPU clock) where this mark has them.
         */
        public Mark elapsed() {
            if (Thread.currentThread() != thread || total < 0) {
                return null;
            }
            if (virtual) {
                Mark now = carrierWait >= 0 || pinned >= 0 ? virtualMark(thread) : mark();
                return now.total < 0 ? null : new Mark(thread, true, -1, -1, now.total - total, -1,
                        diff(now.carrierWait, carrierWait), diff(now.pinned, pinned));
            }
            Mark now = platformMark(thread, -1);
            if (now.total < 0) {
                return null;
            }
            long waited = wait >= 0 ? diff(runWait(), wait) : -1;
            return new Mark(thread, false, now.user - user, now.system - system, now.total - total, waited, -1, -1);
        }

        private static long diff(long now, long then) {
            return now < 0 || then < 0 ? -1 : now - then;
        }

        /** Total ns (a difference when this is an {@link #elapsed()} result). */
        public long totalNanos() {
            return total;
        }

        /** User ns; -1 on a virtual thread. */
        public long userNanos() {
            return user;
        }

        /** System ns; -1 on a virtual thread. */
        public long systemNanos() {
            return system;
        }

        /** Run-queue wait ns (a difference in an {@link #elapsed()} result);
         *  -1 where it was not read ({@link #mark()}), on a virtual thread, or unknown. */
        public long runWaitNanos() {
            return wait;
        }

        /** A virtual thread's time waiting for a carrier, ns (as {@link #runWaitNanos()}); -1 where not known. */
        public long carrierWaitNanos() {
            return carrierWait;
        }

        /** A virtual thread's time pinned (parked holding its carrier), ns; -1 where not known. */
        public long pinnedNanos() {
            return pinned;
        }
    }
}
