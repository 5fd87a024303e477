package io.threadtime.vthreads;

import static io.threadtime.vthreads.Work.MS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.threadtime.VirtualThreadCpu;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * What users run beside the -javaagent under -XX:-DoJVMTIVirtualThreadTransitions:
 * a JFR recording, and a JDWP debugger attaching and listing threads. Both
 * work, and the agent goes on charging.
 */
class UnderTheFlagTest {
    @Test
    void aJfrRecordingSeesVirtualThreadsAndTheAgentCharges() throws Exception {
        Path file = Files.createTempFile("threadtime-under-flag", ".jfr");
        try (Recording r = new Recording()) {
            r.enable("jdk.VirtualThreadStart");
            r.enable("jdk.VirtualThreadEnd");
            r.start();
            Work.onVirtualThreads(3, i -> {
                long start = VirtualThreadCpu.currentThreadCpuTime();
                long burned = Work.burn(5 * MS);
                Thread.yield();
                ExactModeTest.assertCharged(burned, VirtualThreadCpu.currentThreadCpuTime() - start, "under JFR");
            });
            r.stop();
            r.dump(file);
            int starts = 0, ends = 0;
            for (RecordedEvent e : RecordingFile.readAllEvents(file)) {
                starts += e.getEventType().getName().equals("jdk.VirtualThreadStart") ? 1 : 0;
                ends += e.getEventType().getName().equals("jdk.VirtualThreadEnd") ? 1 : 0;
            }
            assertTrue(starts >= 3 && ends >= 3, "JFR recorded " + starts + " starts and " + ends + " ends");
        } finally {
            Files.deleteIfExists(file);
        }
    }

    /** jdb, from the JDK that built the tests; the JVM under test must have
     * the JDWP agent (Temurin's JRE 21 has none: skipped there). */
    @Test
    void aDebuggerAttachesAndListsThreads() throws Exception {
        Assumptions.assumeTrue(ModuleLayer.boot().findModule("jdk.jdwp.agent").isPresent(),
                "this runtime has no JDWP agent (a JRE): nothing to attach to");
        Path jdb = Paths.get(System.getProperty("threadtime.test.jdk"), "bin", "jdb");
        assertTrue(Files.isExecutable(jdb), "no jdb at " + jdb);
        String java = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd = new ArrayList<>(List.of(java, "-XX:+UnlockExperimentalVMOptions",
                "-XX:-DoJVMTIVirtualThreadTransitions", "--enable-native-access=ALL-UNNAMED",
                "--add-opens", "java.base/java.lang=ALL-UNNAMED",
                "-agentlib:jdwp=transport=dt_socket,server=y,suspend=n,address=127.0.0.1:0",
                "-javaagent:" + System.getProperty("threadtime.test.jar"),
                "-cp", System.getProperty("java.class.path"), Debuggee.class.getName()));
        Process debuggee = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(debuggee.getInputStream(), StandardCharsets.UTF_8));
            Pattern listening = Pattern.compile("Listening for transport dt_socket at address: (\\d+)");
            String port = null, line;
            while ((line = out.readLine()) != null && !line.equals("ready")) {
                Matcher m = listening.matcher(line);
                if (m.find())
                    port = m.group(1);
            }
            assertEquals("ready", line, "the debuggee ended before it was ready");
            assertTrue(port != null, "the debuggee printed no JDWP port");
            Process debugger = new ProcessBuilder(jdb.toString(), "-attach", "127.0.0.1:" + port)
                    .redirectErrorStream(true).start();
            try (OutputStream in = debugger.getOutputStream()) {
                in.write("threads\nquit\n".getBytes(StandardCharsets.UTF_8));
            }
            assertTrue(debugger.waitFor(120, TimeUnit.SECONDS), "jdb did not finish");
            String listed = new String(debugger.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(listed.contains("main") && listed.contains("Reference Handler"),
                    "jdb listed no threads:\n" + listed);
            try (OutputStream in = debuggee.getOutputStream()) {
                in.write("go\n".getBytes(StandardCharsets.UTF_8));
            }
            String result; // JDWP prints its listening line again once the debugger has gone
            while ((result = out.readLine()) != null && !result.startsWith("charged "))
                continue;
            assertTrue(result != null, "the debuggee printed no result");
            assertTrue(debuggee.waitFor(120, TimeUnit.SECONDS), "the debuggee did not finish");
            assertEquals(0, debuggee.exitValue(), "debuggee exit; it printed " + result);
            String[] f = result.split(" ");
            assertEquals("charged", f[0], result);
            assertTrue(Long.parseLong(f[1]) >= 20 * MS, "after the debugger: " + result);
            assertEquals("JAVAAGENT EXACT", f[2] + " " + f[3]);
        } finally {
            debuggee.destroyForcibly();
        }
    }
}
