package io.threadtime.micrometer;

import io.micrometer.common.KeyValue;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.threadtime.ThreadTime;
import io.threadtime.otel.CpuClock;
import io.threadtime.otel.RunWaitSampler;
import io.threadtime.otel.ThreadSampler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.regex.Pattern;

/**
 * threadtime's CPU meters for Micrometer, the same as the OpenTelemetry
 * form's ({@code io.threadtime.otel.ThreadTimeMetrics}):
 * <table>
 * <caption>meters</caption>
 * <tr><th>name</th><th>type, unit</th><th>tags</th><th>what</th></tr>
 * <tr><td>{@value #THREAD_CPU}</td><td>function counter, seconds</td><td>{@code thread.name},
 *     {@code thread.id}, {@code cpu.mode} = user | system</td><td>CPU time of each live
 *     platform thread whose name matches the pattern given (none by default)</td></tr>
 * <tr><td>{@value #VTHREAD_CPU}</td><td>function counter, seconds</td><td></td><td>CPU time
 *     charged to virtual threads inside root observations (below)</td></tr>
 * <tr><td>{@value #CARRIER_CPU}</td><td>function counter, seconds</td><td></td><td>CPU time of
 *     the virtual-thread scheduler's carrier threads (JDK 21+)</td></tr>
 * <tr><td>{@value #UNMEASURED}</td><td>function counter</td><td>{@code reason} = other_thread |
 *     no_clock</td><td>observations whose CPU time could not be taken</td></tr>
 * <tr><td>{@value #REQUEST_CPU}</td><td>timer</td><td>those of {@code http.server.requests}:
 *     {@code method}, {@code uri} (the template), {@code status}, {@code outcome},
 *     {@code exception}, {@code error}</td><td>CPU time of each HTTP server request, on a platform or a virtual
 *     thread</td></tr>
 * <tr><td>{@value #THREAD_RUN_WAIT}</td><td>function counter, seconds</td><td>{@code thread.name}:
 *     a group of names ({@link RunWaitSampler#groupThreadName})</td><td>time the process's threads
 *     were runnable but waiting for a CPU, by group of thread names ({@link RunWaitSampler}); absent
 *     where the kernel keeps no schedstat</td></tr>
 * <tr><td>{@value #THREAD_RUN_WAIT_SKIPPED}</td><td>function counter</td><td></td><td>reads of a
 *     thread's run-queue wait that failed otherwise than by the thread's exit; the thread is left
 *     out of that read with the figure it had (the first failure is logged); beside
 *     {@value #THREAD_RUN_WAIT}</td></tr>
 * <tr><td>{@value #CGROUP_THROTTLED}</td><td>function counter, seconds</td><td></td><td>time the
 *     process's cgroup was held back by its CPU quota (the whole group's); absent where no CPU
 *     controller is visible</td></tr>
 * <tr><td>{@value #CGROUP_THROTTLED_PERIODS}</td><td>function counter</td><td></td><td>quota periods
 *     in which the cgroup ran out of quota</td></tr>
 * </table>
 * The binder is also an {@link ObservationHandler}: an observation that
 * starts and stops on the same thread (as Spring's HTTP server observations
 * do) is measured with threadtime, and a root observation (one without a
 * parent) on a virtual thread adds its CPU time to {@value #VTHREAD_CPU}. An
 * observation named {@value #HTTP_SERVER_REQUESTS} (Spring MVC's, one per
 * request) is recorded in {@value #REQUEST_CPU} under that observation's own
 * low-cardinality tags, the ones its {@code http.server.requests} timer has,
 * so that a request's CPU time sits beside its duration series for series.
 * Spring Boot registers a bean of this class both as a binder and as a
 * handler. Virtual threads need threadtime's virtual-thread accounting
 * (see {@link CpuClock}); without it their observations count as no_clock.
 * <p>
 * Per-thread counters are registered for matching threads when bound and
 * then every {@code refresh} interval (threads that ended are removed), and
 * so is a run-queue wait counter for each new group of thread names (a
 * group's counter stays: its figure never goes back); {@link #close()} stops
 * that. The groups' figures are read once for all their counters: a read
 * within a second of the last one answers from it.
 */
public final class ThreadTimeMeterBinder implements MeterBinder, ObservationHandler<Observation.Context>, AutoCloseable {
    public static final String THREAD_CPU = "threadtime.thread.cpu.time";
    public static final String VTHREAD_CPU = "threadtime.vthread.cpu.time";
    public static final String CARRIER_CPU = "threadtime.carrier.cpu.time";
    public static final String UNMEASURED = "threadtime.observation.unmeasured";
    /** CPU time per HTTP server request, tagged as {@value #HTTP_SERVER_REQUESTS}. */
    public static final String REQUEST_CPU = "threadtime.http.server.requests.cpu";
    /** The observation Spring's HTTP servers make per request, and the timer it becomes. */
    public static final String HTTP_SERVER_REQUESTS = "http.server.requests";
    public static final String THREAD_RUN_WAIT = RunWaitSampler.THREAD_RUN_WAIT;
    public static final String CGROUP_THROTTLED = RunWaitSampler.CGROUP_THROTTLED;
    public static final String CGROUP_THROTTLED_PERIODS = RunWaitSampler.CGROUP_THROTTLED_PERIODS;
    public static final String THREAD_RUN_WAIT_SKIPPED = RunWaitSampler.THREAD_RUN_WAIT_SKIPPED;
    /** How long one read of the groups' waits serves their counters. */
    private static final long WAIT_SAMPLE_NS = 1_000_000_000L;

    private static final double NS_PER_S = 1e9;
    /** Where an observation's start mark is kept in its context. */
    private static final Object MARK = new Object();

    private final ThreadSampler sampler;
    private final Duration refresh;
    private final LongAdder virtualNanos = new LongAdder();
    private final LongAdder otherThread = new LongAdder();
    private final LongAdder noClock = new LongAdder();
    /** Registered per-thread meters, by thread id. */
    private final Map<Long, Meter[]> threadMeters = new HashMap<>();
    /** The run-queue wait by group; null where the kernel keeps none. */
    private final RunWaitSampler waits = RunWaitSampler.available() ? new RunWaitSampler() : null;
    /** The groups' last figures, when read (System.nanoTime), and the groups with a counter (guarded by this). */
    private Map<String, Long> lastWaits = Map.of();
    private long lastWaitsAt;
    private final Set<String> waitGroups = new HashSet<>();
    /** Where bound; volatile: onStop reads it on request threads. */
    private volatile MeterRegistry registry;
    private ScheduledExecutorService refresher;

    /** Only the always-on meters, no per-thread ones. */
    public ThreadTimeMeterBinder() {
        this(null, Duration.ofSeconds(15));
    }

    /**
     * @param threads platform threads whose whole name matches get per-thread
     *                counters (each thread is two series); null for none
     * @param refresh how often to look for new and ended threads
     */
    public ThreadTimeMeterBinder(Pattern threads, Duration refresh) {
        if (refresh.isNegative() || refresh.isZero()) {
            throw new IllegalArgumentException("refresh must be positive, not " + refresh);
        }
        this.sampler = new ThreadSampler(threads);
        this.refresh = refresh;
    }

    @Override
    public synchronized void bindTo(MeterRegistry registry) {
        if (this.registry != null) {
            throw new IllegalStateException("this binder is bound to a registry already; make one per registry");
        }
        this.registry = registry;
        if (Runtime.version().feature() >= 21) {
            FunctionCounter.builder(CARRIER_CPU, sampler, s -> s.carrierNanos() / NS_PER_S).baseUnit("seconds")
                    .description("CPU time of the virtual-thread scheduler's carrier threads").register(registry);
            FunctionCounter.builder(VTHREAD_CPU, virtualNanos, a -> a.sum() / NS_PER_S).baseUnit("seconds")
                    .description("CPU time charged to virtual threads inside root observations").register(registry);
        }
        FunctionCounter.builder(UNMEASURED, otherThread, LongAdder::sum).tag("reason", "other_thread")
                .description("Observations whose CPU time could not be taken, by reason").register(registry);
        FunctionCounter.builder(UNMEASURED, noClock, LongAdder::sum).tag("reason", "no_clock")
                .description("Observations whose CPU time could not be taken, by reason").register(registry);
        if (RunWaitSampler.cgroupVisible()) {
            FunctionCounter.builder(CGROUP_THROTTLED, this, b -> ThreadTime.cgroupCpu().throttledNanos() / NS_PER_S)
                    .baseUnit("seconds").description("Time the process's cgroup was held back by its CPU quota")
                    .register(registry);
            FunctionCounter.builder(CGROUP_THROTTLED_PERIODS, this, b -> ThreadTime.cgroupCpu().throttledPeriods())
                    .description("Quota periods in which the process's cgroup ran out of CPU quota").register(registry);
        }
        if (waits != null) {
            FunctionCounter.builder(THREAD_RUN_WAIT_SKIPPED, waits, RunWaitSampler::skippedReads)
                    .description("Reads of a thread's run-queue wait that failed, the thread left out of that read")
                    .register(registry);
        }
        if (sampler.pattern() != null || waits != null) {
            refresh();
            refresher = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "threadtime-meters");
                t.setDaemon(true);
                return t;
            });
            long ms = refresh.toMillis();
            refresher.scheduleWithFixedDelay(this::refresh, ms, ms, TimeUnit.MILLISECONDS);
        }
    }

    /** Registers counters for matching threads that have none yet and removes
     * those of threads that ended. Runs every refresh interval; callable any time. */
    public synchronized void refresh() {
        if (registry == null) {
            throw new IllegalStateException("bindTo a registry first");
        }
        if (waits != null) {
            for (String group : readWaits(true).keySet()) {
                if (waitGroups.add(group)) {
                    FunctionCounter.builder(THREAD_RUN_WAIT, this, b -> b.waitSeconds(group)).baseUnit("seconds")
                            .tag("thread.name", group)
                            .description("Time this process's threads waited for a CPU, by group of thread names")
                            .register(registry);
                }
            }
        }
        List<ThreadSampler.ThreadCpu> live = sampler.threads();
        Set<Long> seen = new HashSet<>();
        for (ThreadSampler.ThreadCpu t : live) {
            seen.add(t.id);
            threadMeters.computeIfAbsent(t.id, id -> threadCounters(t.name, id));
        }
        threadMeters.entrySet().removeIf(e -> {
            if (seen.contains(e.getKey())) {
                return false;
            }
            for (Meter m : e.getValue()) {
                registry.remove(m);
            }
            return true;
        });
    }

    private Meter[] threadCounters(String name, long id) {
        Tags tags = Tags.of("thread.name", name, "thread.id", Long.toString(id));
        return new Meter[] {
            FunctionCounter.builder(THREAD_CPU, this, b -> b.threadNanos(id, true) / NS_PER_S).baseUnit("seconds")
                    .tags(tags).tag("cpu.mode", "user").description("CPU time of a platform thread").register(registry),
            FunctionCounter.builder(THREAD_CPU, this, b -> b.threadNanos(id, false) / NS_PER_S).baseUnit("seconds")
                    .tags(tags).tag("cpu.mode", "system").description("CPU time of a platform thread").register(registry),
        };
    }

    /** The groups' waits: read now if {@code now} or the last read is over a second old. */
    private synchronized Map<String, Long> readWaits(boolean now) {
        long t = System.nanoTime();
        if (now || t - lastWaitsAt > WAIT_SAMPLE_NS) {
            lastWaits = waits.waits();
            lastWaitsAt = t;
        }
        return lastWaits;
    }

    private double waitSeconds(String group) {
        return readWaits(false).getOrDefault(group, 0L) / NS_PER_S;
    }

    /** One thread's user or system ns now; NaN once it has ended (Micrometer skips NaN). */
    private double threadNanos(long id, boolean user) {
        for (ThreadSampler.ThreadCpu t : sampler.threads()) {
            if (t.id == id) {
                return user ? t.times.userNanos() : t.times.systemNanos();
            }
        }
        return Double.NaN;
    }

    /** Stops the per-thread refresh. */
    @Override
    public synchronized void close() {
        if (refresher != null) {
            refresher.shutdownNow();
            refresher = null;
        }
    }

    // ---- ObservationHandler ----

    @Override
    public boolean supportsContext(Observation.Context context) {
        return true;
    }

    @Override
    public void onStart(Observation.Context context) {
        context.put(MARK, CpuClock.mark());
    }

    @Override
    public void onStop(Observation.Context context) {
        CpuClock.Mark start = context.get(MARK);
        if (start == null) {
            return;
        }
        if (!start.onCallingThread()) {
            otherThread.increment();
            return;
        }
        CpuClock.Mark spent = start.elapsed();
        // Mounted time (the agent without CPU clocks) is not CPU time: kept out of both.
        boolean cpu = spent != null && !(spent.isVirtual() && CpuClock.virtualIsMountedTime());
        if (spent == null) {
            noClock.increment();
        } else if (spent.isVirtual() && cpu && context.getParentObservation() == null) {
            virtualNanos.add(spent.totalNanos());
        }
        MeterRegistry r = registry;
        if (cpu && r != null && HTTP_SERVER_REQUESTS.equals(context.getName())) {
            List<Tag> tags = new ArrayList<>();
            for (KeyValue kv : context.getLowCardinalityKeyValues()) {
                tags.add(Tag.of(kv.getKey(), kv.getValue()));
            }
            // As Micrometer's meter handler tags the observation's own timer.
            Throwable error = context.getError();
            tags.add(Tag.of("error", error == null ? "none" : error.getClass().getSimpleName()));
            Timer.builder(REQUEST_CPU).tags(tags).description("CPU time of HTTP server requests")
                    .register(r).record(spent.totalNanos(), TimeUnit.NANOSECONDS);
        }
    }
}
