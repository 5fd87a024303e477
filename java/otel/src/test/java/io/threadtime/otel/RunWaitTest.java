package io.threadtime.otel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.metrics.data.DoublePointData;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.threadtime.KernelFiles;
import io.threadtime.ThreadTime;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The run-queue wait per span and the process's wait and throttling as
 * meters, on the real SDK (in-memory exporter and reader), held to the
 * kernel's files read by the test (KernelFiles) and to physics: two threads
 * on one CPU cannot both run.
 */
class RunWaitTest {
    InMemorySpanExporter spans;
    InMemoryMetricReader metrics;
    OpenTelemetrySdk sdk;

    @BeforeEach
    void setUp() {
        spans = InMemorySpanExporter.create();
        metrics = InMemoryMetricReader.create();
        sdk = OpenTelemetrySdk.builder()
                .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(ThreadTimeSpanProcessor.create())
                        .addSpanProcessor(SimpleSpanProcessor.create(spans)).build())
                .setMeterProvider(SdkMeterProvider.builder().registerMetricReader(metrics).build())
                .build();
    }

    @AfterEach
    void tearDown() {
        sdk.close();
    }

    /** A span's wait lies within what the thread's schedstat file says over a longer stretch around it. */
    @Test
    void aSpansWaitIsWithinItsThreadsSchedstat() throws Exception {
        int tid = KernelFiles.currentTid();
        for (int i = 0; i < 20; i++) {
            long before = KernelFiles.schedstat(tid)[1];
            Span span = sdk.getTracer("t").spanBuilder("work-" + i).startSpan();
            Burn.burn(2_000_000);
            Thread.sleep(1);
            span.end();
            long after = KernelFiles.schedstat(tid)[1];
            String name = "work-" + i;
            SpanData s = spans.getFinishedSpanItems().stream().filter(d -> d.getName().equals(name)).findFirst()
                    .orElseThrow();
            Long wait = s.getAttributes().get(ThreadTimeSpanProcessor.RUN_WAIT_KEY);
            assertNotNull(wait, s.getAttributes().toString());
            assertTrue(wait >= 0 && wait <= after - before, wait + " not within 0.." + (after - before));
        }
    }

    /**
     * Two spans on two threads of a child JVM pinned to one CPU, released
     * together, each burning 100 ms: the span of the thread that finished
     * second waited at least 90 % of the first one's CPU.
     */
    @Test
    void twoSpansOnOneCpuWaitForEachOther() throws Exception {
        List<String> cmd = KernelFiles.onOneCpu(List.of(ProcessHandle.current().info().command().orElseThrow(),
                "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"),
                PinnedSpansChild.class.getName()));
        String text = runChild(cmd);
        String[] lines = text.trim().split("\n");
        String[] first = lines[lines.length - 2].split(" "), second = lines[lines.length - 1].split(" ");
        System.out.println("twoSpansOnOneCpuWaitForEachOther: cpu, span wait: first " + lines[lines.length - 2]
                + "; second " + lines[lines.length - 1]);
        assertTrue(Long.parseLong(second[1]) * 10 >= Long.parseLong(first[0]) * 9, text);
    }

    @Test
    void aVirtualThreadsSpanHasNoRunWaitOfItsOwn() throws Exception {
        assumeTrue(Runtime.version().feature() >= 21, "virtual threads need JDK 21");
        Thread v = (Thread) Thread.class.getMethod("startVirtualThread", Runnable.class).invoke(null,
                (Runnable) () -> sdk.getTracer("t").spanBuilder("virtual").startSpan().end());
        v.join();
        SpanData s = spans.getFinishedSpanItems().get(0);
        assertNull(s.getAttributes().get(ThreadTimeSpanProcessor.RUN_WAIT_KEY), s.getAttributes().toString());
    }

    /**
     * Under the {@code -javaagent} with one carrier (a child JVM), two
     * always-runnable virtual threads released together: while the carrier
     * runs one, the other waits for it, so their spans' carrier waits add up
     * to at least 90 % of the carrier's CPU (the JDK bean) from the release
     * to the first one's end. A 100 ms sleep inside {@code synchronized} is
     * pinned on JDK 21 (at least 90 % of the sleep, at most the sleep as
     * System.nanoTime() measured it) and not at all on JDK 24+, where it
     * unmounts.
     */
    @Test
    void virtualThreadSpansCarryTheirCarrierWaitAndPinnedTime() throws Exception {
        assumeTrue(Runtime.version().feature() >= 21, "virtual threads need JDK 21");
        Path jar = Path.of(io.threadtime.agent.ThreadTimeAgent.class.getProtectionDomain().getCodeSource().getLocation()
                .toURI());
        String text = runChild(List.of(ProcessHandle.current().info().command().orElseThrow(),
                "-javaagent:" + jar + "=mode=exact", "-Djdk.virtualThreadScheduler.parallelism=1",
                "-Djdk.virtualThreadScheduler.maxPoolSize=1", "--enable-native-access=ALL-UNNAMED", "-cp",
                System.getProperty("java.class.path"), VirtualSpansChild.class.getName()));
        System.out.println("virtualThreadSpansCarryTheirCarrierWaitAndPinnedTime: " + text);
        String[] carrier = line(text, "carrier "), pinned = line(text, "pinned ");
        long cpu = Long.parseLong(carrier[1]), w0 = Long.parseLong(carrier[2]), w1 = Long.parseLong(carrier[3]);
        assertTrue(w0 >= 0 && w1 >= 0 && (w0 + w1) * 10 >= cpu * 9, text);
        long p = Long.parseLong(pinned[1]), slept = Long.parseLong(pinned[2]);
        if (Runtime.version().feature() == 21) {
            assertTrue(p * 10 >= 100_000_000L * 9 && p <= slept + 1_000_000, text);
        } else {
            assertEquals(0, p, text);
        }
    }

    private static String[] line(String text, String start) {
        return text.lines().filter(l -> l.startsWith(start)).findFirst().orElseThrow(() -> new AssertionError(text))
                .split(" ");
    }

    /** A child process's output (stdout and stderr) once it ended with status 0. */
    private static String runChild(List<String> cmd) throws Exception {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        Thread drain = new Thread(() -> {
            try {
                p.getInputStream().transferTo(out);
            } catch (java.io.IOException e) {
                // the child ended
            }
        });
        drain.start();
        if (!p.waitFor(180, TimeUnit.SECONDS)) {
            p.destroyForcibly();
        }
        drain.join(30_000);
        String text = out.toString(StandardCharsets.UTF_8);
        assertEquals(0, p.exitValue(), text);
        return text;
    }

    @Test
    void threadNamesGroupAsPythonsDo() {
        assertEquals("pool-1-thread", RunWaitSampler.groupThreadName("pool-1-thread-3"));
        assertEquals("ForkJoinPool-1-worker", RunWaitSampler.groupThreadName("ForkJoinPool-1-worker-12"));
        assertEquals("Thread (work)", RunWaitSampler.groupThreadName("Thread-7 (work)"));
        assertEquals("asyncio", RunWaitSampler.groupThreadName("asyncio_2"));
        assertEquals("main", RunWaitSampler.groupThreadName("main"));
        assertEquals("ForkJoinPool-1-", RunWaitSampler.groupThreadName("ForkJoinPool-1-"));
    }

    /**
     * The group's counter is the sum of its threads' schedstat waits, read
     * by the test before and after the collection while they are blocked;
     * once one of them has exited, the group keeps what it last saw of it.
     */
    @Test
    void theWaitByGroupIsTheThreadsSchedstat() throws Exception {
        assumeTrue(RunWaitSampler.available(), "no schedstat in this kernel");
        ThreadTimeMetrics.register(sdk, null, null);
        try (Burn.Worker a = new Burn.Worker("tt-waiter-1", 20_000_000);
                Burn.Worker b = new Burn.Worker("tt-waiter-2", 20_000_000)) {
            long before = KernelFiles.schedstat(a.awaitBlocked())[1] + KernelFiles.schedstat(b.awaitBlocked())[1];
            long ns = waitNanos("tt-waiter");
            long aWait = KernelFiles.schedstat(a.tid())[1], bWait = KernelFiles.schedstat(b.tid())[1];
            assertTrue(before <= ns && ns <= aWait + bWait, ns + " not within " + before + ".." + (aWait + bWait));
            int gone = b.tid();
            b.close();
            Path task = Path.of("/proc/self/task/" + gone);
            for (int tries = 0; Files.exists(task); tries++) {
                assertTrue(tries < 6000, "the thread's native thread never exited");
                Thread.sleep(10);
            }
            // a is still blocked: its wait as the file says, and b's as last collected (blocked until then).
            long kept = waitNanos("tt-waiter");
            assertEquals(KernelFiles.schedstat(a.tid())[1] + bWait, kept);
        }
    }

    /**
     * Two threads pinned to one CPU (taskset on their native ids), released
     * together by a barrier (the last one there wakes the other on their
     * CPU), each burning 50 ms of its CPU (the JDK bean's clock): one CPU
     * runs one of them at a time, so together they wait at least 90 % of
     * the first one's CPU. After a collection each renames itself into
     * another group; collected again, the two groups together stay within
     * the sum of the threads' waits in their schedstat files, read by the
     * test after the last collection, and the old group keeps what it had.
     * Filing a renamed thread's whole wait in both groups counts it twice.
     */
    @Test
    void aRenamedThreadCountsOnce() throws Exception {
        assumeTrue(RunWaitSampler.available(), "no schedstat in this kernel");
        ThreadTimeMetrics.register(sdk, null, null);
        CountDownLatch started = new CountDownLatch(2), pinned = new CountDownLatch(1), burned = new CountDownLatch(2);
        CyclicBarrier go = new CyclicBarrier(2);
        CountDownLatch rename = new CountDownLatch(1), renamed = new CountDownLatch(2), release = new CountDownLatch(1);
        int[] tids = new int[2];
        long[] cpu = new long[2];
        Thread[] threads = new Thread[2];
        for (int i = 0; i < 2; i++) {
            int n = i;
            threads[i] = new Thread(() -> {
                tids[n] = KernelFiles.currentTid();
                started.countDown();
                await(pinned);
                try {
                    go.await(60, TimeUnit.SECONDS);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
                cpu[n] = Burn.burn(50_000_000);
                burned.countDown();
                await(rename);
                // HotSpot renames the native thread only when the thread renames itself.
                Thread.currentThread().setName("tt-moved-" + n);
                renamed.countDown();
                await(release);
            }, "tt-renamed-" + n);
            threads[i].start();
        }
        try {
            await(started);
            for (int tid : tids) {
                KernelFiles.pinToOneCpu(tid);
            }
            pinned.countDown();
            await(burned);
            long waited = 0;
            for (int tid : tids) {
                KernelFiles.awaitBlocked(tid);
                waited += KernelFiles.schedstat(tid)[1];
            }
            assertTrue(waited * 10 >= Math.min(cpu[0], cpu[1]) * 9,
                    "two threads on one CPU waited " + waited + " ns, burning " + cpu[0] + " and " + cpu[1]);
            long before = waitsByGroup().get("tt-renamed");
            rename.countDown();
            await(renamed);
            for (int tid : tids) {
                KernelFiles.awaitBlocked(tid);
            }
            Map<String, Long> after = Map.of();
            for (int i = 0; i < 3; i++) {
                after = waitsByGroup();
            }
            long truth = KernelFiles.schedstat(tids[0])[1] + KernelFiles.schedstat(tids[1])[1];
            long old = after.get("tt-renamed"), moved = after.getOrDefault("tt-moved", 0L);
            System.out.println("aRenamedThreadCountsOnce: waited " + waited + " ns before the rename, groups " + old
                    + " + " + moved + " against the threads' schedstat " + truth);
            assertEquals(before, old, "the old group lost what it had");
            assertTrue(old + moved <= truth, old + " + " + moved + " ns above the threads' " + truth);
        } finally {
            pinned.countDown();
            rename.countDown();
            release.countDown();
            for (Thread t : threads) {
                t.join();
            }
        }
    }

    /** Waits (up to a minute) for a latch. */
    private static void await(CountDownLatch latch) {
        try {
            assertTrue(latch.await(60, TimeUnit.SECONDS), "a test thread got stuck");
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    /**
     * Asked on a virtual thread, whether the run-queue wait is available
     * answers as the kernel does: the test reads its own thread's schedstat
     * file, and the meters registered on a virtual thread include the wait.
     */
    @Test
    void theWaitIsAvailableOnAVirtualThread() throws Exception {
        assumeTrue(Runtime.version().feature() >= 21, "virtual threads need JDK 21");
        boolean kernel;
        try {
            KernelFiles.schedstat(KernelFiles.currentTid());
            kernel = true;
        } catch (java.io.UncheckedIOException e) {
            kernel = false;
        }
        boolean[] answer = new boolean[1];
        Thread v = (Thread) Thread.class.getMethod("startVirtualThread", Runnable.class).invoke(null, (Runnable) () -> {
            answer[0] = RunWaitSampler.available();
            ThreadTimeMetrics.register(sdk, null, null);
        });
        v.join();
        assertEquals(kernel, answer[0], "available() on a virtual thread");
        assertEquals(kernel, metrics.collectAllMetrics().stream()
                .anyMatch(m -> m.getName().equals(ThreadTimeMetrics.THREAD_RUN_WAIT)), "the meters registered there");
    }

    /**
     * A read that fails for one thread otherwise than by its exit skips that
     * thread for that collection alone and is counted: the sampler's reader
     * fails for one blocked thread, first with the library's own error
     * (EINVAL, from a negative tid) and then with an I/O error. Its group
     * keeps the figure it had, the other thread's group is its schedstat
     * file's (read by the test), and once readable again the thread's group
     * is its file's too. A thread that exits between the listing and its
     * read (ESRCH from the kernel) is left out quietly: no count.
     */
    @Test
    void aThreadThatCannotBeReadIsSkippedAndCounted() throws Exception {
        assumeTrue(RunWaitSampler.available(), "no schedstat in this kernel");
        try (Burn.Worker ok = new Burn.Worker("tt-readable-1", 20_000_000);
                Burn.Worker bad = new Burn.Worker("tt-unreadable-1", 20_000_000);
                Burn.Worker exiting = new Burn.Worker("tt-exiting-1", 20_000_000)) {
            int okTid = ok.awaitBlocked(), badTid = bad.awaitBlocked(), exitingTid = exiting.awaitBlocked();
            int[] failure = {0}; // 0: none; 1: the library's error; 2: an I/O error; 3: exiting exits first
            RunWaitSampler sampler = new RunWaitSampler(tid -> {
                if (tid == badTid && failure[0] == 1) {
                    return ThreadTime.threadSched(-1).runWaitNanos();
                }
                if (tid == badTid && failure[0] == 2) {
                    throw new java.nio.file.AccessDeniedException("/proc/self/task/" + tid + "/schedstat");
                }
                if (tid == exitingTid && failure[0] == 3) {
                    exitNow(exiting, tid);
                }
                return ThreadTime.threadSched(tid).runWaitNanos();
            });
            Map<String, Long> first = sampler.waits();
            long badWait = KernelFiles.schedstat(badTid)[1];
            assertEquals(badWait, first.get("tt-unreadable"));
            for (int f = 1; f <= 2; f++) {
                failure[0] = f;
                Map<String, Long> w = sampler.waits();
                assertEquals(badWait, w.get("tt-unreadable"), "failure " + f);
                assertEquals(KernelFiles.schedstat(okTid)[1], w.get("tt-readable"), "failure " + f);
                assertEquals(f, sampler.skippedReads());
            }
            failure[0] = 0;
            assertEquals(KernelFiles.schedstat(badTid)[1], sampler.waits().get("tt-unreadable"));
            long exitingWait = KernelFiles.schedstat(exitingTid)[1];
            failure[0] = 3;
            Map<String, Long> w = sampler.waits();
            assertTrue(Files.notExists(Path.of("/proc/self/task/" + exitingTid)), "the thread had not exited");
            assertEquals(exitingWait, w.get("tt-exiting"), "an exited thread keeps its last figure");
            assertEquals(2, sampler.skippedReads(), "an exited thread is no skipped read");
        }
    }

    /** Lets worker (native id tid) end, and waits until its native thread has left /proc/self/task. */
    private static void exitNow(Burn.Worker worker, int tid) {
        try {
            worker.close();
            for (int tries = 0; Files.exists(Path.of("/proc/self/task/" + tid)); tries++) {
                assertTrue(tries < 6000, "the thread's native thread never exited");
                Thread.sleep(10);
            }
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    /** The skipped-read counter sits beside the wait, and reads 0 where no read failed. */
    @Test
    void theSkippedReadsAreAMeter() {
        assumeTrue(RunWaitSampler.available(), "no schedstat in this kernel");
        ThreadTimeMetrics.register(sdk, null, null);
        MetricData m = metrics.collectAllMetrics().stream()
                .filter(d -> d.getName().equals(ThreadTimeMetrics.THREAD_RUN_WAIT_SKIPPED)).findFirst().orElseThrow();
        assertEquals("{read}", m.getUnit());
        assertEquals(0, m.getLongSumData().getPoints().iterator().next().getValue());
    }

    /** The throttling counters lie between two reads of the group's cpu.stat by the test. */
    @Test
    void theCgroupsThrottlingIsItsCpuStat() {
        Path stat = KernelFiles.cpuStatPath();
        assumeTrue(stat != null, "no cpu.stat at /sys/fs/cgroup for this process's cgroup");
        ThreadTimeMetrics.register(sdk, null, null);
        long[] before = KernelFiles.cpuStat(stat);
        List<MetricData> all = new ArrayList<>(metrics.collectAllMetrics());
        long[] after = KernelFiles.cpuStat(stat);
        MetricData time = all.stream().filter(m -> m.getName().equals(ThreadTimeMetrics.CGROUP_THROTTLED)).findFirst()
                .orElseThrow();
        MetricData periods = all.stream().filter(m -> m.getName().equals(ThreadTimeMetrics.CGROUP_THROTTLED_PERIODS))
                .findFirst().orElseThrow();
        assertEquals("s", time.getUnit());
        long ns = Math.round(time.getDoubleSumData().getPoints().iterator().next().getValue() * 1e9);
        long n = periods.getLongSumData().getPoints().iterator().next().getValue();
        assertTrue(before[1] <= ns && ns <= after[1], ns + " not within " + before[1] + ".." + after[1]);
        assertTrue(before[0] <= n && n <= after[0], n + " not within " + before[0] + ".." + after[0]);
    }

    private long waitNanos(String group) {
        Long ns = waitsByGroup().get(group);
        if (ns == null) {
            throw new AssertionError("no " + ThreadTimeMetrics.THREAD_RUN_WAIT + " point for " + group);
        }
        return ns;
    }

    /** One collection's run-queue wait points, ns by group. */
    private Map<String, Long> waitsByGroup() {
        Map<String, Long> out = new HashMap<>();
        for (MetricData m : metrics.collectAllMetrics()) {
            if (m.getName().equals(ThreadTimeMetrics.THREAD_RUN_WAIT)) {
                assertEquals("s", m.getUnit());
                for (DoublePointData p : m.getDoubleSumData().getPoints()) {
                    out.put(p.getAttributes().get(io.opentelemetry.api.common.AttributeKey.stringKey("thread.name")),
                            Math.round(p.getValue() * 1e9));
                }
            }
        }
        return out;
    }
}
