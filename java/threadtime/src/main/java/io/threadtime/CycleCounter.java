package io.threadtime;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

/**
 * The cycle counter, for the -javaagent's mounted mode: JNI here (JDK 17-21);
 * JDK 22+ loads the version under META-INF/versions/22, a critical FFM
 * downcall. Reading it is cheaper than {@code System.nanoTime()} on both
 * (jvmti/bench/clock, docs/benchmarks.md).
 */
final class CycleCounter {
    static {
        NativeLibrary.load();
    }

    private CycleCounter() {}

    /** The counter, in ticks. */
    static native long read();

    /** Its frequency if the core's calibration trusts it, else 0. */
    static native double hz();

    /** A ()J handle on {@link #read()}. */
    static MethodHandle reader() throws ReflectiveOperationException {
        return MethodHandles.lookup().findStatic(CycleCounter.class, "read", MethodType.methodType(long.class));
    }

    /** Exact mode's mount clock on JDK 17-21 (the JDK 22+ class has none):
     * the calling thread's CPU time as {@link FastClock} reads it, ns, leaving
     * the counter value read for it in the thread's slot ({@link #stampSlot()}). */
    static native long fastStamped();

    /** The address of the calling thread's slot: 8 bytes, read and written by that thread only. */
    static native long stampSlot();

    /** A ()J handle on {@link #fastStamped()}. */
    static MethodHandle stampedReader() throws ReflectiveOperationException {
        return MethodHandles.lookup().findStatic(CycleCounter.class, "fastStamped", MethodType.methodType(long.class));
    }

    /** A ()J handle on {@link #stampSlot()}. */
    static MethodHandle stampSlotReader() throws ReflectiveOperationException {
        return MethodHandles.lookup().findStatic(CycleCounter.class, "stampSlot", MethodType.methodType(long.class));
    }
}
