package io.threadtime;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/** What the tests share: CPU work measured in CPU time, waiting threads. */
final class Work {
    static final com.sun.management.ThreadMXBean PLATFORM =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    /** Upper bound on any wait, so a broken build fails instead of hanging. */
    static final long DEADLINE_NS = TimeUnit.SECONDS.toNanos(60);

    private static volatile long sink;

    private Work() {}

    /** Spins until the calling thread has used at least ns more CPU time. */
    static void burn(long ns) {
        long start = PLATFORM.getCurrentThreadCpuTime();
        long wallEnd = System.nanoTime() + DEADLINE_NS;
        long x = sink;
        while (PLATFORM.getCurrentThreadCpuTime() - start < ns) {
            for (int i = 0; i < 10_000; i++) {
                x = x * 6364136223846793005L + 1442695040888963407L;
            }
            if (System.nanoTime() > wallEnd) {
                fail("could not get " + ns + " ns of CPU time before the deadline");
            }
        }
        sink = x;
    }

    /** A started thread that runs before, then blocks until the returned latch opens. */
    static final class Waiter implements AutoCloseable {
        final Thread thread;
        final CountDownLatch release = new CountDownLatch(1);

        /** The thread's /proc/self/task entry, which it names itself. */
        private volatile Path task;

        /** Returns once the thread sleeps in the kernel: its CPU clock stands
         * still from then on, so two reads of it agree however the threads are
         * scheduled. Java says WAITING as park begins, some code before the
         * thread sleeps, and until then that code still adds to its clock. */
        Waiter(String name, Runnable before) throws InterruptedException {
            CountDownLatch ready = new CountDownLatch(1);
            thread = new Thread(runThenWait(() -> {
                before.run();
                task = ownTask();
            }, ready, release), name);
            thread.start();
            awaitBlocked(thread, ready);
            long wallEnd = System.nanoTime() + DEADLINE_NS;
            while (kernelState(task) != 'S') {
                if (System.nanoTime() > wallEnd) {
                    fail(name + " never went to sleep in the kernel (" + task + ")");
                }
                Thread.onSpinWait();
            }
        }

        long id() {
            return thread.getId();
        }

        @Override
        public void close() throws InterruptedException {
            release.countDown();
            thread.join();
        }
    }

    /** Waits for a latch, at most the deadline; interrupts are kept and end the wait. */
    static void await(CountDownLatch latch) {
        try {
            assertTrue(latch.await(DEADLINE_NS, TimeUnit.NANOSECONDS), "latch never opened");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            fail("interrupted");
        }
    }

    /** The calling thread's /proc/PID/task/TID directory (/proc/thread-self names it). */
    static Path ownTask() {
        try {
            return Paths.get("/proc").resolve(Files.readSymbolicLink(Paths.get("/proc/thread-self")));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The kernel's state letter for a task (R, S, D, ...), from its stat line. */
    private static char kernelState(Path task) {
        try {
            String stat = new String(Files.readAllBytes(task.resolve("stat")), StandardCharsets.US_ASCII);
            return stat.charAt(stat.lastIndexOf(')') + 2); // the name in parentheses may hold anything
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Waits until a thread has opened the latch and then blocked (waiting, with or without a timeout). */
    static void awaitBlocked(Thread t, CountDownLatch latch) {
        await(latch);
        long wallEnd = System.nanoTime() + DEADLINE_NS;
        while (t.getState() != Thread.State.WAITING && t.getState() != Thread.State.TIMED_WAITING) {
            if (System.nanoTime() > wallEnd) {
                fail(t.getName() + " never blocked");
            }
            Thread.onSpinWait();
        }
    }

    /** Runs task, opens ready, then blocks until release opens. */
    private static Runnable runThenWait(Runnable task, CountDownLatch ready, CountDownLatch release) {
        return () -> {
            task.run();
            ready.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        };
    }

    /** Asserts that a current-thread CPU time read falls between two platform
     * reads (the later one plus {@link ThreadTime#FAST_CLOCK_BOUND_NANOS}). */
    static void assertBetweenPlatformReads(LongSupplier currentThreadCpuTime) {
        burn(10_000_000);
        for (int i = 0; i < 100; i++) {
            long before = PLATFORM.getCurrentThreadCpuTime();
            long ours = currentThreadCpuTime.getAsLong();
            long after = PLATFORM.getCurrentThreadCpuTime();
            assertTrue(before <= ours && ours <= after + ThreadTime.FAST_CLOCK_BOUND_NANOS, before + " <= " + ours + " <= " + after);
        }
    }

    /** A thread that has run and terminated. */
    static Thread dead(Runnable task) throws InterruptedException {
        Thread t = new Thread(task, "dead");
        t.start();
        t.join();
        return t;
    }

    static void assertSplit(CpuTimes t) {
        assertTrue(t.userNanos() >= 0 && t.systemNanos() >= 0, t::toString);
        assertTrue(t.userNanos() + t.systemNanos() == t.totalNanos(), t::toString);
        assertTrue(t.userNanos() <= t.totalNanos(), t::toString);
    }

    static void assertNotBackwards(CpuTimes before, CpuTimes after) {
        assertTrue(after.userNanos() >= before.userNanos(), () -> before + " then " + after);
        assertTrue(after.systemNanos() >= before.systemNanos(), () -> before + " then " + after);
        assertTrue(after.totalNanos() >= before.totalNanos(), () -> before + " then " + after);
    }

    /** Runs task on a new virtual thread and returns it blocked, or null before JDK 21. */
    static Thread virtualWaiter(Runnable task, CountDownLatch release) throws Exception {
        if (Runtime.version().feature() < 21) {
            return null;
        }
        CountDownLatch ready = new CountDownLatch(1);
        Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
        Thread t = (Thread) Class.forName("java.lang.Thread$Builder").getMethod("start", Runnable.class)
                .invoke(builder, runThenWait(task, ready, release));
        assertTrue(ready.await(60, TimeUnit.SECONDS));
        return t;
    }
}
