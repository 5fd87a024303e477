package io.threadtime;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * One way of calling the native core: JNI ({@link JniBackend}) on every JDK,
 * FFM on JDK 22+. Every method is one core call with the core's contract: a
 * {@code long} result is nanoseconds when {@code >= 0} and a negative errno
 * otherwise; an {@code int} result is 0 or a negative errno. Splits are
 * written to a {@code long[3]} as {user, system, total}.
 * <p>
 * This interface is the one list of the native calls: each method that calls
 * the core says which function, as its header declares it, in {@link Calls}.
 * The FFM backend links its handles from those declarations, and
 * NativeListTest holds the JNI natives, their C functions in
 * threadtime_jni.c and the headers to the same list.
 */
interface Backend {
    /** How the FFM backend calls a function. */
    enum Ffm {
        /** Through JNI, as the JNI backend does: calls made once or rarely,
         *  that allocate, block, touch a file or return a C string, where
         *  FFM's downcall would save nothing worth a handle linked at start. */
        JNI,
        /** A critical downcall: no thread-state transition, which is most of
         *  an FFM call's cost. Only for calls that are short and never block
         *  (one clock read, a few stores into the thread's ring): a critical
         *  call holds off the garbage collector while it runs. */
        CRITICAL,
        /** Critical, and Java arrays are passed in place (heap access). */
        CRITICAL_HEAP
    }

    /**
     * The core function a method calls: its declaration in
     * include/threadtime/, without TT_API and the semicolon. The method's
     * arguments are the function's last ones; any before them are 0 (pid 0:
     * this process; tid 0: the calling thread).
     */
    @Retention(RetentionPolicy.RUNTIME)
    @Target(ElementType.METHOD)
    @interface Calls {
        String value();

        Ffm ffm() default Ffm.JNI;

        /** The JNI native's name where it is not the method's own. */
        String jni() default "";
    }

    /** "jni" or "ffm". */
    String name();

    /** Links now, on the calling thread, whatever this backend would otherwise link at a call's first use:
     *  the -javaagent does it before its virtual-thread hooks go in, which must define nothing inside a mount. */
    void linkNow();

    /** The core library's version string. */
    @Calls("const char *tt_version(void)")
    String version();

    /** Text for a code returned by any call. */
    @Calls("const char *tt_strerror(int64_t code)")
    String strerror(long code);

    /** Precise CPU time of the calling thread. */
    @Calls(value = "int64_t tt_self_total_ns(void)", ffm = Ffm.CRITICAL)
    long selfTotal();

    /** The same clock, answered from the cycle counter while the kernel's
     *  rseq area shows no switch since the last real read. The cheapest call
     *  there is, so the transition would be most of it. */
    @Calls(value = "int64_t tt_self_fast_ns(void)", ffm = Ffm.CRITICAL, jni = "fastRead")
    long selfFast();

    /** A ()J handle that calls tt_self_fast_ns with nothing in between, for
     *  the virtual-thread hooks, which read it at every mount and unmount. */
    java.lang.invoke.MethodHandle selfFastHandle() throws ReflectiveOperationException;

    /** How {@link #selfFast()} reads, e.g. "rseq+tsc" or "syscall: ...". */
    @Calls("const char *tt_fast_clock_name(void)")
    String fastClockName();

    /** 1 on (where supported), 0 off; 0 or a negative errno. */
    @Calls("int tt_fast_clock_set(int on)")
    int fastClockSet(int on);

    /** Tick-sampled user time of the calling thread. */
    @Calls(value = "int64_t tt_self_user_raw_ns(void)", ffm = Ffm.CRITICAL)
    long selfUser();

    /** Tick-sampled system time of the calling thread. */
    @Calls(value = "int64_t tt_self_system_raw_ns(void)", ffm = Ffm.CRITICAL)
    long selfSystem();

    /** Tick-sampled system time of a thread by tid. */
    @Calls(value = "int64_t tt_tid_system_raw_ns(pid_t tid)", ffm = Ffm.CRITICAL)
    long tidSystem(int tid);

    /** tt_thread_open(0): a handle the calling thread opens on itself; its
     *  address (positive) or a negative errno. */
    @Calls("int tt_thread_open(pid_t tid, tt_thread **out)")
    long threadOpenSelf();

    @Calls("void tt_thread_close(tt_thread *h)")
    void threadClose(long handle);

    @Calls("pid_t tt_thread_tid(const tt_thread *h)")
    int threadTid(long handle);

    @Calls(value = "int64_t tt_thread_total_ns(tt_thread *h)", ffm = Ffm.CRITICAL)
    long threadTotal(long handle);

    @Calls(value = "int64_t tt_thread_user_raw_ns(tt_thread *h)", ffm = Ffm.CRITICAL)
    long threadUser(long handle);

    /** One to three clock reads and a few stores, no lock (a /proc read only
     *  where a sandbox refuses CPU clockids). */
    @Calls(value = "int tt_thread_times(tt_thread *h, tt_times *out)", ffm = Ffm.CRITICAL_HEAP)
    int threadTimes(long handle, long[] out);

    /** tt_process_total_ns(0). */
    @Calls(value = "int64_t tt_process_total_ns(pid_t pid)", ffm = Ffm.CRITICAL)
    long processTotal();

    /** tt_process_user_raw_ns(0). */
    @Calls(value = "int64_t tt_process_user_raw_ns(pid_t pid)", ffm = Ffm.CRITICAL)
    long processUser();

    /** tt_process_times(0). */
    @Calls("int tt_process_times(pid_t pid, tt_times *out)")
    int processTimes(long[] out);

    // Where the time went besides the CPU (sched.h).

    /** A thread's scheduler accounts into a {@code long[5]}: {on CPU, run-queue
     *  wait, timeslices, voluntary switches, involuntary switches}; tid 0 is the
     *  calling thread (a pread of its kept descriptor, a getrusage), another
     *  tid two /proc files. */
    @Calls("int tt_tid_sched(pid_t tid, tt_sched *out)")
    int tidSched(int tid, long[] out);

    /** The calling thread's run-queue wait alone: a figure kept while the
     *  thread stays on its CPU (the fast clock's run of anchors), else one pread. Critical: short, and never blocks (a
     *  thread's first call also opens its schedstat file, ~40 us once). */
    @Calls(value = "int64_t tt_self_run_wait_ns(void)", ffm = Ffm.CRITICAL)
    long selfRunWait();

    /** The process cgroup's CPU figures into a {@code long[6]}: {version,
     *  periods, throttled periods, throttled ns, quota us, period us}. */
    @Calls("int tt_cgroup_cpu_read(tt_cgroup_cpu *out)")
    int cgroupCpu(long[] out);

    // The event log. Strings travel as NUL-terminated UTF-8 (EventLog.utf8z).

    /** tt_log_start with the first four options; null paths mean none. */
    @Calls("int tt_log_start(const tt_log_options *opts)")
    int logStart(int ringRecords, byte[] crashFile, byte[] exitDumpPath, boolean cpuOnIntervals);

    @Calls("int tt_log_stop(void)")
    int logStop();

    @Calls("int tt_log_dump(const char *path)")
    int logDump(byte[] path);

    @Calls("int tt_log_thread_name(const char *name)")
    int logThreadName(byte[] name);

    @Calls(value = "void tt_event(uint32_t id)", ffm = Ffm.CRITICAL)
    void event(int id);

    /** text holds at most TT_EVENT_TEXT_MAX bytes and a NUL. */
    @Calls(value = "void tt_event_text(uint32_t id, const char *text)", ffm = Ffm.CRITICAL_HEAP)
    void eventText(int id, byte[] text);

    @Calls(value = "void tt_event_value(uint32_t id, uint64_t value)", ffm = Ffm.CRITICAL)
    void eventValue(int id, long value);

    @Calls(value = "void tt_event_begin(uint32_t id)", ffm = Ffm.CRITICAL)
    void eventBegin(int id);

    @Calls(value = "void tt_event_end(uint32_t id)", ffm = Ffm.CRITICAL)
    void eventEnd(int id);

    /** name is NUL-terminated UTF-8; may lock and allocate. */
    @Calls("int tt_event_name(uint32_t id, const char *name)")
    int eventName(int id, byte[] name);

    /** name is NUL-terminated UTF-8. */
    @Calls("int tt_log_vthread_name(uint64_t vthread_id, const char *name)")
    int logVthreadName(long vthreadId, byte[] name);

    /** The calling carrier now runs virtual thread vthreadId. */
    @Calls(value = "void tt_event_mount(uint64_t vthread_id)", ffm = Ffm.CRITICAL)
    void eventMount(long vthreadId);

    @Calls(value = "void tt_event_unmount(uint64_t vthread_id)", ffm = Ffm.CRITICAL)
    void eventUnmount(long vthreadId);

    /** A begin event; its time word, 0 while the log is not running. */
    @Calls(value = "uint64_t tt_probe_begin(uint32_t id)", ffm = Ffm.CRITICAL)
    long probeBegin(int id);

    @Calls(value = "void tt_probe_end(uint32_t id, uint64_t t0, int thrown)", ffm = Ffm.CRITICAL)
    void probeEnd(int id, long t0, boolean thrown);

    /** Three clock reads (~1 us): still short and never blocking. */
    @Calls(value = "uint64_t tt_probe_begin_cpu(uint32_t id)", ffm = Ffm.CRITICAL)
    long probeBeginCpu(int id);

    @Calls(value = "void tt_probe_end_cpu(uint32_t id, uint64_t t0, int thrown)", ffm = Ffm.CRITICAL)
    void probeEndCpu(int id, long t0, boolean thrown);

    /** tt_probe_end_measured's measures: the caller's own CPU, its time mounted. */
    int MEASURE_CPU = 1, MEASURE_MOUNTED = 2;

    /**
     * Ends a {@link #probeBegin} with the figure the caller measured on its
     * own account across the call (ns; negative: none). One counter read and
     * a few adds, as tt_probe_end.
     */
    @Calls(value = "void tt_probe_end_measured(uint32_t id, uint64_t t0, int64_t ns, tt_probe_measure measure, int thrown)",
            ffm = Ffm.CRITICAL)
    void probeEndMeasured(int id, long t0, long ns, int measure, boolean thrown);
}
