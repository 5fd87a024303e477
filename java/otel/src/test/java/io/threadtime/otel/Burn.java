package io.threadtime.otel;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * CPU burners for the tests (here and in threadtime-micrometer's, through
 * this module's test JAR). What they burn is measured with the platform
 * bean's clock, not with threadtime.
 */
public final class Burn {
    private static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();
    private static volatile long sink;

    private Burn() {}

    /** Spins until this platform thread has spent {@code ns} more CPU; what it spent. */
    public static long burn(long ns) {
        long start = MX.getCurrentThreadCpuTime(), now = start, x = sink;
        while (now - start < ns) {
            for (int i = 0; i < 10_000; i++) {
                x = x * 6364136223846793005L + 1442695040888963407L;
            }
            now = MX.getCurrentThreadCpuTime();
        }
        sink = x;
        return now - start;
    }

    /** A named platform thread that burns, then stays alive until {@link #close()}. */
    public static final class Worker implements AutoCloseable {
        private final CountDownLatch burned = new CountDownLatch(1);
        private final CountDownLatch release = new CountDownLatch(1);
        private final Thread thread;
        private volatile long spent;
        private volatile int tid;

        public Worker(String name, long ns) {
            thread = new Thread(() -> {
                spent = burn(ns);
                tid = io.threadtime.KernelFiles.currentTid();
                burned.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, name);
            thread.start();
        }

        /** Waits (bounded) for the burn; the CPU ns it took. */
        public long awaitBurned() throws InterruptedException {
            if (!burned.await(60, TimeUnit.SECONDS)) {
                throw new AssertionError(thread.getName() + " did not burn within 60 s");
            }
            return spent;
        }

        /** Waits for the burn, then until the thread is blocked (its schedstat stops moving); its native id. */
        public int awaitBlocked() throws InterruptedException {
            awaitBurned();
            io.threadtime.KernelFiles.awaitBlocked(tid);
            return tid;
        }

        /** Its native id, once {@link #awaitBurned()} returned. */
        public int tid() {
            return tid;
        }

        public Thread thread() {
            return thread;
        }

        /** Lets the thread end, and waits for it. */
        @Override
        public void close() throws InterruptedException {
            release.countDown();
            thread.join();
        }
    }
}
