package io.threadtime.agent.vthreads.hooks;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
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
 * calls {@link #ready} (with the thread's state: the same methods also
 * resubmit a thread that is not becoming runnable), the start and the returns of
 * {@code parkOnCarrierThread} (a park while pinned) {@link #pinned} and
 * {@link #unpinned}; mount and unmount stamp too, and a yield is marked
 * runnable at its unmount, so its resubmission reads no clock (in exact
 * mode its unmount reads none either: {@code ContinuationAccounts.yieldedAt},
 * and its mount's CPU-clock call leaves the counter value it read where the
 * hook loads it: {@link #stamped}).
 * When the event log's markers are on, mount and unmount also write one into
 * the carrier's ring (one counter read each), so that a trace gives every
 * stretch to its virtual thread. A hook never throws: a failure is counted
 * ({@link #failures()}), reported once on stderr, and the thread's figure
 * misses at most that stretch.
 * <p>
 * A thread's account is ten fields of its continuation, which the hooks
 * are handed ({@link ContinuationAccounts}); where the agent could not add
 * those, an entry in a table keyed by thread id ({@link TableAccounts}).
 * Which one is fixed before the hooks go in; each of the two classes writes
 * and reads its own accounts, with the clock held here.
 * <p>
 * The agent hands this class its settings (the clocks, where the accounts
 * are, the markers, the mode) before the hooks go in; the hooks read them as
 * constants of a nested class made from them at the agent's warm-up
 * ({@link #settle}). Any class loader's copy of the API reads the mode here.
 */
public final class VirtualThreadHooks {
    /** The class whose instances get the account fields: one per virtual thread. */
    public static final String CONTINUATION_CLASS = "java.lang.VirtualThread$VThreadContinuation";
    /** The account fields' names, as {@code io.threadtime.agent.vthreads.ContinuationFields} adds them:
     * the CPU account, then where the time off a CPU went (see {@link ContinuationAccounts}). */
    public static final String TOTAL_FIELD = "threadtime$total", MARK_FIELD = "threadtime$mark",
            CARRIER_FIELD = "threadtime$carrier", SEQ_FIELD = "threadtime$seq", READY_FIELD = "threadtime$ready",
            SINCE_FIELD = "threadtime$since", WAIT_FIELD = "threadtime$wait", PINNED_FIELD = "threadtime$pinned",
            PARKED_FIELD = "threadtime$parked", MOUNTED_FIELD = "threadtime$mounted";

    static MethodHandle clock;        // ()J, the clock stretches are measured with
    static MethodHandle carrierClock; // (J)J, that clock read for a carrier by thread id
    static MethodHandle current;      // ()J, the threadtime API's current-thread CPU time
    static String clockName = "none";
    static double nsPerTick = 1;      // the clock's unit, in ns
    static MethodHandle wall;         // ()J, the wall clock of the waits; null: the clock above is one (mounted mode)
    static double wallNsPerTick = 1;  // its unit, in ns
    static boolean account;           // whether the hooks charge (install() was called)
    static boolean fields;            // accounts in the continuations (ContinuationAccounts), not the table
    static MethodHandle mountMark;    // (J)V, tt_event_mount, or null: no markers
    static MethodHandle unmountMark;  // (J)V, tt_event_unmount
    static MethodHandle mountName;    // (Thread, Thread)V: names a virtual thread and its carrier, once
    static MethodHandle stamped;      // ()J, exact mode's mount clock leaving its counter value in a slot; null: none
    static MethodHandle stampSlot;    // ()J, the address of the calling thread's slot
    static MethodHandle load;         // (J)J, a plain load of 8 bytes at an address (Unsafe.getLong)
    // What the hooks do: set by the agent before they go in, read by any
    // class loader's copy of the API (io.threadtime.JavaagentAccounts).
    private static volatile String mode;        // a VirtualThreadCpu.Mode constant's name; null: not set up
    private static volatile boolean charging;   // whether that mode charges (Mode.charging())

    /** Called once by the agent, before the hooks are put in. */
    public static void install(MethodHandle clock, MethodHandle carrierClock, MethodHandle current, String clockName,
            double nsPerTick, MethodHandle wall, double wallNsPerTick) {
        VirtualThreadHooks.nsPerTick = nsPerTick;
        VirtualThreadHooks.wall = wall;
        VirtualThreadHooks.wallNsPerTick = wall == null ? nsPerTick : wallNsPerTick;
        VirtualThreadHooks.clock = clock;
        VirtualThreadHooks.carrierClock = carrierClock;
        VirtualThreadHooks.current = current;
        VirtualThreadHooks.clockName = clockName;
        VirtualThreadHooks.account = true;
    }

    /**
     * Called by the agent before the hooks are put in, once it has added the
     * account fields to the virtual threads' continuation class and opened
     * {@code java.lang} to this module: the hooks keep the accounts there.
     * Null then; else why the fields cannot be reached, and the table is used.
     */
    public static String useFields() {
        try {
            Class.forName(ContinuationAccounts.class.getName(), true, null);
        } catch (ClassNotFoundException | LinkageError e) {
            Throwable cause = e instanceof ExceptionInInitializerError && e.getCause() != null ? e.getCause() : e;
            return "its fields could not be reached: " + cause;
        }
        fields = true;
        return null;
    }

    /**
     * Called by the agent before the hooks are put in when the event log is
     * to get a marker into the carrier's ring at every mount and unmount,
     * carrying the virtual thread's id.
     */
    public static void markers(MethodHandle mount, MethodHandle unmount) {
        VirtualThreadHooks.mountMark = mount;
        VirtualThreadHooks.unmountMark = unmount;
    }

    /**
     * Called by the agent before the hooks go in, in exact mode where the
     * cycle counter is trusted and the agent has exported
     * {@code jdk.internal.misc} to this module: the mount reads the CPU clock
     * with {@code clock}, which leaves the counter value it read in a slot of
     * the calling OS thread, at the address {@code slot} gives; the mount
     * then loads the waits' wall stamp from there (a plain load) instead of
     * making a second native call.
     */
    public static void stamped(MethodHandle clock, MethodHandle slot) throws ReflectiveOperationException {
        Class<?> unsafe = Class.forName("jdk.internal.misc.Unsafe", false, null);
        MethodHandles.Lookup lookup = MethodHandles.lookup();
        Object u = unsafe.getMethod("getUnsafe").invoke(null);
        load = lookup.findVirtual(unsafe, "getLong", MethodType.methodType(long.class, long.class)).bindTo(u);
        stamped = clock;
        stampSlot = slot;
    }

    /**
     * Called by the agent with {@link #markers}: what the mount hook calls
     * after the marker with the virtual thread and its carrier, so that the
     * trace names both (once each: the handle's own business).
     */
    public static void names(MethodHandle mountName) {
        VirtualThreadHooks.mountName = mountName;
    }

    /** Set by the agent once it knows whether the hooks are in: the name of
     * the {@code io.threadtime.VirtualThreadCpu.Mode} they are in, and
     * whether that mode charges. This class, on the boot class path, cannot
     * see that type: the agent hands both over. */
    public static void mode(String name, boolean charges) {
        charging = charges;
        mode = name;
    }

    /** The mode's name; null until the agent has set the hooks up. */
    public static String mode() {
        return mode;
    }

    /** Whether the hooks keep the accounts in the threads' continuations
     * ({@link ContinuationAccounts}), not in the table ({@link TableAccounts}). */
    public static boolean accountsInThreads() {
        return fields;
    }

    /** The clock's name: "thread-cpu-fast (rseq+tsc)", "thread-cpu (syscall: why)", "tsc", "monotonic",
     * or "none". */
    public static String clockName() {
        return charging ? clockName : "none";
    }

    /**
     * What the hooks read, as constants (so that the JIT compiles the clock
     * read into them): copied from the settings above when the first hook
     * runs, which the agent makes sure is after it has set them (its warm-up).
     */
    private static final class Hot {
        static final MethodHandle CLOCK = clock;
        static final MethodHandle CARRIER_CLOCK = carrierClock;
        static final MethodHandle CURRENT = current;
        static final double NS_PER_TICK = nsPerTick;
        /** The wall clock of the waits where it is not {@code CLOCK} (exact mode). */
        static final MethodHandle WALL = wall;
        static final double WALL_NS_PER_TICK = wallNsPerTick;
        static final double WALL_TICKS_PER_NS = 1 / WALL_NS_PER_TICK;
        static final boolean ACCOUNT = account;
        static final boolean FIELDS = fields;
        static final MethodHandle MOUNT_MARK = mountMark;
        static final MethodHandle UNMOUNT_MARK = unmountMark;
        static final MethodHandle MOUNT_NAME = mountName;
        static final boolean MARK = MOUNT_MARK != null;
        static final MethodHandle STAMPED = stamped;
        static final MethodHandle STAMP_SLOT = stampSlot;
        static final MethodHandle LOAD = load;
        static final boolean STAMPS = STAMPED != null && FIELDS;

        private Hot() {}
    }

    private static final AtomicLong FAILURES = new AtomicLong();
    /** Made before any hook runs: a hook builds no string and links nothing. */
    private static final IllegalStateException CLOCK_FAILED =
            new IllegalStateException("the clock read failed (a negative figure)");

    private VirtualThreadHooks() {}

    /**
     * End of {@code mount()}: {@code vthread} is mounted on {@code carrier};
     * {@code cont} is its continuation, where its account is when
     * {@link #fields} is set.
     */
    public static void mount(Thread vthread, Thread carrier, Object cont) {
        try {
            if (Hot.MARK) {
                Hot.MOUNT_MARK.invokeExact(vthread.getId());
                Hot.MOUNT_NAME.invokeExact(vthread, carrier);
            }
            if (!Hot.ACCOUNT) {
                return;
            }
            // The table's account is found (or made) before the clock is read,
            // so that a first mount's insertion is not charged to the thread.
            long id = vthread.getId();
            int a = Hot.FIELDS ? 0 : TableAccounts.account(id);
            long carrierId = carrier.getId();
            long now, wall = 0;
            if (Hot.STAMPS) {
                // One native call: the CPU clock, whose counter value is the
                // wall stamp. The slot is this carrier's: the call and the
                // load run on the one OS thread that is running this mount.
                long slot = slot(carrierId);
                now = (long) Hot.STAMPED.invokeExact();
                wall = (long) Hot.LOAD.invokeExact(slot);
            } else {
                now = (long) Hot.CLOCK.invokeExact();
            }
            if (now < 0) {
                failed(CLOCK_FAILED);
            } else if (Hot.FIELDS) {
                ContinuationAccounts.open(cont, now, carrierId,
                        Hot.STAMPS ? wall : Hot.WALL == null ? now : (long) Hot.WALL.invokeExact());
            } else {
                TableAccounts.open(TableAccounts.chunk(id, a), TableAccounts.offset(a), now, carrierId);
            }
        } catch (Throwable t) {
            failed(t);
        }
    }

    /** A carrier's slot for the stamped clock: its thread id and the slot's
     * address. Immutable, so a carrier that finds another's entry sees it whole. */
    private static final class Slot {
        final long carrier;
        final long address;

        Slot(long carrier, long address) {
            this.carrier = carrier;
            this.address = address;
        }
    }

    /** The carriers' slots by thread id modulo the length: thread ids are
     * never reused, and a carrier writes only its own entry, so a carrier
     * finds its own slot or learns it again (one native call and one small
     * object, once per carrier while two live carriers do not share an index). */
    private static final Slot[] SLOTS = new Slot[1024];

    /** The address of the slot of the carrier with thread id {@code carrier}, which is the caller. */
    private static long slot(long carrier) throws Throwable {
        int i = (int) carrier & (SLOTS.length - 1);
        Slot s = SLOTS[i];
        if (s != null && s.carrier == carrier) {
            return s.address;
        }
        long address = (long) Hot.STAMP_SLOT.invokeExact();
        SLOTS[i] = new Slot(carrier, address);
        return address;
    }

    /** Start of {@code unmount()}: {@code vthread} is about to leave its
     * carrier; its {@code state} is {@code yielding} in a Thread.yield(). */
    public static void unmount(Thread vthread, Object cont, int state, int yielding) {
        try {
            if (Hot.MARK) {
                Hot.UNMOUNT_MARK.invokeExact(vthread.getId());
            }
            if (!Hot.ACCOUNT) {
                return;
            }
            // A failed read still closes the stretch, charging nothing for it:
            // left open, a reader would charge the carrier's later work to it.
            long now = (long) Hot.CLOCK.invokeExact();
            if (Hot.FIELDS) {
                // Mounted mode's clock is the wall clock; exact mode reads it
                // for a park, and puts a yield's time together from the reads
                // made (see ContinuationAccounts.yieldedAt): a yield then costs
                // one wall-clock read, at the mount, which the mount's clock
                // call makes itself where the counter is trusted (stamped).
                boolean yield = state == yielding;
                long wall = Hot.WALL == null ? now
                        : yield && now >= 0 ? ContinuationAccounts.yieldedAt(cont, now, Hot.WALL_TICKS_PER_NS) : -1;
                if (wall < 0 && Hot.WALL != null) {
                    wall = (long) Hot.WALL.invokeExact();
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

    /**
     * A method submitting a virtual thread (whose continuation is {@code cont})
     * to its scheduler starts, the thread in {@code state}: if that is one of
     * the states whose bits {@code runnable} has (started, unparked, yielded,
     * unblocked), it is runnable from now, unless it already was. In any other
     * state the submit is no hand-over: the JDK resubmits a thread's task
     * after it suspended the thread (for a stack trace), and that task finds
     * the thread parked and does nothing.
     */
    public static void ready(Object cont, int state, long runnable) {
        try {
            if (Hot.ACCOUNT && Hot.FIELDS && (state & ~(Long.SIZE - 1)) == 0 && (runnable & 1L << state) != 0
                    && ContinuationAccounts.unready(cont)) {
                ContinuationAccounts.ready(cont, wall());
            }
        } catch (Throwable t) {
            failed(t);
        }
    }

    /** Start of {@code parkOnCarrierThread}: the mounted thread parks, holding its carrier. */
    public static void pinned(Object cont) {
        try {
            if (Hot.ACCOUNT && Hot.FIELDS) {
                ContinuationAccounts.pin(cont, wall());
            }
        } catch (Throwable t) {
            failed(t);
        }
    }

    /** A return from {@code parkOnCarrierThread}: that park has ended. */
    public static void unpinned(Object cont) {
        try {
            if (Hot.ACCOUNT && Hot.FIELDS) {
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
        return Hot.WALL == null ? (long) Hot.CLOCK.invokeExact() : (long) Hot.WALL.invokeExact();
    }

    /** Start of {@code afterDone}: {@code vthread} has ended; readers answer -1 for it
     * from now on, and a table's account is recycled. */
    public static void end(Thread vthread, Object cont) {
        try {
            if (!Hot.ACCOUNT) {
                return;
            }
            if (Hot.FIELDS) {
                ContinuationAccounts.end(cont);
            } else {
                TableAccounts.release(vthread.getId());
            }
        } catch (Throwable t) {
            failed(t);
        }
    }

    /** Called by the agent once the settings are made, before any hook runs:
     * makes the hooks' constants from them. */
    public static void settle() throws ClassNotFoundException {
        Class.forName(Hot.class.getName(), true, null);
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
            return Hot.CURRENT == null ? -1 : (long) Hot.CURRENT.invokeExact();
        } catch (Throwable t) {
            return -1;
        }
    }

    /** The clock stretches are measured with, now, in its units; -1 if the read failed. */
    static long now() {
        try {
            return (long) Hot.CLOCK.invokeExact();
        } catch (Throwable t) {
            return -1;
        }
    }

    /** The clock of the carrier with thread id {@code carrier}; -1 if it failed. */
    static long carrierNow(long carrier) {
        try {
            return (long) Hot.CARRIER_CLOCK.invokeExact(carrier);
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
        return Hot.WALL_NS_PER_TICK == 1 ? units : (long) (units * Hot.WALL_NS_PER_TICK);
    }

    /** Clock units to ns (the cycle counter's ticks; other clocks are in ns). */
    private static long ns(long units) {
        return Hot.NS_PER_TICK == 1 ? units : (long) (units * Hot.NS_PER_TICK);
    }
}
