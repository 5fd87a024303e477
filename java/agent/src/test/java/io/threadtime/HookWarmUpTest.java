package io.threadtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Nothing a virtual-thread hook calls may be defined for the first time
 * inside a mount: with HotSpot's transition path on, that can deadlock the
 * carrier (it did, on JDK 21, in 3 of 80 runs of a probe test's child). A
 * method handle called where it is not a constant defines a class of its
 * own at its 128th call (its "customization"), so the agent's warm-up must
 * carry every handle the hooks call past that before the hooks go in.
 */
class HookWarmUpTest {
    @Test
    void everyHandleAHookCallsIsCustomizedBeforeTheHooksGoIn(@TempDir Path dir) throws Exception {
        assumeTrue(Runtime.version().feature() >= 21, "virtual threads need JDK 21");
        // probe= runs the log, so the markers' and names' handles are in the hooks too.
        // In a directory of its own: the probe's log is dumped at exit into the working directory.
        ChildJvm c = ChildJvm.run(dir, List.of(ChildJvm.GRANT, "--add-opens", "java.base/java.lang.invoke=ALL-UNNAMED",
                "-javaagent:" + ProbeAgentTest.jar() + "=mode=exact,probe=example.ProbeApp::work"),
                HookHandlesChild.class.getName());
        assertEquals(0, c.exit(), c::toString);
        List<String> lines = c.out().lines().filter(l -> l.contains("=")).toList();
        assertEquals(c.out().contains("backend ffm") ? 7 : 5, lines.size(), c::toString);
        for (String line : lines) {
            assertEquals("customized", line.substring(line.indexOf('=') + 1), () -> line + "\n" + c);
        }
    }
}
