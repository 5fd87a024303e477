package io.threadtime;

import io.threadtime.boot.VtConfig;
import io.threadtime.boot.VtHooks;

/**
 * What the {@code -javaagent}'s two forms of accounts have in common: its
 * hooks in {@code VirtualThread} write them ({@code io.threadtime.boot.VtHooks}),
 * with the clock the agent chose at start. The forms differ in where an
 * account lives: {@link ContinuationAccounts}, {@link TableAccounts}.
 */
abstract class JavaagentAccounts implements VirtualThreadAccounts {
    private final int state;

    JavaagentAccounts(int state) {
        this.state = state;
    }

    @Override
    public final VirtualThreadCpu.Mechanism mechanism() {
        return VirtualThreadCpu.Mechanism.JAVAAGENT;
    }

    @Override
    public final int state() {
        return state;
    }

    @Override
    public final String clock() {
        return VtConfig.clockName();
    }

    @Override
    public final long hookFailures() {
        return VtHooks.failures();
    }
}
