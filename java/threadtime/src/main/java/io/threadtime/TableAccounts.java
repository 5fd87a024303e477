package io.threadtime;

import io.threadtime.boot.VtAccounts;

/**
 * The {@code -javaagent}'s accounts in a table keyed by thread id
 * ({@link VtAccounts}): where the fields could not be added to the threads'
 * continuations, or {@code accounts=table} was given. A thread's account is
 * made at its first mount and recycled at its end.
 */
final class TableAccounts extends JavaagentAccounts {
    TableAccounts(int state) {
        super(state);
    }

    @Override
    public long self(Thread self) {
        return VtAccounts.self(self);
    }

    @Override
    public long other(Thread thread) {
        return VtAccounts.other(thread);
    }

    @Override
    public long bytes() {
        return VtAccounts.bytes();
    }

    @Override
    public long inUse() {
        return VtAccounts.inUse();
    }

    @Override
    public boolean inThreads() {
        return false;
    }
}
