package io.threadtime;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * The flyweight event log: per-thread rings of 32-byte records stamped with
 * the cycle counter, no lock and no allocation on the recording path.
 * Recording calls made while the log is not running record nothing.
 * <p>
 * An event id is an {@code int} the program chooses (the C API's
 * {@code uint32_t}, so negative ids show up as large unsigned numbers in a
 * dump). Text is kept up to {@value #TEXT_MAX} bytes of UTF-8, cut at a
 * character boundary and at the first NUL character.
 * <p>
 * A platform thread's first record names it in the trace with its Java name
 * (up to {@value #NAME_MAX} bytes; once per thread and run, so a later
 * {@code setName} is not followed; {@link #threadName} names it otherwise).
 * The check costs one array load per call.
 * <pre>{@code
 * EventLog.start();
 * EventLog.event(1);
 * try (EventLog.Interval i = EventLog.interval(2)) {
 *     work();
 * }
 * EventLog.dump(Path.of("run.ttrace"));   // then: threadtime dump run.ttrace
 * }</pre>
 */
public final class EventLog {
    /** Bytes of text an event keeps (TT_EVENT_TEXT_MAX). */
    public static final int TEXT_MAX = 16;
    /** Fewest records a thread's ring may hold (TT_LOG_RING_MIN). */
    public static final int RING_MIN = 16;
    /** Most records a thread's ring may hold (TT_LOG_RING_MAX). */
    public static final int RING_MAX = 1 << 23;

    /**
     * Each thread's encoded text and the string it came from. Event text is
     * usually a literal, so the same String instance again (an identity
     * check) skips the encoding.
     */
    private static final class Text {
        final byte[] bytes = new byte[TEXT_MAX + 1];
        String last = "";
    }

    private static final ThreadLocal<Text> TEXT = ThreadLocal.withInitial(Text::new);

    private EventLog() {}

    /**
     * How to run the log; a zero or null field means the core's environment
     * variable, else its default (see the C header event.h).
     *
     * @param ringRecords    records per thread ring, rounded up to a power of two
     * @param crashFile      crash-safe mode: rings live in this file, readable
     *                       by {@code threadtime dump} after the process dies
     * @param exitDump       a trace file written when the process exits
     * @param cpuOnIntervals interval bounds also record the thread's CPU time
     */
    public record Options(int ringRecords, Path crashFile, Path exitDump, boolean cpuOnIntervals) {
        /** Everything from the environment or the core's defaults. */
        public static Options defaults() {
            return new Options(0, null, null, false);
        }
    }

    /**
     * Starts recording with the core's defaults; drops the rings of an
     * earlier run. Takes ~10 ms the first time (counter calibration).
     *
     * @throws ThreadTimeException with errno EALREADY if the log is running
     */
    public static void start() {
        start(Options.defaults());
    }

    /** Starts recording with these options; see {@link #start()}. */
    public static void start(Options options) {
        Objects.requireNonNull(options, "options");
        int rc = Native.B.logStart(options.ringRecords(), cString(options.crashFile()),
                cString(options.exitDump()), options.cpuOnIntervals());
        Consumer<String> agent = agentRunsLog;
        if (rc == -EALREADY && agent != null) {
            // The -javaagent started it for its probes: the program's own
            // events go into the same log, which the agent writes at exit.
            if (!toldAgentRuns) {
                toldAgentRuns = true;
                agent.accept("the event log already runs for the agent's probes; "
                        + "EventLog.start keeps it (with the agent's options), the agent writes it at exit");
            }
            return;
        }
        ThreadTimeException.check(rc);
        ThreadNames.forget(); // a new run: every thread is named again at its first record
    }

    private static final int EALREADY = 114;
    /** Set by the -javaagent once it has started the log itself: where it
     * says what it tells the program (its log at level info). */
    static volatile Consumer<String> agentRunsLog;
    private static volatile boolean toldAgentRuns;

    /**
     * Names an event id in every trace written afterwards (the trace carries
     * an id-to-name table; naming an id again replaces its name). Names live
     * outside the log, so they may be given before {@link #start} and
     * survive a restart. Not for a hot path (it may lock and allocate).
     * Probes of the {@code -javaagent} take ids from {@value #PROBE_IDS} up.
     *
     * @throws IllegalArgumentException if the name holds a NUL character
     * @throws ThreadTimeException with errno EINVAL if the name is empty or
     *         longer than {@value #NAME_MAX} bytes of UTF-8
     */
    public static void name(int id, String name) {
        if (Objects.requireNonNull(name, "name").indexOf('\0') >= 0) {
            throw new IllegalArgumentException("threadtime: an event name cannot hold a NUL character");
        }
        ThreadTimeException.check(Native.B.eventName(id, utf8z(name)));
    }

    /** Longest event name kept, in bytes of UTF-8 (TT_EVENT_NAME_MAX). */
    public static final int NAME_MAX = 255;
    /** The first id the agent's probes use; they count up from here. */
    public static final int PROBE_IDS = 0x7000_0000;

    /**
     * Stops recording; the rings stay readable by {@link #dump} until the
     * next start.
     *
     * @throws ThreadTimeException with errno ESRCH if the log is not running
     */
    public static void stop() {
        ThreadTimeException.check(Native.B.logStop());
    }

    /**
     * Writes every thread's ring to a trace file (running or stopped; the
     * rings are not consumed). Read it with {@code threadtime dump}.
     *
     * @throws ThreadTimeException with errno ESRCH if the log never ran, or
     *         the errno of writing the file (which is then removed)
     */
    public static void dump(Path path) {
        ThreadTimeException.check(Native.B.logDump(cString(Objects.requireNonNull(path, "path"))));
    }

    /**
     * Names the calling thread in the log instead of its Java name (which
     * its first event gives it otherwise). The trace keeps the whole name;
     * its first 15 bytes also go where readers of format 1.1 look.
     *
     * @throws ThreadTimeException with errno ESRCH if the log is not running,
     *         EINVAL if the name is empty or longer than {@value #NAME_MAX}
     *         bytes of UTF-8
     */
    public static void threadName(String name) {
        ThreadNames.mark(Thread.currentThread());
        ThreadTimeException.check(Native.B.logThreadName(utf8z(Objects.requireNonNull(name, "name"))));
    }

    /** An instant event. */
    public static void event(int id) {
        ThreadNames.first();
        Native.B.event(id);
    }

    /** An instant event with text (the first {@value #TEXT_MAX} bytes; null: empty). */
    public static void event(int id, String text) {
        ThreadNames.first();
        String s = text == null ? "" : text;
        Text t = TEXT.get();
        if (s != t.last) {
            encode(s, t.bytes);
            t.last = s;
        }
        Native.B.eventText(id, t.bytes);
    }

    /** An instant event with a 64-bit value. */
    public static void event(int id, long value) {
        ThreadNames.first();
        Native.B.eventValue(id, value);
    }

    /** Opens an interval; a reader pairs it with the next {@link #end} of the same id on this thread. */
    public static void begin(int id) {
        ThreadNames.first();
        Native.B.eventBegin(id);
    }

    /** Closes the latest open interval of this id on this thread. */
    public static void end(int id) {
        ThreadNames.first();
        Native.B.eventEnd(id);
    }

    /** {@link #begin} now and {@link #end} at close, for try-with-resources. */
    public static Interval interval(int id) {
        begin(id);
        return new Interval(id);
    }

    /** An open interval; closing it records its end. */
    public static final class Interval implements AutoCloseable {
        private final int id;

        private Interval(int id) {
            this.id = id;
        }

        @Override
        public void close() {
            end(id);
        }
    }

    /**
     * Writes text as UTF-8 into buf: at most TEXT_MAX bytes, never half a
     * character, stopping at a NUL character, then a NUL. Unpaired
     * surrogates become '?', as String.getBytes does.
     */
    static byte[] encode(String text, byte[] buf) {
        int n = 0;
        // ASCII, the common case: one store per character
        int ascii = Math.min(text.length(), TEXT_MAX);
        for (char c; n < ascii && (c = text.charAt(n)) > 0 && c < 0x80; n++) {
            buf[n] = (byte) c;
        }
        for (int i = n; i < text.length(); ) {
            int c = text.codePointAt(i);
            i += Character.charCount(c);
            if (c == 0) {
                break;
            }
            if (Character.isSurrogate((char) c) && c < 0x10000) {
                c = '?';
            }
            int len = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
            if (n + len > TEXT_MAX) {
                break;
            }
            if (len == 1) {
                buf[n++] = (byte) c;
                continue;
            }
            // lead byte: len high bits set, then the top bits of c
            buf[n++] = (byte) ((0xF00 >> len) | (c >> (6 * (len - 1))));
            for (int k = len - 2; k >= 0; k--) {
                buf[n++] = (byte) (0x80 | ((c >> (6 * k)) & 0x3F));
            }
        }
        buf[n] = 0;
        return buf;
    }

    /** A path as a C string; null stays null (the core's "none"). */
    private static byte[] cString(Path path) {
        return path == null ? null : utf8z(path.toString());
    }

    /** NUL-terminated UTF-8. */
    private static byte[] utf8z(String s) {
        byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
        return Arrays.copyOf(utf8, utf8.length + 1);
    }
}
