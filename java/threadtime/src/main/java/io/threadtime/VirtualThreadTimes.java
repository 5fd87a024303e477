package io.threadtime;

/**
 * Where a virtual thread's time went, ns, as the {@code -javaagent}'s hooks
 * stamp it (docs/where-time-went.md): its CPU time, and three kinds of time
 * off a CPU, each as a total since the thread started (the hooks were in).
 * A figure that is not known here is -1, never 0: every figure of a thread
 * without an account; the last three with the JVMTI agent, with the
 * {@code -javaagent}'s table ({@code accounts=table}, or where it could not
 * add its fields to the threads) and for platform threads (whose wait for a
 * CPU is the kernel's run-queue wait, {@code /proc/thread-self/schedstat}).
 *
 * @param cpuNanos what {@link VirtualThreadCpu#threadCpuTime(Thread)} answers
 * @param carrierWaitNanos time runnable but not mounted: from its start, an
 *        unpark (or the end of a sleep, an unblock) or a {@code Thread.yield()}
 *        to the mount that ran it; booked at that mount
 * @param pinnedNanos time parked on its carrier, holding it: a park or sleep
 *        that could not unmount (JDK 21 inside {@code synchronized}; any JDK
 *        under a native frame); booked when the park returns
 * @param parkedNanos time unmounted and not runnable: parked, sleeping,
 *        blocked on a monitor or in {@code Object.wait} after unmounting;
 *        booked at the next mount
 */
public record VirtualThreadTimes(long cpuNanos, long carrierWaitNanos, long pinnedNanos, long parkedNanos) {
    /** Every figure unknown. */
    static final VirtualThreadTimes UNKNOWN = new VirtualThreadTimes(-1, -1, -1, -1);

    /** A CPU figure alone (-1 if unknown): the rest are not known. */
    static VirtualThreadTimes cpuOnly(long cpu) {
        return new VirtualThreadTimes(cpu, -1, -1, -1);
    }

    /** The hooks' reading ({cpu, wait, pinned, parked}); null: no account. */
    static VirtualThreadTimes of(long[] t) {
        return t == null ? UNKNOWN : new VirtualThreadTimes(t[0], t[1], t[2], t[3]);
    }

    /** This minus {@code earlier}, figure by figure; -1 where either is -1. */
    public VirtualThreadTimes minus(VirtualThreadTimes earlier) {
        return new VirtualThreadTimes(diff(cpuNanos, earlier.cpuNanos), diff(carrierWaitNanos, earlier.carrierWaitNanos),
                diff(pinnedNanos, earlier.pinnedNanos), diff(parkedNanos, earlier.parkedNanos));
    }

    private static long diff(long now, long then) {
        return now < 0 || then < 0 ? -1 : now - then;
    }
}
