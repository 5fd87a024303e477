package io.threadtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * VirtualThreadCpu with CPU time measurement switched off by the user in
 * the JDK's bean, in a child JVM whose virtual threads the JVMTI agent
 * charges (CpuSwitchChild): every answer is what the JDK's bean answers
 * while it is off, -1, and the waits with it, whichever thread asks about
 * whichever; switched on again, a virtual thread's own figure is back,
 * within the process's CPU time.
 */
class VirtualThreadCpuSwitchTest {
    @Test
    void switchedOffEveryThreadReadsMinusOne() throws Exception {
        assumeTrue(Runtime.version().feature() >= 21, "virtual threads need JDK 21");
        String agent = "-agentpath:" + VirtualThreadCpu.agentPath() + "=mode=exact";
        ChildJvm child = ChildJvm.run(null, List.of(ChildJvm.GRANT, agent), CpuSwitchChild.class.getName());
        String text = child.out() + child.err();
        assertEquals(0, child.exit(), text);
        Map<String, String> lines = new HashMap<>();
        child.out().lines().forEach(l -> lines.put(l.substring(0, l.indexOf(' ')), l.substring(l.indexOf(' ') + 1)));
        assertEquals("EXACT", lines.get("mode"), text);
        assertEquals("-1", lines.get("jdk-off"), "the JDK's bean, switched off: " + text);
        String unknown = "-1 -1 -1 -1";
        assertEquals(unknown, lines.get("platform-off"), text);
        assertEquals("-1", lines.get("cpu-off"), text);
        assertEquals(unknown, lines.get("other-off"), text);
        assertEquals(unknown, lines.get("self-off"), "a virtual thread's own figures, switched off: " + text);
        long on = Long.parseLong(lines.get("self-on").split(" ")[0]);
        long process = Long.parseLong(lines.get("process"));
        assertTrue(on > 0 && on <= process, "switched on again: " + on + " ns, the process's " + process + "\n" + text);
    }
}
