package io.threadtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import example.NamesApp;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A trace from the agent carries Java's thread names, not the
 * kernel's 15 bytes ({@code java}, {@code ForkJoinPool-1-}), and a virtual
 * thread's name, not only its id. Read back with {@code threadtime dump}.
 */
class ThreadNamesTest {
    /** `threadtime dump` of trace in format (text when null). */
    static String dump(Path trace, String format) throws Exception {
        String cli = System.getProperty("threadtime.cli");
        ProcessBuilder pb = format == null ? new ProcessBuilder(cli, "dump", trace.toString())
                : new ProcessBuilder(cli, "dump", "--format", format, trace.toString());
        ChildJvm r = ChildJvm.finish(pb.start(), "threadtime dump " + trace);
        assertEquals(0, r.exit(), () -> "threadtime dump " + trace + ": " + r.err());
        return r.out();
    }

    @Test
    void platformAndVirtualThreadsShowTheirJavaNames(@TempDir Path dir) throws Exception {
        Path trace = dir.resolve("names.ttrace");
        ChildJvm c = ChildJvm.run(dir, List.of(ChildJvm.GRANT,
                ProbeAgentTest.agent("probe=example.NamesApp::work,out=" + trace)), NamesApp.class.getName());
        assertEquals(0, c.exit(), c::toString);
        String text = dump(trace, null);
        // The text format prints thread names with non-ASCII bytes as \xNN.
        for (String name : List.of("main", "main-worker-with-a-long-name", "event-log-thread, \\xc3\\xa9t\\xc3\\xa9")) {
            assertTrue(text.contains("\"" + name + "\" ("),
                    () -> "no thread \"" + name + "\" in:\n" + text);
        }
        Set<String> threads = ProbeAgentTest.read(trace).stream().map(e -> e.get("thread"))
                .collect(Collectors.toSet());
        assertTrue(threads.containsAll(Set.of("main", "main-worker-with-a-long-name", "event-log-thread, \u00e9t\u00e9")),
                threads::toString);
        long vthread = Long.parseLong(c.value("vthread"));
        if (vthread != 0) {
            assertTrue(text.contains("vthread " + vthread + " \"worker-v\""), text);
            // Its carrier is named too, not "ForkJoinPool-1-".
            assertTrue(threads.stream().anyMatch(t -> t.startsWith("ForkJoinPool-1-worker-")), threads::toString);
            String json = dump(trace, "json");
            assertTrue(json.contains("\"" + vthread + "\":\"worker-v\""), json);
        }
    }
}
