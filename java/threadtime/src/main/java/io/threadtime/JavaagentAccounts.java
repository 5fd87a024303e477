package io.threadtime;

import io.threadtime.VirtualThreadCpu.Mode;
import java.lang.invoke.MethodHandle;

/**
 * The {@code -javaagent}'s accounts, read through the hook classes that
 * keep them (the package {@value AgentHooks#VIRTUAL_THREADS}, on the boot
 * class path): {@code ContinuationAccounts}, ten fields of each virtual
 * thread's continuation, or {@code TableAccounts}, a table keyed by thread
 * id where those fields could not be added or {@code accounts=table} was
 * given. Each of those classes writes its accounts (from the hooks in
 * {@code VirtualThread}) and reads them; which one is fixed before the hooks
 * go in, and read here once, into static finals, so a call through here is
 * a direct call into it once compiled. {@code VirtualThreadHooks} there says what
 * the hooks do.
 */
final class JavaagentAccounts implements VirtualThreadAccounts {
    static final String HOOKS = AgentHooks.VIRTUAL_THREADS + "VirtualThreadHooks";
    private final Mode mode;

    JavaagentAccounts(Mode mode) {
        this.mode = mode;
    }

    /** The hooks' mode; {@link Mode#ABSENT} when the agent did not put them
     * on the boot class path, or put them there without setting them up. */
    static Mode probe() {
        if (AgentHooks.find(HOOKS) == null) {
            return Mode.ABSENT;
        }
        String name;
        try {
            name = (String) Config.MODE.invokeExact();
        } catch (Throwable t) {
            throw new IllegalStateException("threadtime: the agent's mode cannot be read", t);
        }
        return name == null ? Mode.ABSENT : Mode.named(name);
    }

    /** Failures swallowed inside the hooks; the agent is there. */
    static long failures() {
        try {
            return (long) Config.FAILURES.invokeExact();
        } catch (Throwable t) {
            return 0;
        }
    }

    /** What the agent set up, looked up once it is known to be there. */
    private static final class Config {
        static final MethodHandle MODE = AgentHooks.method(HOOKS, "mode", String.class);
        static final MethodHandle IN_THREADS = AgentHooks.method(HOOKS, "accountsInThreads", boolean.class);
        static final MethodHandle CLOCK = AgentHooks.method(HOOKS, "clockName", String.class);
        static final MethodHandle FAILURES = AgentHooks.method(HOOKS, "failures", long.class);
    }

    /** The class that keeps the accounts, {@code ContinuationAccounts} or
     * {@code TableAccounts}, and its readers: looked up at the first read. */
    private static final class Accounts {
        static final boolean IN_THREADS;
        static final MethodHandle SELF, OTHER, BYTES, IN_USE;
        /** The four figures: the accounts in the threads only; null with the table. */
        static final MethodHandle TIMES;

        static {
            try {
                IN_THREADS = (boolean) Config.IN_THREADS.invokeExact();
            } catch (Throwable t) {
                throw new IllegalStateException("threadtime: the agent's accounts cannot be found", t);
            }
            String accounts = AgentHooks.VIRTUAL_THREADS + (IN_THREADS ? "ContinuationAccounts" : "TableAccounts");
            SELF = AgentHooks.method(accounts, "self", long.class, Thread.class);
            OTHER = AgentHooks.method(accounts, "other", long.class, Thread.class);
            BYTES = AgentHooks.method(accounts, "bytes", long.class);
            IN_USE = AgentHooks.method(accounts, "inUse", long.class);
            TIMES = IN_THREADS ? AgentHooks.method(accounts, "times", long[].class, Thread.class) : null;
        }
    }

    @Override
    public VirtualThreadCpu.Mechanism mechanism() {
        return VirtualThreadCpu.Mechanism.JAVAAGENT;
    }

    @Override
    public Mode mode() {
        return mode;
    }

    @Override
    public String clock() {
        try {
            return (String) Config.CLOCK.invokeExact();
        } catch (Throwable t) {
            return "none";
        }
    }

    // The hook classes' readers do not throw; a broken handle reads as no figure.

    @Override
    public long self(Thread self) {
        try {
            return (long) Accounts.SELF.invokeExact(self);
        } catch (Throwable t) {
            return -1;
        }
    }

    @Override
    public long other(Thread thread) {
        try {
            return (long) Accounts.OTHER.invokeExact(thread);
        } catch (Throwable t) {
            return -1;
        }
    }

    @Override
    public VirtualThreadTimes times(Thread thread) {
        if (Accounts.TIMES == null) {
            return VirtualThreadTimes.cpuOnly(thread == Thread.currentThread() ? self(thread) : other(thread));
        }
        try {
            return VirtualThreadTimes.of((long[]) Accounts.TIMES.invokeExact(thread));
        } catch (Throwable t) {
            return VirtualThreadTimes.UNKNOWN;
        }
    }

    @Override
    public long bytes() {
        try {
            return (long) Accounts.BYTES.invokeExact();
        } catch (Throwable t) {
            return 0;
        }
    }

    @Override
    public long inUse() {
        try {
            return (long) Accounts.IN_USE.invokeExact();
        } catch (Throwable t) {
            return 0;
        }
    }

    @Override
    public boolean inThreads() {
        return Accounts.IN_THREADS;
    }

    @Override
    public long hookFailures() {
        return failures();
    }
}
