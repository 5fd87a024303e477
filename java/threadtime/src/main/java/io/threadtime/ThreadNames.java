package io.threadtime;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Java's thread names in the trace: without them a trace shows
 * the kernel's 15 bytes ({@code java} for main, {@code ForkJoinPool-1-} for
 * every carrier) and a virtual thread only by its id.
 * <ul>
 * <li>A platform thread is named at its first record through
 * {@link EventLog} or a probe ({@link #first}), and main when the
 * {@code -javaagent} starts ({@link #nameCurrent}).
 * <li>A virtual thread is named at its first mount while the log's markers
 * are on ({@link #mounted}, called by the mount hook), and so is its
 * carrier.
 * </ul>
 * Each check is one array load and compare per call; the naming itself
 * (a lock and a copy in the core, ~1 us) happens once per thread. The
 * caches are direct-mapped by thread id: ids are handed out in sequence, so
 * the platform threads and the virtual threads alive together take
 * distinct slots until more than {@value #PLATFORM_SLOTS} (platform) or
 * {@value #VIRTUAL_SLOTS} (virtual) of them interleave; beyond that a
 * thread whose slot another took is named again (the same name: nothing
 * grows in memory, but a crash-safe file's thread-name area fills and then
 * counts the excess). A name set later ({@code Thread.setName}) is not
 * followed.
 */
final class ThreadNames {
    static final int PLATFORM_SLOTS = 1 << 12;
    static final int VIRTUAL_SLOTS = 1 << 16;
    /** Ids of the platform threads named in this run of the log (0: none). */
    private static final long[] PLATFORM = new long[PLATFORM_SLOTS];
    /** Ids of the virtual threads seen mounting (named if they have a name). */
    private static final long[] VIRTUAL = new long[VIRTUAL_SLOTS];
    /** Thread.isVirtual (JDK 21+), or null on a JDK without virtual threads. */
    private static final MethodHandle IS_VIRTUAL = isVirtualHandle();

    private ThreadNames() {}

    /** The calling thread records through the Java API: names it in the log, once. */
    static void first() {
        Thread t = Thread.currentThread();
        long id = t.getId();
        if (PLATFORM[(int) id & (PLATFORM_SLOTS - 1)] != id) {
            firstSlow(t, id);
        }
    }

    private static void firstSlow(Thread t, long id) {
        // A virtual thread records into its carrier's ring: the carrier is
        // named at the mount (mounted), the virtual thread by its id there.
        if (!isVirtual(t)) {
            PLATFORM[(int) id & (PLATFORM_SLOTS - 1)] = id;
            Native.B.logThreadName(utf8z(t.getName()));
        }
    }

    /** Names the calling platform thread now (the -javaagent's main at start). */
    static void nameCurrent() {
        Thread t = Thread.currentThread();
        mark(t);
        Native.B.logThreadName(utf8z(t.getName()));
    }

    /** The calling thread was named by the program (EventLog.threadName): keep that name. */
    static void mark(Thread t) {
        long id = t.getId();
        PLATFORM[(int) id & (PLATFORM_SLOTS - 1)] = id;
    }

    /** A new run of the log: its rings start with the kernel's names again. */
    static void forget() {
        Arrays.fill(PLATFORM, 0);
    }

    /**
     * End of {@code mount()}, on the carrier: vthread's name (if it has one)
     * and the carrier's, the first time each is seen. Never throws: the
     * core's answers (a name the core refuses, no log) are ignored.
     */
    static void mounted(Thread vthread, Thread carrier) {
        long id = vthread.getId();
        if (VIRTUAL[(int) id & (VIRTUAL_SLOTS - 1)] != id) {
            mountedSlow(vthread, carrier, id);
        }
    }

    private static void mountedSlow(Thread vthread, Thread carrier, long id) {
        VIRTUAL[(int) id & (VIRTUAL_SLOTS - 1)] = id;
        String name = vthread.getName();
        if (!name.isEmpty()) {
            // Only the agent's warm-up of the hooks passes a platform thread:
            // id 0, which the core refuses, links the call and names nothing.
            Native.B.logVthreadName(isVirtual(vthread) ? id : 0, utf8z(name));
        }
        long cid = carrier.getId();
        if (PLATFORM[(int) cid & (PLATFORM_SLOTS - 1)] != cid) {
            PLATFORM[(int) cid & (PLATFORM_SLOTS - 1)] = cid;
            Native.B.logThreadName(utf8z(carrier.getName()));
        }
    }

    /**
     * What {@link #mountedSlow} does for a new virtual thread, rounds times,
     * before the hooks go in, so that none of it is linked or (a method
     * handle's rebuild at its 128th call) defined for the first time inside
     * a mount. Names nothing: the core refuses id 0, and names no thread
     * while the log is not running. The name has characters of one, two,
     * three and four UTF-8 bytes.
     */
    static void warmUp(int rounds) {
        Thread self = Thread.currentThread();
        for (int i = 0; i < rounds; i++) {
            isVirtual(self);
            Native.B.logVthreadName(0, utf8z("w\u00e9\u4e2d\ud83d\ude00"));
            Native.B.logThreadName(utf8z(self.getName()));
        }
    }

    /** A (Thread, Thread)V handle on {@link #mounted}, for the mount hook. */
    static MethodHandle mountedHandle() throws ReflectiveOperationException {
        return MethodHandles.lookup().findStatic(ThreadNames.class, "mounted",
                MethodType.methodType(void.class, Thread.class, Thread.class));
    }

    /** A ()V handle on {@link #first}, folded into the probes' begin call. */
    static MethodHandle firstHandle() throws ReflectiveOperationException {
        return MethodHandles.lookup().findStatic(ThreadNames.class, "first", MethodType.methodType(void.class));
    }

    /**
     * NUL-terminated UTF-8 of at most {@value EventLog#NAME_MAX} bytes (the
     * core refuses longer names), cut before a character that would not
     * fit, and before a NUL character (the core reads up to it).
     */
    static byte[] utf8z(String name) {
        int nul = name.indexOf('\0');
        byte[] utf8 = (nul < 0 ? name : name.substring(0, nul)).getBytes(StandardCharsets.UTF_8);
        int n = Math.min(utf8.length, EventLog.NAME_MAX);
        while (n < utf8.length && n > 0 && (utf8[n] & 0xC0) == 0x80) {
            n--; // utf8[n] continues the character that starts before it
        }
        return Arrays.copyOf(utf8, n + 1);
    }

    private static boolean isVirtual(Thread t) {
        try {
            return IS_VIRTUAL != null && (boolean) IS_VIRTUAL.invokeExact(t);
        } catch (Throwable e) {
            return false;
        }
    }

    private static MethodHandle isVirtualHandle() {
        try {
            return MethodHandles.publicLookup().findVirtual(Thread.class, "isVirtual",
                    MethodType.methodType(boolean.class));
        } catch (ReflectiveOperationException e) {
            return null; // JDK 17: every thread is a platform thread
        }
    }
}
