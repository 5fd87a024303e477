package io.threadtime;

import io.threadtime.VirtualThreadCpu.Mechanism;
import io.threadtime.VirtualThreadCpu.Mode;

/**
 * Where {@link VirtualThreadCpu} reads virtual threads' CPU time: one of the
 * two engines that keep accounts, in the form it took in this JVM, chosen
 * once when that class is initialized ({@link #chosen()}) and held in a
 * static final field, so that every call through it has one receiver class.
 * <ul>
 * <li>{@link JvmtiAccounts}: the JVMTI agent ({@code -agentpath}), whose
 * mount and unmount callbacks write accounts in C (jvmti/agent);</li>
 * <li>{@link JavaagentAccounts}: the {@code -javaagent}'s hooks in
 * {@code VirtualThread}, writing fields they added to each thread's
 * continuation, or a table keyed by thread id where the fields could not be
 * added or {@code accounts=table} was given;</li>
 * <li>{@link NoAccounts}: nothing charges (no agent, or one that is passive,
 * has its events off, or writes only the event log's markers).</li>
 * </ul>
 * The engines write; these only read. With both agents loaded the
 * {@code -javaagent}'s hooks stay out while the JVMTI agent charges, so at
 * most one engine keeps accounts.
 */
interface VirtualThreadAccounts {
    /** Which agent is loaded. */
    Mechanism mechanism();

    /** What it does: never {@link Mode#ABSENT} unless {@link #mechanism()} is {@code NONE}. */
    Mode mode();

    /** The clock stretches are measured with; "none" when nothing is charged. */
    String clock();

    /** The calling virtual thread {@code self}'s figure, ns; -1 without an account. */
    long self(Thread self);

    /** Another, started virtual thread's figure, ns: 0 if it has not run yet,
     * -1 once it has ended or without an account. */
    long other(Thread thread);

    /** A started virtual thread's four figures, the calling one's or
     * another's ({@link VirtualThreadTimes}: -1 for what this engine does not know). */
    VirtualThreadTimes times(Thread thread);

    /** Bytes the accounts occupy outside the threads. */
    long bytes();

    /** Accounts held outside the threads now. */
    long inUse();

    /** Whether the accounts are in the threads themselves. */
    boolean inThreads();

    /** Failures swallowed inside the {@code -javaagent}'s hooks. */
    long hookFailures();

    /** The engine that charges in this JVM, or the {@link NoAccounts} that
     * says which agent is there and why nothing is charged. */
    static VirtualThreadAccounts chosen() {
        Mode hooks = JavaagentAccounts.probe();
        if (hooks != Mode.ABSENT) {
            if (!hooks.charging()) {
                return new NoAccounts(Mechanism.JAVAAGENT, hooks);
            }
            return new JavaagentAccounts(hooks);
        }
        Mode jvmti = JvmtiAccounts.probe();
        if (jvmti.charging()) {
            return new JvmtiAccounts(jvmti);
        }
        return new NoAccounts(jvmti == Mode.ABSENT ? Mechanism.NONE : Mechanism.JVMTI, jvmti);
    }
}
