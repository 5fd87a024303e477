package io.threadtime.vthreads;

import static io.threadtime.vthreads.Work.MS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.threadtime.VirtualThreadCpu;
import org.junit.jupiter.api.Test;

/**
 * The agent in mounted mode: a virtual thread is charged the wall time it
 * spends mounted, read from the cycle counter. That is at least the CPU it
 * burned (more when its carrier was descheduled), nothing while it is
 * unmounted, and all of a pinned wait.
 */
class MountedModeTest {
    /** As in exact mode: 0 for a started thread that has not run yet. */
    @Test
    void aStartedThreadNotYetRunReadsZero() throws Exception {
        Long figure = Work.figureBeforeItRuns();
        org.junit.jupiter.api.Assumptions.assumeTrue(figure != null, "the scheduler ran the thread on a carrier of its own");
        assertEquals(0, figure, "a started thread that has not run");
    }

    @Test
    void modeIsMountedOnTheCounter() {
        assertEquals(VirtualThreadCpu.Mode.MOUNTED, VirtualThreadCpu.mode());
        assertEquals(Work.mechanism(), VirtualThreadCpu.mechanism());
        assertEquals(Work.accountsInThreads(), VirtualThreadCpu.accountsInThreads());
        assertEquals(Work.transitionPathOff(), VirtualThreadCpu.transitionPathOff());
        String clock = VirtualThreadCpu.clock();
        String fallback = Work.mechanism() == VirtualThreadCpu.Mechanism.JAVAAGENT ? "monotonic" : "monotonic-raw";
        assertTrue(clock.equals("tsc") || clock.equals("cntvct") || clock.equals(fallback), clock);
    }

    @Test
    void burnersAreChargedAtLeastWhatTheyBurnedAndAtMostTheirLifetime() throws Exception {
        Work.onVirtualThreads(4, i -> {
            long wall = System.nanoTime(), start = VirtualThreadCpu.currentThreadCpuTime(), burned = 0;
            for (int turn = 0; turn < 6; turn++) {
                burned += Work.burn(8 * MS);
                Work.pause(turn + i);
            }
            long charged = VirtualThreadCpu.currentThreadCpuTime() - start;
            wall = System.nanoTime() - wall;
            // 1% for the counter's calibration against CLOCK_MONOTONIC_RAW,
            // and 2 ms for the kernel's CPU clock, which on this VM host can
            // run up to ~1 ms ahead of wall time in a lump (a stretch missed
            // would take a whole 8 ms burn).
            assertTrue(charged >= burned - burned / 100 - 2 * MS,
                    "burner " + i + ": charged " + charged + " < burned " + burned);
            assertTrue(charged <= wall + wall / 100, "burner " + i + ": charged " + charged + " > lifetime " + wall);
        });
    }

    /** A sleeping thread is unmounted, and its figure stands still: read
     * from another thread, not as a share of wall time (a mounted stretch
     * may be descheduled for any length under load, and mounted mode
     * charges that). */
    @Test
    void timeUnmountedIsNotCharged() throws Exception {
        assertTrue(Work.figureStandsStillDuring(i -> Thread.sleep(60_000)),
                "a sleeping virtual thread's figure never stood still");
    }

    /** A sleep in a class initializer pins the carrier on every JDK. */
    static final class SleepsWhileInitialized {
        static final long SLEPT;

        static {
            long t = System.nanoTime();
            try {
                Thread.sleep(200);
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
            SLEPT = System.nanoTime() - t;
        }
    }

    @Test
    void aPinnedWaitIsChargedInFull() throws Exception {
        Work.onVirtualThreads(1, i -> {
            long start = VirtualThreadCpu.currentThreadCpuTime();
            long slept = SleepsWhileInitialized.SLEPT;
            long charged = VirtualThreadCpu.currentThreadCpuTime() - start;
            assertTrue(charged >= slept - slept / 100, "pinned for " + slept + " ns, charged " + charged);
        });
    }

    @Test
    void aWaitInSynchronizedIsChargedWhereItPins() throws Exception {
        // JEP 491 (JDK 24): a virtual thread waiting inside synchronized
        // unmounts; before, it pins its carrier and stays mounted.
        Object lock = new Object();
        Work.Body wait = i -> {
            synchronized (lock) {
                Thread.sleep(60_000);
            }
        };
        if (Runtime.version().feature() < 24)
            assertTrue(Work.figureMovesDuring(wait), "a pinned wait's figure stood still");
        else
            assertTrue(Work.figureStandsStillDuring(wait), "a wait inside synchronized never stood still");
    }
}
