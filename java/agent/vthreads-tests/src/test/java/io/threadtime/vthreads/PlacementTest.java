package io.threadtime.vthreads;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import org.junit.jupiter.api.Test;

/**
 * Where the -javaagent keeps the accounts, in JVMs started as users start
 * them (no {@code --add-opens}, unlike the other tests' JVMs): in the
 * threads when it is the first agent; in its table, with one line saying
 * why, when an agent before it started a virtual thread. Either way a burn
 * is charged what it burned, and a thread that has ended reads -1 from the
 * hooks themselves (not only from the API's check that it is alive).
 */
class PlacementTest {
    static final String TABLE_LINE = "threadtime: the accounts go in a table, not in the virtual threads";

    @Test
    void firstAgentKeepsTheAccountsInTheThreads() throws Exception {
        Result r = run(null);
        assertTrue(!r.err.contains(TABLE_LINE), r.err);
        r.check(true);
    }

    @Test
    void afterAnAgentThatStartedAVirtualThreadTheTableIsUsed() throws Exception {
        Path dir = Files.createTempDirectory("threadtime-placement");
        Path jar = dir.resolve("early.jar");
        try {
            Manifest m = new Manifest();
            m.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
            m.getMainAttributes().put(new Attributes.Name("Premain-Class"), EarlyAgent.class.getName());
            String entry = EarlyAgent.class.getName().replace('.', '/') + ".class";
            try (OutputStream out = Files.newOutputStream(jar); JarOutputStream j = new JarOutputStream(out, m);
                 InputStream in = EarlyAgent.class.getClassLoader().getResourceAsStream(entry)) {
                j.putNextEntry(new JarEntry(entry));
                in.transferTo(j);
                j.closeEntry();
            }
            Result r = run(jar);
            assertTrue(r.err.contains(TABLE_LINE) && r.err.contains("put -javaagent:threadtime.jar first"), r.err);
            r.check(false);
        } finally {
            Files.deleteIfExists(jar);
            Files.deleteIfExists(dir);
        }
    }

    record Result(String out, String err) {
        void check(boolean inThreads) {
            String[] f = out.strip().split(" ");
            assertEquals(7, f.length, "child printed: " + out + "\n" + err);
            assertEquals("EXACT", f[0], out);
            assertEquals(Boolean.toString(inThreads), f[1], "accounts in the threads: " + out);
            assertEquals("0", f[2], "hook failures: " + out);
            ExactModeTest.assertCharged(Long.parseLong(f[3]), Long.parseLong(f[4]), "child burn");
            assertEquals(-1, Long.parseLong(f[5]), "an ended thread's figure from the hooks: " + out);
            assertTrue(Long.parseLong(f[6]) >= 0, "a parked thread's figure: " + out);
        }
    }

    /** The child, with {@code early} as an agent before threadtime's if not null. */
    static Result run(Path early) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(Paths.get(System.getProperty("java.home"), "bin", "java").toString(),
                "-Djdk.virtualThreadScheduler.parallelism=1", "--enable-native-access=ALL-UNNAMED"));
        if (Runtime.version().feature() < 24) // as the README says: the flag on 21, not on 24+
            cmd.addAll(List.of("-XX:+UnlockExperimentalVMOptions", "-XX:-DoJVMTIVirtualThreadTransitions"));
        if (early != null)
            cmd.add("-javaagent:" + early);
        cmd.addAll(List.of("-javaagent:" + System.getProperty("threadtime.test.jar"),
                "-cp", System.getProperty("java.class.path"), PlacementChild.class.getName()));
        Path err = Files.createTempFile("threadtime-placement", ".err");
        try {
            Process p = new ProcessBuilder(cmd).redirectError(err.toFile()).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(p.waitFor(120, TimeUnit.SECONDS), "the child did not finish");
            String errText = Files.readString(err);
            assertEquals(0, p.exitValue(), "child exit; stdout: " + out + "\nstderr: " + errText);
            return new Result(out, errText);
        } finally {
            Files.deleteIfExists(err);
        }
    }
}
