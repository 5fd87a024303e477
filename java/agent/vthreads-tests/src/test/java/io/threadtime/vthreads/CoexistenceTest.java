package io.threadtime.vthreads;

import static io.threadtime.vthreads.Work.MS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.threadtime.VirtualThreadCpu;
import org.junit.jupiter.api.Test;

/**
 * The -javaagent beside the OpenTelemetry Java agent, loaded before or after
 * it (the pom runs both orders, with HotSpot's transition path off): both
 * are in, and virtual threads are charged as without it.
 */
class CoexistenceTest {
    @Test
    void bothAgentsAreInAndThreadsAreCharged() throws Exception {
        // The OpenTelemetry agent's bootstrap classes are the boot loader's.
        Class<?> otel = Class.forName("io.opentelemetry.javaagent.bootstrap.AgentInitializer", false, null);
        assertNull(otel.getClassLoader());
        assertEquals(VirtualThreadCpu.Mechanism.JAVAAGENT, VirtualThreadCpu.mechanism());
        assertEquals(VirtualThreadCpu.Mode.EXACT, VirtualThreadCpu.mode());
        // Loaded first, threadtime adds its fields before anything loads the
        // continuation class. Loaded second it may find it loaded (on JDK 25
        // OpenTelemetry's retransformation of VirtualThread loads it), and
        // then uses its table: charged alike, which the rest checks.
        if (System.getProperty("threadtime.test.accounts", "").equals("threads")) {
            assertEquals(true, VirtualThreadCpu.accountsInThreads(), "loaded first, yet the accounts are in the table");
        }
        // OpenTelemetry instruments what a pause runs (executors, timers):
        // the first pause of each kind links and transforms classes on the
        // pausing virtual thread, CPU rightly charged to it but no part of
        // the burns (once 7 ms over them, on JDK 21). One unmeasured round
        // does that first.
        Work.onVirtualThreads(4, i -> {
            for (int turn = 0; turn < 4; turn++) {
                Work.burn(MS);
                Work.pause(turn + i);
            }
        });
        Work.onVirtualThreads(4, i -> {
            long start = VirtualThreadCpu.currentThreadCpuTime(), burned = 0;
            for (int turn = 0; turn < 4; turn++) {
                burned += Work.burn(4 * MS);
                Work.pause(turn + i);
            }
            ExactModeTest.assertCharged(burned, VirtualThreadCpu.currentThreadCpuTime() - start, "beside OpenTelemetry " + i);
        });
        assertEquals(0, VirtualThreadCpu.hookFailures());
    }
}
