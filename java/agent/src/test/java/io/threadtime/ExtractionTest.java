package io.threadtime;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Where the bundled natives are extracted, in child JVMs given a
 * java.io.tmpdir that another user could change: nothing is loaded from a
 * place another user controls, nothing is created where it should not be,
 * nothing is left behind.
 */
class ExtractionTest {
    /** The uid another user's files get here; the suite runs as root in CI. */
    private static final int NOBODY = 65534;

    private static ChildJvm childWithTmpdir(Path tmpdir) throws Exception {
        return ChildJvm.run(List.of(ChildJvm.GRANT, "-Djava.io.tmpdir=" + tmpdir));
    }

    private static String sharedName() {
        return "threadtime-" + System.getProperty("user.name").replaceAll("[^A-Za-z0-9._-]", "_");
    }

    private static Set<String> names(Path dir) throws Exception {
        try (Stream<Path> s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).collect(Collectors.toSet());
        }
    }

    /** The library this JVM loaded: the JAR's, extracted. */
    private static Path loaded() {
        return Paths.get(NativeLibrary.load());
    }

    private static Path privateDir(Path parent, String name) throws Exception {
        return Files.createDirectory(parent.resolve(name), PosixFilePermissions.asFileAttribute(ExtractionDirectory.ownerOnly()));
    }

    /** Skips (one line) unless this runs as root, which can give files to another user. */
    private static void assumeRoot() throws Exception {
        assumeTrue((Integer) Files.getAttribute(Paths.get("/proc/self"), "unix:uid") == 0,
                "needs root to give a directory to another user (uid " + NOBODY + ")");
    }

    @Test
    void aTmpdirOfAnotherUserIsRefusedAndNothingIsCreatedInIt(@TempDir Path dir) throws Exception {
        assumeRoot();
        Path theirs = Files.createDirectory(dir.resolve("myapp"));
        Files.setAttribute(theirs, "unix:uid", NOBODY);
        ChildJvm c = childWithTmpdir(theirs);
        assertNotEquals(0, c.exit(), c::toString);
        assertTrue(c.err().contains(theirs + " belongs to uid " + NOBODY), c::toString);
        assertEquals(Set.of(), names(theirs), "nothing created in another user's directory");
    }

    @Test
    void aWorldWritableTmpdirIsRefused(@TempDir Path dir) throws Exception {
        Path open = Files.createDirectory(dir.resolve("open"));
        Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rwxrwxrwx"));
        ChildJvm c = childWithTmpdir(open);
        assertNotEquals(0, c.exit(), c::toString);
        assertTrue(c.err().contains(open + " is writable by other users"), c::toString);
        assertEquals(Set.of(), names(open));
        // The same directory, sticky as /tmp is: usable.
        Files.setAttribute(open, "unix:mode", 01777);
        ChildJvm sticky = childWithTmpdir(open);
        assertEquals(0, sticky.exit(), sticky::toString);
        assertTrue(sticky.value("source").startsWith(open.resolve(sharedName()) + "/"), sticky::toString);
    }

    @Test
    void aMissingTmpdirCreatesNothing(@TempDir Path dir) throws Exception {
        Path missing = dir.resolve("absent").resolve("deeper");
        ChildJvm c = childWithTmpdir(missing);
        assertNotEquals(0, c.exit(), c::toString);
        assertTrue(c.err().contains("java.io.tmpdir " + missing + " does not exist"), c::toString);
        assertFalse(Files.exists(dir.resolve("absent")), c::toString);
    }

    /** A link at the shared name, to a private directory of ours holding the
     * right file, is not followed: a link can be switched to another user's
     * directory between the check and the load. */
    @Test
    void aLinkAtTheSharedNameIsNotFollowed(@TempDir Path dir) throws Exception {
        Path target = privateDir(dir, "elsewhere");
        Path planted = Files.copy(loaded(), target.resolve(loaded().getFileName()));
        Files.createSymbolicLink(dir.resolve(sharedName()), target);
        ChildJvm c = childWithTmpdir(dir);
        assertEquals(0, c.exit(), c::toString);
        String source = c.value("source");
        assertFalse(source.startsWith(dir.resolve(sharedName()).toString()), source);
        assertTrue(source.contains("removed once loaded"), source);
        assertEquals(Set.of("elsewhere", sharedName()), names(dir), "the JVM's own directory is gone");
        assertEquals(Set.of(planted.getFileName().toString()), names(target));
    }

    /** Another user made the shared name first: each JVM uses a directory of
     * its own, and removes it once the library is loaded. */
    @Test
    void anotherUsersSharedDirectoryIsNotUsedAndNothingIsLeft(@TempDir Path dir) throws Exception {
        assumeRoot();
        Files.setAttribute(dir, "unix:mode", 01777);
        Path theirs = privateDir(dir, sharedName());
        Files.setAttribute(theirs, "unix:uid", NOBODY);
        for (int i = 0; i < 2; i++) {
            ChildJvm c = childWithTmpdir(dir);
            assertEquals(0, c.exit(), c::toString);
            assertTrue(c.value("source").startsWith(dir.resolve("threadtime-").toString()), c::toString);
            assertFalse(c.value("source").startsWith(theirs.toString()), c::toString);
        }
        // The -javaagent's hook JAR too: appended to the boot class path from
        // this JVM's own directory, which goes once the JVM has opened it.
        Path trace = dir.resolve("hooks.ttrace");
        ChildJvm probed = ProbeAgentTest.app(null, List.of("-Djava.io.tmpdir=" + dir,
                ProbeAgentTest.agent("probe=" + ProbeAgentTest.WORK + ",out=" + trace)), "calls", "3");
        assertEquals(0, probed.exit(), probed::toString);
        assertEquals(3, ProbeAgentTest.count(ProbeAgentTest.read(trace), "begin", ProbeAgentTest.WORK), probed::toString);
        assertEquals(Set.of(sharedName(), "hooks.ttrace"), names(dir), "no directory per JVM left behind");
        assertEquals(Set.of(), names(theirs));
    }

    /** A file of the right name and size but other content is replaced, not loaded. */
    @Test
    void aReusedFileIsCheckedByContent(@TempDir Path dir) throws Exception {
        Path shared = privateDir(dir, sharedName());
        byte[] real = Files.readAllBytes(loaded());
        Path copy = Files.write(shared.resolve(loaded().getFileName()), new byte[real.length]);
        ChildJvm c = childWithTmpdir(dir);
        assertEquals(0, c.exit(), c::toString);
        assertEquals(copy.toString(), c.value("source"), c::toString);
        assertArrayEquals(real, Files.readAllBytes(copy));
    }

    /** Other builds' copies go once unused for a day; recent ones stay. */
    @Test
    void oldCopiesAreRemoved(@TempDir Path dir) throws Exception {
        Path shared = privateDir(dir, sharedName());
        Path old = Files.write(shared.resolve("libthreadtime_java-0.0.9-0badc0de.so"), new byte[1]);
        Path recent = Files.write(shared.resolve("libthreadtime_java-0.0.8-00000001.so"), new byte[1]);
        Path notOurs = Files.write(shared.resolve("notes.txt"), new byte[1]);
        FileTime twoDaysAgo = FileTime.fromMillis(System.currentTimeMillis() - TimeUnit.DAYS.toMillis(2));
        for (Path p : List.of(old, notOurs)) {
            Files.setLastModifiedTime(p, twoDaysAgo);
        }
        ChildJvm c = childWithTmpdir(dir);
        assertEquals(0, c.exit(), c::toString);
        assertFalse(Files.exists(old, LinkOption.NOFOLLOW_LINKS), "another build's copy unused for two days");
        assertTrue(Files.exists(recent), "another build's copy used recently");
        assertTrue(Files.exists(notOurs), "a file threadtime did not write");
    }

    /** The path printed for -agentpath names no version or build. */
    @Test
    void theAgentPathIsStable(@TempDir Path dir) throws Exception {
        ChildJvm c = ChildJvm.run(null, List.of("-Djava.io.tmpdir=" + dir), VirtualThreadCpu.class.getName());
        assertEquals(0, c.exit(), c::toString);
        Path agent = dir.resolve(sharedName()).resolve("lib" + NativeLibrary.AGENT_NAME + ".so");
        assertEquals(agent.toString(), c.out().strip());
        assertTrue(Files.isRegularFile(agent, LinkOption.NOFOLLOW_LINKS));
    }
}
