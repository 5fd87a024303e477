package io.threadtime;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.management.ManagementFactory;
import java.lang.ref.Reference;
import java.lang.ref.ReferenceQueue;
import java.lang.ref.WeakReference;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Which native thread runs which Java platform thread.
 * <p>
 * JDK 17 has no API for a thread's kernel tid, so each platform thread maps
 * itself the first time it calls threadtime on its own behalf (any
 * {@code currentThread...} call, the bean's current-thread calls,
 * {@link ThreadTime#register()}, or a thread made by
 * {@link ThreadTime#threadFactory}): it opens a core thread handle on
 * itself, which learns its tid and notices its exit, and files the handle
 * under its Java thread id. Until then another thread's times come from the
 * platform {@code ThreadMXBean}: correct, about 30 times slower.
 * <p>
 * The handle is closed once the {@code Thread} object is unreachable: its
 * entry's weak reference is queued then, and the next thread that maps
 * itself closes the handles queued so far (no thread of threadtime's own: a
 * {@code Cleaner} started one on the first call, which waited for it to be
 * scheduled, 0.2-27 ms on a loaded host). What waits there is a few dozen
 * bytes per thread that ended since. Every read holds the {@code Thread}
 * reachable until the native call returns, so no read can meet a closed
 * handle. A read counts
 * only if the thread is still alive after it (as a Java thread, which it
 * stops being before its native thread exits), so a terminated thread reads
 * -1 as it does through the platform bean.
 * <p>
 * Virtual threads are never mapped: they have no CPU clock of their own.
 */
final class ThreadMap {
    /**
     * One mapped thread: a weak reference to it, queued on {@link #GONE}
     * once it is unreachable (one class, not two: each class a first call
     * loads from the JAR costs it ~0.5 ms of CPU on JDK 25 here).
     */
    static final class Entry extends WeakReference<Thread> {
        final long id;
        final long handle;
        final int tid;

        Entry(Thread thread, long handle, int tid) {
            super(thread, GONE);
            this.id = thread == null ? 0 : thread.getId();
            this.handle = handle;
            this.tid = tid;
        }
    }

    /** Entries of threads that became unreachable, for the next mapping to close. */
    private static final ReferenceQueue<Thread> GONE = new ReferenceQueue<>();
    /** What a virtual thread's SELF slot holds. */
    private static final Entry VIRTUAL = new Entry(null, 0, 0);

    /**
     * The platform bean, for threads not mapped yet. Made at its first use,
     * not with this class: the JDK's management classes it loads cost a
     * first call that needs none of them more than the rest of that call.
     */
    static com.sun.management.ThreadMXBean platform() {
        return Platform.BEAN;
    }

    private static final class Platform {
        static final com.sun.management.ThreadMXBean BEAN =
                (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    }

    private static final ConcurrentHashMap<Long, Entry> BY_ID = new ConcurrentHashMap<>();
    /**
     * The calling thread's entry, null until {@link #self()} mapped it. A
     * plain ThreadLocal, not a subclass with an initial value: one class
     * fewer for a first call to load from the JAR (~0.4 ms), and no lambda
     * (a JVM's first lambda spins classes of its own).
     */
    private static final ThreadLocal<Entry> SELF = new ThreadLocal<>();

    /** Which clock {@link #read} takes: the precise total, a part of the consistent split, or a raw tick clock. */
    enum Clock { TOTAL, USER, SYSTEM, USER_RAW, SYSTEM_RAW }

    private ThreadMap() {}

    /** Maps the calling thread if it is not yet; false on a virtual thread. */
    static boolean mapSelf() {
        // A virtual thread asks first: its ThreadLocal would cost it a map of its own.
        return !isVirtual(Thread.currentThread()) && self() != VIRTUAL;
    }

    /**
     * The calling platform thread's consistent split as {user, system,
     * total}, mapping it first; null on a virtual thread. It is read through
     * the thread's handle (the fast clock in {@code getrusage()}'s
     * proportion when the owner asks), so the thread's own reads and
     * everybody else's form one monotonic sequence.
     */
    static long[] selfSplit() {
        Entry e = self();
        if (e == VIRTUAL) {
            return null;
        }
        long[] v = new long[3];
        ThreadTimeException.check(Native.B.threadTimes(e.handle, v));
        return v;
    }

    static boolean isVirtual(Thread t) {
        return VirtualThreads.is(t);
    }

    /** The entry of a mapped thread, else null. */
    static Entry of(Thread t) {
        Entry e = BY_ID.get(t.getId());
        return e != null && e.get() == t ? e : null;
    }

    /** The entry filed under a thread id, else null. */
    static Entry of(long id) {
        return BY_ID.get(id);
    }

    /**
     * One clock of a mapped thread: ns, or -1 if the thread has terminated.
     * Raw system time is read by tid (the core keeps no per-handle system
     * clock); the liveness check after the read makes that as safe as the
     * handle.
     */
    static long read(Entry e, Thread t, Clock clock) {
        long v;
        switch (clock) {
            case USER: return times(e, t).map(CpuTimes::userNanos).orElse(-1L);
            case SYSTEM: return times(e, t).map(CpuTimes::systemNanos).orElse(-1L);
            case TOTAL: v = Native.B.threadTotal(e.handle); break;
            case USER_RAW: v = Native.B.threadUser(e.handle); break;
            default: v = Native.B.tidSystem(e.tid); break;
        }
        boolean alive = t.isAlive();
        Reference.reachabilityFence(t);
        if (!alive || v == -ThreadTimeException.ESRCH) {
            return -1;
        }
        return ThreadTimeException.check(v);
    }

    /** The consistent split of a mapped thread; empty once it has terminated. */
    static Optional<CpuTimes> times(Entry e, Thread t) {
        long[] v = new long[3];
        int rc = Native.B.threadTimes(e.handle, v);
        boolean alive = t.isAlive();
        Reference.reachabilityFence(t);
        if (!alive || rc == -ThreadTimeException.ESRCH) {
            return Optional.empty();
        }
        ThreadTimeException.check(rc);
        return Optional.of(CpuTimes.of(v));
    }

    /** The calling thread's entry, mapping it first if it is not yet. */
    private static Entry self() {
        Entry e = SELF.get();
        if (e == null) {
            e = mapCurrent();
            SELF.set(e);
        }
        return e;
    }

    private static Entry mapCurrent() {
        Thread t = Thread.currentThread();
        if (isVirtual(t)) {
            return VIRTUAL;
        }
        for (Reference<? extends Thread> r; (r = GONE.poll()) != null; ) {
            Entry gone = (Entry) r;
            BY_ID.remove(gone.id, gone);
            Native.B.threadClose(gone.handle);
        }
        long handle = Native.B.threadOpenSelf();
        if (handle < 0) { // checked here, not through check(): its class loads for an error only
            ThreadTimeException.check(handle);
        }
        Entry e = new Entry(t, handle, Native.B.threadTid(handle));
        BY_ID.put(t.getId(), e);
        return e;
    }

    /** A public no-argument method that only newer JDKs have, else null. */
    static MethodHandle findOptional(Class<?> owner, String name, Class<?> returns) {
        try {
            return MethodHandles.publicLookup().findVirtual(owner, name, MethodType.methodType(returns));
        } catch (NoSuchMethodException | IllegalAccessException e) {
            return null;
        }
    }
}
