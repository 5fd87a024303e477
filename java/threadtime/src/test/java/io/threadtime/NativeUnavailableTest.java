package io.threadtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Where the native library cannot load, the drop-in bean answers from the
 * platform bean, this is said once, and ThreadTime calls throw an exception
 * that names the platform and what still works.
 */
class NativeUnavailableTest {
    private static ChildJvm child(String... options) throws Exception {
        List<String> jvm = new ArrayList<>(List.of(ChildJvm.GRANT));
        jvm.addAll(List.of(options));
        return ChildJvm.run(null, jvm, UnavailableChild.class.getName());
    }

    /** The checks both failures share; the platform's name as the message gives it. */
    private static void beanAnswersAndCallsThrow(ChildJvm c, String platform) {
        assertEquals(0, c.exit(), c::toString);
        for (String figure : List.of("current", "currentUser", "other", "manySelf")) {
            assertEquals("true", c.value(figure), () -> figure + "\n" + c);
        }
        assertEquals("-1", c.value("ended"), c::toString);
        List<String> threw = c.out().lines().filter(l -> l.startsWith("threw=")).toList();
        assertEquals(2, threw.size(), c::toString);
        for (String t : threw) {
            assertTrue(t.contains("threadtime cannot work on " + platform), c::toString);
            assertTrue(t.contains("ThreadTimeMXBean still answers"), c::toString);
        }
        long said = c.err().lines().filter(l -> l.contains("threadtime cannot work on")).count();
        assertEquals(1, said, c::toString);
    }

    @Test
    void aMissingLibraryLeavesTheBeanAnsweringFromThePlatform() throws Exception {
        ChildJvm c = child("-D" + NativeLibrary.PROPERTY + "=/nonexistent/libthreadtime_java.so");
        beanAnswersAndCallsThrow(c, NativeLibrary.platform());
        assertTrue(c.out().contains("/nonexistent/libthreadtime_java.so"), c::toString);
        assertTrue(c.out().contains("named by -D" + NativeLibrary.PROPERTY), c::toString);
    }

    /** os.arch as a JVM on another processor reports it (the JVM lets the command line set it). */
    @Test
    void aPlatformWithoutNativesIsNamedWithThePlatformsTheJarCarries() throws Exception {
        ChildJvm c = child("-Dos.arch=riscv64");
        beanAnswersAndCallsThrow(c, "linux-riscv64");
        assertTrue(c.out().contains("bundles native libraries for linux-x86_64 and linux-aarch64, not linux-riscv64"),
                c::toString);
        assertTrue(!c.err().contains("UnsatisfiedLinkError") && !c.out().contains("NoClassDefFoundError"), c::toString);
    }

    /** os.arch set to what no JDK knows: the message says the option is the cause. */
    @Test
    void anArchGivenOnTheCommandLineIsNamed() throws Exception {
        ChildJvm c = child("-Dos.arch=foo");
        beanAnswersAndCallsThrow(c, "linux-foo");
        assertTrue(c.out().contains("not linux-foo"), c::toString);
        assertTrue(c.out().contains("-Dos.arch=foo is on the java command line"), c::toString);
    }
}
