package io.threadtime;

import io.threadtime.boot.VtConfig;
import io.threadtime.boot.VtFields;
import io.threadtime.boot.VtHooks;

/**
 * The {@code -javaagent}'s accounts in the threads: four fields of each
 * virtual thread's continuation ({@link ContinuationFields} adds them,
 * {@code io.threadtime.boot.VtHooks} writes them at every mount and unmount,
 * {@link VtFields} reads them). Nothing is held outside the threads.
 */
final class ContinuationAccounts implements VirtualThreadAccounts {
    private final int state;

    ContinuationAccounts(int state) {
        this.state = state;
    }

    @Override
    public VirtualThreadCpu.Mechanism mechanism() {
        return VirtualThreadCpu.Mechanism.JAVAAGENT;
    }

    @Override
    public int state() {
        return state;
    }

    @Override
    public String clock() {
        return VtConfig.clockName();
    }

    @Override
    public long self(Thread self) {
        return VtFields.self(self);
    }

    @Override
    public long other(Thread thread) {
        return VtFields.other(thread);
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
        return true;
    }

    @Override
    public long hookFailures() {
        return VtHooks.failures();
    }
}
