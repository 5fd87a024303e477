package io.threadtime;

/**
 * A consistent split of CPU time, in nanoseconds: {@code user + system ==
 * total} exactly, {@code user <= total}, and for the same thread (or the
 * process) each part never decreases from one read to the next. The parts
 * are divided as {@code /proc} and {@code getrusage()} divide them (the
 * kernel's tick samples scaled to the runtime); the total is the precise
 * runtime at the read, where those two count it only up to the thread's
 * last scheduler tick or switch.
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
