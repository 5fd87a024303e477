package io.threadtime.otel;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.context.Context;
import io.opentelemetry.sdk.trace.ReadWriteSpan;
import io.opentelemetry.sdk.trace.ReadableSpan;
import io.opentelemetry.sdk.trace.internal.ExtendedSpanProcessor;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

/**
 * Adds to every span the CPU time its thread spent between the span's start
 * and its end, when both happen on the same Java thread, platform or virtual.
 * <p>
 * Attributes (vendor attributes: no OpenTelemetry semantic convention covers
 * per-span CPU time yet):
 * <ul>
 * <li>{@value #TOTAL} (long, ns): CPU time of the thread over the span;</li>
 * <li>{@value #USER}, {@value #SYSTEM} (long, ns): its user/system split,
 *     on platform threads only (a consistent split, so
 *     {@code user_ns + system_ns == total_ns}; microsecond resolution);</li>
 * <li>{@value #RUN_WAIT} (long, ns): the run-queue wait of a platform
 *     thread over the span: time it was runnable but had no CPU (a busy
 *     host, or the cgroup's CPU quota), from the kernel's schedstat
 *     ({@link io.threadtime.ThreadTime#currentThreadRunWait()}); absent on
 *     a virtual thread and where the kernel keeps no schedstat;</li>
 * <li>{@value #CARRIER_WAIT}, {@value #PINNED} (long, ns): on a virtual
 *     thread, its time runnable but waiting for a carrier, and its time
 *     parked while holding its carrier (pinned), over the span
 *     ({@link io.threadtime.VirtualThreadTimes}); where its accounting keeps
 *     them (the {@code -javaagent}'s hooks), absent otherwise;</li>
 * <li>{@value #MOUNTED} (long, ns) instead of {@value #TOTAL} on a virtual
 *     thread when the accounting runs in {@code mode=mounted}: time mounted
 *     on a carrier, which is not CPU time.</li>
 * </ul>
 * A span that ends on another thread than the one it started on gets none
 * of them, never a figure of the wrong thread; nor does a span on a virtual
 * thread when no virtual-thread accounting runs. {@link #unmeasured(Reason)}
 * counts both.
 * <p>
 * Cost per span: two CPU-clock reads (a platform thread: one
 * {@code getrusage()} each; a virtual thread: one account read each), on a
 * platform thread two run-queue wait reads (each a figure kept under the
 * fast clock's run of anchors, or one {@code pread} of schedstat when the thread was
 * switched out since), and a few stores into a small per-thread stack of
 * open spans. The attributes are
 * set in {@code onEnding}, the moment before the span becomes read-only, on
 * the thread that ends it.
 */
public final class ThreadTimeSpanProcessor implements ExtendedSpanProcessor {
    public static final String TOTAL = "threadtime.cpu.total_ns";
    public static final String USER = "threadtime.cpu.user_ns";
    public static final String SYSTEM = "threadtime.cpu.system_ns";
    public static final String MOUNTED = "threadtime.vthread.mounted_ns";
    public static final String RUN_WAIT = "threadtime.sched.run_wait_ns";
    public static final String CARRIER_WAIT = "threadtime.vthread.carrier_wait_ns";
    public static final String PINNED = "threadtime.vthread.pinned_ns";

    static final AttributeKey<Long> TOTAL_KEY = AttributeKey.longKey(TOTAL);
    static final AttributeKey<Long> USER_KEY = AttributeKey.longKey(USER);
    static final AttributeKey<Long> SYSTEM_KEY = AttributeKey.longKey(SYSTEM);
    static final AttributeKey<Long> MOUNTED_KEY = AttributeKey.longKey(MOUNTED);
    static final AttributeKey<Long> RUN_WAIT_KEY = AttributeKey.longKey(RUN_WAIT);
    static final AttributeKey<Long> CARRIER_WAIT_KEY = AttributeKey.longKey(CARRIER_WAIT);
    static final AttributeKey<Long> PINNED_KEY = AttributeKey.longKey(PINNED);

    /** Why a span got no CPU attribute. */
    public enum Reason {
        /** It ended on another thread than the one it started on. */
        OTHER_THREAD("other_thread"),
        /** Its thread had no figure: a virtual thread without accounting. */
        NO_CLOCK("no_clock"),
        /** More than {@value OpenSpans#CAPACITY} spans were open on its thread at once. */
        TOO_MANY_OPEN("too_many_open");

        /** The value of the metric's {@code reason} attribute. */
        public final String attribute;

        Reason(String attribute) {
            this.attribute = attribute;
        }
    }

    private final ThreadLocal<OpenSpans> open = ThreadLocal.withInitial(OpenSpans::new);
    private final LongAdder[] unmeasured = new LongAdder[Reason.values().length];
    private final LongAdder virtualNanos = new LongAdder();

    /** Whether spans get where their thread's time off a CPU went (the run-queue wait, a carrier's). */
    private final boolean waits;

    private ThreadTimeSpanProcessor(boolean waits) {
        this.waits = waits;
        for (int i = 0; i < unmeasured.length; i++) {
            unmeasured[i] = new LongAdder();
        }
    }

    private static final AtomicBoolean REPORTED = new AtomicBoolean();

    /**
     * A processor for {@code SdkTracerProviderBuilder.addSpanProcessor}. If
     * this JVM cannot measure every thread ({@link CpuClock#limitation()}),
     * the first one created says so in the log ({@code System.Logger}
     * "io.threadtime.otel", level INFO).
     */
    public static ThreadTimeSpanProcessor create() {
        return create(true);
    }

    /**
     * As {@link #create()}; {@code waits} false leaves out
     * {@value #RUN_WAIT}, {@value #CARRIER_WAIT} and {@value #PINNED}, and
     * their reads.
     */
    public static ThreadTimeSpanProcessor create(boolean waits) {
        String limitation = CpuClock.limitation();
        if (limitation != null && REPORTED.compareAndSet(false, true)) {
            System.getLogger("io.threadtime.otel").log(System.Logger.Level.INFO, "threadtime-otel: " + limitation);
        }
        return new ThreadTimeSpanProcessor(waits);
    }

    /** As {@link #create()}, leaving it to the caller to report {@link CpuClock#limitation()}. */
    static ThreadTimeSpanProcessor createQuietly() {
        return new ThreadTimeSpanProcessor(true);
    }

    /** Spans that got no CPU attribute for this reason, since creation. */
    public long unmeasured(Reason reason) {
        return unmeasured[reason.ordinal()].sum();
    }

    /**
     * CPU time charged to virtual threads inside spans, ns, since creation:
     * each virtual thread adds the figure of its outermost measured span when
     * that span ends (nested spans are inside it, so they are not added again).
     * Zero in {@code mode=mounted}, whose figure is not CPU time.
     */
    public long virtualThreadNanos() {
        return virtualNanos.sum();
    }

    @Override
    public void onStart(Context parentContext, ReadWriteSpan span) {
        if (!open.get().push(span, waits ? CpuClock.markWithWaits() : CpuClock.mark())) {
            unmeasured[Reason.TOO_MANY_OPEN.ordinal()].increment();
        }
    }

    @Override
    public boolean isStartRequired() {
        return true;
    }

    @Override
    public void onEnding(ReadWriteSpan span) {
        OpenSpans spans = open.get();
        CpuClock.Mark start = spans.remove(span);
        if (start == null) {
            unmeasured[Reason.OTHER_THREAD.ordinal()].increment();
            return;
        }
        CpuClock.Mark spent = start.elapsed();
        if (spent == null) {
            unmeasured[Reason.NO_CLOCK.ordinal()].increment();
            return;
        }
        if (!spent.virtual) {
            span.setAttribute(TOTAL_KEY, spent.total);
            span.setAttribute(USER_KEY, spent.user);
            span.setAttribute(SYSTEM_KEY, spent.system);
            if (spent.wait >= 0) {
                span.setAttribute(RUN_WAIT_KEY, spent.wait);
            }
        } else {
            if (CpuClock.virtualIsMountedTime()) {
                span.setAttribute(MOUNTED_KEY, spent.total);
            } else {
                span.setAttribute(TOTAL_KEY, spent.total);
                if (spans.isEmpty()) {
                    virtualNanos.add(spent.total);
                }
            }
            if (spent.carrierWait >= 0) {
                span.setAttribute(CARRIER_WAIT_KEY, spent.carrierWait);
            }
            if (spent.pinned >= 0) {
                span.setAttribute(PINNED_KEY, spent.pinned);
            }
        }
    }

    @Override
    public boolean isOnEndingRequired() {
        return true;
    }

    @Override
    public void onEnd(ReadableSpan span) {}

    @Override
    public boolean isEndRequired() {
        return false;
    }

    /**
     * The spans started on one thread and not yet ended there, with the CPU
     * mark of each start; most recent last. A span that ends on another
     * thread stays here until a later search finds it ended and drops it.
     */
    static final class OpenSpans {
        static final int CAPACITY = 64;
        // Small at first: a virtual thread per request rarely holds more than a few.
        private ReadableSpan[] spans = new ReadableSpan[4];
        private CpuClock.Mark[] marks = new CpuClock.Mark[4];
        private int n;

        /** False if the stack is full of spans still open (the span is not measured). */
        boolean push(ReadableSpan span, CpuClock.Mark mark) {
            if (n == spans.length && dropEnded() == spans.length) {
                if (n == CAPACITY) {
                    return false;
                }
                spans = Arrays.copyOf(spans, 2 * n);
                marks = Arrays.copyOf(marks, 2 * n);
            }
            spans[n] = span;
            marks[n++] = mark;
            return true;
        }

        /** The mark of {@code span} (removing it), or null if it was not started on this thread. */
        CpuClock.Mark remove(ReadableSpan span) {
            for (int i = n - 1; i >= 0; i--) {
                if (spans[i] == span) {
                    CpuClock.Mark m = marks[i];
                    removeAt(i);
                    return m;
                }
            }
            dropEnded(); // a miss: the moment to forget spans that ended elsewhere
            return null;
        }

        /** Whether no span started on this thread is open here (ended ones dropped). */
        boolean isEmpty() {
            return dropEnded() == 0;
        }

        private int dropEnded() {
            for (int i = n - 1; i >= 0; i--) {
                if (spans[i].hasEnded()) {
                    removeAt(i);
                }
            }
            return n;
        }

        private void removeAt(int i) {
            System.arraycopy(spans, i + 1, spans, i, n - i - 1);
            System.arraycopy(marks, i + 1, marks, i, n - i - 1);
            n--;
            spans[n] = null;
            marks[n] = null;
        }
    }
}
