package io.threadtime;

import static io.threadtime.Work.PLATFORM;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Exact mode's mount clock on JDK 17-21 ({@code CycleCounter.fastStamped}): the calling
 * thread's CPU time as the fast clock reads it, leaving the counter value it
 * read in the thread's slot, which the -javaagent's mount loads as its wall
 * stamp. The slot's value must be a counter value read during that very call
 * on that thread, whichever path answered (the fast one, a re-arm, or a
 * system call with the fast clock off): it lies between two counter reads
 * made around the call, and the CPU figure between the JDK's reads of the
 * same clock around it.
 */
class StampedClockTest {
    private static final int READS = 20_000;

    @Test
    void theSlotHoldsTheCounterReadDuringTheCall() throws Exception {
        assumeTrue(AgentAccess.STAMPED_CLOCK, "JDK 22+: exact mode's mount reads the counter in a call of its own");
        assumeTrue(CycleCounter.hz() > 0, "the cycle counter is not trusted here: exact mode does not stamp from it");
        boolean wasOn = !ThreadTime.currentThreadCpuClock().startsWith("syscall");
        try {
            for (boolean on : new boolean[] {true, false}) {
                FastClock.set(on);
                check(on ? "fast clock on" : "fast clock off");
            }
        } finally {
            FastClock.set(wasOn);
        }
    }

    /** Each carrier has its own slot: another thread's calls leave this one's alone. */
    @Test
    void eachThreadHasItsOwnSlot() throws Exception {
        assumeTrue(AgentAccess.STAMPED_CLOCK, "JDK 22+: exact mode's mount reads the counter in a call of its own");
        assumeTrue(CycleCounter.hz() > 0, "the cycle counter is not trusted here");
        long mine = CycleCounter.stampSlot();
        CycleCounter.fastStamped();
        long before = load(mine);
        AtomicLong other = new AtomicLong();
        Thread t = new Thread(() -> {
            other.set(CycleCounter.stampSlot());
            for (int i = 0; i < 1000; i++) {
                CycleCounter.fastStamped();
            }
        });
        t.start();
        t.join();
        assertTrue(other.get() != mine, "two threads share the slot at " + mine);
        assertEquals(before, load(mine), "another thread's calls changed this thread's slot");
    }

    private static void check(String what) throws Exception {
        long slot = CycleCounter.stampSlot();
        for (int i = 0; i < READS; i++) {
            long jdkBefore = PLATFORM.getCurrentThreadCpuTime();
            long c0 = CycleCounter.read();
            long ns = CycleCounter.fastStamped();
            long c1 = CycleCounter.read();
            long stamp = load(slot);
            long jdkAfter = PLATFORM.getCurrentThreadCpuTime();
            assertTrue(Long.compareUnsigned(c0, stamp) <= 0 && Long.compareUnsigned(stamp, c1) <= 0,
                    what + ", read " + i + ": the slot holds " + stamp + ", not a counter value between " + c0
                            + " and " + c1);
            assertTrue(ns >= jdkBefore && ns <= jdkAfter + ThreadTime.FAST_CLOCK_BOUND_NANOS,
                    what + ", read " + i + ": " + ns + " ns outside the JDK's " + jdkBefore + " .. " + jdkAfter);
        }
    }

    /** 8 bytes at {@code address}, read outside the code under test (sun.misc.Unsafe). */
    private static long load(long address) throws Exception {
        Class<?> unsafe = Class.forName("sun.misc.Unsafe");
        Field f = unsafe.getDeclaredField("theUnsafe");
        f.setAccessible(true);
        Method getLong = unsafe.getMethod("getLong", long.class);
        return (long) getLong.invoke(f.get(null), address);
    }
}
