package io.threadtime;

import static io.threadtime.Work.PLATFORM;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.management.ManagementFactory;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import javax.management.JMX;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

class ThreadTimeMXBeanTest {
    private static final long MS = 1_000_000;
    private final ThreadTimeMXBean bean = ThreadTimeMXBean.getInstance();

    /** /proc counts user time in whole clock ticks of 10 ms (USER_HZ is 100 on Linux). */
    private static final long PROC_TICK = 10 * MS;

    /**
     * The platform's user time (JDK 17-25: /proc, the kernel's split
     * truncated to 10 ms), read first, against ours, read after it, with
     * {@code slack} ns of CPU time used between the two reads. Both come
     * from the kernel's consistent split, whose user part never goes back
     * and never grows faster than the CPU time, so ours is at least the
     * platform's and above it by less than one /proc tick plus the slack.
     * The raw tick clock fails this under load by far (18-39 % short).
     */
    private static void assertWithinATickOf(long platform, long ours, long slack) {
        assertTrue(platform >= 0 && platform <= ours && ours < platform + PROC_TICK + slack,
                "platform " + platform + " vs threadtime " + ours + " (slack " + slack + ")");
    }

    @Test
    void currentThreadCpuTimeIsBetweenPlatformReads() {
        Work.assertBetweenPlatformReads(bean::getCurrentThreadCpuTime);
    }

    @Test
    void currentThreadUserTimeIsTheKernelsSplitWithinATick() {
        Work.burn(300 * MS);
        for (int i = 0; i < 20; i++) {
            long before = PLATFORM.getCurrentThreadCpuTime();
            long platform = PLATFORM.getCurrentThreadUserTime();
            long ours = bean.getCurrentThreadUserTime();
            long after = PLATFORM.getCurrentThreadCpuTime();
            assertWithinATickOf(platform, ours, after - before);
            assertTrue(ours <= after, ours + " > cpu " + after);
            Work.burn(5 * MS);
        }
    }

    @Test
    void aRegisteredThreadsUserTimeIsTheKernelsSplitWithinATick() throws Exception {
        try (Work.Waiter w = new Work.Waiter("mapped-user", () -> {
                ThreadTime.register();
                Work.burn(300 * MS);
            })) {
            long before = PLATFORM.getThreadCpuTime(w.id());
            long platform = PLATFORM.getThreadUserTime(w.id());
            long ours = bean.getThreadUserTime(w.id());
            long after = PLATFORM.getThreadCpuTime(w.id());
            assertWithinATickOf(platform, ours, after - before);
            assertTrue(ours <= bean.getThreadCpuTime(w.id()));
        }
    }

    /**
     * A thread read through the platform (/proc) before it maps itself and
     * through its handle after: the user time never steps back. Its own
     * /proc reads between bursts make the kernel hold back its split the way
     * a sampler's reads do, which a split scaled afresh would undercut.
     */
    @Test
    void userTimeNeverGoesBackWhenAThreadMapsItself() throws Exception {
        for (int round = 0; round < 20; round++) {
            CountDownLatch burned = new CountDownLatch(1);
            CountDownLatch map = new CountDownLatch(1);
            CountDownLatch mapped = new CountDownLatch(1);
            CountDownLatch end = new CountDownLatch(1);
            Thread t = new Thread(() -> {
                for (int i = 0; i < 30; i++) {
                    PLATFORM.getCurrentThreadUserTime();
                    Work.burn(MS);
                }
                burned.countDown();
                Work.await(map);
                ThreadTime.register();
                mapped.countDown();
                Work.await(end);
            }, "maps-late-" + round);
            t.start();
            try {
                Work.awaitBlocked(t, burned);
                assertTrue(!ThreadTime.isRegistered(t));
                long unmapped = bean.getThreadUserTime(t.getId());
                map.countDown();
                Work.awaitBlocked(t, mapped);
                long ours = bean.getThreadUserTime(t.getId());
                assertTrue(ThreadTime.isRegistered(t));
                assertTrue(ours >= unmapped, "round " + round + ": " + unmapped + " then " + ours);
                assertTrue(ours <= bean.getThreadCpuTime(t.getId()));
            } finally {
                map.countDown();
                end.countDown();
                t.join();
            }
        }
    }

    @Test
    void aRunningThreadsUserTimeNeverGoesBackNorPassesItsCpuTime() throws Exception {
        CountDownLatch registered = new CountDownLatch(1);
        AtomicBoolean stop = new AtomicBoolean();
        Thread t = new Thread(() -> {
            ThreadTime.register();
            registered.countDown();
            while (!stop.get()) {
                Work.burn(MS);
            }
        }, "running-user");
        t.start();
        try {
            Work.await(registered);
            long last = 0;
            for (int i = 0; i < 500; i++) {
                long user = bean.getThreadUserTime(t.getId());
                long cpu = bean.getThreadCpuTime(t.getId());
                assertTrue(user >= last && user <= cpu, i + ": user " + last + " then " + user + ", cpu " + cpu);
                last = user;
            }
        } finally {
            stop.set(true);
            t.join();
        }
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
            }
            assertWithinATickOf(PLATFORM.getThreadUserTime(mapped.id()), bean.getThreadUserTime(mapped.id()), 0);
            assertEquals(PLATFORM.getThreadUserTime(unmapped.id()), bean.getThreadUserTime(unmapped.id()));
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
            // self: the fast clock, up to its bound above a later real read
            assertTrue(before <= cpu[4] && cpu[4] <= after + ThreadTime.FAST_CLOCK_BOUND_NANOS, before + " <= " + cpu[4] + " <= " + after);
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

    /** Registered on request, JMX clients (JConsole, exporters) read the
     * bean's own figures under its name; unregistering removes it. */
    @Test
    void registeredMBeanServesItsFiguresToJmxClients() throws Exception {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        ObjectName name = ThreadTimeMXBean.registerMBean();
        try {
            assertEquals(ThreadTimeMXBean.OBJECT_NAME, name.toString());
            assertEquals(name, ThreadTimeMXBean.registerMBean(), "a second call keeps the registration");
            try (Work.Waiter w = new Work.Waiter("jmx-read", () -> {
                    ThreadTime.register();
                    Work.burn(20 * MS);
                })) {
                com.sun.management.ThreadMXBean proxy =
                        JMX.newMXBeanProxy(server, name, com.sun.management.ThreadMXBean.class);
                assertEquals(bean.getThreadUserTime(w.id()), proxy.getThreadUserTime(w.id()));
                assertEquals(bean.getThreadCpuTime(w.id()), proxy.getThreadCpuTime(w.id()));
                assertEquals(true, server.getAttribute(name, "ThreadCpuTimeEnabled"));
            }
        } finally {
            ThreadTimeMXBean.unregisterMBean();
        }
        assertTrue(!server.isRegistered(name));
        ThreadTimeMXBean.unregisterMBean();
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
