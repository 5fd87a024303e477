package io.threadtime.otel;

import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.metrics.Meter;
import io.threadtime.ThreadTime;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * threadtime's metrics on an OpenTelemetry {@code Meter} (scope
 * {@value #SCOPE}). All are asynchronous counters, read at each collection:
 * <table>
 * <caption>metrics</caption>
 * <tr><th>name</th><th>unit</th><th>attributes</th><th>what</th></tr>
 * <tr><td>{@value #THREAD_CPU}</td><td>s</td><td>{@code thread.name}, {@code thread.id},
 *     {@code cpu.mode} = user | system</td><td>CPU time of each live platform thread
 *     whose name matches the pattern given (none by default: each thread is a series).
 *     Shaped like {@code process.cpu.time}.</td></tr>
 * <tr><td>{@value #VTHREAD_CPU}</td><td>s</td><td></td><td>CPU time charged to virtual
 *     threads inside spans (see {@link ThreadTimeSpanProcessor#virtualThreadNanos()})</td></tr>
 * <tr><td>{@value #CARRIER_CPU}</td><td>s</td><td></td><td>CPU time of the virtual-thread
 *     scheduler's carrier threads (JDK 21+; see {@link ThreadSampler#carrierNanos()})</td></tr>
 * <tr><td>{@value #UNMEASURED}</td><td>{span}</td><td>{@code reason} = other_thread |
 *     no_clock | too_many_open</td><td>spans that got no CPU attribute</td></tr>
 * <tr><td>{@value #THREAD_RUN_WAIT}</td><td>s</td><td>{@code thread.name}: a group of
 *     names ({@link RunWaitSampler#groupThreadName})</td><td>time the process's threads
 *     were runnable but waiting for a CPU (a busy host, or the cgroup's CPU quota), by group
 *     of thread names, the JVM's own threads included ({@link RunWaitSampler}); absent where
 *     the kernel keeps no schedstat</td></tr>
 * <tr><td>{@value #THREAD_RUN_WAIT_SKIPPED}</td><td>{read}</td><td></td><td>reads of a thread's
 *     run-queue wait that failed otherwise than by the thread's exit; the thread is left out of
 *     that collection with the figure it had (the first failure is logged); beside
 *     {@value #THREAD_RUN_WAIT}</td></tr>
 * <tr><td>{@value #CGROUP_THROTTLED}</td><td>s</td><td></td><td>time the process's cgroup was
 *     held back by its CPU quota ({@link io.threadtime.ThreadTime#cgroupCpu()}: the whole
 *     group's); absent where no CPU controller is visible</td></tr>
 * <tr><td>{@value #CGROUP_THROTTLED_PERIODS}</td><td>{period}</td><td></td><td>quota periods
 *     in which the cgroup ran out of quota</td></tr>
 * </table>
 * The run-queue wait and the cgroup's throttling are the same series, by the
 * same names, as threadtime's Python module registers.
 * The two without a pattern are always on. Their difference is the carriers'
 * CPU time spent outside spans: virtual threads' work outside any span, and
 * the scheduler's own.
 */
public final class ThreadTimeMetrics implements AutoCloseable {
    public static final String SCOPE = "io.threadtime.otel";
    public static final String THREAD_CPU = "threadtime.thread.cpu.time";
    public static final String VTHREAD_CPU = "threadtime.vthread.cpu.time";
    public static final String CARRIER_CPU = "threadtime.carrier.cpu.time";
    public static final String UNMEASURED = "threadtime.span.unmeasured";
    public static final String THREAD_RUN_WAIT = RunWaitSampler.THREAD_RUN_WAIT;
    public static final String CGROUP_THROTTLED = RunWaitSampler.CGROUP_THROTTLED;
    public static final String CGROUP_THROTTLED_PERIODS = RunWaitSampler.CGROUP_THROTTLED_PERIODS;
    public static final String THREAD_RUN_WAIT_SKIPPED = RunWaitSampler.THREAD_RUN_WAIT_SKIPPED;

    private static final AttributeKey<String> THREAD_NAME = AttributeKey.stringKey("thread.name");
    private static final AttributeKey<Long> THREAD_ID = AttributeKey.longKey("thread.id");
    private static final AttributeKey<String> CPU_MODE = AttributeKey.stringKey("cpu.mode");
    private static final AttributeKey<String> REASON = AttributeKey.stringKey("reason");
    private static final double NS_PER_S = 1e9;

    private final List<AutoCloseable> instruments = new ArrayList<>();

    private ThreadTimeMetrics() {}

    /**
     * Registers the metrics with {@code otel}'s meter provider.
     *
     * @param spans   the span processor whose counts to report; null for none
     *                (then {@value #VTHREAD_CPU} and {@value #UNMEASURED} are not registered)
     * @param threads per-thread metrics for platform threads whose whole name
     *                matches; null for none
     * @return a handle whose {@link #close()} unregisters them
     */
    public static ThreadTimeMetrics register(OpenTelemetry otel, ThreadTimeSpanProcessor spans, Pattern threads) {
        ThreadTimeMetrics m = new ThreadTimeMetrics();
        Meter meter = otel.getMeter(SCOPE);
        ThreadSampler sampler = new ThreadSampler(threads);
        if (threads != null) {
            m.instruments.add(meter.counterBuilder(THREAD_CPU).ofDoubles().setUnit("s")
                    .setDescription("CPU time of platform threads whose name matches " + threads.pattern())
                    .buildWithCallback(out -> {
                        for (ThreadSampler.ThreadCpu t : sampler.threads()) {
                            Attributes thread = Attributes.of(THREAD_NAME, t.name, THREAD_ID, t.id);
                            out.record(t.times.userNanos() / NS_PER_S, thread.toBuilder().put(CPU_MODE, "user").build());
                            out.record(t.times.systemNanos() / NS_PER_S, thread.toBuilder().put(CPU_MODE, "system").build());
                        }
                    }));
        }
        if (Runtime.version().feature() >= 21) {
            m.instruments.add(meter.counterBuilder(CARRIER_CPU).ofDoubles().setUnit("s")
                    .setDescription("CPU time of the virtual-thread scheduler's carrier threads")
                    .buildWithCallback(out -> out.record(sampler.carrierNanos() / NS_PER_S)));
        }
        if (RunWaitSampler.available()) {
            RunWaitSampler waits = new RunWaitSampler();
            m.instruments.add(meter.counterBuilder(THREAD_RUN_WAIT).ofDoubles().setUnit("s")
                    .setDescription("Time this process's threads waited for a CPU, by group of thread names")
                    .buildWithCallback(out -> waits.waits().forEach(
                            (group, ns) -> out.record(ns / NS_PER_S, Attributes.of(THREAD_NAME, group)))));
            m.instruments.add(meter.counterBuilder(THREAD_RUN_WAIT_SKIPPED).setUnit("{read}")
                    .setDescription("Reads of a thread's run-queue wait that failed, the thread left out of that collection")
                    .buildWithCallback(out -> out.record(waits.skippedReads())));
        }
        if (RunWaitSampler.cgroupVisible()) {
            m.instruments.add(meter.counterBuilder(CGROUP_THROTTLED).ofDoubles().setUnit("s")
                    .setDescription("Time the process's cgroup was held back by its CPU quota")
                    .buildWithCallback(out -> out.record(ThreadTime.cgroupCpu().throttledNanos() / NS_PER_S)));
            m.instruments.add(meter.counterBuilder(CGROUP_THROTTLED_PERIODS).setUnit("{period}")
                    .setDescription("Quota periods in which the process's cgroup ran out of CPU quota")
                    .buildWithCallback(out -> out.record(ThreadTime.cgroupCpu().throttledPeriods())));
        }
        if (spans != null) {
            if (Runtime.version().feature() >= 21) {
                m.instruments.add(meter.counterBuilder(VTHREAD_CPU).ofDoubles().setUnit("s")
                        .setDescription("CPU time charged to virtual threads inside their outermost span")
                        .buildWithCallback(out -> out.record(spans.virtualThreadNanos() / NS_PER_S)));
            }
            m.instruments.add(meter.counterBuilder(UNMEASURED).setUnit("{span}")
                    .setDescription("Spans that got no threadtime CPU attribute, by reason")
                    .buildWithCallback(out -> {
                        for (ThreadTimeSpanProcessor.Reason r : ThreadTimeSpanProcessor.Reason.values()) {
                            out.record(spans.unmeasured(r), Attributes.of(REASON, r.attribute));
                        }
                    }));
        }
        return m;
    }

    /** Unregisters the callbacks. */
    @Override
    public void close() {
        for (AutoCloseable i : instruments) {
            try {
                i.close();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
        instruments.clear();
    }
}
