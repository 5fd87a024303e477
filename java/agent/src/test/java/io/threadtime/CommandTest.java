package io.threadtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code java -jar threadtime.jar COMMAND}: the threadtime command the JAR carries. */
class CommandTest {
    /** java -jar threadtime.jar args, with its own java.io.tmpdir. */
    private static ChildJvm jar(Path tmpdir, String... args) throws Exception {
        List<String> a = new ArrayList<>(List.of(ProbeAgentTest.jar()));
        a.addAll(List.of(args));
        return ChildJvm.run(null, List.of("-Djava.io.tmpdir=" + tmpdir), "-jar", a.toArray(new String[0]));
    }

    @Test
    void aWrongCommandOrNoneIsAUsageError(@TempDir Path tmp) throws Exception {
        ChildJvm none = jar(tmp);
        assertEquals(2, none.exit(), none::toString);
        assertTrue(none.err().contains("usage: threadtime <command>"), none::toString);
        ChildJvm wrong = jar(tmp, "dumpp", "x.ttrace");
        assertEquals(2, wrong.exit(), wrong::toString);
        assertTrue(wrong.err().contains("unknown command 'dumpp'"), wrong::toString);
    }

    /** The JAR's dump prints what the threadtime command built from this
     * checkout prints for the same trace, which this JVM wrote. */
    @Test
    void dumpReadsATraceAsTheCommandDoes(@TempDir Path tmp) throws Exception {
        Path trace = tmp.resolve("jar.ttrace");
        EventLog.name(4711, "from-the-jar-test");
        EventLog.start();
        try {
            EventLog.event(4711, 42L);
        } finally {
            EventLog.stop();
        }
        EventLog.dump(trace);
        ChildJvm c = jar(tmp, "dump", "--format", "csv", trace.toString());
        assertEquals(0, c.exit(), c::toString);
        assertTrue(c.out().contains("from-the-jar-test"), c::toString);
        String cli = System.getProperty("threadtime.cli");
        ChildJvm built = ChildJvm.finish(new ProcessBuilder(cli, "dump", "--format", "csv", trace.toString()).start(), cli);
        assertEquals(0, built.exit(), built::toString);
        assertEquals(built.out(), c.out());
    }

    /** run preloads the library the JAR carries: the command's thread is reported. */
    @Test
    void runReportsACommand(@TempDir Path tmp) throws Exception {
        ChildJvm c = jar(tmp, "run", "--", "true");
        assertEquals(0, c.exit(), c::toString);
        assertTrue(c.err().contains(") true: exited"), c::toString);
        assertFalse(c.err().contains("did not load"), c::toString);
        try (Stream<Path> s = Files.list(tmp.resolve("threadtime-" + System.getProperty("user.name")))) {
            Set<String> names = s.map(p -> p.getFileName().toString()).collect(Collectors.toSet());
            assertEquals(3, names.size(), names::toString); // the command, the preload library, the lock
            assertTrue(names.stream().anyMatch(n -> n.matches("threadtime-" + NativeLibrary.version().replace(".", "\\.")
                    + "-[0-9a-f]{8}")), names::toString);
        }
    }
}
