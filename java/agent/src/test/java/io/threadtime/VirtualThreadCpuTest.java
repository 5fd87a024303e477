package io.threadtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.threadtime.agent.ThreadTimeAgent;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The virtual-thread API as every JDK sees it: the agent the JAR carries,
 * extracted and loaded by a child JVM, and the answers without it. The
 * figures themselves are tested with the agent, in java/agent/vthreads-tests.
 */
class VirtualThreadCpuTest {
    private static final int FEATURE = Runtime.version().feature();

    @Test
    void withoutTheAgentPlatformThreadsReadAsUsual() {
        assertEquals(VirtualThreadCpu.Mode.ABSENT, VirtualThreadCpu.mode());
        assertEquals("none", VirtualThreadCpu.clock());
        assertEquals(0, VirtualThreadCpu.accountMemoryBytes());
        assertFalse(ThreadTime.isVirtual(Thread.currentThread()));
        long before = ThreadTime.currentThreadCpuTime();
        long mine = VirtualThreadCpu.currentThreadCpuTime();
        assertTrue(mine >= before && mine <= ThreadTime.currentThreadCpuTime(), "current thread read " + mine);
        TaskCpu task = TaskCpu.start();
        Work.burn(5_000_000);
        assertTrue(task.elapsedNanos() >= 5_000_000, "a task that burned 5 ms");
    }

    @Test
    void anotherPlatformThreadReadsAsFromTheBean() throws Exception {
        Thread t = new Thread(() -> Work.burn(5_000_000));
        assertEquals(-1, VirtualThreadCpu.threadCpuTime(t), "not started");
        t.start();
        t.join();
        assertEquals(-1, VirtualThreadCpu.threadCpuTime(t), "terminated");
    }

    @Test
    void theJarCarriesTheAgent() throws Exception {
        Path agent = VirtualThreadCpu.agentPath();
        assertTrue(Files.isRegularFile(agent), agent.toString());
        assertEquals("libthreadtime_vthreads.so", agent.getFileName().toString(), "a name an -agentpath can keep");
        byte[] head = Files.readAllBytes(agent);
        assertTrue(head.length > 4 && head[0] == 0x7f && head[1] == 'E' && head[2] == 'L' && head[3] == 'F',
                "not an ELF file: " + agent);
        assertEquals(agent, VirtualThreadCpu.agentPath(), "extracted once, found again");
    }

    @Test
    void aChildJvmLoadsTheCarriedAgent() throws Exception {
        String agent = "-agentpath:" + VirtualThreadCpu.agentPath();
        ChildJvm exact = ChildJvm.run(List.of(ChildJvm.GRANT, agent));
        assertEquals(0, exact.exit(), exact.toString());
        ChildJvm mounted = ChildJvm.run(List.of(ChildJvm.GRANT, agent + "=mode=mounted"));
        assertEquals(0, mounted.exit(), mounted.toString());
        ChildJvm empty = ChildJvm.run(List.of(ChildJvm.GRANT, agent + "=events=empty"));
        assertEquals(0, empty.exit(), empty.toString());
        if (FEATURE >= 21) {
            assertEquals("EXACT", exact.value("vthreads"), exact.toString());
            assertEquals("MOUNTED", mounted.value("vthreads"), mounted.toString());
            assertEquals("EVENTS_OFF", empty.value("vthreads"), empty.toString());
            assertFalse(exact.err().contains("threadtime-vthreads"), exact.toString());
        } else {
            assertEquals("PASSIVE", exact.value("vthreads"), exact.toString());
            assertEquals("PASSIVE", empty.value("vthreads"), empty.toString());
            assertTrue(exact.err().contains("threadtime-vthreads: this JVM has no JVMTI 21"), exact.toString());
        }
        assertTrue(Long.parseLong(exact.value("cpu")) > 0, exact.toString());
    }

    @Test
    void aBadAgentOptionStopsTheChild() throws Exception {
        ChildJvm bad = ChildJvm.run(List.of(ChildJvm.GRANT, "-agentpath:" + VirtualThreadCpu.agentPath() + "=mode=bogus"));
        assertTrue(bad.exit() != 0, bad.toString());
        assertTrue(bad.err().contains("threadtime-vthreads: unknown or conflicting option 'mode=bogus'"), bad.toString());
    }

    /** A repeated option is refused as an unknown one is, by both agents. */
    @Test
    void conflictingAgentOptionsStopTheChild() throws Exception {
        ChildJvm jvmti = ChildJvm.run(List.of(ChildJvm.GRANT,
                "-agentpath:" + VirtualThreadCpu.agentPath() + "=mode=exact,mode=mounted"));
        assertTrue(jvmti.exit() != 0, jvmti.toString());
        assertTrue(jvmti.err().contains("threadtime-vthreads: unknown or conflicting option 'mode=mounted'"), jvmti.toString());
        String jar = Path.of(ThreadTimeAgent.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
        ChildJvm javaagent = ChildJvm.run(List.of(ChildJvm.GRANT, "-javaagent:" + jar + "=mode=mounted,mode=exact"));
        assertTrue(javaagent.exit() != 0, javaagent.toString());
        assertTrue(javaagent.err().contains("threadtime: conflicting option 'mode=exact'"), javaagent.toString());
    }
}
