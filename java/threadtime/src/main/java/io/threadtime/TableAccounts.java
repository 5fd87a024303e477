package io.threadtime;

import io.threadtime.VirtualThreadCpu.Mode;
import java.lang.invoke.MethodHandle;

/**
 * The {@code -javaagent}'s accounts in a table keyed by thread id
 * ({@code VtAccounts}): where the fields could not be added to the threads'
 * continuations, or {@code accounts=table} was given. A thread's account is
 * made at its first mount and recycled at its end.
 */
final class TableAccounts extends JavaagentAccounts {
    /** The hook class that keeps and reads these accounts. */
    private static final String ACCOUNTS = AgentHooks.VIRTUAL_THREADS + "VtAccounts";
    private static final MethodHandle SELF = AgentHooks.method(ACCOUNTS, "self", long.class, Thread.class);
    private static final MethodHandle OTHER = AgentHooks.method(ACCOUNTS, "other", long.class, Thread.class);
    private static final MethodHandle BYTES = AgentHooks.method(ACCOUNTS, "bytes", long.class);
    private static final MethodHandle IN_USE = AgentHooks.method(ACCOUNTS, "inUse", long.class);

    TableAccounts(Mode mode) {
        super(mode);
    }

    @Override
    public long self(Thread self) {
        try {
            return (long) SELF.invokeExact(self);
        } catch (Throwable t) {
            return -1; // the hook class's readers do not throw
        }
    }

    @Override
    public long other(Thread thread) {
        try {
            return (long) OTHER.invokeExact(thread);
        } catch (Throwable t) {
            return -1;
        }
    }

    @Override
    public long bytes() {
        try {
            return (long) BYTES.invokeExact();
        } catch (Throwable t) {
            return 0;
        }
    }

    @Override
    public long inUse() {
        try {
            return (long) IN_USE.invokeExact();
        } catch (Throwable t) {
            return 0;
        }
    }

    @Override
    public boolean inThreads() {
        return false;
    }
}
