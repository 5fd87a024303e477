package io.threadtime;

import java.lang.invoke.MethodHandle;

/**
 * The calling thread's precise CPU clock as the core reads it cheaply
 * ({@code tt_self_fast_ns}): the kernel's own clock
 * ({@code CLOCK_THREAD_CPUTIME_ID}), answered from the cycle counter while
 * the kernel's rseq area shows that the thread has not been switched out
 * since the last real read, and with one real read (which re-arms) when it
 * has. Never below a real read taken before it, never above one taken after
 * it plus the core's documented bound; monotonic per thread.
 * <p>
 * Off switch: {@code -Dthreadtime.fastClock=false} (read when this class is
 * first used), the {@code -javaagent} option {@code fastclock=off} (which
 * wins, being applied at start), or {@code THREADTIME_FAST_CLOCK=0} in the
 * environment (the core's own). Off, every read is one system call, as
 * before.
 */
final class FastClock {
    /** System property: "false" turns the fast path off for this process; "true" leaves it to the core
     * (and its environment variable). Another value is ignored with a warning. */
    static final String PROPERTY = "threadtime.fastClock";

    static {
        String v = System.getProperty(PROPERTY);
        if (v != null) {
            try {
                if (!parse(v)) {
                    set(false);
                }
            } catch (IllegalArgumentException e) {
                // Not thrown from here: a failed class initializer would fail
                // every later read with a bare NoClassDefFoundError.
                System.getLogger("io.threadtime").log(System.Logger.Level.WARNING, "threadtime: -D" + PROPERTY
                        + "=" + v + " ignored: " + e.getMessage() + "; the clock is " + name());
            }
        }
    }

    private FastClock() {}

    /** true/on or false/off; anything else is refused. */
    static boolean parse(String value) {
        switch (value) {
            case "true": case "on": return true;
            case "false": case "off": return false;
            default: throw new IllegalArgumentException("expected on or off (true or false)");
        }
    }

    /** The calling thread's precise CPU time, ns; a negative errno if the kernel refused. */
    static long read() {
        return Native.B.selfFast();
    }

    /** A ()J handle doing what {@link #read()} does, for the virtual-thread
     * hooks: the backend's own call (the downcall handle itself on FFM), so
     * that the JIT compiles a hook into the native call with nothing around it. */
    static MethodHandle reader() throws ReflectiveOperationException {
        return Native.B.selfFastHandle();
    }

    /** What the core says while the decision is under way on another thread. */
    private static final String DECIDING = "syscall: deciding";

    /**
     * How reads are made: "rseq+tsc", or "syscall: " and why. The backend has
     * the decision made on a thread of its own as the library loads
     * (JniBackend.decideFastClock, ~25 ms); a name asked for meanwhile waits
     * for it (at most 10 s), not "deciding", which would say nothing of the
     * reads to come.
     */
    static String name() {
        String n = Native.B.fastClockName();
        for (int i = 0; i < 10_000 && n.startsWith(DECIDING); i++) {
            try {
                Thread.sleep(1);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
            n = Native.B.fastClockName();
        }
        return n;
    }

    /** Turns the fast path on (where the kernel supports it) or off for the whole process. */
    static void set(boolean on) {
        ThreadTimeException.check(Native.B.fastClockSet(on ? 1 : 0));
    }
}
