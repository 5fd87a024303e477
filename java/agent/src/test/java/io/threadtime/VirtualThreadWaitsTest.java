package io.threadtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.threadtime.agent.ThreadTimeAgent;
import java.lang.reflect.Method;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Where a virtual thread's time off a CPU went, as the -javaagent's hooks
 * stamp it, against physics read outside the code under test
 * ({@link VirtualThreadWaitsChild}, one carrier): System.nanoTime() around
 * a sleep, the carriers' own CPU clocks. No timing outcome is asserted:
 * only bounds that hold however the threads were scheduled.
 */
class VirtualThreadWaitsTest {
    private static final int FEATURE = Runtime.version().feature();
    private static final long SLEEP_NS = VirtualThreadWaitsChild.SLEEP_MS * 1_000_000;

    private static ChildJvm child(String options) throws Exception {
        String jar = Path.of(ThreadTimeAgent.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
        return ChildJvm.run(null, List.of(ChildJvm.GRANT, "-Djdk.virtualThreadScheduler.parallelism=1",
                "--add-opens=java.base/java.lang=ALL-UNNAMED",
                "-javaagent:" + jar + "=" + options), VirtualThreadWaitsChild.class.getName());
    }

    private static long figure(ChildJvm c, String key) {
        return Long.parseLong(c.value(key));
    }

    /**
     * N burners, runnable from before the first runs until each ends, on one
     * carrier: while the carrier runs one, the others wait, so until the
     * first ends at least N-1 wait; after that, the last one to end runs at
     * most its own share. Their waits therefore sum to at least (N-1)/N of
     * the carriers' CPU over the run (their own clocks, read by the child
     * through ThreadMXBean; JDK 21 may have added a carrier while the sleep
     * below pinned the first, but the scheduler runs one at a time). And a burner that never parks has no parked or
     * pinned time: 0, not -1.
     * <p>
     * A sleep inside {@code synchronized} (requested S, measured W around it
     * by the sleeping thread's System.nanoTime()): JDK 21 cannot unmount the
     * thread, which parks holding its carrier until the sleep's deadline, so
     * it is charged pinned time of at least 90 % of S (the rest allows for
     * the thread being held off its CPU between the sleep's start and the
     * park) and at most W (plus 1 %: the cycle counter's calibrated rate
     * against System.nanoTime()'s), and no parked time. JDK 24+ unmounts it:
     * the same bounds hold for parked time, and pinned time is 0.
     * <p>
     * A parked thread whose task is submitted again without an unpark (as the
     * JDK resubmits a task after a stack trace) stays parked: it is charged
     * parked time of at least what the child saw between its park and its
     * unpark (System.nanoTime(), less 1 % for the counter's rate), not a wait
     * for a carrier from that submit.
     */
    @Test
    void carrierWaitPinnedAndParkedAgainstPhysics() throws Exception {
        assumeTrue(FEATURE >= 21, "no virtual threads before JDK 21");
        for (String mode : new String[] {"mode=exact", "mode=mounted"}) {
            ChildJvm c = child(mode);
            assertEquals(0, c.exit(), c.toString());
            long n = figure(c, "burners");
            long cpu = figure(c, "carrier_cpu");
            long waits = figure(c, "burner_waits");
            assertTrue(cpu > 0, mode + ": the carriers ran nothing: " + c);
            assertTrue(waits * n >= (n - 1) * cpu, mode + ": waits " + waits + " ns, under (N-1)/N of the carrier's "
                    + cpu + " ns of CPU: " + c);
            assertEquals(0, figure(c, "burner_parked"), mode + ": " + c);
            assertEquals(0, figure(c, "burner_pinned"), mode + ": " + c);
            long wall = figure(c, "sleep_wall");
            long pinned = figure(c, "sleep_pinned");
            long parked = figure(c, "sleep_parked");
            long blocked = FEATURE >= 24 ? parked : pinned;
            assertTrue(blocked * 10 >= SLEEP_NS * 9 && blocked * 100 <= wall * 101,
                    mode + ": the sleep's " + (FEATURE >= 24 ? "parked" : "pinned") + " time " + blocked
                            + " ns against " + SLEEP_NS + " asked and " + wall + " measured: " + c);
            assertEquals(0, FEATURE >= 24 ? pinned : parked, mode + ": " + c);
            long resubmitted = figure(c, "resubmitted_parked");
            long parkWall = figure(c, "resubmitted_wall");
            assertTrue(resubmitted * 100 >= parkWall * 99, mode + ": a park whose task was submitted again is "
                    + "charged " + resubmitted + " ns parked, under the " + parkWall + " ns it was seen parked: " + c);
        }
    }

    /** Where the figures are not stamped they read -1, never 0: the table. */
    @Test
    void theTableStampsNoWaits() throws Exception {
        assumeTrue(FEATURE >= 21, "no virtual threads before JDK 21");
        ChildJvm c = child("mode=exact,accounts=table");
        assertEquals(0, c.exit(), c.toString());
        assertEquals(-1, figure(c, "burner_waits") / VirtualThreadWaitsChild.BURNERS, c.toString());
        assertEquals(-1, figure(c, "sleep_pinned"), c.toString());
    }

    /** Without the agent: a platform thread has its CPU and nothing else; a virtual thread nothing. */
    @Test
    void withoutTheAgent() throws Exception {
        long before = ThreadTime.currentThreadCpuTime();
        VirtualThreadTimes t = VirtualThreadCpu.currentThreadTimes();
        assertTrue(t.cpuNanos() >= before && t.cpuNanos() <= ThreadTime.currentThreadCpuTime(), t.toString());
        assertEquals(new VirtualThreadTimes(t.cpuNanos(), -1, -1, -1), t);
        assertEquals(-1, TaskCpu.start().elapsedTimes().carrierWaitNanos());
        if (FEATURE >= 21) {
            VirtualThreadTimes[] seen = new VirtualThreadTimes[1];
            Method start = Thread.class.getMethod("startVirtualThread", Runnable.class);
            ((Thread) start.invoke(null, (Runnable) () -> seen[0] = VirtualThreadCpu.currentThreadTimes())).join();
            assertEquals(new VirtualThreadTimes(-1, -1, -1, -1), seen[0]);
        }
    }
}
