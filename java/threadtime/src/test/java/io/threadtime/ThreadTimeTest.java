package io.threadtime;

import static io.threadtime.Work.PLATFORM;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class ThreadTimeTest {
    private static final long MS = 1_000_000;

    @Test
    void currentThreadReadsAreNonNegativeAndClocksNeverGoBack() {
        Work.burn(20 * MS);
        long cpu = ThreadTime.currentThreadCpuTime();
        long user = ThreadTime.currentThreadUserTime();
        long sys = ThreadTime.currentThreadSystemTime();
        long userRaw = ThreadTime.currentThreadUserTimeRaw();
        CpuTimes split = ThreadTime.currentThreadTimes();
        assertTrue(cpu > 0 && user >= 0 && sys >= 0 && userRaw >= 0, cpu + " " + user + " " + sys + " " + userRaw);
        Work.assertSplit(split);
        for (int i = 0; i < 2000; i++) {
            long u = ThreadTime.currentThreadUserTime();
            long s = ThreadTime.currentThreadSystemTime();
            long c = ThreadTime.currentThreadCpuTime();
            long ur = ThreadTime.currentThreadUserTimeRaw();
            // raw system time is PROF - VIRT from two reads: >= 0, but a tick
            // landing between them can make it step back (the split cannot)
            long sr = ThreadTime.currentThreadSystemTimeRaw();
            CpuTimes t = ThreadTime.currentThreadTimes();
            assertTrue(c >= cpu && u >= user && s >= sys && ur >= userRaw && sr >= 0,
                    i + ": " + c + " " + u + " " + s + " " + ur + " " + sr);
            assertTrue(u <= c, i + ": user " + u + " above cpu " + c);
            Work.assertSplit(t);
            Work.assertNotBackwards(split, t);
            cpu = c;
            user = u;
            sys = s;
            userRaw = ur;
            split = t;
        }
    }

    @Test
    void currentThreadCpuTimeIsThePlatformClock() {
        Work.assertBetweenPlatformReads(ThreadTime::currentThreadCpuTime);
    }

    @Test
    void cpuTimeGrowsWithWork() {
        long cpu = ThreadTime.currentThreadCpuTime();
        CpuTimes split = ThreadTime.currentThreadTimes();
        Work.burn(50 * MS);
        // cpu (the fast clock) may have run ahead of the kernel's clock by its bound
        assertTrue(ThreadTime.currentThreadCpuTime() - cpu >= 50 * MS - ThreadTime.FAST_CLOCK_BOUND_NANOS);
        // the split's total is the fast clock's too: the first read may have
        // run ahead by the bound
        assertTrue(ThreadTime.currentThreadTimes().totalNanos() - split.totalNanos()
                >= 50 * MS - ThreadTime.FAST_CLOCK_BOUND_NANOS);
    }

    @Test
    void readByAnotherThreadIsAtLeastTheThreadsOwnEarlierRead() throws Exception {
        AtomicLong ownCpu = new AtomicLong();
        AtomicLong ownUser = new AtomicLong();
        AtomicReference<CpuTimes> ownSplit = new AtomicReference<>();
        try (Work.Waiter w = new Work.Waiter("self-reader", () -> {
            Work.burn(30 * MS);
            ownSplit.set(ThreadTime.threadTimes(Thread.currentThread()).orElseThrow());
            ownUser.set(ThreadTime.currentThreadUserTime());
            ownCpu.set(ThreadTime.currentThreadCpuTime());
        })) {
            assertTrue(ThreadTime.isRegistered(w.thread));
            // ownCpu is the fast clock: up to its bound above a later real read
            assertTrue(ThreadTime.threadCpuTime(w.thread) + ThreadTime.FAST_CLOCK_BOUND_NANOS >= ownCpu.get());
            assertTrue(ThreadTime.threadUserTime(w.thread) >= ownUser.get());
            assertTrue(ThreadTime.threadSystemTime(w.thread) >= 0);
            CpuTimes split = ThreadTime.threadTimes(w.thread).orElseThrow();
            Work.assertSplit(split);
            assertTrue(split.totalNanos() >= ownCpu.get() - MS, split + " vs " + ownCpu);
        }
    }

    @Test
    void waitingThreadsTimesStandStill() throws Exception {
        try (Work.Waiter w = new Work.Waiter("waiter", () -> {
            ThreadTime.register();
            Work.burn(20 * MS);
        })) {
            long cpu = ThreadTime.threadCpuTime(w.thread);
            long user = ThreadTime.threadUserTime(w.thread);
            long sys = ThreadTime.threadSystemTime(w.thread);
            CpuTimes split = ThreadTime.threadTimes(w.thread).orElseThrow();
            assertTrue(cpu >= 20 * MS);
            Thread.sleep(50);
            assertEquals(cpu, ThreadTime.threadCpuTime(w.thread));
            assertEquals(user, ThreadTime.threadUserTime(w.thread));
            assertEquals(sys, ThreadTime.threadSystemTime(w.thread));
            assertEquals(split, ThreadTime.threadTimes(w.thread).orElseThrow());
        }
    }

    /** Reads a thread's split while it burns, then after it has burned and
     * until it is gone. The runner waits to exit until one read has been
     * taken after its burn, so that read holds the whole burn however late
     * the reader runs. */
    @Test
    void splitOfARunningThreadHoldsItsGuarantees() throws Exception {
        CountDownLatch registered = new CountDownLatch(1);
        CountDownLatch burned = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Thread t = new Thread(() -> {
            ThreadTime.register();
            registered.countDown();
            Work.burn(200 * MS);
            burned.countDown();
            Work.await(release);
        }, "runner");
        t.start();
        try {
            assertTrue(registered.await(60, TimeUnit.SECONDS));
            CpuTimes last = new CpuTimes(0, 0, 0), afterBurn = null;
            Optional<CpuTimes> now;
            for (;;) {
                boolean done = burned.getCount() == 0; // before the read
                if (!(now = ThreadTime.threadTimes(t)).isPresent()) {
                    break;
                }
                Work.assertSplit(now.get());
                Work.assertNotBackwards(last, now.get());
                last = now.get();
                if (done && afterBurn == null) {
                    afterBurn = last;
                    release.countDown();
                }
            }
            assertNotNull(afterBurn, "the runner was gone before it had burned");
            // 200 ms burned; the split may trail the precise clock by a tick.
            assertTrue(afterBurn.totalNanos() >= 150 * MS, afterBurn::toString);
        } finally {
            release.countDown();
            t.join();
        }
    }

    @Test
    void terminatedAndUnstartedThreadsReadMinusOne() throws Exception {
        Thread mapped = Work.dead(() -> {
            ThreadTime.register();
            Work.burn(5 * MS);
        });
        Thread unmapped = Work.dead(() -> Work.burn(5 * MS));
        Thread unstarted = new Thread(() -> { });
        for (Thread t : List.of(mapped, unmapped, unstarted)) {
            assertEquals(-1, ThreadTime.threadCpuTime(t), t::toString);
            assertEquals(-1, ThreadTime.threadUserTime(t), t::toString);
            assertEquals(-1, ThreadTime.threadSystemTime(t), t::toString);
            assertEquals(Optional.empty(), ThreadTime.threadTimes(t), t::toString);
        }
    }

    @Test
    void unmappedThreadIsReadThroughThePlatformBean() throws Exception {
        try (Work.Waiter w = new Work.Waiter("unmapped", () -> Work.burn(20 * MS))) {
            assertFalse(ThreadTime.isRegistered(w.thread));
            assertEquals(PLATFORM.getThreadCpuTime(w.id()), ThreadTime.threadCpuTime(w.thread));
            assertEquals(PLATFORM.getThreadUserTime(w.id()), ThreadTime.threadUserTime(w.thread));
            assertEquals(PLATFORM.getThreadUserTime(w.id()), ThreadTime.threadUserTimeRaw(w.thread));
            CpuTimes split = ThreadTime.threadTimes(w.thread).orElseThrow();
            Work.assertSplit(split);
            assertEquals(PLATFORM.getThreadCpuTime(w.id()), split.totalNanos());
            assertEquals(split.systemNanos(), ThreadTime.threadSystemTime(w.thread));
            assertFalse(ThreadTime.isRegistered(w.thread), "reading a thread does not map it");
        }
    }

    @Test
    void threadFactoryMapsItsThreads() throws Exception {
        CountDownLatch ran = new CountDownLatch(1);
        Thread t = ThreadTime.threadFactory(Thread::new).newThread(ran::countDown);
        assertFalse(ThreadTime.isRegistered(t));
        t.start();
        assertTrue(ran.await(60, TimeUnit.SECONDS));
        assertTrue(ThreadTime.isRegistered(t));
        t.join();
    }

    @Test
    void virtualThreadsHaveNoClock() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        AtomicLong cpu = new AtomicLong(0);
        AtomicLong user = new AtomicLong(0);
        AtomicReference<Object> registered = new AtomicReference<>();
        AtomicReference<Throwable> timesError = new AtomicReference<>();
        Thread v = Work.virtualWaiter(() -> {
            cpu.set(ThreadTime.currentThreadCpuTime());
            user.set(ThreadTime.currentThreadUserTime());
            registered.set(ThreadTime.register());
            try {
                ThreadTime.currentThreadTimes();
            } catch (Throwable e) {
                timesError.set(e);
            }
        }, release);
        assumeTrue(v != null, "virtual threads need JDK 21");
        try {
            assertEquals(-1, cpu.get());
            assertEquals(-1, user.get());
            assertEquals(false, registered.get());
            assertTrue(timesError.get() instanceof UnsupportedOperationException, String.valueOf(timesError.get()));
            assertFalse(ThreadTime.isRegistered(v));
            assertEquals(-1, ThreadTime.threadCpuTime(v));
            assertEquals(-1, ThreadTime.threadUserTime(v));
            assertEquals(Optional.empty(), ThreadTime.threadTimes(v));
        } finally {
            release.countDown();
            v.join();
        }
    }

    /** Each thread reads itself while this one reads them all; each stays
     * alive after its own reads until this one has read it at least once
     * (its reads alone may end before this thread is scheduled: 20,000 fast
     * reads take well under a millisecond). */
    @Test
    void manyThreadsReadThemselvesAndEachOther() throws Exception {
        int n = 16;
        CyclicBarrier start = new CyclicBarrier(n + 1);
        CountDownLatch allRead = new CountDownLatch(1);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Thread t = new Thread(() -> {
                try {
                    start.await();
                    CpuTimes before = ThreadTime.currentThreadTimes();
                    long own = 0;
                    for (int k = 0; k < 20_000; k++) {
                        long c = ThreadTime.currentThreadCpuTime();
                        assertTrue(c >= own);
                        own = c;
                        if (k % 1000 == 0) {
                            CpuTimes now = ThreadTime.currentThreadTimes();
                            Work.assertSplit(now);
                            Work.assertNotBackwards(before, now);
                            before = now;
                        }
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                } finally {
                    Work.await(allRead);
                }
            }, "many-" + i);
            threads.add(t);
            t.start();
        }
        start.await();
        long[] ids = threads.stream().mapToLong(Thread::getId).toArray();
        long[] seen = new long[n];
        boolean[] read = new boolean[n];
        int unread = n;
        ThreadTimeMXBean bean = ThreadTimeMXBean.getInstance();
        long deadline = System.nanoTime() + Work.DEADLINE_NS;
        try {
            while (unread > 0 && System.nanoTime() < deadline) {
                long[] now = bean.getThreadCpuTime(ids);
                for (int i = 0; i < n; i++) {
                    long direct = ThreadTime.threadCpuTime(threads.get(i));
                    if (now[i] >= 0 && direct >= 0) {
                        assertTrue(now[i] >= seen[i] && direct >= now[i], i + ": " + seen[i] + " " + now[i] + " " + direct);
                        seen[i] = direct;
                        if (!read[i]) {
                            read[i] = true;
                            unread--;
                        }
                    }
                }
            }
        } finally {
            allRead.countDown();
            for (Thread t : threads) {
                t.join();
            }
        }
        if (failure.get() != null) {
            throw new AssertionError(failure.get());
        }
        assertEquals(0, unread, "live threads never read");
    }

    @Test
    void processTimesCoverTheThreads() {
        Work.burn(20 * MS);
        long mine = ThreadTime.currentThreadCpuTime();
        long total = ThreadTime.processCpuTime();
        assertTrue(total + ThreadTime.FAST_CLOCK_BOUND_NANOS >= mine, total + " < " + mine); // mine: the fast clock
        assertTrue(ThreadTime.processUserTimeRaw() >= 0);
        long user = ThreadTime.processUserTime();
        long sys = ThreadTime.processSystemTime();
        assertTrue(user >= 0 && sys >= 0 && user + sys <= ThreadTime.processCpuTime(), user + " + " + sys);
        CpuTimes before = ThreadTime.processTimes();
        Work.assertSplit(before);
        Work.burn(10 * MS);
        CpuTimes after = ThreadTime.processTimes();
        Work.assertSplit(after);
        Work.assertNotBackwards(before, after);
        assertTrue(ThreadTime.processCpuTime() >= total);
    }

    @Test
    void identifiesItself() {
        // the multi-release JAR picks FFM from JDK 22 on
        assertEquals(Runtime.version().feature() >= 22 ? "ffm" : "jni", ThreadTime.backend());
        assertNotNull(ThreadTime.nativeVersion());
        assertEquals(NativeLibrary.version(), ThreadTime.nativeVersion(), "JAR and native core versions differ");
    }
}
