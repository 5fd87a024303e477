package io.threadtime.agent.vthreads.hooks;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The virtual threads' accounts kept in each thread's own continuation: ten
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
 * writes, so that another thread reads a consistent figure. Then where its
 * time off a CPU went, on the wall clock ({@link VirtualThreadHooks#wall}):
 * when it last became runnable (0 while it is not), when it last left its
 * carrier or began a park on it, when it was mounted (moved on by its pinned
 * parks: see {@link #yieldedAt}), and three totals: waiting for a carrier
 * (runnable to mounted), pinned (parked on its carrier, which blocks) and
 * parked (unmounted and not runnable). A wait or a park is booked when it
 * ends, at the mount (a pinned park when it returns), so a reader sees the
 * ones that have ended. Used only when
 * {@code VirtualThreadHooks.fields} is set: the agent opens {@code java.lang} to this
 * module first, which these handles need. {@link #self} and {@link #other}
 * read the figures ({@code io.threadtime.VirtualThreadCpu} reads through them when
 * the accounts are here).
 */
public final class ContinuationAccounts {
    /** The carrier field of a thread that has ended. */
    static final long ENDED = -1;
    private static final Class<?> VIRTUAL_THREAD;
    private static final VarHandle CONT, TOTAL, MARK, CARRIER, SEQ, READY, SINCE, WAIT, PINNED, PARKED, MOUNTED;

    static {
        try {
            MethodHandles.Lookup here = MethodHandles.lookup();
            Class<?> vthread = Class.forName("java.lang.VirtualThread", false, null);
            Class<?> cont = Class.forName(VirtualThreadHooks.CONTINUATION_CLASS, false, null);
            Class<?> base = Class.forName("jdk.internal.vm.Continuation", false, null);
            VIRTUAL_THREAD = vthread;
            CONT = MethodHandles.privateLookupIn(vthread, here).findVarHandle(vthread, "cont", base);
            MethodHandles.Lookup l = MethodHandles.privateLookupIn(cont, here);
            TOTAL = l.findVarHandle(cont, VirtualThreadHooks.TOTAL_FIELD, long.class);
            MARK = l.findVarHandle(cont, VirtualThreadHooks.MARK_FIELD, long.class);
            CARRIER = l.findVarHandle(cont, VirtualThreadHooks.CARRIER_FIELD, long.class);
            SEQ = l.findVarHandle(cont, VirtualThreadHooks.SEQ_FIELD, long.class);
            READY = l.findVarHandle(cont, VirtualThreadHooks.READY_FIELD, long.class);
            SINCE = l.findVarHandle(cont, VirtualThreadHooks.SINCE_FIELD, long.class);
            WAIT = l.findVarHandle(cont, VirtualThreadHooks.WAIT_FIELD, long.class);
            PINNED = l.findVarHandle(cont, VirtualThreadHooks.PINNED_FIELD, long.class);
            PARKED = l.findVarHandle(cont, VirtualThreadHooks.PARKED_FIELD, long.class);
            MOUNTED = l.findVarHandle(cont, VirtualThreadHooks.MOUNTED_FIELD, long.class);
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

    /** Opens a stretch at {@code mark} on {@code carrier}, at {@code wall} on
     * the wall clock: the wait since the thread became runnable ends, and so
     * does the park before that, if it was unmounted. The owner's carrier only. */
    static void open(Object c, long mark, long carrier, long wall) {
        long seq = (long) SEQ.get(c);
        SEQ.set(c, seq + 1);
        VarHandle.storeStoreFence();
        MARK.set(c, mark);
        CARRIER.set(c, carrier);
        long ready = (long) READY.get(c);
        if (ready != 0) {
            WAIT.set(c, (long) WAIT.get(c) + positive(wall - ready));
            long since = (long) SINCE.get(c);
            if (since != 0) {
                PARKED.set(c, (long) PARKED.get(c) + positive(ready - since));
            }
        }
        READY.set(c, 0L);
        SINCE.set(c, 0L);
        MOUNTED.set(c, wall);
        SEQ.setRelease(c, seq + 2);
    }

    /**
     * In exact mode, the wall-clock time of a Thread.yield()'s unmount, from
     * the clock reads already made rather than one more: the mount's wall
     * time, plus the CPU time charged since ({@code now} minus the mark, in
     * ns, made wall-clock units by {@code ticksPerNs}), plus the pinned parks
     * since (added to the mount's time as they end). Early by the time the
     * carrier was off its CPU otherwise during the stretch (preempted, or
     * blocked without parking); that time counts as waiting for a carrier.
     * -1 without an open stretch (the mount's clock read failed).
     */
    static long yieldedAt(Object c, long now, double ticksPerNs) {
        return (long) CARRIER.get(c) <= 0 ? -1 : (long) MOUNTED.get(c) + (long) ((now - (long) MARK.get(c)) * ticksPerNs);
    }

    /** The thread has been handed to its scheduler: if it was not runnable
     * yet, it is from {@code wall}. Any thread, while the owner is unmounted. */
    static void ready(Object c, long wall) {
        READY.set(c, wall);
    }

    /** Whether the thread is not yet marked runnable (a Thread.yield() marks
     * it at the unmount, so that its resubmission reads no clock). */
    static boolean unready(Object c) {
        return (long) READY.get(c) == 0;
    }

    /** A park on the carrier (the thread is pinned) begins at {@code wall}. The owner's carrier only. */
    static void pin(Object c, long wall) {
        SINCE.set(c, wall);
    }

    /** That park ends at {@code wall}. The owner's carrier only. */
    static void unpin(Object c, long wall) {
        long since = (long) SINCE.get(c);
        if (since == 0) {
            return;
        }
        long seq = (long) SEQ.get(c);
        SEQ.set(c, seq + 1);
        VarHandle.storeStoreFence();
        long pinned = positive(wall - since);
        PINNED.set(c, (long) PINNED.get(c) + pinned);
        MOUNTED.set(c, (long) MOUNTED.get(c) + pinned);
        SINCE.set(c, 0L);
        SEQ.setRelease(c, seq + 2);
    }

    private static long positive(long units) {
        return units > 0 ? units : 0;
    }

    /** Closes the open stretch at {@code now}, charging nothing for it if
     * {@code now} is negative (the clock failed); nothing if none is open
     * (the mount's clock read failed). The thread leaves its carrier at
     * {@code wall}, runnable from then if {@code yielding}. The owner's carrier only. */
    static void close(Object c, long now, long wall, boolean yielding) {
        SINCE.set(c, wall);
        READY.set(c, yielding ? wall : 0L);
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
        long[] t = read(vthread, false);
        return t == null ? -1 : t[0];
    }

    /**
     * A virtual thread's four figures, ns: CPU ({@link #self} or {@link #other}),
     * waiting for a carrier, pinned, parked, each up to its last booking; null
     * where {@link #other} answers -1 (the calling thread: where {@link #self} does).
     */
    public static long[] times(Thread vthread) {
        return read(vthread, vthread == Thread.currentThread());
    }

    private static long[] read(Thread vthread, boolean self) {
        Object c = cont(vthread);
        if (c == null) {
            return null;
        }
        if (self) {
            long cpu = VirtualThreadHooks.selfFigure(total(c), mark(c), carrier(c));
            return cpu < 0 ? null : new long[] {cpu, VirtualThreadHooks.wallNs((long) WAIT.get(c)),
                VirtualThreadHooks.wallNs((long) PINNED.get(c)), VirtualThreadHooks.wallNs((long) PARKED.get(c))};
        }
        for (int spins = 0;; spins++) {
            long seq = seq(c);
            if ((seq & 1) == 0) {
                long total = total(c);
                long mark = mark(c);
                long carrier = carrier(c);
                long wait = (long) WAIT.get(c);
                long pinned = (long) PINNED.get(c);
                long parked = (long) PARKED.get(c);
                long now = carrier > 0 ? VirtualThreadHooks.carrierNow(carrier) : 0;
                VarHandle.loadLoadFence();
                if (seq(c) == seq) {
                    return carrier == ENDED ? null : new long[] {VirtualThreadHooks.figure(total, mark, carrier, now),
                        VirtualThreadHooks.wallNs(wait), VirtualThreadHooks.wallNs(pinned),
                        VirtualThreadHooks.wallNs(parked)};
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
