package io.threadtime;

import static io.threadtime.Work.PLATFORM;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

class ThreadTimeMXBeanTest {
    private static final long MS = 1_000_000;
    private final ThreadTimeMXBean bean = ThreadTimeMXBean.getInstance();

    /**
     * Raw tick-sampled user time against /proc's scaled figure: both count
     * the same ticks (4 ms here) and /proc rounds to 10 ms, so after enough
     * work they agree within a few ticks.
     */
    private static void assertUserTimeClose(long platform, long ours) {
        long slack = Math.max(100 * MS, platform / 4);
        assertTrue(Math.abs(platform - ours) <= slack, "platform " + platform + " vs threadtime " + ours);
    }

    @Test
    void currentThreadCpuTimeIsBetweenPlatformReads() {
        Work.assertBetweenPlatformReads(bean::getCurrentThreadCpuTime);
    }

    @Test
    void currentThreadUserTimeAgreesWithThePlatform() {
        Work.burn(300 * MS);
        assertUserTimeClose(PLATFORM.getCurrentThreadUserTime(), bean.getCurrentThreadUserTime());
    }

    @Test
    void byIdAgreesWithThePlatformForMappedAndUnmappedThreads() throws Exception {
        try (Work.Waiter mapped = new Work.Waiter("mapped", () -> {
                ThreadTime.register();
                Work.burn(300 * MS);
            });
             Work.Waiter unmapped = new Work.Waiter("unmapped", () -> Work.burn(20 * MS))) {
            assertTrue(ThreadTime.isRegistered(mapped.thread));
            for (Work.Waiter w : new Work.Waiter[] {mapped, unmapped}) {
                assertEquals(PLATFORM.getThreadCpuTime(w.id()), bean.getThreadCpuTime(w.id()));
                assertUserTimeClose(PLATFORM.getThreadUserTime(w.id()), bean.getThreadUserTime(w.id()));
            }
            Thread dead = Work.dead(ThreadTime::register);
            long self = Thread.currentThread().getId();
            long[] ids = {mapped.id(), unmapped.id(), dead.getId(), Long.MAX_VALUE, self, mapped.id()};
            long before = PLATFORM.getCurrentThreadCpuTime();
            long[] cpu = bean.getThreadCpuTime(ids);
            long after = PLATFORM.getCurrentThreadCpuTime();
            long[] platform = PLATFORM.getThreadCpuTime(ids);
            assertEquals(platform[0], cpu[0]);
            assertEquals(platform[1], cpu[1]);
            assertEquals(-1, cpu[2]);
            assertEquals(-1, cpu[3]);
            assertTrue(before <= cpu[4] && cpu[4] <= after, before + " <= " + cpu[4] + " <= " + after);
            assertEquals(cpu[0], cpu[5]);
            long[] user = bean.getThreadUserTime(ids);
            assertEquals(-1, user[2]);
            assertEquals(-1, user[3]);
            assertEquals(user[0], user[5]);
            assertTrue(user[4] >= 0);
        }
    }

    @Test
    void terminatedAndUnknownIdsReadMinusOneLikeThePlatform() throws Exception {
        Thread mapped = Work.dead(ThreadTime::register);
        Thread unmapped = Work.dead(() -> { });
        for (long id : new long[] {mapped.getId(), unmapped.getId(), Long.MAX_VALUE}) {
            assertEquals(-1, PLATFORM.getThreadCpuTime(id));
            assertEquals(-1, bean.getThreadCpuTime(id));
            assertEquals(-1, bean.getThreadUserTime(id));
        }
    }

    @Test
    void disabledMeasurementReadsMinusOneButStillChecksArguments() throws Exception {
        try (Work.Waiter mapped = new Work.Waiter("mapped-disabled", ThreadTime::register)) {
            bean.setThreadCpuTimeEnabled(false);
            try {
                assertEquals(false, PLATFORM.isThreadCpuTimeEnabled(), "the switch is the platform's");
                assertEquals(-1, bean.getCurrentThreadCpuTime());
                assertEquals(-1, bean.getCurrentThreadUserTime());
                assertEquals(-1, bean.getThreadCpuTime(mapped.id()));
                assertEquals(-1, bean.getThreadUserTime(mapped.id()));
                long[] ids = {mapped.id(), Thread.currentThread().getId()};
                assertArrayEquals(new long[] {-1, -1}, bean.getThreadCpuTime(ids));
                assertArrayEquals(new long[] {-1, -1}, bean.getThreadUserTime(ids));
                assertThrows(IllegalArgumentException.class, () -> bean.getThreadCpuTime(0));
                assertThrows(IllegalArgumentException.class, () -> bean.getThreadUserTime(new long[] {1, -5}));
            } finally {
                bean.setThreadCpuTimeEnabled(true);
            }
            assertTrue(bean.getThreadCpuTime(mapped.id()) >= 0);
        }
    }

    @Test
    void badArgumentsThrowWhatThePlatformThrows() {
        assertSameThrow(() -> PLATFORM.getThreadCpuTime(0), () -> bean.getThreadCpuTime(0));
        assertSameThrow(() -> PLATFORM.getThreadUserTime(-1), () -> bean.getThreadUserTime(-1));
        assertSameThrow(() -> PLATFORM.getThreadCpuTime(new long[] {1, 0}), () -> bean.getThreadCpuTime(new long[] {1, 0}));
        assertSameThrow(() -> PLATFORM.getThreadUserTime(new long[] {-3}), () -> bean.getThreadUserTime(new long[] {-3}));
        assertSameThrow(() -> PLATFORM.getThreadCpuTime((long[]) null), () -> bean.getThreadCpuTime((long[]) null));
        assertSameThrow(() -> PLATFORM.getThreadUserTime((long[]) null), () -> bean.getThreadUserTime((long[]) null));
    }

    private static void assertSameThrow(Executable platform, Executable ours) {
        Throwable expected = assertThrows(Throwable.class, platform);
        Throwable actual = assertThrows(Throwable.class, ours);
        assertEquals(expected.getClass(), actual.getClass());
        assertEquals(expected.getMessage(), actual.getMessage());
    }

    @Test
    void virtualThreadsReadMinusOneLikeThePlatform() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        AtomicLong ownCpu = new AtomicLong(0);
        AtomicLong ownUser = new AtomicLong(0);
        AtomicLong platformOwnCpu = new AtomicLong(0);
        Thread v = Work.virtualWaiter(() -> {
            ownCpu.set(bean.getCurrentThreadCpuTime());
            ownUser.set(bean.getCurrentThreadUserTime());
            platformOwnCpu.set(PLATFORM.getCurrentThreadCpuTime());
        }, release);
        assumeTrue(v != null, "virtual threads need JDK 21");
        try {
            assertEquals(platformOwnCpu.get(), ownCpu.get());
            assertEquals(-1, ownCpu.get());
            assertEquals(-1, ownUser.get());
            assertEquals(PLATFORM.getThreadCpuTime(v.getId()), bean.getThreadCpuTime(v.getId()));
            assertEquals(-1, bean.getThreadCpuTime(v.getId()));
            assertEquals(-1, bean.getThreadUserTime(v.getId()));
            assertArrayEquals(new long[] {-1}, bean.getThreadCpuTime(new long[] {v.getId()}));
        } finally {
            release.countDown();
            v.join();
        }
    }

    @Test
    void everythingElseIsThePlatformBeans() throws Exception {
        assertEquals(PLATFORM.getObjectName(), bean.getObjectName());
        assertEquals(PLATFORM.isThreadCpuTimeSupported(), bean.isThreadCpuTimeSupported());
        assertEquals(PLATFORM.isThreadAllocatedMemorySupported(), bean.isThreadAllocatedMemorySupported());
        try (Work.Waiter w = new Work.Waiter("named-for-info", () -> { })) {
            assertEquals("named-for-info", bean.getThreadInfo(w.id()).getThreadName());
            assertEquals(Thread.State.WAITING, bean.getThreadInfo(w.id()).getThreadState());
            assertEquals(PLATFORM.getThreadAllocatedBytes(w.id()), bean.getThreadAllocatedBytes(w.id()));
        }
        boolean platformHasTotal = Arrays.stream(com.sun.management.ThreadMXBean.class.getMethods())
                .anyMatch(m -> m.getName().equals("getTotalThreadAllocatedBytes"));
        if (platformHasTotal) {
            assertTrue(bean.getTotalThreadAllocatedBytes() > 0);
        } else {
            assertThrows(UnsupportedOperationException.class, bean::getTotalThreadAllocatedBytes);
        }
    }
}
