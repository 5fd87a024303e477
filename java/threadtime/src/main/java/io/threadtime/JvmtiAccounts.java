package io.threadtime;

import io.threadtime.VirtualThreadCpu.Mode;

/**
 * The JVMTI agent's accounts ({@code libthreadtime_vthreads.so}, built from
 * {@code jvmti/agent}), read through natives the agent library exports
 * itself: HotSpot binds a native it cannot find in the class loader's
 * libraries to a symbol of a loaded agent library, so nothing is loaded from
 * Java. The agent's mount and unmount callbacks write the accounts; this
 * class is only their reader. Without the agent every native throws
 * {@link UnsatisfiedLinkError}, which {@link #probe()} turns into
 * {@link Mode#ABSENT}. The agent reports its mode by {@link Mode}'s names.
 */
final class JvmtiAccounts implements VirtualThreadAccounts {
    private final Mode mode;

    JvmtiAccounts(Mode mode) {
        this.mode = mode;
    }

    /** The agent's mode: the name of one of {@link Mode}'s constants, never {@code ABSENT}. */
    private static native String agentMode();

    /** Name of the clock stretches are measured with, or "none". */
    private static native String clockName();

    /** CPU time of the calling virtual thread, ns; -1 without an account. */
    private static native long currentCpuTime();

    /** CPU time of {@code thread} (virtual, whose id is {@code id}), ns; 0 if
     * it has been started but has not run yet; -1 without an account or once
     * the thread has ended. */
    private static native long cpuTime(Thread thread, long id);

    /** Bytes the agent's accounts occupy, live and spare. */
    private static native long accountBytes();

    /** Accounts held by virtual threads now. */
    private static native long accountsInUse();

    /** The agent's mode, or {@link Mode#ABSENT} when it is not loaded. */
    static Mode probe() {
        try {
            return Mode.named(agentMode());
        } catch (UnsatisfiedLinkError notLoaded) {
            return Mode.ABSENT;
        }
    }

    @Override
    public VirtualThreadCpu.Mechanism mechanism() {
        return VirtualThreadCpu.Mechanism.JVMTI;
    }

    @Override
    public Mode mode() {
        return mode;
    }

    @Override
    public String clock() {
        return clockName();
    }

    @Override
    public long self(Thread self) {
        return currentCpuTime();
    }

    @Override
    public long other(Thread thread) {
        return cpuTime(thread, thread.getId());
    }

    /** The JVMTI agent stamps no waits. */
    @Override
    public VirtualThreadTimes times(Thread thread) {
        return VirtualThreadTimes.cpuOnly(thread == Thread.currentThread() ? self(thread) : other(thread));
    }

    @Override
    public long bytes() {
        return accountBytes();
    }

    @Override
    public long inUse() {
        return accountsInUse();
    }

    @Override
    public boolean inThreads() {
        return false;
    }

    @Override
    public long hookFailures() {
        return 0;
    }
}
