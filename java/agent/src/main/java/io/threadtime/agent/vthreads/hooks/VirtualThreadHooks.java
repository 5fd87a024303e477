package io.threadtime.agent.vthreads.hooks;

import java.lang.invoke.MethodHandle;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What {@code java.lang.VirtualThread} calls once the threadtime agent
 * ({@code -javaagent:threadtime-agent.jar}) has instrumented it, and what any
 * class loader calls to read the figures. The agent appends this package to
 * the boot class path, so {@code java.base} can call it and every loader
 * sees the same copy: {@code Class.forName(
 * "io.threadtime.agent.vthreads.hooks.VirtualThreadHooks", false, null)}.
 * <p>
 * On the carrier, the end of {@code mount()} calls {@link #mount} (the thread
 * is now current: its stretch starts), the start of {@code unmount()} calls
 * {@link #unmount} (it is still current: its stretch ends) and the start of
 * {@code afterDone} calls {@link #end}. Where the time off a CPU went is
 * stamped on the wall clock ({@link #wall}): the start of each method that
 * hands the thread to its scheduler (start, unpark, the end of a yield)
 * calls {@link #ready}, the start and the returns of
 * {@code parkOnCarrierThread} (a park while pinned) {@link #pinned} and
 * {@link #unpinned}; mount and unmount stamp too, and a yield is marked
 * runnable at its unmount, so its resubmission reads no clock (in exact mode
 * its unmount reads none either: {@code ContinuationAccounts.yieldedAt}). When the event log's markers are on,
 * mount and unmount also write one into the carrier's ring (one counter read
 * each), so that a trace gives every stretch to its virtual thread. A hook
 * never throws: a failure is
 * counted ({@link #failures()}), reported once on stderr, and the thread's
 * figure misses at most that stretch.
 * <p>
 * A thread's account is ten fields of its continuation, which the hooks
 * are handed ({@link ContinuationAccounts}); where the agent could not add
 * those, an entry in a table keyed by thread id ({@link TableAccounts}).
 * Which one is fixed before the hooks go in; each of the two classes writes
 * and reads its own accounts, with the clock held here.
 */
public final class VirtualThreadHooks {
    private static final MethodHandle CLOCK = HookConfig.clock;
    private static final MethodHandle CARRIER_CLOCK = HookConfig.carrierClock;
    private static final MethodHandle CURRENT = HookConfig.current;
    private static final double NS_PER_TICK = HookConfig.nsPerTick;
    /** The wall clock of the waits where it is not {@link #CLOCK} (exact mode). */
    private static final MethodHandle WALL = HookConfig.wall;
    private static final double WALL_NS_PER_TICK = HookConfig.wallNsPerTick;
    private static final double WALL_TICKS_PER_NS = 1 / WALL_NS_PER_TICK;
    private static final boolean ACCOUNT = HookConfig.account;
    private static final boolean FIELDS = HookConfig.fields;
    private static final MethodHandle MOUNT_MARK = HookConfig.mountMark;
    private static final MethodHandle UNMOUNT_MARK = HookConfig.unmountMark;
    private static final MethodHandle MOUNT_NAME = HookConfig.mountName;
    private static final boolean MARK = MOUNT_MARK != null;
    private static final AtomicLong FAILURES = new AtomicLong();
    /** Made before any hook runs: a hook builds no string and links nothing. */
    private static final IllegalStateException CLOCK_FAILED =
            new IllegalStateException("the clock read failed (a negative figure)");

    private VirtualThreadHooks() {}

    /**
     * End of {@code mount()}: {@code vthread} is mounted on {@code carrier};
     * {@code cont} is its continuation, where its account is when
     * {@link HookConfig#fields} is set.
     */
    public static void mount(Thread vthread, Thread carrier, Object cont) {
        try {
            if (MARK) {
                MOUNT_MARK.invokeExact(vthread.getId());
                MOUNT_NAME.invokeExact(vthread, carrier);
            }
            if (!ACCOUNT) {
                return;
            }
            // The table's account is found (or made) before the clock is read,
            // so that a first mount's insertion is not charged to the thread.
            long id = vthread.getId();
            int a = FIELDS ? 0 : TableAccounts.account(id);
            long now = (long) CLOCK.invokeExact();
            if (now < 0) {
                failed(CLOCK_FAILED);
            } else if (FIELDS) {
                ContinuationAccounts.open(cont, now, carrier.getId(), WALL == null ? now : (long) WALL.invokeExact());
            } else {
                TableAccounts.open(TableAccounts.chunk(id, a), TableAccounts.offset(a), now, carrier.getId());
            }
        } catch (Throwable t) {
            failed(t);
        }
    }

    /** Start of {@code unmount()}: {@code vthread} is about to leave its
     * carrier; its {@code state} is {@code yielding} in a Thread.yield(). */
    public static void unmount(Thread vthread, Object cont, int state, int yielding) {
        try {
            if (MARK) {
                UNMOUNT_MARK.invokeExact(vthread.getId());
            }
            if (!ACCOUNT) {
                return;
            }
            // A failed read still closes the stretch, charging nothing for it:
            // left open, a reader would charge the carrier's later work to it.
            long now = (long) CLOCK.invokeExact();
            if (FIELDS) {
                // Mounted mode's clock is the wall clock; exact mode reads it
                // for a park, and puts a yield's time together from the reads
                // made (see ContinuationAccounts.yieldedAt): a yield then costs
                // one wall-clock read, at the mount.
                boolean yield = state == yielding;
                long wall = WALL == null ? now
                        : yield && now >= 0 ? ContinuationAccounts.yieldedAt(cont, now, WALL_TICKS_PER_NS) : -1;
                if (wall < 0 && WALL != null) {
                    wall = (long) WALL.invokeExact();
                }
                ContinuationAccounts.close(cont, now, wall, yield);
            } else {
                long id = vthread.getId();
                int a = TableAccounts.find(id);
                if (a >= 0) {
                    TableAccounts.close(TableAccounts.chunk(id, a), TableAccounts.offset(a), now);
                }
            }
            if (now < 0) {
                failed(CLOCK_FAILED);
            }
        } catch (Throwable t) {
            failed(t);
        }
    }

    /** A method handing {@code vthread} (whose continuation is {@code cont})
     * to its scheduler starts: it is runnable from now, unless it already was. */
    public static void ready(Object cont) {
        try {
            if (ACCOUNT && FIELDS && ContinuationAccounts.unready(cont)) {
                ContinuationAccounts.ready(cont, wall());
            }
        } catch (Throwable t) {
            failed(t);
        }
    }

    /** Start of {@code parkOnCarrierThread}: the mounted thread parks, holding its carrier. */
    public static void pinned(Object cont) {
        try {
            if (ACCOUNT && FIELDS) {
                ContinuationAccounts.pin(cont, wall());
            }
        } catch (Throwable t) {
            failed(t);
        }
    }

    /** A return from {@code parkOnCarrierThread}: that park has ended. */
    public static void unpinned(Object cont) {
        try {
            if (ACCOUNT && FIELDS) {
                ContinuationAccounts.unpin(cont, wall());
            }
        } catch (Throwable t) {
            failed(t);
        }
    }

    /** The wall clock the waits are stamped with, in its units: the cycle
     * counter (System.nanoTime() where it is not trusted), which mounted mode
     * reads anyway; never negative. */
    private static long wall() throws Throwable {
        return WALL == null ? (long) CLOCK.invokeExact() : (long) WALL.invokeExact();
    }

    /** Start of {@code afterDone}: {@code vthread} has ended; readers answer -1 for it
     * from now on, and a table's account is recycled. */
    public static void end(Thread vthread, Object cont) {
        try {
            if (!ACCOUNT) {
                return;
            }
            if (FIELDS) {
                ContinuationAccounts.end(cont);
            } else {
                TableAccounts.release(vthread.getId());
            }
        } catch (Throwable t) {
            failed(t);
        }
    }

    /**
     * Counts a failure; the first is reported on stderr. Built with a
     * StringBuilder, not {@code +}, whose first use would link classes
     * inside a mount.
     */
    private static void failed(Throwable t) {
        try {
            if (FAILURES.getAndIncrement() == 0) {
                System.err.println(new StringBuilder("threadtime: a virtual-thread hook failed (").append(t)
                        .append("); that stretch is not charged, and further failures are only counted"));
            }
        } catch (Throwable ignored) {
            // nothing may escape into VirtualThread
        }
    }

    /** Failures inside the hooks since start-up. */
    public static long failures() {
        return FAILURES.get();
    }

    /**
     * CPU time of the calling thread, ns, virtual or platform: what
     * {@code io.threadtime.VirtualThreadCpu.currentThreadCpuTime()} answers,
     * reachable from any class loader through this boot class. -1 where that
     * answers -1.
     */
    public static long currentThreadCpuTime() {
        try {
            return CURRENT == null ? -1 : (long) CURRENT.invokeExact();
        } catch (Throwable t) {
            return -1;
        }
    }

    /** The clock stretches are measured with, now, in its units; -1 if the read failed. */
    static long now() {
        try {
            return (long) CLOCK.invokeExact();
        } catch (Throwable t) {
            return -1;
        }
    }

    /** The clock of the carrier with thread id {@code carrier}; -1 if it failed. */
    static long carrierNow(long carrier) {
        try {
            return (long) CARRIER_CLOCK.invokeExact(carrier);
        } catch (Throwable t) {
            return -1;
        }
    }

    /** A consistent reading in ns: the closed total plus the open stretch, if
     * one is open (on {@code carrier}) and its clock could be read ({@code now}). */
    static long figure(long total, long mark, long carrier, long now) {
        long open = carrier == 0 || now < 0 ? 0 : now - mark;
        return ns(total + (open > 0 ? open : 0));
    }

    /** The calling thread's own figure, ns: its closed total plus its open
     * stretch, read on this carrier's clock; -1 if that read failed. */
    static long selfFigure(long total, long mark, long carrier) {
        if (carrier == 0) {
            return ns(total);
        }
        long now = now();
        return now < 0 ? -1 : figure(total, mark, carrier, now);
    }

    /** Wall clock units to ns. */
    static long wallNs(long units) {
        return WALL_NS_PER_TICK == 1 ? units : (long) (units * WALL_NS_PER_TICK);
    }

    /** Clock units to ns (the cycle counter's ticks; other clocks are in ns). */
    private static long ns(long units) {
        return NS_PER_TICK == 1 ? units : (long) (units * NS_PER_TICK);
    }
}
