package io.threadtime;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;

/**
 * The FFM backend (JDK 22+): each core function is a static final
 * {@link MethodHandle} called with {@code invokeExact}.
 * <p>
 * Calls that are one clock read (a system call that never blocks) and the event calls (a few stores into the thread's ring) are
 * linked {@code critical}: no thread-state transition, which is most of an
 * FFM call's overhead. {@code tt_thread_times} (one to three such reads and
 * a few stores, no lock; a /proc read only where a sandbox refuses CPU
 * clockids) is linked the same way. Of those, {@code tt_thread_times}
 * and {@code tt_event_text} also take heap access, so their Java arrays are
 * passed in place. Calls that allocate or touch a file
 * ({@code tt_thread_open/close}, {@code tt_process_times}, the log's
 * start, stop, dump and thread name) are linked normally, because a
 * critical call holds off the garbage collector for as long as it runs.
 */
final class FfmBackend implements Backend {
    FfmBackend() {
        H.SELF_TOTAL.type(); // links everything, or fails here rather than on first use
        NativeLibrary.checkVersion(version());
    }

    /** The method handles, created once the library is loaded. */
    private static final class H {
        static final SymbolLookup SYMBOLS;

        // The library first: on a platform without one its message names the
        // platform, where the linker would only say it does not support it.
        static {
            NativeLibrary.load();
            SYMBOLS = SymbolLookup.loaderLookup();
        }

        static final Linker LINKER = Linker.nativeLinker();

        static final MethodHandle VERSION = plain("tt_version", FunctionDescriptor.of(ADDRESS));
        static final MethodHandle STRERROR = plain("tt_strerror", FunctionDescriptor.of(ADDRESS, JAVA_LONG));
        static final MethodHandle SELF_TOTAL = critical("tt_self_total_ns", FunctionDescriptor.of(JAVA_LONG));
        // A cycle-counter read and a check of the rseq area, or one real read:
        // the cheapest call there is, so the transition would be most of it.
        static final MethodHandle SELF_FAST = critical("tt_self_fast_ns", FunctionDescriptor.of(JAVA_LONG));
        static final MethodHandle FAST_CLOCK_NAME = plain("tt_fast_clock_name", FunctionDescriptor.of(ADDRESS));
        static final MethodHandle FAST_CLOCK_SET = plain("tt_fast_clock_set", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
        static final MethodHandle SELF_USER = critical("tt_self_user_raw_ns", FunctionDescriptor.of(JAVA_LONG));
        static final MethodHandle SELF_SYSTEM = critical("tt_self_system_raw_ns", FunctionDescriptor.of(JAVA_LONG));
        static final MethodHandle TID_SYSTEM = critical("tt_tid_system_raw_ns", FunctionDescriptor.of(JAVA_LONG, JAVA_INT));
        static final MethodHandle THREAD_OPEN = plain("tt_thread_open", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS));
        static final MethodHandle THREAD_CLOSE = plain("tt_thread_close", FunctionDescriptor.ofVoid(ADDRESS));
        static final MethodHandle THREAD_TID = critical("tt_thread_tid", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        static final MethodHandle THREAD_TOTAL = critical("tt_thread_total_ns", FunctionDescriptor.of(JAVA_LONG, ADDRESS));
        static final MethodHandle THREAD_USER = critical("tt_thread_user_raw_ns", FunctionDescriptor.of(JAVA_LONG, ADDRESS));
        static final MethodHandle THREAD_TIMES = LINKER.downcallHandle(symbol("tt_thread_times"),
                FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS), Linker.Option.critical(true));
        static final MethodHandle PROCESS_TOTAL = critical("tt_process_total_ns", FunctionDescriptor.of(JAVA_LONG, JAVA_INT));
        static final MethodHandle PROCESS_USER = critical("tt_process_user_raw_ns", FunctionDescriptor.of(JAVA_LONG, JAVA_INT));
        static final MethodHandle PROCESS_TIMES = plain("tt_process_times", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS));
        static final MethodHandle LOG_START = plain("tt_log_start", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        static final MethodHandle LOG_STOP = plain("tt_log_stop", FunctionDescriptor.of(JAVA_INT));
        static final MethodHandle LOG_DUMP = plain("tt_log_dump", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        static final MethodHandle LOG_THREAD_NAME = plain("tt_log_thread_name", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        static final MethodHandle EVENT = critical("tt_event", FunctionDescriptor.ofVoid(JAVA_INT));
        static final MethodHandle EVENT_TEXT = LINKER.downcallHandle(symbol("tt_event_text"),
                FunctionDescriptor.ofVoid(JAVA_INT, ADDRESS), Linker.Option.critical(true));
        static final MethodHandle EVENT_VALUE = critical("tt_event_value", FunctionDescriptor.ofVoid(JAVA_INT, JAVA_LONG));
        static final MethodHandle EVENT_BEGIN = critical("tt_event_begin", FunctionDescriptor.ofVoid(JAVA_INT));
        static final MethodHandle EVENT_END = critical("tt_event_end", FunctionDescriptor.ofVoid(JAVA_INT));
        // May lock and allocate: linked normally.
        static final MethodHandle EVENT_NAME = plain("tt_event_name", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS));
        static final MethodHandle LOG_VTHREAD_NAME = plain("tt_log_vthread_name",
                FunctionDescriptor.of(JAVA_INT, JAVA_LONG, ADDRESS));
        static final MethodHandle EVENT_MOUNT = critical("tt_event_mount", FunctionDescriptor.ofVoid(JAVA_LONG));
        static final MethodHandle EVENT_UNMOUNT = critical("tt_event_unmount", FunctionDescriptor.ofVoid(JAVA_LONG));
        static final MethodHandle PROBE_BEGIN = critical("tt_probe_begin", FunctionDescriptor.of(JAVA_LONG, JAVA_INT));
        static final MethodHandle PROBE_END = critical("tt_probe_end",
                FunctionDescriptor.ofVoid(JAVA_INT, JAVA_LONG, JAVA_INT));
        // Three clock reads each (~1 us): still short and never blocking.
        static final MethodHandle PROBE_BEGIN_CPU = critical("tt_probe_begin_cpu", FunctionDescriptor.of(JAVA_LONG, JAVA_INT));
        static final MethodHandle PROBE_END_CPU = critical("tt_probe_end_cpu",
                FunctionDescriptor.ofVoid(JAVA_INT, JAVA_LONG, JAVA_INT));
        // One counter read and a few adds, as tt_probe_end.
        static final MethodHandle PROBE_END_MEASURED = critical("tt_probe_end_measured",
                FunctionDescriptor.ofVoid(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_INT));

        private static MemorySegment symbol(String name) {
            return SYMBOLS.find(name).orElseThrow(() -> NativeLibrary.notOurs("lacks the symbol " + name));
        }

        private static MethodHandle critical(String name, FunctionDescriptor fd) {
            return LINKER.downcallHandle(symbol(name), fd, Linker.Option.critical(false));
        }

        private static MethodHandle plain(String name, FunctionDescriptor fd) {
            return LINKER.downcallHandle(symbol(name), fd);
        }
    }

    /**
     * The leading fields of tt_log_options this binding sets; its size field
     * says so, and the core takes defaults for the fields after them.
     */
    private static final StructLayout LOG_OPTIONS = MemoryLayout.structLayout(
            JAVA_LONG.withName("size"),
            JAVA_INT.withName("ring_records"),
            MemoryLayout.paddingLayout(4),
            ADDRESS.withName("crash_file"),
            ADDRESS.withName("exit_dump_path"),
            JAVA_INT.withName("cpu_on_intervals"));

    /** invokeExact declares Throwable; the core functions throw nothing. */
    private static AssertionError impossible(Throwable t) {
        return new AssertionError("threadtime: a native call threw", t);
    }

    private static String cString(MemorySegment s) {
        return s.reinterpret(Long.MAX_VALUE).getString(0);
    }

    @Override
    public String name() {
        return "ffm";
    }

    @Override
    public String version() {
        try {
            return cString((MemorySegment) H.VERSION.invokeExact());
        } catch (Throwable t) {
            throw impossible(t);
        }
    }

    @Override
    public String strerror(long code) {
        try {
            return cString((MemorySegment) H.STRERROR.invokeExact(code));
        } catch (Throwable t) {
            throw impossible(t);
        }
    }

    @Override
    public long selfTotal() {
        try {
            return (long) H.SELF_TOTAL.invokeExact();
        } catch (Throwable t) {
            throw impossible(t);
        }
    }

    @Override
    public long selfFast() {
        try {
            return (long) H.SELF_FAST.invokeExact();
        } catch (Throwable t) {
            throw impossible(t);
        }
    }

    @Override
    public MethodHandle selfFastHandle() {
        return H.SELF_FAST;
    }

    @Override
    public String fastClockName() {
        try {
            return cString((MemorySegment) H.FAST_CLOCK_NAME.invokeExact());
        } catch (Throwable t) {
            throw impossible(t);
        }
    }

    @Override
    public int fastClockSet(int on) {
        try {
            return (int) H.FAST_CLOCK_SET.invokeExact(on);
        } catch (Throwable t) {
            throw impossible(t);
        }
    }

    @Override
    public long selfUser() {
        try {
            return (long) H.SELF_USER.invokeExact();
        } catch (Throwable t) {
            throw impossible(t);
        }
    }

    @Override
    public long selfSystem() {
        try {
            return (long) H.SELF_SYSTEM.invokeExact();
        } catch (Throwable t) {
            throw impossible(t);
        }
    }

    @Override
    public long tidSystem(int tid) {
        try {
            return (long) H.TID_SYSTEM.invokeExact(tid);
        } catch (Throwable t) {
            throw impossible(t);
        }
    }

    @Override
    public long threadOpenSelf() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ADDRESS);
            int rc = (int) H.THREAD_OPEN.invokeExact(0, out);
            return rc != 0 ? rc : out.get(ADDRESS, 0).address();
        } catch (Throwable t) {
            throw impossible(t);
        }
    }

    @Override
    public void threadClose(long handle) {
        try {
            H.THREAD_CLOSE.invokeExact(MemorySegment.ofAddress(handle));
        } catch (Throwable t) {
            throw impossible(t);
        }
    }

    @Override
    public int threadTid(long handle) {
        try {
            return (int) H.THREAD_TID.invokeExact(MemorySegment.ofAddress(handle));
        } catch (Throwable t) {
            throw impossible(t);
        }
    }

    @Override
    public long threadTotal(long handle) {
        try {
            return (long) H.THREAD_TOTAL.invokeExact(MemorySegment.ofAddress(handle));
        } catch (Throwable t) {
            throw impossible(t);
        }
    }

    @Override
    public long threadUser(long handle) {
        try {
            return (long) H.THREAD_USER.invokeExact(MemorySegment.ofAddress(handle));
        } catch (Throwable t) {
            throw impossible(t);
        }
    }

    @Override
    public int threadTimes(long handle, long[] out) {
        try {
            return (int) H.THREAD_TIMES.invokeExact(MemorySegment.ofAddress(handle), MemorySegment.ofArray(out));
        } catch (Throwable t) {
            throw impossible(t);
        }
    }

    @Override
    public long processTotal() {
        try {
            return (long) H.PROCESS_TOTAL.invokeExact(0);
        } catch (Throwable t) {
            throw impossible(t);
        }
    }

    @Override
    public long processUser() {
        try {
            return (long) H.PROCESS_USER.invokeExact(0);
        } catch (Throwable t) {
            throw impossible(t);
        }
    }

    @Override
    public int processTimes(long[] out) {
        return intoArray(out, times -> (int) H.PROCESS_TIMES.invokeExact(0, times));
    }

    @Override
    public int logStart(int ringRecords, byte[] crashFile, byte[] exitDumpPath, boolean cpuOnIntervals) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment o = arena.allocate(LOG_OPTIONS);
            o.set(JAVA_LONG, 0, LOG_OPTIONS.byteSize());
            o.set(JAVA_INT, 8, ringRecords);
            o.set(ADDRESS, 16, nativeString(arena, crashFile));
            o.set(ADDRESS, 24, nativeString(arena, exitDumpPath));
            o.set(JAVA_INT, 32, cpuOnIntervals ? 1 : 0);
            return (int) H.LOG_START.invokeExact(o);
        } catch (Throwable t) {
            throw impossible(t);
        }
    }

    @Override
    public int logStop() {
        try {
            return (int) H.LOG_STOP.invokeExact();
        } catch (Throwable t) {
            throw impossible(t);
        }
    }

    @Override
    public int logDump(byte[] path) {
        try (Arena arena = Arena.ofConfined()) {
            return (int) H.LOG_DUMP.invokeExact(nativeString(arena, path));
        } catch (Throwable t) {
            throw impossible(t);
        }
    }

    @Override
    public int logThreadName(byte[] name) {
        try (Arena arena = Arena.ofConfined()) {
            return (int) H.LOG_THREAD_NAME.invokeExact(nativeString(arena, name));
        } catch (Throwable t) {
            throw impossible(t);
        }
    }

    @Override
    public void event(int id) {
        try {
            H.EVENT.invokeExact(id);
        } catch (Throwable t) {
            throw impossible(t);
        }
    }

    @Override
    public void eventText(int id, byte[] text) {
        try {
            H.EVENT_TEXT.invokeExact(id, MemorySegment.ofArray(text));
        } catch (Throwable t) {
            throw impossible(t);
        }
    }

    @Override
    public void eventValue(int id, long value) {
        try {
            H.EVENT_VALUE.invokeExact(id, value);
        } catch (Throwable t) {
            throw impossible(t);
        }
    }

    @Override
    public void eventBegin(int id) {
        try {
            H.EVENT_BEGIN.invokeExact(id);
        } catch (Throwable t) {
            throw impossible(t);
        }
    }

    @Override
    public void eventEnd(int id) {
        try {
            H.EVENT_END.invokeExact(id);
        } catch (Throwable t) {
            throw impossible(t);
        }
    }

    @Override
    public int eventName(int id, byte[] name) {
        try (Arena arena = Arena.ofConfined()) {
            return (int) H.EVENT_NAME.invokeExact(id, nativeString(arena, name));
        } catch (Throwable t) {
            throw impossible(t);
        }
    }

    @Override
    public int logVthreadName(long vthreadId, byte[] name) {
        try (Arena arena = Arena.ofConfined()) {
            return (int) H.LOG_VTHREAD_NAME.invokeExact(vthreadId, nativeString(arena, name));
        } catch (Throwable t) {
            throw impossible(t);
        }
    }

    @Override
    public void eventMount(long vthreadId) {
        try {
            H.EVENT_MOUNT.invokeExact(vthreadId);
        } catch (Throwable t) {
            throw impossible(t);
        }
    }

    @Override
    public void eventUnmount(long vthreadId) {
        try {
            H.EVENT_UNMOUNT.invokeExact(vthreadId);
        } catch (Throwable t) {
            throw impossible(t);
        }
    }

    @Override
    public long probeBegin(int id) {
        try {
            return (long) H.PROBE_BEGIN.invokeExact(id);
        } catch (Throwable t) {
            throw impossible(t);
        }
    }

    @Override
    public void probeEnd(int id, long t0, boolean thrown) {
        try {
            H.PROBE_END.invokeExact(id, t0, thrown ? 1 : 0);
        } catch (Throwable t) {
            throw impossible(t);
        }
    }

    @Override
    public long probeBeginCpu(int id) {
        try {
            return (long) H.PROBE_BEGIN_CPU.invokeExact(id);
        } catch (Throwable t) {
            throw impossible(t);
        }
    }

    @Override
    public void probeEndCpu(int id, long t0, boolean thrown) {
        try {
            H.PROBE_END_CPU.invokeExact(id, t0, thrown ? 1 : 0);
        } catch (Throwable t) {
            throw impossible(t);
        }
    }

    @Override
    public void probeEndMeasured(int id, long t0, long ns, int measure, boolean thrown) {
        try {
            H.PROBE_END_MEASURED.invokeExact(id, t0, ns, measure, thrown ? 1 : 0);
        } catch (Throwable t) {
            throw impossible(t);
        }
    }

    /** A NUL-terminated byte[] copied to native memory; NULL for null. */
    private static MemorySegment nativeString(Arena arena, byte[] s) {
        return s == null ? MemorySegment.NULL : arena.allocateFrom(JAVA_BYTE, s);
    }

    /** A call that fills a native tt_times. */
    private interface TimesCall {
        int call(MemorySegment times) throws Throwable;
    }

    /** Runs a non-critical call on native scratch memory, then copies the split out. */
    private static int intoArray(long[] out, TimesCall call) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment times = arena.allocate(JAVA_LONG, 3);
            int rc = call.call(times);
            if (rc == 0) {
                MemorySegment.copy(times, JAVA_LONG, 0, out, 0, 3);
            }
            return rc;
        } catch (Throwable t) {
            throw impossible(t);
        }
    }
}
