package io.threadtime;

import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ThreadFactory;

/**
 * CPU time of threads and of this process, from the threadtime core: one
 * {@code clock_gettime()} on a kernel CPU clock per read (~0.3-0.7 us here)
 * where {@code ThreadMXBean.getCurrentThreadUserTime()} parses
 * {@code /proc} (~11 us on JDK 17-25).
 * <p>
 * Three kinds of answer, as in the C API:
 * <ul>
 * <li>{@code ...CpuTime}: precise CPU time (the scheduler's runtime, ns
 *     resolution), the same clock as {@code getThreadCpuTime};</li>
 * <li>{@code ...UserTime}, {@code ...SystemTime}: raw tick samples (the
 *     kernel credits a whole tick, 4 ms at HZ=250, to whichever mode it
 *     caught the thread in). Cheapest; user time read this way can exceed
 *     the precise CPU time. JDK 26 reads user time the same way;</li>
 * <li>{@code ...Times}: a consistent split, see {@link CpuTimes}.</li>
 * </ul>
 * Values are nanoseconds. Calls about a thread return -1 (or an empty
 * {@code Optional}) for a thread without a CPU clock: one that has
 * terminated, not yet started, or is virtual; {@link ThreadTimeException}
 * reports anything else the kernel refuses.
 * <p>
 * Reading another thread needs its native thread; see {@link #register()}
 * for how threads are mapped and what a read costs before that. Virtual
 * threads have no kernel clock of their own: {@link VirtualThreadCpu} reads
 * what the virtual-thread agent charged them.
 */
public final class ThreadTime {
    private ThreadTime() {}

    /** Precise CPU time of the calling thread; -1 on a virtual thread. */
    public static long currentThreadCpuTime() {
        return ThreadMap.mapSelf() ? ThreadTimeException.check(Native.B.selfTotal()) : -1;
    }

    /** Raw tick-sampled user time of the calling thread; -1 on a virtual thread. */
    public static long currentThreadUserTime() {
        return ThreadMap.mapSelf() ? ThreadTimeException.check(Native.B.selfUser()) : -1;
    }

    /**
     * Raw tick-sampled system time of the calling thread; -1 on a virtual
     * thread. It is the difference of two tick clocks read one after the
     * other (user, then user+system), so it is never negative but can step
     * back by a tick from one read to the next; {@link #currentThreadTimes()}
     * never does.
     */
    public static long currentThreadSystemTime() {
        return ThreadMap.mapSelf() ? ThreadTimeException.check(Native.B.selfSystem()) : -1;
    }

    /**
     * The consistent split of the calling thread (one {@code getrusage()},
     * microsecond resolution).
     *
     * @throws UnsupportedOperationException on a virtual thread
     */
    public static CpuTimes currentThreadTimes() {
        if (!ThreadMap.mapSelf()) {
            throw new UnsupportedOperationException("threadtime: a virtual thread has no CPU clock of its own");
        }
        long[] v = new long[3];
        ThreadTimeException.check(Native.B.selfTimes(v));
        return CpuTimes.of(v);
    }

    /** Precise CPU time of a thread; -1 if it has no CPU clock (see the class comment). */
    public static long threadCpuTime(Thread thread) {
        return thread == Thread.currentThread() ? currentThreadCpuTime() : otherThread(thread, ThreadMap.Clock.TOTAL);
    }

    /** Raw tick-sampled user time of a thread; -1 if it has no CPU clock. */
    public static long threadUserTime(Thread thread) {
        return thread == Thread.currentThread() ? currentThreadUserTime() : otherThread(thread, ThreadMap.Clock.USER);
    }

    /**
     * Raw tick-sampled system time of a thread; -1 if it has no CPU clock.
     * Before the thread is mapped: the platform bean's CPU time minus its
     * user time, never below 0.
     */
    public static long threadSystemTime(Thread thread) {
        return thread == Thread.currentThread() ? currentThreadSystemTime() : otherThread(thread, ThreadMap.Clock.SYSTEM);
    }

    /**
     * The consistent split of a thread; empty if it has no CPU clock. A
     * mapped thread's split has all the guarantees of {@link CpuTimes} (ns
     * resolution, the core's scaling). Before the thread is mapped it comes
     * from the platform bean (user time capped at CPU time); the parts are
     * guaranteed monotonic from the mapping on.
     */
    public static Optional<CpuTimes> threadTimes(Thread thread) {
        if (thread == Thread.currentThread()) {
            return ThreadMap.mapSelf() ? Optional.of(currentThreadTimes()) : Optional.empty();
        }
        ThreadMap.Entry e = ThreadMap.of(thread);
        return e != null ? ThreadMap.times(e, thread) : platformTimes(thread.getId());
    }

    /** Precise CPU time of this process (all its threads, live and exited). */
    public static long processCpuTime() {
        return ThreadTimeException.check(Native.B.processTotal());
    }

    /** Raw tick-sampled user time of this process. */
    public static long processUserTime() {
        return ThreadTimeException.check(Native.B.processUser());
    }

    /** The consistent split of this process ({@code getrusage(RUSAGE_SELF)}, us resolution). */
    public static CpuTimes processTimes() {
        long[] v = new long[3];
        ThreadTimeException.check(Native.B.processTimes(v));
        return CpuTimes.of(v);
    }

    /**
     * Maps the calling platform thread to its native thread now, so that
     * other threads read its times at native speed. A thread also maps
     * itself on its first {@code currentThread...} call (here or through
     * {@link ThreadTimeMXBean}); until it is mapped, reads from other
     * threads fall back to the platform {@code ThreadMXBean}, which is
     * correct but costs ~11 us for user time. Mapping costs one handle
     * (~100 bytes of native memory), released after the {@code Thread}
     * object is garbage collected. Idempotent.
     *
     * @return false on a virtual thread, which is never mapped
     */
    public static boolean register() {
        return ThreadMap.mapSelf();
    }

    /** Whether a thread is mapped (see {@link #register()}). */
    public static boolean isRegistered(Thread thread) {
        return ThreadMap.of(thread) != null;
    }

    /** A factory whose threads {@link #register()} before running their task. */
    public static ThreadFactory threadFactory(ThreadFactory factory) {
        Objects.requireNonNull(factory, "factory");
        return task -> factory.newThread(() -> {
            register();
            task.run();
        });
    }

    /**
     * {@code thread.isVirtual()} on JDK 21+; false on older JDKs, which have
     * no virtual threads. Lets code built for JDK 17 tell the two apart.
     */
    public static boolean isVirtual(Thread thread) {
        return ThreadMap.isVirtual(Objects.requireNonNull(thread, "thread"));
    }

    /** "ffm" or "jni": how this JVM calls the native library. */
    public static String backend() {
        return Native.B.name();
    }

    /** The native core's version. */
    public static String nativeVersion() {
        return Native.B.version();
    }

    /** One clock of a thread other than the caller: native if mapped, else the platform bean. */
    private static long otherThread(Thread thread, ThreadMap.Clock clock) {
        ThreadMap.Entry e = ThreadMap.of(thread);
        if (e != null) {
            return ThreadMap.read(e, thread, clock);
        }
        long id = thread.getId();
        switch (clock) {
            case TOTAL: return ThreadMap.PLATFORM.getThreadCpuTime(id);
            case USER: return ThreadMap.PLATFORM.getThreadUserTime(id);
            default: return platformTimes(id).map(CpuTimes::systemNanos).orElse(-1L);
        }
    }

    /** A split from the platform bean, for threads not mapped yet. */
    private static Optional<CpuTimes> platformTimes(long id) {
        long user = ThreadMap.PLATFORM.getThreadUserTime(id);
        long total = ThreadMap.PLATFORM.getThreadCpuTime(id);
        if (user < 0 || total < 0) {
            return Optional.empty();
        }
        long u = Math.min(user, total);
        return Optional.of(new CpuTimes(u, total - u, total));
    }
}
