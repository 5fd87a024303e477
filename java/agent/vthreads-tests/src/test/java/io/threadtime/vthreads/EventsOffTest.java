package io.threadtime.vthreads;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.threadtime.VirtualThreadCpu;
import org.junit.jupiter.api.Test;

/** The agent loaded with events=off (JVMTI: the JVM pays for virtual-thread
 * support in JVMTI; -javaagent: no hooks) or events=empty (it also posts the mount events, to callbacks
 * that do nothing): nothing is charged, and every answer is the platform's. */
class EventsOffTest {
    @Test
    void nothingIsCharged() throws Exception {
        assertEquals(VirtualThreadCpu.Mode.EVENTS_OFF, VirtualThreadCpu.mode());
        assertEquals(Work.mechanism(), VirtualThreadCpu.mechanism());
        assertEquals("none", VirtualThreadCpu.clock());
        AgentAbsentTest.virtualThreadsReadAsFromThePlatform();
        assertEquals(0, VirtualThreadCpu.accountMemoryBytes());
    }
}
