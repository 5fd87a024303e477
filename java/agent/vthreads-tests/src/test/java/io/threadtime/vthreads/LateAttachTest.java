package io.threadtime.vthreads;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.tools.attach.VirtualMachine;
import io.threadtime.ThreadTime;
import io.threadtime.VirtualThreadCpu;
import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The agent the threadtime JAR carries, extracted by
 * {@link VirtualThreadCpu#agentPath()} and attached to a running JVM (what
 * `jcmd PID JVMTI.agent_load` does):
 * a virtual thread alive at the attach is charged only from its first mount
 * after it, a new one in full, and -XX:+EnableDynamicAgentLoading silences
 * the JDK's warning about a dynamically loaded agent.
 */
class LateAttachTest {
    @Test
    void attachedLateChargesFromTheNextMount() throws Exception {
        Path agent = VirtualThreadCpu.agentPath();
        assertTrue(Files.isRegularFile(agent), "no agent at " + agent);
        Path err = Files.createTempFile("late-attach", ".err");
        Process child = new ProcessBuilder(List.of(
                Paths.get(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:+EnableDynamicAgentLoading", "-Djdk.virtualThreadScheduler.parallelism=2",
                "--add-opens", "java.base/java.lang=ALL-UNNAMED", "--enable-native-access=ALL-UNNAMED",
                "-cp", System.getProperty("java.class.path"), LateAttachChild.class.getName()))
                .redirectError(err.toFile()).start();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
             OutputStream in = child.getOutputStream()) {
            assertEquals("ready", out.readLine());
            VirtualMachine vm = VirtualMachine.attach(Long.toString(child.pid()));
            try {
                vm.loadAgentPath(agent.toString());
            } finally {
                vm.detach();
            }
            in.write('\n');
            in.flush();
            String[] f = out.readLine().split(" ");
            assertTrue(child.waitFor(60, TimeUnit.SECONDS), "child did not exit");
            assertEquals(0, child.exitValue());
            assertEquals("EXACT", f[0]);
            long before = Long.parseLong(f[1]), after = Long.parseLong(f[2]), early = Long.parseLong(f[3]);
            long burnedNew = Long.parseLong(f[4]), chargedNew = Long.parseLong(f[5]);
            assertTrue(early >= after - ThreadTime.FAST_CLOCK_BOUND_NANOS && early < before, "the thread alive at the attach was charged " + early
                    + " ns: burned " + before + " before the attach, " + after + " after");
            ExactModeTest.assertCharged(burnedNew, chargedNew, "a thread started after the attach");
            String stderr = Files.readString(err);
            assertFalse(stderr.contains("loaded dynamically"), stderr);
        } finally {
            child.destroyForcibly();
            Files.delete(err);
        }
    }
}
