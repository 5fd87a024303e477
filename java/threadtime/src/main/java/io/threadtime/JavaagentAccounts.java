package io.threadtime;

import io.threadtime.VirtualThreadCpu.Mode;
import java.lang.invoke.MethodHandle;

/**
 * What the {@code -javaagent}'s two forms of accounts have in common: its
 * hooks in {@code VirtualThread} write them ({@code VtHooks} in the agent's
 * hook package, {@value AgentHooks#VIRTUAL_THREADS}), with the clock the
 * agent chose at start, and its {@code VtConfig} there says what they do.
 * The forms differ in where an account lives: {@link ContinuationAccounts},
 * {@link TableAccounts}.
 */
abstract class JavaagentAccounts implements VirtualThreadAccounts {
    static final String CONFIG = AgentHooks.VIRTUAL_THREADS + "VtConfig";
    static final String HOOKS = AgentHooks.VIRTUAL_THREADS + "VtHooks";
    private final Mode mode;

    JavaagentAccounts(Mode mode) {
        this.mode = mode;
    }

    /** The hooks' mode; {@link Mode#ABSENT} when the agent did not put them on the boot class path. */
    static Mode probe() {
        if (AgentHooks.find(CONFIG) == null) {
            return Mode.ABSENT;
        }
        try {
            return Mode.of((int) Config.STATE.invokeExact());
        } catch (Throwable t) {
            throw new IllegalStateException("threadtime: the agent's state cannot be read", t);
        }
    }

    /** Whether the hooks keep the accounts in the threads' continuations; the agent is there. */
    static boolean fieldsInUse() {
        try {
            return (boolean) Config.IN_THREADS.invokeExact();
        } catch (Throwable t) {
            throw new IllegalStateException("threadtime: the agent's accounts cannot be found", t);
        }
    }

    /** Failures swallowed inside the hooks; the agent is there. */
    static long failures() {
        try {
            return (long) Config.FAILURES.invokeExact();
        } catch (Throwable t) {
            return 0;
        }
    }

    /** The hooks' configuration, looked up once the agent is known to be there. */
    private static final class Config {
        static final MethodHandle STATE = AgentHooks.method(CONFIG, "state", int.class);
        static final MethodHandle IN_THREADS = AgentHooks.method(CONFIG, "accountsInThreads", boolean.class);
        static final MethodHandle CLOCK = AgentHooks.method(CONFIG, "clockName", String.class);
        static final MethodHandle FAILURES = AgentHooks.method(HOOKS, "failures", long.class);
    }

    @Override
    public final VirtualThreadCpu.Mechanism mechanism() {
        return VirtualThreadCpu.Mechanism.JAVAAGENT;
    }

    @Override
    public final Mode mode() {
        return mode;
    }

    @Override
    public final String clock() {
        try {
            return (String) Config.CLOCK.invokeExact();
        } catch (Throwable t) {
            return "none";
        }
    }

    @Override
    public final long hookFailures() {
        return failures();
    }
}
