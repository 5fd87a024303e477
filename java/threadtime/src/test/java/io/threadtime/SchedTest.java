package io.threadtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The scheduler accounts and the cgroup's throttling, held to the kernel's
 * own files read by the test (KernelFiles) and to physics: two threads on
 * one CPU cannot both run; a sleeping thread is not waiting for a CPU.
 */
class SchedTest {
    private static final long MS = 1_000_000;

    /** Each figure of the calling thread lies between the file's, read just before and just after. */
    @Test
    void theCallingThreadsFiguresAreTheKernels() {
        Work.burn(20 * MS);
        int tid = KernelFiles.currentTid();
        for (int i = 0; i < 50; i++) {
            long[] st0 = KernelFiles.schedstat(tid), sw0 = KernelFiles.switches(tid);
            Sched s = ThreadTime.currentThreadSched();
            long alone = ThreadTime.currentThreadRunWait();
            long[] st1 = KernelFiles.schedstat(tid), sw1 = KernelFiles.switches(tid);
            String what = i + ": " + s + " alone " + alone;
            assertTrue(st0[0] <= s.onCpuNanos() && s.onCpuNanos() <= st1[0], what);
            assertTrue(st0[1] <= s.runWaitNanos() && s.runWaitNanos() <= alone && alone <= st1[1], what);
            assertTrue(st0[2] <= s.timeslices() && s.timeslices() <= st1[2], what);
            assertTrue(sw0[0] <= s.voluntarySwitches() && s.voluntarySwitches() <= sw1[0], what);
            assertTrue(sw0[1] <= s.involuntarySwitches() && s.involuntarySwitches() <= sw1[1], what);
            if (i % 10 == 0) {
                Thread.yield();
            }
        }
    }

    /** Another thread of this JVM by its tid, while it is blocked: the figures the file shows then, field for field. */
    @Test
    void aBlockedThreadByItsTidReadsAsItsFiles() throws Exception {
        CountDownLatch ready = new CountDownLatch(1), release = new CountDownLatch(1);
        AtomicInteger tid = new AtomicInteger();
        Thread t = new Thread(() -> {
            Work.burn(5 * MS);
            tid.set(KernelFiles.currentTid());
            ready.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        t.start();
        assertTrue(ready.await(60, TimeUnit.SECONDS));
        try {
            // Until it parks, its figures move; once they stop between two reads, it is blocked.
            long[] st0, sw0, st1, sw1;
            Sched s;
            int tries = 0;
            do {
                assertTrue(++tries < 3000, "its figures never stopped moving");
                Thread.sleep(20);
                st0 = KernelFiles.schedstat(tid.get());
                sw0 = KernelFiles.switches(tid.get());
                s = ThreadTime.threadSched(tid.get());
                st1 = KernelFiles.schedstat(tid.get());
                sw1 = KernelFiles.switches(tid.get());
            } while (st0[2] != st1[2] || sw0[0] != sw1[0] || sw0[1] != sw1[1]);
            assertEquals(new Sched(st0[0], st0[1], st0[2], sw0[0], sw0[1]), s);
        } finally {
            release.countDown();
            t.join();
        }
        // Exited: once the kernel no longer lists the tid (the Java thread ends
        // before its native thread does), it is refused (not reused this soon).
        Path task = Path.of("/proc/self/task/" + tid.get());
        for (int tries = 0; Files.exists(task); tries++) {
            assertTrue(tries < 6000, "the thread's native thread never exited");
            Thread.sleep(10);
        }
        ThreadTimeException e = assertThrows(ThreadTimeException.class, () -> ThreadTime.threadSched(tid.get()));
        assertEquals(3, e.errno(), e.getMessage());
        assertTrue(e.getMessage().contains("no such thread"), e.getMessage());
    }

    @Test
    void aTidOfAnotherProcessOrANegativeOneIsRefused() {
        int parent = (int) ProcessHandle.current().parent().orElseThrow().pid(); // its main thread's tid
        ThreadTimeException e = assertThrows(ThreadTimeException.class, () -> ThreadTime.threadSched(parent));
        assertEquals(22, e.errno(), e.getMessage());
        assertTrue(e.getMessage().contains("another process"), e.getMessage());
        assertEquals(22, assertThrows(ThreadTimeException.class, () -> ThreadTime.threadSched(-5)).errno());
        // tid 0 is the calling thread, as in the C API.
        assertTrue(ThreadTime.threadSched(0).timeslices() > 0);
    }

    /**
     * Released together on one CPU, each burning 100 ms: while the first to
     * finish ran, the other was runnable and not running, so it waited at
     * least that long (10 % spare for the first's CPU before the release).
     * The child JVM is pinned with taskset, every thread of it.
     */
    @Test
    void twoThreadsOnOneCpuWaitForEachOther() throws Exception {
        List<String> cmd = KernelFiles.onOneCpu(ChildJvm.command(List.of(ChildJvm.GRANT), PinnedPairChild.class.getName()));
        ChildJvm c = ChildJvm.finish(new ProcessBuilder(cmd).start(), String.join(" ", cmd));
        assertEquals(0, c.exit(), c::toString);
        String[] lines = c.out().trim().split("\n");
        long[] first = parse(lines[0]), second = parse(lines[1]);
        String what = "cpu, wait (sched), wait (alone): first " + lines[0] + "; second " + lines[1];
        System.out.println("twoThreadsOnOneCpuWaitForEachOther: " + what);
        assertTrue(second[1] * 10 >= first[0] * 9, what);
        assertTrue(second[2] * 10 >= first[0] * 9, what);
    }

    private static long[] parse(String line) {
        String[] f = line.trim().split(" ");
        return new long[] {Long.parseLong(f[0]), Long.parseLong(f[1]), Long.parseLong(f[2])};
    }

    /**
     * Blocked is not waiting: a thread that sleeps 20 x 5 ms waited for a
     * CPU no more than the wall time it was not asleep, and its figures lie
     * within what its schedstat file says around them.
     */
    @Test
    void aSleepingThreadDoesNotWait() throws Exception {
        int tid = KernelFiles.currentTid();
        long[] file0 = KernelFiles.schedstat(tid);
        long w0 = System.nanoTime();
        Sched s0 = ThreadTime.currentThreadSched();
        long a0 = ThreadTime.currentThreadRunWait();
        for (int i = 0; i < 20; i++) {
            Thread.sleep(5);
        }
        long a1 = ThreadTime.currentThreadRunWait();
        Sched s1 = ThreadTime.currentThreadSched();
        long w1 = System.nanoTime();
        long[] file1 = KernelFiles.schedstat(tid);
        long waited = s1.runWaitNanos() - s0.runWaitNanos(), alone = a1 - a0;
        String what = "waited " + waited + " (alone " + alone + ") ns in " + (w1 - w0) + " ns, 100 ms asleep; file "
                + (file1[1] - file0[1]);
        System.out.println("aSleepingThreadDoesNotWait: " + what);
        assertTrue(waited >= 0 && waited <= file1[1] - file0[1] && waited <= w1 - w0 - 100 * MS, what);
        assertTrue(alone >= 0 && alone <= file1[1] - file0[1] && alone <= w1 - w0 - 100 * MS, what);
        assertTrue(s1.voluntarySwitches() - s0.voluntarySwitches() + s1.involuntarySwitches() - s0.involuntarySwitches()
                >= 20, what);
    }

    @Test
    void aVirtualThreadHasNoAccountsOfItsOwn() throws Exception {
        assumeTrue(Runtime.version().feature() >= 21, "virtual threads need JDK 21");
        Object[] got = new Object[2];
        Thread v = (Thread) Thread.class.getMethod("startVirtualThread", Runnable.class).invoke(null, (Runnable) () -> {
            got[0] = ThreadTime.currentThreadRunWait();
            try {
                ThreadTime.currentThreadSched();
            } catch (UnsupportedOperationException e) {
                got[1] = e;
            }
        });
        v.join();
        assertEquals(-1L, got[0]);
        assertTrue(got[1] instanceof UnsupportedOperationException, String.valueOf(got[1]));
    }

    /** The throttling lies between two reads of the group's cpu.stat by the test. */
    @Test
    void theCgroupsThrottlingIsItsCpuStat() {
        Path stat = KernelFiles.cpuStatPath();
        assumeTrue(stat != null, "no cpu.stat at /sys/fs/cgroup for this process's cgroup");
        long[] before = KernelFiles.cpuStat(stat);
        CgroupCpu g = ThreadTime.cgroupCpu();
        long[] after = KernelFiles.cpuStat(stat);
        String what = g + " between " + before[0] + "/" + before[1] + " and " + after[0] + "/" + after[1];
        assertTrue(g.version() == 1 || g.version() == 2, what);
        assertTrue(before[0] <= g.throttledPeriods() && g.throttledPeriods() <= after[0], what);
        assertTrue(before[1] <= g.throttledNanos() && g.throttledNanos() <= after[1], what);
        assertTrue((g.quotaMicros() == -1 || g.quotaMicros() > 0) && g.periodMicros() > 0, what);
    }
}
