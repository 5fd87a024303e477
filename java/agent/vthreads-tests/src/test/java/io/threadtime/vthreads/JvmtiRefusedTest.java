package io.threadtime.vthreads;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.threadtime.VirtualThreadCpu;
import org.junit.jupiter.api.Test;

/** The JVMTI agent under -XX:-DoJVMTIVirtualThreadTransitions, where HotSpot
 * posts no virtual-thread event: it refuses to charge, so virtual threads
 * read -1 (never a 0 that looks like a measurement). The message it prints
 * is checked by agent/load_test.sh. */
class JvmtiRefusedTest {
    @Test
    void refusesUnderTheFlag() throws Exception {
        assertTrue(VirtualThreadCpu.transitionPathOff(), "the pom runs this with the flag");
        assertEquals(VirtualThreadCpu.Mechanism.JVMTI, VirtualThreadCpu.mechanism());
        assertEquals(VirtualThreadCpu.Mode.PASSIVE, VirtualThreadCpu.mode());
        AgentAbsentTest.virtualThreadsReadAsFromThePlatform();
    }
}
