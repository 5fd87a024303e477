package io.threadtime.otel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static io.threadtime.otel.Burn.burn;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.metrics.data.DoublePointData;
import io.opentelemetry.sdk.metrics.data.LongPointData;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.util.Collection;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The library form with the SDK's in-memory exporter and reader. What a
 * span burns is measured with the platform bean's clock, not threadtime's.
 * This JVM runs without virtual-thread accounting; AgentServiceTest covers
 * virtual threads with it.
 */
class LibraryTest {
    /** A split reads in microseconds; see AgentServiceTest. */
    static final long SPLIT_SLACK_NS = 50_000;

    InMemorySpanExporter spans;
    InMemoryMetricReader metrics;
    ThreadTimeSpanProcessor processor;
    OpenTelemetrySdk sdk;
    Tracer tracer;

    @BeforeEach
    void setUp() {
        spans = InMemorySpanExporter.create();
        metrics = InMemoryMetricReader.create();
        processor = ThreadTimeSpanProcessor.create();
        sdk = OpenTelemetrySdk.builder()
                .setTracerProvider(SdkTracerProvider.builder()
                        .addSpanProcessor(processor)
                        .addSpanProcessor(SimpleSpanProcessor.create(spans)).build())
                .setMeterProvider(SdkMeterProvider.builder().registerMetricReader(metrics).build())
                .build();
        tracer = sdk.getTracer("test");
    }

    @AfterEach
    void tearDown() {
        sdk.close();
    }

    SpanData only(String name) {
        List<SpanData> found = spans.getFinishedSpanItems().stream().filter(s -> s.getName().equals(name)).toList();
        assertEquals(1, found.size(), "spans named " + name + ": " + spans.getFinishedSpanItems());
        return found.get(0);
    }

    @Test
    void platformSpanGetsItsThreadsCpuSplit() {
        Span span = tracer.spanBuilder("work").startSpan();
        long burned = burn(30_000_000);
        span.end();
        Attributes a = only("work").getAttributes();
        long total = a.get(ThreadTimeSpanProcessor.TOTAL_KEY);
        assertEquals(total, a.get(ThreadTimeSpanProcessor.USER_KEY) + a.get(ThreadTimeSpanProcessor.SYSTEM_KEY), a.toString());
        assertTrue(total >= burned - SPLIT_SLACK_NS, total + " < burned " + burned);
        assertTrue(total <= burned + burned / 10 + 5_000_000, total + " ns for " + burned + " burned");
    }

    @Test
    void nestedSpansEachGetTheirOwn() {
        Span outer = tracer.spanBuilder("outer").startSpan();
        long before = burn(10_000_000);
        long inner;
        try (Scope s = outer.makeCurrent()) {
            Span child = tracer.spanBuilder("inner").startSpan();
            inner = burn(20_000_000);
            child.end();
        }
        outer.end();
        long innerCpu = only("inner").getAttributes().get(ThreadTimeSpanProcessor.TOTAL_KEY);
        long outerCpu = only("outer").getAttributes().get(ThreadTimeSpanProcessor.TOTAL_KEY);
        assertTrue(innerCpu >= inner - SPLIT_SLACK_NS && innerCpu < inner + 5_000_000, "inner " + innerCpu + " for " + inner);
        assertTrue(outerCpu >= innerCpu + before - SPLIT_SLACK_NS, "outer " + outerCpu + " holds inner " + innerCpu + " and " + before);
    }

    @Test
    void spanEndedOnAnotherThreadGetsNoneAndIsCounted() throws Exception {
        Span span = tracer.spanBuilder("handoff").startSpan();
        burn(5_000_000);
        Thread other = new Thread(span::end);
        other.start();
        other.join();
        assertNull(only("handoff").getAttributes().get(ThreadTimeSpanProcessor.TOTAL_KEY));
        assertEquals(1, processor.unmeasured(ThreadTimeSpanProcessor.Reason.OTHER_THREAD));
        // The span left behind on this thread is forgotten: a later span here is still measured.
        Span next = tracer.spanBuilder("next").startSpan();
        next.end();
        assertNotNull(only("next").getAttributes().get(ThreadTimeSpanProcessor.TOTAL_KEY));
        ThreadTimeMetrics.register(sdk, processor, null);
        assertEquals(1, unmeasuredMetric("other_thread"));
        assertEquals(0, unmeasuredMetric("no_clock"));
    }

    @Test
    void virtualThreadWithoutAccountingGetsNoneAndIsCounted() throws Exception {
        assumeTrue(Runtime.version().feature() >= 21, "virtual threads need JDK 21+");
        assertEquals(CpuClock.VirtualSource.NONE, CpuClock.virtualSource());
        assertTrue(CpuClock.limitation().startsWith("no virtual-thread accounting"), CpuClock.limitation());
        Thread v = (Thread) Thread.class.getMethod("startVirtualThread", Runnable.class)
                .invoke(null, (Runnable) () -> tracer.spanBuilder("virtual").startSpan().end());
        v.join();
        assertNull(only("virtual").getAttributes().get(ThreadTimeSpanProcessor.TOTAL_KEY));
        assertEquals(1, processor.unmeasured(ThreadTimeSpanProcessor.Reason.NO_CLOCK));
    }

    @Test
    void perThreadMetricForMatchingThreadsOnly() throws Exception {
        ThreadTimeMetrics.register(sdk, processor, Pattern.compile("tt-worker-.*"));
        try (Burn.Worker worker = new Burn.Worker("tt-worker-1", 40_000_000)) {
            long spent = worker.awaitBurned();
            MetricData m = metric(ThreadTimeMetrics.THREAD_CPU);
            assertEquals("s", m.getUnit());
            double user = 0, system = 0;
            for (DoublePointData p : m.getDoubleSumData().getPoints()) {
                assertEquals("tt-worker-1", p.getAttributes().get(io.opentelemetry.api.common.AttributeKey.stringKey("thread.name")),
                        "only threads whose name matches: " + p.getAttributes());
                String mode = p.getAttributes().get(io.opentelemetry.api.common.AttributeKey.stringKey("cpu.mode"));
                if (mode.equals("user")) {
                    user = p.getValue();
                } else {
                    assertEquals("system", mode);
                    system = p.getValue();
                }
            }
            assertTrue((user + system) * 1e9 >= spent - SPLIT_SLACK_NS, (user + system) + " s < burned " + spent + " ns");
        }
        if (Runtime.version().feature() >= 21) {
            assertTrue(metrics.collectAllMetrics().stream().anyMatch(d -> d.getName().equals(ThreadTimeMetrics.CARRIER_CPU)));
            assertTrue(metrics.collectAllMetrics().stream().anyMatch(d -> d.getName().equals(ThreadTimeMetrics.VTHREAD_CPU)));
        }
    }

    private MetricData metric(String name) {
        Collection<MetricData> all = metrics.collectAllMetrics();
        return all.stream().filter(d -> d.getName().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError(name + " not in " + all));
    }

    private long unmeasuredMetric(String reason) {
        for (LongPointData p : metric(ThreadTimeMetrics.UNMEASURED).getLongSumData().getPoints()) {
            if (reason.equals(p.getAttributes().get(io.opentelemetry.api.common.AttributeKey.stringKey("reason")))) {
                return p.getValue();
            }
        }
        throw new AssertionError("no point for reason " + reason);
    }
}
