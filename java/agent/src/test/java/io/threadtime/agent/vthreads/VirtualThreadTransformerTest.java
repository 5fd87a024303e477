package io.threadtime.agent.vthreads;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.threadtime.agent.vthreads.hooks.VirtualThreadHooks;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The -javaagent's shape check, on this JDK's own java.lang.VirtualThread
 * (JDK 21+) and on copies of it altered the way another JDK might differ:
 * a known shape is instrumented, any other is left exactly as it is, with a
 * reason naming what differed. Loading and charging are tested in java/agent/vthreads-tests.
 */
class VirtualThreadTransformerTest {
    static byte[] virtualThread() throws IOException {
        try (InputStream in = Object.class.getResourceAsStream("/java/lang/VirtualThread.class")) {
            Assumptions.assumeTrue(in != null, "JDK " + Runtime.version() + " has no virtual threads");
            return in.readAllBytes();
        }
    }

    /** The class with one constant-pool name replaced by another of the same length. */
    static byte[] renamed(byte[] bytes, String from, String to) {
        byte[] f = from.getBytes(StandardCharsets.UTF_8), t = to.getBytes(StandardCharsets.UTF_8);
        assertEquals(f.length, t.length);
        byte[] out = bytes.clone();
        int hits = 0;
        for (int i = 0; i + 2 + f.length <= out.length; i++) {
            // a CONSTANT_Utf8 entry: tag 1, u2 length, the bytes
            if (out[i] == 1 && out[i + 1] == 0 && out[i + 2] == f.length && regionEquals(out, i + 3, f)) {
                System.arraycopy(t, 0, out, i + 3, t.length);
                hits++;
            }
        }
        assertEquals(1, hits, "constant " + from);
        return out;
    }

    static boolean regionEquals(byte[] a, int at, byte[] b) {
        for (int k = 0; k < b.length; k++)
            if (a[at + k] != b[k])
                return false;
        return true;
    }

    static byte[] transform(VirtualThreadTransformer t, byte[] bytes) {
        return t.transform(null, VirtualThreadTransformer.TARGET, null, null, bytes);
    }

    @Test
    void thisJdksVirtualThreadIsAKnownShape() throws IOException {
        VirtualThreadTransformer t = new VirtualThreadTransformer();
        byte[] original = virtualThread();
        byte[] out = transform(t, original);
        assertNotNull(out, "not instrumented: " + t.mismatch());
        assertNull(t.mismatch());
        String text = new String(out, StandardCharsets.ISO_8859_1);
        assertTrue(text.contains("io/threadtime/agent/vthreads/hooks/VirtualThreadHooks"), "no call to the hooks");
    }

    @Test
    void otherClassesAndLoadersAreLeftAlone() throws IOException {
        VirtualThreadTransformer t = new VirtualThreadTransformer();
        byte[] original = virtualThread();
        assertNull(t.transform(null, "java/lang/Thread", null, null, original));
        assertNull(t.transform(ClassLoader.getSystemClassLoader(), VirtualThreadTransformer.TARGET, null, null, original));
    }

    @Test
    void aMissingMethodIsNamed() throws IOException {
        VirtualThreadTransformer t = new VirtualThreadTransformer();
        byte[] bytes = renamed(virtualThread(), "unmount", "unmounT");
        byte[] copy = bytes.clone();
        assertNull(transform(t, bytes));
        assertArrayEquals(copy, bytes, "the bytes were changed");
        assertTrue(t.mismatch().contains("missing methods: unmount()V"), t.mismatch());
    }

    /** Every submit method this JDK should have is required: one missing
     * would leave its hand-overs to the scheduler unstamped. */
    @Test
    void aMissingSubmitMethodIsNamed() throws IOException {
        VirtualThreadTransformer t = new VirtualThreadTransformer();
        byte[] bytes = renamed(virtualThread(), "lazySubmitRunContinuation", "lazySubmitRunContinuatioN");
        byte[] copy = bytes.clone();
        assertNull(transform(t, bytes));
        assertArrayEquals(copy, bytes, "the bytes were changed");
        assertTrue(t.mismatch().contains("missing methods: [lazySubmitRunContinuation("), t.mismatch());
    }

    /** The set is the JDK's own: JDK 21's class is not JDK 24's shape, nor the other way round. */
    @Test
    void anotherJdksSubmitMethodsAreRefused() throws IOException {
        int feature = Runtime.version().feature();
        VirtualThreadTransformer t = new VirtualThreadTransformer(
                "io/threadtime/agent/vthreads/hooks/VirtualThreadHooks", feature >= 24 ? 21 : 25);
        assertNull(transform(t, virtualThread()));
        assertTrue(t.mismatch().contains("unknown methods: [") && t.mismatch().contains("missing methods: ["),
                t.mismatch());
    }

    /** The states in which a submit is a hand-over are read from the class. */
    @Test
    void aMissingRunnableStateIsNamed() throws IOException {
        VirtualThreadTransformer t = new VirtualThreadTransformer();
        assertNull(transform(t, renamed(virtualThread(), "UNPARKED", "UNPARKEd")));
        assertTrue(t.mismatch().contains("no constant UNPARKED"), t.mismatch());
    }

    @Test
    void aMovedThreadSwitchIsNamed() throws IOException {
        VirtualThreadTransformer t = new VirtualThreadTransformer();
        assertNull(transform(t, renamed(virtualThread(), "setCurrentThread", "setCurrentThreaD")));
        assertTrue(t.mismatch().contains("Thread.setCurrentThread is called 0 time(s) in mount()"), t.mismatch());
    }

    @Test
    void aMissingFieldIsNamed() throws IOException {
        VirtualThreadTransformer t = new VirtualThreadTransformer();
        assertNull(transform(t, renamed(virtualThread(), "carrierThread", "carrierThreaD")));
        assertTrue(t.mismatch().contains("no field carrierThread"), t.mismatch());
    }

    @Test
    void aMissingContinuationFieldIsNamed() throws IOException {
        VirtualThreadTransformer t = new VirtualThreadTransformer();
        assertNull(transform(t, renamed(virtualThread(), "cont", "conT")));
        assertTrue(t.mismatch().contains("no field cont of type jdk.internal.vm.Continuation"), t.mismatch());
    }

    @Test
    void damagedBytesAreReportedNotThrown() {
        VirtualThreadTransformer t = new VirtualThreadTransformer();
        assertNull(transform(t, new byte[] {(byte) 0xCA, (byte) 0xFE, 0, 1}));
        assertTrue(t.mismatch().startsWith("reading it failed"), t.mismatch());
    }
}
