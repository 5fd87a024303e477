package io.threadtime;

/**
 * A platform thread's scheduler accounts, each a count since the thread
 * started, as the kernel keeps them (docs/where-time-went.md says what each
 * is and its bound). The difference of two reads gives an interval's
 * figures: on CPU + run-queue wait + time blocked = the wall time between
 * them.
 *
 * @param onCpuNanos          time on a CPU as the scheduler booked it
 *                            (schedstat's first field): as of the thread's
 *                            last tick or switch, up to a tick behind
 *                            {@link ThreadTime#currentThreadCpuTime()}
 * @param runWaitNanos        time runnable but waiting for a CPU (schedstat's
 *                            run_delay): a busy host, or the cgroup's CPU
 *                            quota. Booked when the thread gets a CPU back;
 *                            time blocked (sleeping, I/O, a lock) is not in it
 * @param timeslices          times the thread was given a CPU
 * @param voluntarySwitches   switches away because the thread blocked or yielded
 * @param involuntarySwitches switches away because it was preempted
 */
public record Sched(long onCpuNanos, long runWaitNanos, long timeslices, long voluntarySwitches,
        long involuntarySwitches) {
    /** Builds one from the backends' {@code long[5]}. */
    static Sched of(long[] v) {
        return new Sched(v[0], v[1], v[2], v[3], v[4]);
    }
}
