package io.threadtime;

import io.threadtime.VirtualThreadCpu.Mode;
import java.lang.invoke.MethodHandle;

/**
 * The {@code -javaagent}'s accounts in the threads: four fields of each
 * virtual thread's continuation ({@link ContinuationFields} adds them,
 * {@code io.threadtime.boot.VtHooks} writes them at every mount and unmount,
 * {@code VtFields} reads them). Nothing is held outside the threads.
 */
final class ContinuationAccounts extends JavaagentAccounts {
    /** The hook class that keeps and reads these accounts. */
    private static final String ACCOUNTS = AgentHooks.VIRTUAL_THREADS + "VtFields";
    private static final MethodHandle SELF = AgentHooks.method(ACCOUNTS, "self", long.class, Thread.class);
    private static final MethodHandle OTHER = AgentHooks.method(ACCOUNTS, "other", long.class, Thread.class);

    ContinuationAccounts(Mode mode) {
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
