package io.threadtime;

/**
 * A consistent split of CPU time, in nanoseconds: {@code user + system ==
 * total} exactly, {@code user <= total}, and for the same thread (or the
 * process) each part never decreases from one read to the next. This is the
 * split {@code /proc} and {@code getrusage()} report, scaled by the kernel
 * (or by threadtime the same way) from its tick samples to the precise
 * runtime.
 *
 * @param userNanos   time spent in user mode
 * @param systemNanos time spent in the kernel on the thread's behalf
 * @param totalNanos  {@code userNanos + systemNanos}
 */
public record CpuTimes(long userNanos, long systemNanos, long totalNanos) {
    /** Builds a split from {user, system, total} as the backends write it. */
    static CpuTimes of(long[] v) {
        return new CpuTimes(v[0], v[1], v[2]);
    }
}
