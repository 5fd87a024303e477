package io.threadtime.bench;

/**
 * The ThreadLocal route, for comparison only (jvmti/bench/yield.sh): the same
 * hook points as the -javaagent, time mounted from System.nanoTime(), kept in
 * a ThreadLocal<long[]> {total, mark} of each virtual thread. Appended to the
 * boot class path by ThreadLocalRoute.
 */
public final class TlHooks {
    private static final ThreadLocal<long[]> ACCOUNT = ThreadLocal.withInitial(() -> new long[2]);

    private TlHooks() {}

    public static void mount(Thread vthread, Thread carrier, Object cont) {
        try {
            ACCOUNT.get()[1] = System.nanoTime();
        } catch (Throwable t) {
            // never into VirtualThread
        }
    }

    public static void unmount(Thread vthread, Object cont, int state, int yielding) {
        try {
            long[] a = ACCOUNT.get();
            a[0] += System.nanoTime() - a[1];
        } catch (Throwable t) {
            // never into VirtualThread
        }
    }

    public static void end(Thread vthread, Object cont) {
    }

    /** The agent's other hook points (where the waits are stamped): nothing here. */
    public static void ready(Object cont, int state, long runnable) {
    }

    public static void pinned(Object cont) {
    }

    public static void unpinned(Object cont) {
    }
}
