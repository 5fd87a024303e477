package io.threadtime;

import io.threadtime.boot.VtFields;

/**
 * The {@code -javaagent}'s accounts in the threads: four fields of each
 * virtual thread's continuation ({@link ContinuationFields} adds them,
 * {@code io.threadtime.boot.VtHooks} writes them at every mount and unmount,
 * {@link VtFields} reads them). Nothing is held outside the threads.
 */
final class ContinuationAccounts extends JavaagentAccounts {
    ContinuationAccounts(int state) {
        super(state);
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
}
