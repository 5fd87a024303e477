package io.threadtime.agent.vthreads.hooks;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The virtual threads' accounts kept in each thread's own continuation: four
 * {@code long} fields the agent adds to
 * {@code java.lang.VirtualThread$VThreadContinuation} as it loads
 * ({@code io.threadtime.agent.vthreads.ContinuationFields}). A mount or unmount writes the
 * continuation the hook is handed, which the carrier has just used: no
 * lookup, no lock, nothing shared with other threads' accounts, nothing to
 * give back when a thread ends (the account goes with the thread's objects).
 * <p>
 * The fields: the closed total, the mark of the open stretch, the open
 * stretch's carrier (its thread id; 0 while unmounted, {@link #ENDED} once
 * the thread has ended) and a sequence count, odd while the owner's carrier
 * writes, so that another thread reads a consistent figure. Used only when
 * {@link HookConfig#fields} is set: the agent opens {@code java.lang} to this
 * module first, which these handles need. {@link #self} and {@link #other}
 * read the figures ({@code io.threadtime.VirtualThreadCpu} reads through them when
 * the accounts are here).
 */
public final class ContinuationAccounts {
    /** The carrier field of a thread that has ended. */
    static final long ENDED = -1;
    private static final Class<?> VIRTUAL_THREAD;
    private static final VarHandle CONT, TOTAL, MARK, CARRIER, SEQ;

    static {
        try {
            MethodHandles.Lookup here = MethodHandles.lookup();
            Class<?> vthread = Class.forName("java.lang.VirtualThread", false, null);
            Class<?> cont = Class.forName(HookConfig.CONTINUATION_CLASS, false, null);
            Class<?> base = Class.forName("jdk.internal.vm.Continuation", false, null);
            VIRTUAL_THREAD = vthread;
            CONT = MethodHandles.privateLookupIn(vthread, here).findVarHandle(vthread, "cont", base);
            MethodHandles.Lookup l = MethodHandles.privateLookupIn(cont, here);
            TOTAL = l.findVarHandle(cont, HookConfig.TOTAL_FIELD, long.class);
            MARK = l.findVarHandle(cont, HookConfig.MARK_FIELD, long.class);
            CARRIER = l.findVarHandle(cont, HookConfig.CARRIER_FIELD, long.class);
            SEQ = l.findVarHandle(cont, HookConfig.SEQ_FIELD, long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private ContinuationAccounts() {}

    /** The continuation of virtual thread {@code vthread} (not in a hook: they
     * are handed it); null for a thread of another class (a virtual thread
     * bound to an OS thread, where the JVM has no continuations). */
    static Object cont(Thread vthread) {
        return VIRTUAL_THREAD.isInstance(vthread) ? CONT.get(vthread) : null;
    }

    /** Opens a stretch at {@code mark} on {@code carrier}: the owner's carrier only. */
    static void open(Object c, long mark, long carrier) {
        long seq = (long) SEQ.get(c);
        SEQ.set(c, seq + 1);
        VarHandle.storeStoreFence();
        MARK.set(c, mark);
        CARRIER.set(c, carrier);
        SEQ.setRelease(c, seq + 2);
    }

    /** Closes the open stretch at {@code now}, charging nothing for it if
     * {@code now} is negative (the clock failed); nothing if none is open
     * (the mount's clock read failed). The owner's carrier only. */
    static void close(Object c, long now) {
        if ((long) CARRIER.get(c) <= 0) {
            return;
        }
        long seq = (long) SEQ.get(c);
        SEQ.set(c, seq + 1);
        VarHandle.storeStoreFence();
        long stretch = now < 0 ? 0 : now - (long) MARK.get(c);
        TOTAL.set(c, (long) TOTAL.get(c) + (stretch > 0 ? stretch : 0));
        CARRIER.set(c, 0L);
        SEQ.setRelease(c, seq + 2);
    }

    /** The thread has ended: readers answer -1 from now on. Its last carrier only. */
    static void end(Object c) {
        long seq = (long) SEQ.get(c);
        SEQ.set(c, seq + 1);
        VarHandle.storeStoreFence();
        CARRIER.set(c, ENDED);
        SEQ.setRelease(c, seq + 2);
    }

    /** The calling virtual thread's account, ns; -1 for a thread of another
     * class (bound to an OS thread) or if the clock read failed. Its own
     * carrier writes it, so plain reads are consistent. */
    public static long self(Thread vthread) {
        Object c = cont(vthread);
        return c == null ? -1 : VirtualThreadHooks.selfFigure(total(c), mark(c), carrier(c));
    }

    /**
     * Another virtual thread's account, ns, with its open stretch read on the
     * clock of the carrier it is on; 0 for a thread that has not run yet (its
     * fields are still zero), -1 once it has ended.
     */
    public static long other(Thread vthread) {
        Object c = cont(vthread);
        if (c == null) {
            return -1;
        }
        for (int spins = 0;; spins++) {
            long seq = seq(c);
            if ((seq & 1) == 0) {
                long total = total(c);
                long mark = mark(c);
                long carrier = carrier(c);
                long now = carrier > 0 ? VirtualThreadHooks.carrierNow(carrier) : 0;
                VarHandle.loadLoadFence();
                if (seq(c) == seq) {
                    return carrier == ENDED ? -1 : VirtualThreadHooks.figure(total, mark, carrier, now);
                }
            }
            if (spins > 64) {
                Thread.onSpinWait();
            }
        }
    }

    /** Accounts held outside the threads: none, they are in the threads. */
    public static long inUse() {
        return 0;
    }

    /** Bytes the accounts occupy outside the threads: none. */
    public static long bytes() {
        return 0;
    }

    static long seq(Object c) {
        return (long) SEQ.getAcquire(c);
    }

    static long total(Object c) {
        return (long) TOTAL.get(c);
    }

    static long mark(Object c) {
        return (long) MARK.get(c);
    }

    static long carrier(Object c) {
        return (long) CARRIER.get(c);
    }
}
