package io.threadtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** How the library is found, in this JVM and in child JVMs started with other settings. */
class NativeLibraryTest {
    /** What a child JVM printed and how it ended. */
    record Child(int exit, String out, String err) {
        String value(String key) {
            return out.lines().filter(l -> l.startsWith(key + "=")).map(l -> l.substring(key.length() + 1))
                    .findFirst().orElse(null);
        }

        @Override
        public String toString() {
            return "exit " + exit + "\nstdout:\n" + out + "\nstderr:\n" + err;
        }
    }

    /** Runs ChildMain on this JVM's java with these JVM options, on this class path. */
    private static Child child(String... options) throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add(ProcessHandle.current().info().command().orElseThrow());
        cmd.addAll(List.of(options));
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(ChildMain.class.getName());
        Process p = new ProcessBuilder(cmd).start();
        CompletableFuture<String> err = CompletableFuture.supplyAsync(() -> drain(p.getErrorStream()));
        String out = drain(p.getInputStream());
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), "child JVM hung");
        return new Child(p.exitValue(), out, err.get());
    }

    private static String drain(InputStream in) {
        try {
            ByteArrayOutputStream buf = new ByteArrayOutputStream();
            in.transferTo(buf);
            return buf.toString(StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new RuntimeException(e);
        }
    }

    private static String grant() {
        return "--enable-native-access=ALL-UNNAMED";
    }

    @Test
    void bundledCopyIsExtractedUnderAVersionedNameInAPrivateDirectory() throws Exception {
        Path lib = Paths.get(NativeLibrary.load());
        assertTrue(lib.getFileName().toString().matches(
                "libthreadtime_java-" + NativeLibrary.version().replace(".", "\\.") + "-[0-9a-f]{8}\\.so"), lib::toString);
        assertTrue(Files.isRegularFile(lib));
        assertEquals(PosixFilePermissions.fromString("rwx------"), Files.getPosixFilePermissions(lib.getParent()));
    }

    @Test
    void childJvmsReuseTheExtractedFile() throws Exception {
        Child c = child(grant());
        assertEquals(0, c.exit, c::toString);
        assertEquals(NativeLibrary.load(), c.value("source"), c::toString);
        assertTrue(Long.parseLong(c.value("cpu")) > 0, c::toString);
    }

    @Test
    void systemPropertyComesFirst(@TempDir Path dir) throws Exception {
        Path copy = Files.copy(Paths.get(NativeLibrary.load()), dir.resolve("elsewhere.so"));
        Child c = child(grant(), "-D" + NativeLibrary.PROPERTY + "=" + copy);
        assertEquals(0, c.exit, c::toString);
        assertEquals(copy.toString(), c.value("source"), c::toString);
        Child missing = child(grant(), "-D" + NativeLibrary.PROPERTY + "=" + dir.resolve("absent.so"));
        assertNotEquals(0, missing.exit, missing::toString);
        assertTrue(missing.err.contains("absent.so"), missing::toString);
    }

    @Test
    void javaLibraryPathComesBeforeExtraction(@TempDir Path dir) throws Exception {
        Files.copy(Paths.get(NativeLibrary.load()), dir.resolve("lib" + NativeLibrary.NAME + ".so"));
        Child c = child(grant(), "-Djava.library.path=" + dir);
        assertEquals(0, c.exit, c::toString);
        assertEquals("java.library.path", c.value("source"), c::toString);
    }

    @Test
    void backendCanBeChosen() throws Exception {
        Child jni = child(grant(), "-D" + Native.BACKEND_PROPERTY + "=jni");
        assertEquals(0, jni.exit, jni::toString);
        assertEquals("jni", jni.value("backend"));
        Child bad = child(grant(), "-D" + Native.BACKEND_PROPERTY + "=nope");
        assertNotEquals(0, bad.exit, bad::toString);
        assertTrue(bad.err.contains("no backend 'nope'"), bad::toString);
    }

    @Test
    void missingNativeAccessIsNamedAndTheLibraryStillWorks() throws Exception {
        assumeTrue(Runtime.version().feature() >= 22, "native access is restricted from JDK 22");
        Child c = child();
        assertEquals(0, c.exit, c::toString);
        assertTrue(c.err.contains("threadtime: native access is not enabled"), c::toString);
        assertTrue(c.err.contains("--enable-native-access=ALL-UNNAMED"), c::toString);
        assertTrue(Long.parseLong(c.value("cpu")) > 0, c::toString);
        Child granted = child(grant());
        assertTrue(!granted.err.contains("threadtime: native access"), granted::toString);
    }

    @Test
    void deniedNativeAccessFailsNamingTheFlag() throws Exception {
        assumeTrue(Runtime.version().feature() >= 24, "--illegal-native-access exists from JDK 24");
        Child c = child("--illegal-native-access=deny");
        assertNotEquals(0, c.exit, c::toString);
        assertTrue(c.err.contains("--enable-native-access=ALL-UNNAMED"), c::toString);
        assertTrue(c.err.contains("IllegalCallerException"), c::toString);
    }
}
