package io.threadtime;

import io.threadtime.boot.VtHooks;

/** Nothing charges virtual threads: every figure is -1, as from the platform. */
final class NoAccounts implements VirtualThreadAccounts {
    private final VirtualThreadCpu.Mechanism mechanism;
    private final int state;

    NoAccounts(VirtualThreadCpu.Mechanism mechanism, int state) {
        this.mechanism = mechanism;
        this.state = state;
    }

    @Override
    public VirtualThreadCpu.Mechanism mechanism() {
        return mechanism;
    }

    @Override
    public int state() {
        return state;
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
        return mechanism == VirtualThreadCpu.Mechanism.JAVAAGENT ? VtHooks.failures() : 0;
    }
}
