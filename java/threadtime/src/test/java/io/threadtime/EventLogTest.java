package io.threadtime;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The log is process-wide, so everything that runs it is one test. */
class EventLogTest {
    private static final int EALREADY = 114;

    private static boolean contains(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= haystack.length; i++) {
            for (int k = 0; k < needle.length; k++) {
                if (haystack[i + k] != needle[k]) {
                    continue outer;
                }
            }
            return true;
        }
        return false;
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    private static byte[] littleEndian(long v) {
        return ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(v).array();
    }

    @Test
    void recordsDumpsAndStops(@TempDir Path dir) throws Exception {
        long value = 0x0123456789ABCDEFL;
        EventLog.start();
        try {
            ThreadTimeException again = assertThrows(ThreadTimeException.class, EventLog::start);
            assertEquals(EALREADY, again.errno());
            EventLog.event(1);
            EventLog.event(2, "java-text-one");
            EventLog.event(3, value);
            try (EventLog.Interval i = EventLog.interval(4)) {
                EventLog.event(5, "inside");
            }
            Thread worker = new Thread(() -> {
                EventLog.threadName("evt-worker");
                EventLog.event(6, "from-worker");
            });
            worker.start();
            worker.join();
        } finally {
            EventLog.stop();
        }
        EventLog.event(7, "after-stop");
        ThreadTimeException stopped = assertThrows(ThreadTimeException.class, EventLog::stop);
        assertEquals(ThreadTimeException.ESRCH, stopped.errno());

        Path trace = dir.resolve("run.ttrace");
        EventLog.dump(trace);
        byte[] bytes = Files.readAllBytes(trace);
        assertTrue(contains(bytes, ascii("java-text-one")));
        assertTrue(contains(bytes, ascii("inside")));
        assertTrue(contains(bytes, ascii("from-worker")));
        assertTrue(contains(bytes, ascii("evt-worker")));
        assertTrue(contains(bytes, littleEndian(value)));
        assertFalse(contains(bytes, ascii("after-stop")));

        ThreadTimeException unwritable = assertThrows(ThreadTimeException.class,
                () -> EventLog.dump(dir.resolve("no-such-dir").resolve("x.ttrace")));
        assertEquals(2, unwritable.errno(), "ENOENT");

        Path crash = dir.resolve("crash.ttrace");
        EventLog.start(new EventLog.Options(64, crash, null, true));
        try {
            EventLog.event(8, "crash-safe");
            assertTrue(contains(Files.readAllBytes(crash), ascii("crash-safe")), "the ring lives in the file");
        } finally {
            EventLog.stop();
        }
    }

    @Test
    void exitDumpIsWrittenWhenTheProcessEnds(@TempDir Path dir) throws Exception {
        Path trace = dir.resolve("at-exit.ttrace");
        ChildJvm c = ChildJvm.run(java.util.List.of(ChildJvm.GRANT), trace.toString());
        assertEquals(0, c.exit(), c::toString);
        assertTrue(contains(Files.readAllBytes(trace), ascii("child-exit")), c::toString);
    }

    private static byte[] encoded(String s) {
        byte[] buf = EventLog.encode(s, new byte[EventLog.TEXT_MAX + 1]);
        int n = 0;
        while (buf[n] != 0) {
            n++;
        }
        return Arrays.copyOf(buf, n);
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void textIsUtf8CutAtACharacterBoundary() {
        assertArrayEquals(utf8("short"), encoded("short"));
        assertArrayEquals(utf8("0123456789abcdef"), encoded("0123456789abcdefXYZ"));
        // 2-byte characters: 8 fit in 16 bytes, the 9th would not
        assertArrayEquals(utf8("éééééééé"), encoded("ééééééééé"));
        // 3-byte characters: 5 fit (15 bytes), a 6th would need 18
        assertArrayEquals(utf8("€€€€€"), encoded("€€€€€€"));
        // a 4-byte character after 13 bytes does not fit
        assertArrayEquals(utf8("0123456789abc"), encoded("0123456789abc\uD83D\uDE00"));
        assertArrayEquals(utf8("ab\uD83D\uDE00"), encoded("ab\uD83D\uDE00"));
        assertArrayEquals(utf8("a?b"), encoded("a\uD83Db"));
        assertArrayEquals(utf8("before"), encoded("before\0after"));
        assertArrayEquals(new byte[0], encoded(""));
    }
}
