package io.threadtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.spi.ToolProvider;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The API JAR is a real module, io.threadtime, that exports its API and
 * holds nothing else (an automatic module would export every package, and
 * jlink refuses one).
 */
class ModuleTest {
    private static Path jar() throws Exception {
        return Path.of(ThreadTime.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    }

    private static String java() {
        return ProcessHandle.current().info().command().orElseThrow();
    }

    @Test
    void onlyTheApiIsExported() throws Exception {
        ChildJvm r = ChildJvm.runMerged(List.of(java(), "--module-path", jar().toString(), "--describe-module", "io.threadtime"));
        assertEquals(0, r.exit(), r.out());
        List<String> exports = r.out().lines().filter(l -> l.startsWith("exports ")).toList();
        assertEquals(List.of("exports io.threadtime"), exports, r.out());
        // Nothing but the API: the hook classes and ASM are the agent's (threadtime-agent).
        assertFalse(r.out().contains("contains "), r.out());
        assertFalse(r.out().contains("automatic"), r.out());
    }

    /** What the Micrometer, OpenTelemetry and Spring modules depend on holds the
     * API's own classes only: no ASM (relocated or not), no agent class, and
     * its manifest starts no agent. */
    @Test
    void theApiJarHoldsNoAsmAndNoAgent() throws Exception {
        try (JarFile jar = new JarFile(jar().toFile())) {
            List<String> foreign = jar.stream().map(JarEntry::getName).filter(n -> n.endsWith(".class"))
                    .filter(n -> !n.matches("(META-INF/versions/[0-9]+/)?(io/threadtime/[^/]+|module-info)\\.class"))
                    .toList();
            assertEquals(List.of(), foreign, "classes of another package in " + jar.getName());
            assertNull(jar.getManifest().getMainAttributes().getValue("Premain-Class"), jar.getName());
            assertNull(jar.getManifest().getMainAttributes().getValue("Main-Class"), jar.getName());
        }
    }

    @Test
    void aProgramReadsItsClockThroughTheModule() throws Exception {
        String testClasses = Path.of(example.ModuleUser.class.getProtectionDomain().getCodeSource().getLocation().toURI())
                .toString();
        List<String> cmd = new ArrayList<>(List.of(java(), "--module-path", jar().toString(),
                "--add-modules", "io.threadtime", "--enable-native-access=io.threadtime", "-cp", testClasses,
                "example.ModuleUser"));
        if (Runtime.version().feature() < 22) {
            cmd.remove("--enable-native-access=io.threadtime"); // JNI there; the flag came with FFM
        }
        ChildJvm r = ChildJvm.runMerged(cmd);
        assertEquals(0, r.exit(), r.out());
        assertTrue(r.out().contains("module=io.threadtime"), r.out());
        String cpu = r.out().lines().filter(l -> l.startsWith("cpu=")).findFirst().orElseThrow();
        assertTrue(Long.parseLong(cpu.substring(4)) > 0, r.out());
    }

    @Test
    void jlinkTakesIt(@TempDir Path dir) throws Exception {
        Optional<ToolProvider> jlink = ToolProvider.findFirst("jlink");
        Assumptions.assumeTrue(jlink.isPresent(), "this runtime has no jlink (a JRE)");
        Path image = dir.resolve("image");
        int rc = jlink.get().run(System.out, System.err, "--module-path", jar().toString(), "--add-modules",
                "io.threadtime", "--output", image.toString());
        assertEquals(0, rc, "jlink failed (see the test's stderr)");
        ChildJvm r = ChildJvm.runMerged(List.of(image.resolve("bin" + File.separator + "java").toString(), "--list-modules"));
        assertTrue(r.out().contains("io.threadtime"), r.out());
        assertTrue(Files.exists(image.resolve("bin/java")));
    }
}
