package io.threadtime;

/**
 * The JNI backend: each method is a native in threadtime_jni.c. The FFM
 * backend extends it: what it does not link itself, and every call until its
 * handle is linked, goes through here.
 */
class JniBackend implements Backend {
    /**
     * Loads the library and checks, with its first call, that it is this
     * JAR's; then has the fast clock decided on a native thread of its own
     * ({@link #decideFastClock()}).
     */
    JniBackend() {
        NativeLibrary.load();
        String version;
        try {
            version = version();
        } catch (UnsatisfiedLinkError e) {
            throw NativeLibrary.notOurs("does not hold threadtime's JNI functions (" + e.getMessage() + ")");
        }
        NativeLibrary.checkVersion(version);
        decideFastClock();
    }

    /**
     * Starts, once per process, a native thread that makes the core's first
     * tt_self_fast_ns() call, which decides whether the fast clock can be used
     * (the cycle counter's calibration sleeps two 12.5 ms windows, then three
     * short sleeps test the kernel). Meanwhile every read is a real one, and
     * the caller's first read does not wait for that decision.
     */
    static native void decideFastClock();

    @Override
    public String name() {
        return "jni";
    }

    /** Nothing: every native is bound by the JVM at its first call. */
    @Override
    public void linkNow() {}

    @Override public native String version();
    @Override public native String strerror(long code);
    @Override public native long selfTotal();
    @Override public long selfFast() { return fastRead(); }

    /** tt_self_fast_ns. Static, like CycleCounter.read, the mounted mode's
     *  clock: the virtual-thread hooks call it through a direct handle, with
     *  no bound receiver to carry into the native call (jvmti/bench/yield.sh). */
    static native long fastRead();

    @Override
    public java.lang.invoke.MethodHandle selfFastHandle() throws ReflectiveOperationException {
        return java.lang.invoke.MethodHandles.lookup().findStatic(JniBackend.class, "fastRead",
                java.lang.invoke.MethodType.methodType(long.class));
    }

    @Override public native String fastClockName();
    @Override public native int fastClockSet(int on);
    @Override public native long selfUser();
    @Override public native long selfSystem();
    @Override public native long tidSystem(int tid);
    @Override public native long threadOpenSelf();
    @Override public native void threadClose(long handle);
    @Override public native int threadTid(long handle);
    @Override public native long threadTotal(long handle);
    @Override public native long threadUser(long handle);
    @Override public native int threadTimes(long handle, long[] out);
    @Override public native long processTotal();
    @Override public native long processUser();
    @Override public native int processTimes(long[] out);
    @Override public native int tidSched(int tid, long[] out);
    @Override public native long selfRunWait();
    @Override public native int cgroupCpu(long[] out);
    @Override public native int logStart(int ringRecords, byte[] crashFile, byte[] exitDumpPath, boolean cpuOnIntervals);
    @Override public native int logStop();
    @Override public native int logDump(byte[] path);
    @Override public native int logThreadName(byte[] name);
    @Override public native void event(int id);
    @Override public native void eventText(int id, byte[] text);
    @Override public native void eventValue(int id, long value);
    @Override public native void eventBegin(int id);
    @Override public native void eventEnd(int id);
    @Override public native int eventName(int id, byte[] name);
    @Override public native int logVthreadName(long vthreadId, byte[] name);
    @Override public native void eventMount(long vthreadId);
    @Override public native void eventUnmount(long vthreadId);
    @Override public native long probeBegin(int id);
    @Override public native void probeEnd(int id, long t0, boolean thrown);
    @Override public native long probeBeginCpu(int id);
    @Override public native void probeEndCpu(int id, long t0, boolean thrown);
    @Override public native void probeEndMeasured(int id, long t0, long ns, int measure, boolean thrown);
}
