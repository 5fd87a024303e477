package io.threadtime;

import java.lang.reflect.Field;
import java.util.concurrent.TimeUnit;

/**
 * Run by {@link NativeListTest} in a fresh JVM on JDK 22+: reads its CPU time
 * before the FFM backend has linked the fast clock's handle (the first call
 * starts that link on a thread of its own), waits until it is linked, reads
 * again, and prints "linked" if the reads went up across the switch.
 */
public final class LinkChild {
    private LinkChild() {}

    public static void main(String[] args) throws Exception {
        long first = ThreadTime.currentThreadCpuTime();
        Class<?> ffm = Class.forName("io.threadtime.FfmBackend");
        Field index = ffm.getDeclaredField("SELF_FAST"), readies = ffm.getDeclaredField("READY");
        index.setAccessible(true);
        readies.setAccessible(true);
        int selfFast = index.getInt(null);
        boolean[] ready = (boolean[]) readies.get(null);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        long last = first;
        while (!ready[selfFast] && System.nanoTime() < deadline) {
            long now = ThreadTime.currentThreadCpuTime();
            if (now < last) {
                throw new AssertionError("went back: " + now + " < " + last);
            }
            last = now;
            Thread.sleep(1);
        }
        long after = ThreadTime.currentThreadCpuTime();
        System.out.println("backend " + ThreadTime.backend() + ", first " + first + ", after " + after);
        if (ready[selfFast] && first > 0 && after >= last) {
            System.out.println("linked");
        }
    }
}
