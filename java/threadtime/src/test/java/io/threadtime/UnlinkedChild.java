package io.threadtime;

import java.lang.reflect.Field;
import java.util.concurrent.TimeUnit;

/**
 * Run by {@link NativeListTest} on JDK 22+ with a library named and an
 * os.arch the JDK's linker refuses: reads its CPU time until the FFM backend
 * has tried to link the call and given up (bounded), then prints the last
 * read once the linker thread has ended. The warning goes to stderr.
 */
public final class UnlinkedChild {
    private UnlinkedChild() {}

    public static void main(String[] args) throws Exception {
        Field warned = Class.forName("io.threadtime.FfmBackend").getDeclaredField("warned");
        warned.setAccessible(true);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60), last = -1;
        while (!(boolean) warned.get(null) && System.nanoTime() < deadline) {
            last = ThreadTime.currentThreadCpuTime();
            Thread.sleep(1);
        }
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().equals("threadtime-ffm-link")) {
                t.join(TimeUnit.SECONDS.toMillis(60)); // it logs after it set the flag
            }
        }
        System.out.println("read " + last + " backend " + ThreadTime.backend());
    }
}
