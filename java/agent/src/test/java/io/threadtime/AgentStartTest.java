package io.threadtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.threadtime.agent.ThreadTimeAgent;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * How the -javaagent starts and speaks. A wrong
 * option stops the JVM with one line and exit status 1 (not a stack trace and
 * an abort); a start that goes as asked prints nothing; log= sets how much
 * is said.
 */
class AgentStartTest {
    private static String jar() throws Exception {
        return Path.of(ThreadTimeAgent.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
    }

    private static ChildJvm withAgent(String options) throws Exception {
        return ChildJvm.run(List.of(ChildJvm.GRANT, "-javaagent:" + jar() + (options.isEmpty() ? "" : "=" + options)));
    }

    /** The agent's lines on stderr (the JVM may print warnings of its own). */
    private static List<String> agentLines(ChildJvm c) {
        return c.err().lines().filter(l -> l.startsWith("threadtime:")).collect(java.util.stream.Collectors.toList());
    }

    @Test
    void aWrongOptionStopsTheJvmWithOneLine(@TempDir Path dir) throws Exception {
        String[][] cases = {
            {"mode=fast", "threadtime: bad option 'mode=fast': expected exact or mounted"},
            {"foo", "threadtime: unknown option 'foo' (expected mode=exact|mounted"},
            {"ring=5", "threadtime: bad option 'ring=5': expected records per thread ring, 16 to 8388608"},
            {"probe=", "threadtime: bad option 'probe=': filter '' at character 7: empty filter"},
            {"out=" + dir.resolve("no/such/x"), "cannot be written: no directory " + dir.resolve("no/such")},
            {"probes=@" + dir.resolve("missing"), "threadtime: bad option 'probes=@" + dir.resolve("missing")
                    + "': no file " + dir.resolve("missing")},
            {"mode=exact,", "threadtime: empty option at character 12 of 'mode=exact,' (a comma too many?)"},
            {"mode", "threadtime: option 'mode' has no value (write mode=VALUE)"},
            {"log=loud", "threadtime: bad option 'log=loud': expected off, error, warning, info or debug"},
        };
        for (String[] c : cases) {
            ChildJvm child = withAgent(c[0]);
            assertEquals(1, child.exit(), c[0] + ": " + child);
            assertTrue(child.err().contains(c[1]), c[0] + ": " + child);
            assertEquals(1, child.err().lines().count(), c[0] + ": one line, not a stack trace: " + child);
            assertEquals("", child.out(), c[0] + ": main must not run: " + child);
        }
    }

    @Test
    void aRepeatedOptionIsAConflict() throws Exception {
        ChildJvm child = withAgent("mode=mounted,mode=exact");
        assertEquals(1, child.exit(), child.toString());
        assertTrue(child.err().contains("threadtime: conflicting option 'mode=exact' at character 14 of "
                + "'mode=mounted,mode=exact': mode= was given before"), child.toString());
    }

    /** Before: JDK 21 and 25 printed a ~400-character note on HotSpot's transition path at every start. */
    @Test
    void aStartThatGoesAsAskedPrintsNothing() throws Exception {
        ChildJvm child = withAgent("");
        assertEquals(0, child.exit(), child.toString());
        if (Runtime.version().feature() >= 21) {
            assertEquals(List.of(), agentLines(child), child.toString());
            assertTrue(child.out().contains("vthreads=EXACT"), child.toString());
        }
    }

    @Test
    void logDebugSaysWhatTheAgentChose() throws Exception {
        ChildJvm child = withAgent("log=debug");
        assertEquals(0, child.exit(), child.toString());
        if (Runtime.version().feature() >= 21) {
            assertTrue(child.err().contains("threadtime: HotSpot's JVMTI transition path is on"), child.toString());
        }
    }

    /** A warning (a probe that matches nothing) is shown by default and silenced by log=error. */
    @Test
    void logSetsWhatIsSaid(@TempDir Path dir) throws Exception {
        String probe = "probe=example.NoSuchClass::run,out=" + dir.resolve("t.ttrace");
        ChildJvm loud = withAgent(probe);
        assertEquals(0, loud.exit(), loud.toString());
        assertTrue(loud.err().contains("threadtime: probe 'example.NoSuchClass::run' matched nothing"), loud.toString());
        assertTrue(loud.err().contains("threadtime: trace written to " + dir.resolve("t.ttrace")), loud.toString());
        ChildJvm quiet = withAgent(probe + ",log=error");
        assertEquals(0, quiet.exit(), quiet.toString());
        assertEquals(List.of(), agentLines(quiet), quiet.toString());
        assertTrue(Files.exists(dir.resolve("t.ttrace")), "the trace is still written");
    }

    /** logger=system: the messages go through System.Logger (java.util.logging here), not raw stderr lines. */
    @Test
    void loggerSystemRoutesThroughSystemLogger(@TempDir Path dir) throws Exception {
        ChildJvm child = withAgent("probe=example.NoSuchClass::run,out=" + dir.resolve("t.ttrace") + ",logger=system");
        assertEquals(0, child.exit(), child.toString());
        assertTrue(child.err().contains("WARNING: probe 'example.NoSuchClass::run' matched nothing"), child.toString());
        assertFalse(child.err().contains("threadtime: probe 'example.NoSuchClass::run'"), child.toString());
    }

    /** A dot where :: belongs gets the right spelling, not unrelated suggestions. */
    @Test
    void aDotForTheMethodSeparatorIsNamed(@TempDir Path dir) throws Exception {
        ChildJvm child = withAgent("probe=java.util.HashMap.resize,out=" + dir.resolve("t.ttrace"));
        assertEquals(0, child.exit(), child.toString());
        assertTrue(child.err().contains("write java.util.HashMap::resize"), child.toString());
    }

    /** The ring limits the agent checks are the core's (include/threadtime/event.h). */
    @Test
    void ringLimitsAreTheCores() throws Exception {
        Path header = SourceTree.file("include/threadtime/event.h");
        String text = Files.readString(header);
        Matcher min = Pattern.compile("#define TT_LOG_RING_MIN (\\d+)u").matcher(text);
        Matcher max = Pattern.compile("#define TT_LOG_RING_MAX \\(1u << (\\d+)\\)").matcher(text);
        assertTrue(min.find() && max.find(), "limits not found in " + header);
        assertEquals(Integer.parseInt(min.group(1)), EventLog.RING_MIN);
        assertEquals(1 << Integer.parseInt(max.group(1)), EventLog.RING_MAX);
    }
}
