package io.threadtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
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

    /**
     * Ctrl-C on a terminal (a pty that script(1) makes, sent ^C): SIGINT to
     * the whole foreground group, the JVM, the threadtime it runs and the
     * command. The command handles it by exiting 0, which it says on its
     * standard output: the report is still printed and the JVM's status is
     * the command's. (The JVM's default, a shutdown that sent SIGTERM to
     * threadtime, ended it without its report or with 130 or 143.)
     */
    @Test
    void ctrlCKeepsTheReportAndTheCommandsStatus(@TempDir Path tmp) throws Exception {
        Path ready = tmp.resolve("ready"), cmd = tmp.resolve("cmd.sh"), launch = tmp.resolve("launch.sh");
        Files.writeString(cmd, "trap 'echo interrupted; exit 0' INT\n: > " + ready + "\nwhile :; do sleep 0.05; done\n");
        // SIGINT at its default in the JVM, as a terminal's shell leaves it (a
        // test run in the background would hand an ignored one down).
        Files.writeString(launch, "exec env --default-signal=INT " + ProcessHandle.current().info().command().orElseThrow()
                + " -Djava.io.tmpdir=" + tmp + " -jar " + ProbeAgentTest.jar() + " run -- sh " + cmd + "\n");
        ProcessBuilder pb = new ProcessBuilder("script", "-q", "-e", "-c", "exec sh " + launch,
                tmp.resolve("typescript").toString()).redirectErrorStream(true);
        pb.environment().put("SHELL", "/bin/sh");
        Process p = pb.start();
        CompletableFuture<String> out = ChildJvm.drainAsync(p.getInputStream());
        try {
            while (!Files.exists(ready) && p.isAlive()) {
                Thread.sleep(20);
            }
            p.getOutputStream().write(3); // ^C
            p.getOutputStream().flush();
            assertTrue(p.waitFor(ChildJvm.HUNG_SECONDS, TimeUnit.SECONDS), "the JVM did not end");
        } finally {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
        }
        String said = out.get(30, TimeUnit.SECONDS);
        String what = "exit " + p.exitValue() + "\n" + said;
        assertTrue(said.contains("interrupted"), what);
        assertEquals(0, p.exitValue(), what);
        assertTrue(said.contains("; exit status 0"), what);
        assertTrue(said.contains(") sh: exited"), what);
    }
}
