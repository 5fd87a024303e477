package io.threadtime;

/**
 * One way of calling the native core: JNI ({@link JniBackend}) on every JDK,
 * FFM on JDK 22+. Every method is one core call with the core's contract: a
 * {@code long} result is nanoseconds when {@code >= 0} and a negative errno
 * otherwise; an {@code int} result is 0 or a negative errno. Splits are
 * written to a {@code long[3]} as {user, system, total}.
 */
interface Backend {
    /** "jni" or "ffm". */
    String name();

    /** The core library's version string. */
    String version();

    /** Text for a code returned by any call. */
    String strerror(long code);

    /** tt_self_total_ns: precise CPU time of the calling thread. */
    long selfTotal();

    /** tt_self_fast_ns: the same clock, answered from the cycle counter
     *  while the kernel's rseq area shows no switch since the last real read. */
    long selfFast();

    /** A ()J handle that calls tt_self_fast_ns with nothing in between, for
     *  the virtual-thread hooks, which read it at every mount and unmount. */
    java.lang.invoke.MethodHandle selfFastHandle() throws ReflectiveOperationException;

    /** tt_fast_clock_name: how {@link #selfFast()} reads, e.g. "rseq+tsc" or "syscall: ...". */
    String fastClockName();

    /** tt_fast_clock_set: 1 on (where supported), 0 off; 0 or a negative errno. */
    int fastClockSet(int on);

    /** tt_self_user_raw_ns: tick-sampled user time of the calling thread. */
    long selfUser();

    /** tt_self_system_raw_ns: tick-sampled system time of the calling thread. */
    long selfSystem();

    /** tt_tid_system_raw_ns: tick-sampled system time of a thread by tid. */
    long tidSystem(int tid);

    /** tt_thread_open(0): a handle the calling thread opens on itself; its
     *  address (positive) or a negative errno. */
    long threadOpenSelf();

    /** tt_thread_close. */
    void threadClose(long handle);

    /** tt_thread_tid. */
    int threadTid(long handle);

    /** tt_thread_total_ns. */
    long threadTotal(long handle);

    /** tt_thread_user_raw_ns. */
    long threadUser(long handle);

    /** tt_thread_times. */
    int threadTimes(long handle, long[] out);

    /** tt_process_total_ns(0). */
    long processTotal();

    /** tt_process_user_raw_ns(0). */
    long processUser();

    /** tt_process_times(0). */
    int processTimes(long[] out);

    // The event log. Strings travel as NUL-terminated UTF-8 (EventLog.utf8z).

    /** tt_log_start with the first four options; null paths mean none. */
    int logStart(int ringRecords, byte[] crashFile, byte[] exitDumpPath, boolean cpuOnIntervals);

    /** tt_log_stop. */
    int logStop();

    /** tt_log_dump. */
    int logDump(byte[] path);

    /** tt_log_thread_name. */
    int logThreadName(byte[] name);

    /** tt_event. */
    void event(int id);

    /** tt_event_text; text holds at most TT_EVENT_TEXT_MAX bytes and a NUL. */
    void eventText(int id, byte[] text);

    /** tt_event_value. */
    void eventValue(int id, long value);

    /** tt_event_begin. */
    void eventBegin(int id);

    /** tt_event_end. */
    void eventEnd(int id);

    /** tt_event_name; name is NUL-terminated UTF-8. */
    int eventName(int id, byte[] name);

    /** tt_log_vthread_name; name is NUL-terminated UTF-8. */
    int logVthreadName(long vthreadId, byte[] name);

    /** tt_event_mount: the calling carrier now runs virtual thread vthreadId. */
    void eventMount(long vthreadId);

    /** tt_event_unmount. */
    void eventUnmount(long vthreadId);

    /** tt_probe_begin: a begin event; its time word, 0 while the log is not running. */
    long probeBegin(int id);

    /** tt_probe_end. */
    void probeEnd(int id, long t0, boolean thrown);

    /** tt_probe_begin_cpu. */
    long probeBeginCpu(int id);

    /** tt_probe_end_cpu. */
    void probeEndCpu(int id, long t0, boolean thrown);

    /** tt_probe_end_measured's measures: the caller's own CPU, its time mounted. */
    int MEASURE_CPU = 1, MEASURE_MOUNTED = 2;

    /**
     * tt_probe_end_measured: ends a {@link #probeBegin} with the figure the
     * caller measured on its own account across the call (ns; negative: none).
     */
    void probeEndMeasured(int id, long t0, long ns, int measure, boolean thrown);
}
