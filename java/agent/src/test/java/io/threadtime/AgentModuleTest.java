package io.threadtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.threadtime.agent.ThreadTimeAgent;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The agent's JAR is a real module too, io.threadtime.agent: it carries the
 * API, and exports only that; its hook classes and the relocated ASM are
 * inside it, not modules it requires.
 */
class AgentModuleTest {
    @Test
    void onlyTheApiIsExported() throws Exception {
        Path jar = Path.of(ThreadTimeAgent.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        String java = ProcessHandle.current().info().command().orElseThrow();
        ChildJvm r = ChildJvm.runMerged(List.of(java, "--module-path", jar.toString(), "--describe-module",
                "io.threadtime.agent"));
        assertEquals(0, r.exit(), r.out());
        List<String> exports = r.out().lines().filter(l -> l.startsWith("exports ")).toList();
        assertEquals(List.of("exports io.threadtime"), exports, r.out());
        assertTrue(r.out().contains("contains io.threadtime.agent.vthreads.hooks"), r.out());
        assertTrue(r.out().contains("contains io.threadtime.agent.probes.hooks"), r.out());
        assertTrue(r.out().contains("contains io.threadtime.shaded.asm"), r.out());
        assertFalse(r.out().contains("automatic"), r.out());
    }
}
