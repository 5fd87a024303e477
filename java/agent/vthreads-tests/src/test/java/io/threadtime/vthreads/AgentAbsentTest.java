package io.threadtime.vthreads;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.threadtime.TaskCpu;
import io.threadtime.ThreadTime;
import io.threadtime.ThreadTimeMXBean;
import io.threadtime.VirtualThreadCpu;
import org.junit.jupiter.api.Test;

/** No agent: virtual threads read -1, exactly as ThreadMXBean answers for
 * them; platform threads are unaffected. */
class AgentAbsentTest {
    static void virtualThreadsReadAsFromThePlatform() throws Exception {
        long[] seen = new long[6];
        Thread parked = Thread.ofVirtual().start(() -> java.util.concurrent.locks.LockSupport.park());
        Work.onVirtualThreads(1, i -> {
            Work.burn(Work.MS);
            seen[0] = VirtualThreadCpu.currentThreadCpuTime();
            seen[1] = Work.MX.getCurrentThreadCpuTime();
            seen[2] = TaskCpu.start().elapsedNanos();
            seen[3] = VirtualThreadCpu.threadCpuTime(parked);
            seen[4] = ThreadTimeMXBean.getInstance().getCurrentThreadCpuTime();
            seen[5] = ThreadTimeMXBean.getInstance().getThreadCpuTime(Thread.currentThread().threadId());
        });
        java.util.concurrent.locks.LockSupport.unpark(parked);
        parked.join();
        assertEquals(-1, seen[1], "the platform's answer for a virtual thread");
        assertEquals(seen[1], seen[0], "current virtual thread");
        assertEquals(-1, seen[2], "a task on a virtual thread");
        assertEquals(-1, seen[3], "another virtual thread");
        assertEquals(-1, seen[4], "the drop-in bean, current virtual thread");
        assertEquals(-1, seen[5], "the drop-in bean, current virtual thread by id");
        Long unrun = Work.figureBeforeItRuns();
        assertTrue(unrun == null || unrun == -1, "a started thread not yet run, nothing charging: " + unrun);
        // The core's fast clock: never above a later real read plus its bound.
        long mine = VirtualThreadCpu.currentThreadCpuTime();
        assertTrue(mine > 0 && mine <= Work.MX.getCurrentThreadCpuTime() + ThreadTime.FAST_CLOCK_BOUND_NANOS, "platform thread read " + mine);
    }

    @Test
    void virtualThreadsReadMinusOne() throws Exception {
        assertEquals(VirtualThreadCpu.Mode.ABSENT, VirtualThreadCpu.mode());
        assertEquals(VirtualThreadCpu.Mechanism.NONE, VirtualThreadCpu.mechanism());
        assertEquals("none", VirtualThreadCpu.clock());
        virtualThreadsReadAsFromThePlatform();
    }
}
