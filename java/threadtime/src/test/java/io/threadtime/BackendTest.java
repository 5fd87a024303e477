package io.threadtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Every backend this JDK can run (JNI, and FFM on 22+), call by call. */
class BackendTest {
    private static final int ESRCH = 3;
    private static final int EINVAL = 22;

    static List<String> backends() {
        return Backends.names();
    }

    /** The named backend, its FFM handles linked now: the calls below go through them, not through JNI. */
    private static Backend backend(String name) {
        Backend b = Backends.create(name);
        b.linkNow();
        return b;
    }

    /** The kernel tid of the calling thread, the last name in its /proc task path. */
    private static int tidFromProc() {
        return Integer.parseInt(Work.ownTask().getFileName().toString());
    }

    @ParameterizedTest
    @MethodSource("backends")
    void callingThreadClocks(String name) {
        Backend b = backend(name);
        assertEquals(name, b.name());
        Work.burn(5_000_000);
        long total = b.selfTotal();
        assertTrue(total >= 5_000_000, () -> "total " + total);
        assertTrue(b.selfUser() >= 0);
        assertTrue(b.selfSystem() >= 0);
        assertTrue(b.selfTotal() >= total);
    }

    @ParameterizedTest
    @MethodSource("backends")
    void handleOnTheCallingThread(String name) throws Exception {
        Backend b = backend(name);
        long before = b.selfTotal();
        long h = b.threadOpenSelf();
        assertTrue(h > 0, () -> "open: " + h);
        try {
            assertEquals(tidFromProc(), b.threadTid(h));
            assertTrue(b.threadTotal(h) >= before);
            assertTrue(b.threadUser(h) >= 0);
            assertTrue(b.tidSystem(b.threadTid(h)) >= 0);
            long[] split = new long[3];
            assertEquals(0, b.threadTimes(h, split));
            Work.assertSplit(CpuTimes.of(split));
            assertTrue(split[2] >= before);
        } finally {
            b.threadClose(h);
        }
    }

    @ParameterizedTest
    @MethodSource("backends")
    void handleOfAnExitedThreadReportsEsrch(String name) throws Exception {
        Backend b = backend(name);
        long[] handle = new long[1];
        Work.dead(() -> handle[0] = b.threadOpenSelf());
        assertTrue(handle[0] > 0);
        try {
            // join() returns when the Java thread is done; its native thread
            // exits a moment later, and the handle notices that exit
            long wallEnd = System.nanoTime() + Work.DEADLINE_NS;
            while (b.threadTotal(handle[0]) >= 0 && System.nanoTime() < wallEnd) {
                Thread.onSpinWait();
            }
            assertEquals(-ESRCH, b.threadTotal(handle[0]));
            assertEquals(-ESRCH, b.threadUser(handle[0]));
            assertEquals(-ESRCH, b.threadTimes(handle[0], new long[3]));
        } finally {
            b.threadClose(handle[0]);
        }
    }

    @ParameterizedTest
    @MethodSource("backends")
    void processAndErrors(String name) {
        Backend b = backend(name);
        assertTrue(b.processTotal() >= b.selfTotal());
        assertTrue(b.processUser() >= 0);
        long[] split = new long[3];
        assertEquals(0, b.processTimes(split));
        Work.assertSplit(CpuTimes.of(split));
        assertEquals(-EINVAL, b.tidSystem(-1));
        Backend reference = Native.B;
        assertEquals(reference.strerror(-ESRCH), b.strerror(-ESRCH));
        assertTrue(b.strerror(-ESRCH).length() > 0);
        assertEquals(reference.version(), b.version());
    }
}
