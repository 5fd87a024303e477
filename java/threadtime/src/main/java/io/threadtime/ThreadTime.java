package io.threadtime;

import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ThreadFactory;

/**
 * CPU time of threads and of this process, from the threadtime core: one
 * {@code clock_gettime()} on a kernel CPU clock per read, or for the
 * caller's own CPU time often none, where
 * {@code ThreadMXBean.getCurrentThreadUserTime()} parses {@code /proc} on
 * JDK 17-25. What each call costs, measured beside the JDK's own, is one
 * table: java/README.md, "Figures" ({@code make bench-java}).
 * <p>
 * Three kinds of answer, as in the C API:
 * <ul>
 * <li>{@code ...CpuTime}: precise CPU time (the scheduler's runtime, ns
 *     resolution), the same clock as {@code getThreadCpuTime};</li>
 * <li>{@code ...UserTime}, {@code ...SystemTime} and {@code ...Times}: the
 *     consistent split, see {@link CpuTimes}: divided as {@code /proc} and
 *     {@code getrusage()} divide it (and as the JDK's bean reports user
 *     time up to JDK 25), user + system == the precise total, each part
 *     monotonic, user never above the CPU time;</li>
 * <li>{@code ...UserTimeRaw}, {@code ...SystemTimeRaw}: the kernel's raw
 *     tick samples (it credits a whole tick, 4 ms at HZ=250, to whichever
 *     mode it caught the thread in). Cheapest, but not only coarse: biased.
 *     Raw user time can exceed the precise CPU time, and a thread that makes
 *     system calls often (reading a clock every few microseconds, as
 *     instrumented code does) is preempted between ticks, so the tick rarely
 *     finds it running: 300 ms of pure user CPU beside one busy loop per CPU
 *     read 176-261 ms raw against 280-290 ms from {@code /proc}; beside 1.5
 *     loops per CPU, 56-67 ms. JDK 26's bean reads user time this way.</li>
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

    /**
     * How far {@link #currentThreadCpuTime()} may be above a read of the
     * kernel's clock taken after it, ns: the counter time one anchor serves
     * ({@code TT_FAST_BOUND_NS}, include/threadtime/cpu.h), 50 us. The counter
     * runs ahead of the thread's clock only while the CPU serves interrupts or
     * the hypervisor runs another guest, time a kernel may leave out of the
     * thread's clock; so a figure made of two such reads is within this of the
     * kernel's over the same interval, either way. Compare with another clock
     * allowing it.
     */
    public static final long FAST_CLOCK_BOUND_NANOS = 50_000;

    /**
     * Precise CPU time of the calling thread; -1 on a virtual thread. The
     * kernel's clock, read without a system call where it can be: from the
     * cycle counter while the kernel's rseq area shows that this thread has
     * not been switched out since the last real read (see
     * {@link #currentThreadCpuClock()}). Monotonic; never below a real read
     * of the kernel's clock taken before it (by anyone, the JDK included),
     * never above one taken after it by more than
     * {@link #FAST_CLOCK_BOUND_NANOS} (docs/fast-clock.md). The user/system split
     * ({@link #currentThreadTimes()} and the other {@code User}/{@code System}
     * calls) still costs a system call.
     */
    public static long currentThreadCpuTime() {
        if (!ThreadMap.mapSelf()) {
            return -1;
        }
        long v = FastClock.read();
        // Checked only when negative, as in ThreadMap.mapCurrent: the exception class then loads for an error only,
        // one class fewer for a first call (~0.4 ms).
        return v >= 0 ? v : ThreadTimeException.check(v);
    }

    /**
     * How {@link #currentThreadCpuTime()} reads in this process: "rseq+tsc"
     * (the cycle counter while the kernel shows no switch), or "syscall: "
     * and why every read is a system call (switched off with
     * {@code -Dthreadtime.fastClock=false} or {@code THREADTIME_FAST_CLOCK=0},
     * no rseq area (glibc before 2.35), a kernel that keeps rseq_cs set
     * across a blocking call (Linux 6.19 and later), another library using
     * it, ...: the core's tt_fast_clock_name(), docs/fast-clock.md). The
     * decision is made once per process, on a thread of its own as the
     * library loads (~25 ms); a call meanwhile waits for it.
     */
    public static String currentThreadCpuClock() {
        return FastClock.name();
    }

    /**
     * User time of the calling thread from the consistent split (the
     * precise total in {@code getrusage()}'s proportion; see
     * {@link #currentThreadTimes()}); -1 on a virtual thread.
     */
    public static long currentThreadUserTime() {
        long[] v = ThreadMap.selfSplit();
        return v == null ? -1 : v[0];
    }

    /** System time of the calling thread from the consistent split; -1 on a virtual thread. */
    public static long currentThreadSystemTime() {
        long[] v = ThreadMap.selfSplit();
        return v == null ? -1 : v[1];
    }

    /**
     * Raw tick-sampled user time of the calling thread (the kernel's VIRT
     * clock); -1 on a virtual thread. Biased low under load, see the class
     * comment; {@link #currentThreadUserTime()} is not.
     */
    public static long currentThreadUserTimeRaw() {
        return ThreadMap.mapSelf() ? ThreadTimeException.check(Native.B.selfUser()) : -1;
    }

    /**
     * Raw tick-sampled system time of the calling thread; -1 on a virtual
     * thread. It is the difference of two tick clocks read one after the
     * other (user, then user+system), so it is never negative but can step
     * back by a tick from one read to the next; {@link #currentThreadSystemTime()}
     * never does.
     */
    public static long currentThreadSystemTimeRaw() {
        return ThreadMap.mapSelf() ? ThreadTimeException.check(Native.B.selfSystem()) : -1;
    }

    /**
     * The consistent split of the calling thread, kept in one monotonic
     * sequence with the reads other threads make of this thread (see
     * {@link #threadTimes}). Its total is the precise CPU time at the call,
     * from the same clock as {@link #currentThreadCpuTime()}: never below a
     * read of the kernel's clock taken before it, never above one taken
     * after it by more than {@link #FAST_CLOCK_BOUND_NANOS}. The parts
     * divide that total in the proportion of the kernel's own split
     * ({@code getrusage()}, which counts the runtime only up to the
     * thread's last scheduler tick or switch), read again whenever the fast
     * clock re-anchors: each part is within a tick plus
     * {@link #FAST_CLOCK_BOUND_NANOS} of the kernel's.
     *
     * @throws UnsupportedOperationException on a virtual thread
     */
    public static CpuTimes currentThreadTimes() {
        long[] v = ThreadMap.selfSplit();
        if (v == null) {
            throw new UnsupportedOperationException("threadtime: a virtual thread has no CPU clock of its own");
        }
        return CpuTimes.of(v);
    }

    /** Precise CPU time of a thread; -1 if it has no CPU clock (see the class comment). */
    public static long threadCpuTime(Thread thread) {
        return thread == Thread.currentThread() ? currentThreadCpuTime() : otherThread(thread, ThreadMap.Clock.TOTAL);
    }

    /**
     * User time of a thread from the consistent split (see
     * {@link #threadTimes}); -1 if it has no CPU clock.
     */
    public static long threadUserTime(Thread thread) {
        return thread == Thread.currentThread() ? currentThreadUserTime() : otherThread(thread, ThreadMap.Clock.USER);
    }

    /** System time of a thread from the consistent split; -1 if it has no CPU clock. */
    public static long threadSystemTime(Thread thread) {
        return thread == Thread.currentThread() ? currentThreadSystemTime() : otherThread(thread, ThreadMap.Clock.SYSTEM);
    }

    /**
     * Raw tick-sampled user time of a thread; -1 if it has no CPU clock.
     * Before the thread is mapped: the platform bean's user time.
     */
    public static long threadUserTimeRaw(Thread thread) {
        return thread == Thread.currentThread() ? currentThreadUserTimeRaw() : otherThread(thread, ThreadMap.Clock.USER_RAW);
    }

    /**
     * Raw tick-sampled system time of a thread; -1 if it has no CPU clock.
     * Before the thread is mapped: the platform bean's CPU time minus its
     * user time, never below 0.
     */
    public static long threadSystemTimeRaw(Thread thread) {
        return thread == Thread.currentThread() ? currentThreadSystemTimeRaw() : otherThread(thread, ThreadMap.Clock.SYSTEM_RAW);
    }

    /**
     * The consistent split of a thread; empty if it has no CPU clock. A
     * mapped thread's split has all the guarantees of {@link CpuTimes} (ns
     * resolution, the core's scaling, which starts from the kernel's own
     * split at the mapping, so it never reads below what {@code /proc}
     * reported before). Before the thread is mapped it comes from the
     * platform bean (user time capped at CPU time), which up to JDK 25 reads
     * the kernel's split from {@code /proc}.
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

    /** User time of this process from the consistent split ({@link #processTimes()}). */
    public static long processUserTime() {
        return processTimes().userNanos();
    }

    /** System time of this process from the consistent split ({@link #processTimes()}). */
    public static long processSystemTime() {
        return processTimes().systemNanos();
    }

    /** Raw tick-sampled user time of this process; biased like the thread clocks (class comment). */
    public static long processUserTimeRaw() {
        return ThreadTimeException.check(Native.B.processUser());
    }

    /**
     * The consistent split of this process ({@code getrusage(RUSAGE_SELF)}
     * brought up to the process's precise CPU clock read after it).
     */
    public static CpuTimes processTimes() {
        long[] v = new long[3];
        ThreadTimeException.check(Native.B.processTimes(v));
        return CpuTimes.of(v);
    }

    /**
     * The calling platform thread's scheduler accounts: its run-queue wait
     * (time runnable but without a CPU), time on a CPU, timeslices and
     * switches. One {@code pread} of {@code /proc/thread-self/schedstat}
     * through a descriptor the thread keeps open (opened at its first call,
     * closed when it exits) and one {@code getrusage}: ~0.7 us here
     * (docs/where-time-went.md). The calling thread has no wait under way,
     * so its figure is exact at the call.
     *
     * @throws UnsupportedOperationException on a virtual thread: its
     *         carrier's accounts are not its own
     * @throws ThreadTimeException where the kernel keeps no schedstat
     *         (ENOTSUP) or no descriptor can be opened (EMFILE, ENFILE)
     */
    public static Sched currentThreadSched() {
        if (isVirtual(Thread.currentThread())) {
            throw new UnsupportedOperationException("threadtime: a virtual thread has no scheduler accounts of its own");
        }
        return sched(0);
    }

    /**
     * The calling platform thread's run-queue wait so far, ns
     * ({@link Sched#runWaitNanos()} alone); -1 on a virtual thread. Made to
     * be read often, at a span's start and end: the wait grows only while
     * the thread is off its CPU, which ends the fast clock's run of
     * anchors, so a figure read under a run is answered again with no
     * system call while the thread stays on its CPU; otherwise one
     * {@code pread} and no
     * {@code getrusage} (docs/where-time-went.md has the costs).
     *
     * @throws ThreadTimeException where the kernel keeps no schedstat (ENOTSUP)
     */
    public static long currentThreadRunWait() {
        return isVirtual(Thread.currentThread()) ? -1 : ThreadTimeException.check(Native.B.selfRunWait());
    }

    /**
     * The scheduler accounts of thread {@code tid} of this process, by its
     * native id (as {@code /proc/self/task} lists it; 0: the calling thread,
     * as {@link #currentThreadSched()}). Two {@code /proc} files read, about
     * ten times the calling thread's own read. A wait under way at the read
     * is booked by the kernel only when the thread next runs. A tid is
     * reused after its thread exits, so a stale tid may read a newer thread.
     *
     * @throws ThreadTimeException errno ESRCH when no such thread exists (it
     *         exited), EINVAL for a thread of another process or a negative
     *         tid, ENOTSUP where the kernel keeps no schedstat
     */
    public static Sched threadSched(int tid) {
        return tid == 0 ? currentThreadSched() : sched(tid);
    }

    private static Sched sched(int tid) {
        long[] v = new long[5];
        ThreadTimeException.check(Native.B.tidSched(tid, v));
        return Sched.of(v);
    }

    /**
     * The CPU throttling of the cgroup this process is in, from its
     * {@code cpu.stat} and quota files (v1 or v2), found through
     * {@code /proc/self/cgroup} and {@code /proc/self/mountinfo}; no
     * privilege needed. Several files read (tens of microseconds): once per
     * collection or report, not per request.
     *
     * @throws ThreadTimeException errno ENOENT when no CPU controller is
     *         visible to this process (a container that mounts no cgroup
     *         filesystem), EIO for a file that does not parse
     */
    public static CgroupCpu cgroupCpu() {
        long[] v = new long[6];
        ThreadTimeException.check(Native.B.cgroupCpu(v));
        return CgroupCpu.of(v);
    }

    /**
     * Maps the calling platform thread to its native thread now, so that
     * other threads read its times at native speed. A thread also maps
     * itself on its first {@code currentThread...} call (here or through
     * {@link ThreadTimeMXBean}); until it is mapped, reads from other
     * threads fall back to the platform {@code ThreadMXBean}, which is
     * correct but parses {@code /proc} for user time (java/README.md,
     * "Figures"). Mapping costs one handle
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
            case TOTAL: return ThreadMap.platform().getThreadCpuTime(id);
            case USER_RAW: return ThreadMap.platform().getThreadUserTime(id);
            case USER: return platformTimes(id).map(CpuTimes::userNanos).orElse(-1L);
            default: return platformTimes(id).map(CpuTimes::systemNanos).orElse(-1L);
        }
    }

    /** A split from the platform bean, for threads not mapped yet. */
    static Optional<CpuTimes> platformTimes(long id) {
        long user = ThreadMap.platform().getThreadUserTime(id);
        long total = ThreadMap.platform().getThreadCpuTime(id);
        if (user < 0 || total < 0) {
            return Optional.empty();
        }
        long u = Math.min(user, total);
        return Optional.of(new CpuTimes(u, total - u, total));
    }
}
