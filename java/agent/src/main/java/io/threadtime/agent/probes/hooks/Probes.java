package io.threadtime.agent.probes.hooks;

import java.lang.invoke.MethodHandle;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What a probed method calls, put there by the agent's probe transformer
 * ({@code -javaagent:threadtime.jar=probe=...}): {@link #begin} at entry,
 * {@link #end} at every exit, {@link #line} at a source line. The agent
 * appends this package to the boot class path, so the JDK's own classes can
 * call it.
 * <p>
 * Each call is one native call through a constant method handle (the id is
 * a constant in the caller's bytecode): no lookup and no allocation, and the
 * JIT inlines it into the probed method. None of them ever throws into the
 * probed method; a failure is counted ({@link #failures()}).
 * <p>
 * With {@code probe.cpu=on}, a call on a virtual thread whose CPU the agent
 * charges to the thread's own account gets its CPU from that account: the
 * account is read after the begin and before the end, and the end carries
 * the difference (the stretch still open at the end included), so the call
 * is measured whichever carriers ran it and however often it parked. The
 * begin's reading waits in a small stack per virtual thread (a
 * {@code ThreadLocal}: the thread's first probed call allocates it, about
 * 200 bytes).
 */
public final class Probes {
    private static final MethodHandle BEGIN = ProbeConfig.begin;
    private static final MethodHandle END = ProbeConfig.end;
    private static final MethodHandle LINE = ProbeConfig.line;
    private static final MethodHandle IS_VIRTUAL = ProbeConfig.isVirtual;
    private static final MethodHandle BEGIN_PLAIN = ProbeConfig.beginPlain;
    private static final MethodHandle ACCOUNT = ProbeConfig.account;
    private static final MethodHandle END_MEASURED = ProbeConfig.endMeasured;
    private static final int MEASURE = ProbeConfig.measure;
    private static final boolean VIRTUAL = IS_VIRTUAL != null;
    /** Per virtual thread: {depth, t0, account at t0, t0, account, ...}. */
    private static final ThreadLocal<long[]> OPEN = VIRTUAL ? new ThreadLocal<>() : null;
    private static final AtomicLong FAILURES = new AtomicLong();

    private Probes() {}

    /** Entry of a probed method: records a begin event, returns its time word (0: nothing recorded). */
    public static long begin(int id) {
        long t0 = 0;
        try {
            if (!VIRTUAL || !(boolean) IS_VIRTUAL.invokeExact(Thread.currentThread())) {
                return (long) BEGIN.invokeExact(id);
            }
            t0 = (long) BEGIN_PLAIN.invokeExact(id);
            if (t0 != 0) {
                push(t0, (long) ACCOUNT.invokeExact());
            }
        } catch (Throwable t) {
            FAILURES.incrementAndGet();
        }
        return t0;
    }

    /** Exit of a probed method, by return or ({@code thrown}) by an exception. */
    public static void end(int id, long t0, boolean thrown) {
        try {
            if (!VIRTUAL || !(boolean) IS_VIRTUAL.invokeExact(Thread.currentThread())) {
                END.invokeExact(id, t0, thrown);
            } else if (t0 != 0) {
                long now = (long) ACCOUNT.invokeExact();
                long then = pop(t0);
                // -1: no figure (no account, or the begin's reading was lost);
                // the core counts the call as not attributable.
                long ns = now >= 0 && then >= 0 && now >= then ? now - then : -1;
                END_MEASURED.invokeExact(id, t0, ns, MEASURE, thrown);
            }
        } catch (Throwable t) {
            FAILURES.incrementAndGet();
        }
    }

    /** A line probe: an instant event. */
    public static void line(int id) {
        try {
            LINE.invokeExact(id);
        } catch (Throwable t) {
            FAILURES.incrementAndGet();
        }
    }

    /** Calls that failed inside (and were swallowed) since start-up. */
    public static long failures() {
        return FAILURES.get();
    }

    /** Keeps a begin's account reading until its end. */
    private static void push(long t0, long account) {
        long[] s = OPEN.get();
        if (s == null) {
            s = new long[1 + 2 * 4];
            OPEN.set(s);
        }
        int n = (int) s[0];
        if (1 + 2 * n + 2 > s.length) {
            // System.arraycopy, not Arrays.copyOf: a native method, so no
            // probe can sit in it and call back into this one.
            long[] bigger = new long[s.length * 2 - 1];
            System.arraycopy(s, 0, bigger, 0, s.length);
            s = bigger;
            OPEN.set(s);
        }
        s[1 + 2 * n] = t0;
        s[2 + 2 * n] = account;
        s[0] = n + 1;
    }

    /**
     * The account reading of the begin with time word t0, taken off the
     * stack with any above it (calls that never ended); -1 if none.
     */
    private static long pop(long t0) {
        long[] s = OPEN.get();
        if (s == null) {
            return -1;
        }
        for (int k = (int) s[0]; k > 0; k--) {
            if (s[2 * k - 1] == t0) {
                s[0] = k - 1;
                return s[2 * k];
            }
        }
        return -1;
    }
}
