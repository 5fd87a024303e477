package io.threadtime;

import io.threadtime.VirtualThreadCpu.Mode;

/** Nothing charges virtual threads: every figure is -1, as from the platform. */
final class NoAccounts implements VirtualThreadAccounts {
    private final VirtualThreadCpu.Mechanism mechanism;
    private final Mode mode;

    NoAccounts(VirtualThreadCpu.Mechanism mechanism, Mode mode) {
        this.mechanism = mechanism;
        this.mode = mode;
    }

    @Override
    public VirtualThreadCpu.Mechanism mechanism() {
        return mechanism;
    }

    @Override
    public Mode mode() {
        return mode;
    }

    @Override
    public String clock() {
        return "none";
    }

    @Override
    public long self(Thread self) {
        return -1;
    }

    @Override
    public long other(Thread thread) {
        return -1;
    }

    @Override
    public VirtualThreadTimes times(Thread thread) {
        return VirtualThreadTimes.UNKNOWN;
    }

    @Override
    public long bytes() {
        return 0;
    }

    @Override
    public long inUse() {
        return 0;
    }

    @Override
    public boolean inThreads() {
        return false;
    }

    /** The hooks may be in for the event log's markers alone, and count their failures then too. */
    @Override
    public long hookFailures() {
        return mechanism == VirtualThreadCpu.Mechanism.JAVAAGENT ? JavaagentAccounts.failures() : 0;
    }
}
