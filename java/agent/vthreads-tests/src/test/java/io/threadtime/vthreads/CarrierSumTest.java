package io.threadtime.vthreads;

import static io.threadtime.vthreads.Work.MS;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.threadtime.VirtualThreadCpu;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Test;

/**
 * Conservation, in exact mode: the carriers' CPU time over a run equals what
 * was charged to the virtual threads they ran plus the carriers' own time
 * outside any mount (scheduler loop, mount and unmount work, event posting).
 * Charged segments are disjoint stretches of the carriers' clocks, so the
 * sum charged can never exceed the carriers' time; the test also bounds the
 * unaccounted rest.
 */
class CarrierSumTest {
    static final int THREADS = 2000;

    static void workload(int i, LongAdder charged) throws InterruptedException {
        long burned = 0;
        for (int turn = 0; turn < 3; turn++) {
            burned += Work.burn((i % 5) * 100_000L);
            Work.pause(turn + i);
        }
        if (charged != null)
            charged.add(VirtualThreadCpu.currentThreadCpuTime());
        Work.sink += burned;
    }

    @Test
    void carriersSpendWhatTheirVirtualThreadsWereChargedPlusTheirOwnShare() throws Exception {
        Work.onVirtualThreads(THREADS, i -> workload(i, null)); // carriers exist, code is compiled
        Map<Long, Long> before = Work.carrierCpu();
        LongAdder charged = new LongAdder();
        Work.onVirtualThreads(THREADS, i -> workload(i, charged));
        Map<Long, Long> after = Work.carrierCpu();
        long carriers = 0;
        for (Map.Entry<Long, Long> e : after.entrySet())
            carriers += e.getValue() - before.getOrDefault(e.getKey(), 0L);
        long sum = charged.sum(), rest = carriers - sum;
        System.out.printf("carrier-sum: %d threads, carriers %.2f ms, charged %.2f ms, rest %.2f ms (%.1f%%, %.1f us per thread)%n",
                THREADS, carriers / 1e6, sum / 1e6, rest / 1e6, 100.0 * rest / carriers, rest / 1e3 / THREADS);
        assertTrue(before.size() >= 1 && carriers > 0, "no carrier CPU measured");
        assertTrue(sum <= carriers, "charged " + sum + " ns, more than the carriers spent: " + carriers);
        // Each thread mounts 4 times; the rest is bounded per mount, not per ns burned.
        assertTrue(rest <= THREADS * 4 * 50_000L, "carriers spent " + rest + " ns outside the charged segments");
        assertTrue(sum >= carriers / 4, "charged only " + sum + " ns of " + carriers);
    }
}
