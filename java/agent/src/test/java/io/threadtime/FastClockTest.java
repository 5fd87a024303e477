package io.threadtime;

import static io.threadtime.Work.PLATFORM;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.channels.Pipe;
import java.nio.file.Files;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The calling thread's CPU time as {@link ThreadTime#currentThreadCpuTime()}
 * and the drop-in bean read it (the core's {@code tt_self_fast_ns}): the
 * kernel's clock, without a system call while the kernel shows no switch.
 * Checked against the JDK's own reads of the same clock around it, never
 * for speed.
 */
class FastClockTest {
    private static final long MS = 1_000_000;
    /** A blocking wait inside an interval: if it were counted as CPU, the
     * interval would exceed the JDK's by this much, far beyond the bound. */
    private static final long BLOCKED_NS = 20 * MS;

    /** The bound the API states is the core's (include/threadtime/cpu.h). */
    @Test
    void boundIsTheCores() throws Exception {
        String text = Files.readString(SourceTree.file("include/threadtime/cpu.h"));
        Matcher bound = Pattern.compile("#define TT_FAST_BOUND_NS INT64_C\\((\\d+)\\)").matcher(text);
        assertTrue(bound.find(), "TT_FAST_BOUND_NS not found");
        assertEquals(Long.parseLong(bound.group(1)), ThreadTime.FAST_CLOCK_BOUND_NANOS);
    }

    @Test
    void theClockInUseIsNamed() {
        String name = ThreadTime.currentThreadCpuClock();
        assertTrue(name.equals("rseq+tsc") || name.equals("rseq+cntvct") || name.startsWith("syscall: "), name);
    }

    /** Blocked time is never CPU time: a sleep, a futex wait (park) and a
     * read of an empty pipe inside an interval add nothing beyond what the
     * JDK's reads around the interval saw. */
    @Test
    void blockingInsideAnIntervalIsNotCounted() throws Exception {
        Work.burn(5 * MS);
        Pipe pipe = Pipe.open();
        try {
            List<Blocking> waits = List.of(
                    () -> Thread.sleep(BLOCKED_NS / MS),
                    () -> LockSupport.parkNanos(BLOCKED_NS),
                    () -> readAfterDelay(pipe));
            for (int round = 0; round < 3; round++) {
                for (Blocking w : waits) {
                    long jdkBefore = PLATFORM.getCurrentThreadCpuTime();
                    long fastBefore = ThreadTime.currentThreadCpuTime();
                    Work.burn(MS);
                    w.run();
                    long fastAfter = ThreadTime.currentThreadCpuTime();
                    long jdkAfter = PLATFORM.getCurrentThreadCpuTime();
                    String what = "round " + round + ": JDK " + jdkBefore + " .. " + jdkAfter + ", fast " + fastBefore
                            + " .. " + fastAfter;
                    assertTrue(jdkBefore <= fastBefore && fastBefore <= fastAfter, what);
                    assertTrue(fastAfter <= jdkAfter + ThreadTime.FAST_CLOCK_BOUND_NANOS, what);
                    assertTrue(fastAfter - fastBefore >= MS, "the burn was counted: " + what);
                }
            }
        } finally {
            pipe.source().close();
            pipe.sink().close();
        }
    }

    private interface Blocking {
        void run() throws Exception;
    }

    /** A read of an empty pipe that another thread fills after BLOCKED_NS. */
    private static void readAfterDelay(Pipe pipe) throws Exception {
        Thread writer = new Thread(() -> {
            LockSupport.parkNanos(BLOCKED_NS);
            try {
                pipe.sink().write(ByteBuffer.wrap(new byte[] {1}));
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }, "pipe-writer");
        writer.start();
        assertEquals(1, pipe.source().read(ByteBuffer.allocate(1)));
        writer.join();
    }

    /** Monotonic across many reads, with yields and short sleeps between
     * some of them (each may move the thread to another CPU or switch it out). */
    @Test
    void readsNeverGoBack() throws Exception {
        long last = ThreadTime.currentThreadCpuTime();
        for (int i = 0; i < 200_000; i++) {
            if (i % 10_000 == 0) {
                Thread.sleep(1);
            } else if (i % 1_000 == 0) {
                Thread.yield();
            }
            long now = ThreadTime.currentThreadCpuTime();
            assertTrue(now >= last, i + ": " + now + " after " + last);
            last = now;
        }
    }

    /** The off switch: every read a system call, and the name says why;
     * a value that is neither on nor off changes nothing and says so. */
    @Test
    void thePropertySwitchesItOff() throws Exception {
        ChildJvm off = ChildJvm.run(List.of(ChildJvm.GRANT, "-D" + FastClock.PROPERTY + "=false"));
        assertEquals(0, off.exit(), off.toString());
        assertTrue(off.value("clock").startsWith("syscall: "), off.toString());
        assertTrue(Long.parseLong(off.value("cpu")) > 0, off.toString());
        ChildJvm bad = ChildJvm.run(List.of(ChildJvm.GRANT, "-D" + FastClock.PROPERTY + "=maybe"));
        assertEquals(0, bad.exit(), bad.toString());
        assertTrue(bad.err().contains("-D" + FastClock.PROPERTY + "=maybe ignored: expected on or off"), bad.toString());
        assertEquals(ThreadTime.currentThreadCpuClock(), bad.value("clock"), bad.toString());
    }

    /** The -javaagent's exact mode reads the carrier's clock the same way,
     * says so, and fastclock=off turns that off; a bad value stops the JVM. */
    @Test
    void theAgentNamesItsClockAndTakesTheSwitch() throws Exception {
        String jar = ProbeAgentTest.jar();
        ChildJvm on = ChildJvm.run(List.of(ChildJvm.GRANT, "-javaagent:" + jar + "=mode=exact"));
        ChildJvm off = ChildJvm.run(List.of(ChildJvm.GRANT, "-javaagent:" + jar + "=mode=exact,fastclock=off"));
        assertEquals(0, on.exit(), on.toString());
        assertEquals(0, off.exit(), off.toString());
        assertTrue(off.value("clock").startsWith("syscall: "), off.toString());
        if (Runtime.version().feature() >= 21) {
            String how = on.value("clock");
            String expected = (how.startsWith("syscall: ") ? "thread-cpu (" : "thread-cpu-fast (") + how + ")";
            assertEquals(expected, on.value("vclock"), on.toString());
            assertEquals("thread-cpu (" + off.value("clock") + ")", off.value("vclock"), off.toString());
        }
        ChildJvm bad = ChildJvm.run(List.of(ChildJvm.GRANT, "-javaagent:" + jar + "=fastclock=maybe"));
        assertTrue(bad.exit() != 0, bad.toString());
        assertTrue(bad.err().contains("'fastclock=maybe'") && bad.err().contains("expected on or off"), bad.toString());
    }
}
