package io.threadtime.boot;

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
 */
public final class Probes {
    private static final MethodHandle BEGIN = ProbeConfig.begin;
    private static final MethodHandle END = ProbeConfig.end;
    private static final MethodHandle LINE = ProbeConfig.line;
    private static final AtomicLong FAILURES = new AtomicLong();

    private Probes() {}

    /** Entry of a probed method: records a begin event, returns its time word (0: nothing recorded). */
    public static long begin(int id) {
        try {
            return (long) BEGIN.invokeExact(id);
        } catch (Throwable t) {
            FAILURES.incrementAndGet();
            return 0;
        }
    }

    /** Exit of a probed method, by return or ({@code thrown}) by an exception. */
    public static void end(int id, long t0, boolean thrown) {
        try {
            END.invokeExact(id, t0, thrown);
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
}
