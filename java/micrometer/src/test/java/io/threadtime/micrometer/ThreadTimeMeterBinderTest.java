package io.threadtime.micrometer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static io.threadtime.otel.Burn.burn;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.threadtime.KernelFiles;
import io.threadtime.otel.Burn;
import io.threadtime.otel.RunWaitSampler;
import java.nio.file.Path;
import java.time.Duration;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The binder on a SimpleMeterRegistry, and as an ObservationHandler. What a
 * thread burns is measured with the platform bean's clock. */
class ThreadTimeMeterBinderTest {
    static final long SPLIT_SLACK_NS = 50_000;

    SimpleMeterRegistry registry;
    ThreadTimeMeterBinder binder;

    @BeforeEach
    void setUp() {
        registry = new SimpleMeterRegistry();
    }

    @AfterEach
    void tearDown() {
        if (binder != null) {
            binder.close();
        }
    }

    @Test
    void perThreadCountersForMatchingThreadsComeAndGo() throws Exception {
        binder = new ThreadTimeMeterBinder(Pattern.compile("tt-worker-.*"), Duration.ofHours(1));
        binder.bindTo(registry);
        Burn.Worker worker = new Burn.Worker("tt-worker-1", 40_000_000);
        String id = Long.toString(worker.thread().getId());
        try {
            long spent = worker.awaitBurned();
            binder.refresh();
            FunctionCounter user = registry.find(ThreadTimeMeterBinder.THREAD_CPU)
                    .tags("thread.name", "tt-worker-1", "thread.id", id, "cpu.mode", "user").functionCounter();
            FunctionCounter system = registry.find(ThreadTimeMeterBinder.THREAD_CPU)
                    .tags("thread.name", "tt-worker-1", "thread.id", id, "cpu.mode", "system").functionCounter();
            assertNotNull(user, "user counter of the matching thread");
            assertNotNull(system, "system counter of the matching thread");
            assertEquals("seconds", user.getId().getBaseUnit());
            assertTrue((user.count() + system.count()) * 1e9 >= spent - SPLIT_SLACK_NS,
                    (user.count() + system.count()) + " s < burned " + spent + " ns");
            assertTrue(registry.find(ThreadTimeMeterBinder.THREAD_CPU).meters().stream()
                    .allMatch(m -> m.getId().getTag("thread.name").startsWith("tt-worker-")), "only matching threads");
        } finally {
            worker.close();
        }
        binder.refresh();
        assertNull(registry.find(ThreadTimeMeterBinder.THREAD_CPU).tags("thread.id", id).functionCounter(),
                "an ended thread's counters are removed");
    }

    @Test
    void alwaysOnMetersWithoutPattern() {
        binder = new ThreadTimeMeterBinder();
        binder.bindTo(registry);
        assertTrue(registry.find(ThreadTimeMeterBinder.THREAD_CPU).meters().isEmpty(), "per-thread counters are opt-in");
        assertNotNull(registry.find(ThreadTimeMeterBinder.UNMEASURED).tags("reason", "other_thread").functionCounter());
        boolean vthreads = Runtime.version().feature() >= 21;
        assertEquals(vthreads, registry.find(ThreadTimeMeterBinder.CARRIER_CPU).functionCounter() != null);
        assertEquals(vthreads, registry.find(ThreadTimeMeterBinder.VTHREAD_CPU).functionCounter() != null);
        assertThrows(IllegalStateException.class, () -> binder.bindTo(new SimpleMeterRegistry()));
    }

    @Test
    void observationStoppedOnAnotherThreadIsCounted() throws Exception {
        binder = new ThreadTimeMeterBinder();
        binder.bindTo(registry);
        ObservationRegistry observations = ObservationRegistry.create();
        observations.observationConfig().observationHandler(binder);
        Observation same = Observation.start("same", observations);
        burn(1_000_000);
        same.stop();
        Observation moved = Observation.start("moved", observations);
        Thread other = new Thread(moved::stop);
        other.start();
        other.join();
        assertEquals(1.0, registry.find(ThreadTimeMeterBinder.UNMEASURED).tags("reason", "other_thread").functionCounter().count());
        assertEquals(0.0, registry.find(ThreadTimeMeterBinder.UNMEASURED).tags("reason", "no_clock").functionCounter().count());
    }

    /** An http.server.requests observation's CPU is a timer under the observation's own low-cardinality tags. */
    @Test
    void aServerRequestsCpuIsTimedUnderItsTags() {
        binder = new ThreadTimeMeterBinder();
        binder.bindTo(registry);
        ObservationRegistry observations = ObservationRegistry.create();
        observations.observationConfig().observationHandler(binder);
        java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
        long outerStart = mx.getCurrentThreadCpuTime();
        Observation request = Observation.createNotStarted(ThreadTimeMeterBinder.HTTP_SERVER_REQUESTS, observations)
                .lowCardinalityKeyValue("uri", "/orders/{id}").lowCardinalityKeyValue("method", "GET")
                .highCardinalityKeyValue("http.url", "/orders/42").start();
        long burned = burn(20_000_000);
        request.stop();
        long outer = mx.getCurrentThreadCpuTime() - outerStart;
        Observation other = Observation.start("other", observations);
        burn(1_000_000);
        other.stop();
        io.micrometer.core.instrument.Timer cpu = registry.find(ThreadTimeMeterBinder.REQUEST_CPU).timer();
        assertNotNull(cpu);
        assertEquals(java.util.Set.of(io.micrometer.core.instrument.Tag.of("uri", "/orders/{id}"),
                io.micrometer.core.instrument.Tag.of("method", "GET"), io.micrometer.core.instrument.Tag.of("error", "none")),
                new java.util.HashSet<>(cpu.getId().getTags()));
        assertEquals(1, registry.find(ThreadTimeMeterBinder.REQUEST_CPU).timers().size(), "only the request's");
        assertEquals(1, cpu.count());
        long ns = (long) cpu.totalTime(java.util.concurrent.TimeUnit.NANOSECONDS);
        assertTrue(ns >= burned - SPLIT_SLACK_NS, ns + " ns < burned " + burned);
        assertTrue(ns <= outer + SPLIT_SLACK_NS, ns + " ns > the thread's " + outer + " from before start to after stop");
    }

    /** A group's wait is the sum of its blocked threads' schedstat waits, read by the test around the read. */
    @Test
    void theWaitByGroupIsTheThreadsSchedstat() throws Exception {
        assumeTrue(RunWaitSampler.available(), "no schedstat in this kernel");
        binder = new ThreadTimeMeterBinder(null, Duration.ofHours(1));
        binder.bindTo(registry);
        try (Burn.Worker a = new Burn.Worker("tt-waiter-1", 20_000_000);
                Burn.Worker b = new Burn.Worker("tt-waiter-2", 20_000_000)) {
            long before = KernelFiles.schedstat(a.awaitBlocked())[1] + KernelFiles.schedstat(b.awaitBlocked())[1];
            binder.refresh(); // registers the new group, and reads the waits
            FunctionCounter c = registry.find(ThreadTimeMeterBinder.THREAD_RUN_WAIT).tags("thread.name", "tt-waiter")
                    .functionCounter();
            assertNotNull(c, "the group's counter");
            assertEquals("seconds", c.getId().getBaseUnit());
            long ns = Math.round(c.count() * 1e9);
            long after = KernelFiles.schedstat(a.tid())[1] + KernelFiles.schedstat(b.tid())[1];
            assertTrue(before <= ns && ns <= after, ns + " not within " + before + ".." + after);
            FunctionCounter skipped = registry.find(ThreadTimeMeterBinder.THREAD_RUN_WAIT_SKIPPED).functionCounter();
            assertNotNull(skipped, "the skipped reads' counter, beside the wait");
            assertEquals(0, skipped.count(), "no read failed");
        }
    }

    /** The throttling counters lie between two reads of the group's cpu.stat by the test. */
    @Test
    void theCgroupsThrottlingIsItsCpuStat() {
        Path stat = KernelFiles.cpuStatPath();
        assumeTrue(stat != null, "no cpu.stat at /sys/fs/cgroup for this process's cgroup");
        binder = new ThreadTimeMeterBinder();
        binder.bindTo(registry);
        FunctionCounter time = registry.find(ThreadTimeMeterBinder.CGROUP_THROTTLED).functionCounter();
        FunctionCounter periods = registry.find(ThreadTimeMeterBinder.CGROUP_THROTTLED_PERIODS).functionCounter();
        assertNotNull(time);
        assertNotNull(periods);
        long[] before = KernelFiles.cpuStat(stat);
        long ns = Math.round(time.count() * 1e9), n = Math.round(periods.count());
        long[] after = KernelFiles.cpuStat(stat);
        assertTrue(before[1] <= ns && ns <= after[1], ns + " not within " + before[1] + ".." + after[1]);
        assertTrue(before[0] <= n && n <= after[0], n + " not within " + before[0] + ".." + after[0]);
    }

    @Test
    void badRefreshIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> new ThreadTimeMeterBinder(null, Duration.ZERO));
    }
}
