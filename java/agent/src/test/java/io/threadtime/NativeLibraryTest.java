package io.threadtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** How the library is found, in this JVM and in child JVMs started with other settings. */
class NativeLibraryTest {
    private static ChildJvm child(String... options) throws Exception {
        return ChildJvm.run(List.of(options));
    }

    private static String grant() {
        return ChildJvm.GRANT;
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
        ChildJvm c = child(grant());
        assertEquals(0, c.exit(), c::toString);
        assertEquals(NativeLibrary.load(), c.value("source"), c::toString);
        assertTrue(Long.parseLong(c.value("cpu")) > 0, c::toString);
    }

    @Test
    void systemPropertyComesFirst(@TempDir Path dir) throws Exception {
        Path copy = Files.copy(Paths.get(NativeLibrary.load()), dir.resolve("elsewhere.so"));
        ChildJvm c = child(grant(), "-D" + NativeLibrary.PROPERTY + "=" + copy);
        assertEquals(0, c.exit(), c::toString);
        assertEquals(copy.toString(), c.value("source"), c::toString);
        ChildJvm missing = child(grant(), "-D" + NativeLibrary.PROPERTY + "=" + dir.resolve("absent.so"));
        assertNotEquals(0, missing.exit(), missing::toString);
        assertTrue(missing.err().contains("absent.so"), missing::toString);
    }

    /** A library that is not threadtime's (here the agent this JAR also
     * carries) is refused when it is loaded, by every backend, with a
     * message that names the file and the fix; not at some later call. */
    @Test
    void aWrongLibraryIsRefusedAtLoadNamingTheFileAndTheFix() throws Exception {
        String wrong = VirtualThreadCpu.agentPath().toString();
        for (String backend : Backends.names()) {
            ChildJvm c = child(grant(), "-D" + NativeLibrary.PROPERTY + "=" + wrong, "-D" + Native.BACKEND_PROPERTY + "=" + backend);
            assertNotEquals(0, c.exit(), c::toString);
            assertTrue(c.err().contains("threadtime: the native library " + wrong), c::toString);
            assertTrue(c.err().contains("point -D" + NativeLibrary.PROPERTY + " at libthreadtime_java.so of threadtime "
                    + NativeLibrary.version()), c::toString);
        }
    }

    @Test
    void javaLibraryPathComesBeforeExtraction(@TempDir Path dir) throws Exception {
        Files.copy(Paths.get(NativeLibrary.load()), dir.resolve("lib" + NativeLibrary.NAME + ".so"));
        ChildJvm c = child(grant(), "-Djava.library.path=" + dir);
        assertEquals(0, c.exit(), c::toString);
        assertEquals("java.library.path", c.value("source"), c::toString);
    }

    /** Another library on java.library.path: the message names the file and where it was found. */
    @Test
    void aWrongLibraryOnJavaLibraryPathIsNamed(@TempDir Path dir) throws Exception {
        Files.copy(VirtualThreadCpu.agentPath(), dir.resolve("lib" + NativeLibrary.NAME + ".so"));
        for (String backend : Backends.names()) {
            ChildJvm c = child(grant(), "-Djava.library.path=" + dir, "-D" + Native.BACKEND_PROPERTY + "=" + backend);
            assertNotEquals(0, c.exit(), c::toString);
            assertTrue(c.err().contains("threadtime: the native library libthreadtime_java.so, found on java.library.path ("
                    + dir + "),"), c::toString);
        }
    }

    @Test
    void backendCanBeChosen() throws Exception {
        ChildJvm jni = child(grant(), "-D" + Native.BACKEND_PROPERTY + "=jni");
        assertEquals(0, jni.exit(), jni::toString);
        assertEquals("jni", jni.value("backend"));
        ChildJvm bad = child(grant(), "-D" + Native.BACKEND_PROPERTY + "=nope");
        assertNotEquals(0, bad.exit(), bad::toString);
        assertTrue(bad.err().contains("no backend 'nope'"), bad::toString);
    }

    /** Without the flag the JDK's own warning names it; threadtime adds no line to it and works. */
    @Test
    void missingNativeAccessAddsNoLineOfThreadtimesAndTheLibraryStillWorks() throws Exception {
        assumeTrue(Runtime.version().feature() >= 22, "native access is restricted from JDK 22");
        ChildJvm c = child();
        assertEquals(0, c.exit(), c::toString);
        assertTrue(c.err().contains("--enable-native-access=ALL-UNNAMED"), c::toString);
        assertTrue(c.err().lines().noneMatch(l -> l.contains("threadtime:") || l.contains("io.threadtime.Backends")),
                c::toString);
        assertTrue(Long.parseLong(c.value("cpu")) > 0, c::toString);
    }

    /** java -jar threadtime.jar: its manifest grants native access, so the JDK warns of nothing. */
    @Test
    void theJarsOwnCommandStartsWithoutWarnings(@TempDir Path dir) throws Exception {
        ChildJvm c = ChildJvm.run(null, List.of("-Djava.io.tmpdir=" + dir), "-jar", ProbeAgentTest.jar(), "version");
        assertEquals(0, c.exit(), c::toString);
        assertEquals("threadtime " + NativeLibrary.version(), c.out().strip(), c::toString);
        assertEquals("", c.err(), c::toString);
    }

    @Test
    void deniedNativeAccessFailsNamingTheFlag() throws Exception {
        assumeTrue(Runtime.version().feature() >= 24, "--illegal-native-access exists from JDK 24");
        ChildJvm c = child("--illegal-native-access=deny");
        assertNotEquals(0, c.exit(), c::toString);
        assertTrue(c.err().contains("--enable-native-access=ALL-UNNAMED"), c::toString);
        assertTrue(c.err().contains("IllegalCallerException"), c::toString);
    }
}
