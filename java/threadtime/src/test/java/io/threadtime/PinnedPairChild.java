package io.threadtime;

import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Run by SchedTest in a child JVM pinned to one CPU (taskset): two threads
 * released together, each burning 100 ms of its own CPU (the JDK bean's
 * clock). Prints per thread, in the order they finished, "cpu WAIT_SCHED
 * WAIT_ALONE": its CPU over the race and its run-queue wait over it, from
 * {@link ThreadTime#currentThreadSched()} and from
 * {@link ThreadTime#currentThreadRunWait()}.
 */
public final class PinnedPairChild {
    private PinnedPairChild() {}

    public static void main(String[] args) throws Exception {
        CyclicBarrier go = new CyclicBarrier(2);
        AtomicInteger finished = new AtomicInteger();
        String[] lines = new String[2];
        Thread[] t = new Thread[2];
        for (int i = 0; i < 2; i++) {
            t[i] = new Thread(() -> {
                try {
                    // Read before the barrier: the wait for the CPU after the release falls inside.
                    Sched s0 = ThreadTime.currentThreadSched();
                    long a0 = ThreadTime.currentThreadRunWait();
                    long c0 = Work.PLATFORM.getCurrentThreadCpuTime();
                    go.await();
                    Work.burn(100_000_000);
                    long c1 = Work.PLATFORM.getCurrentThreadCpuTime();
                    int order = finished.getAndIncrement();
                    long a1 = ThreadTime.currentThreadRunWait();
                    Sched s1 = ThreadTime.currentThreadSched();
                    lines[order] = (c1 - c0) + " " + (s1.runWaitNanos() - s0.runWaitNanos()) + " " + (a1 - a0);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            t[i].start();
        }
        for (Thread x : t) {
            x.join();
        }
        System.out.println(lines[0]);
        System.out.println(lines[1]);
    }
}
