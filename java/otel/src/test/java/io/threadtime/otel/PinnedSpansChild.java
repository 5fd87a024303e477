package io.threadtime.otel;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Run by RunWaitTest in a child JVM pinned to one CPU (taskset): two
 * platform threads, each in a span started before they are released
 * together, each burning 100 ms of its own CPU (the JDK bean's clock).
 * Prints per span, in the order the threads finished, "CPU RUN_WAIT": the
 * thread's CPU over the span by the bean, and the span's
 * threadtime.sched.run_wait_ns attribute (-1 if it has none).
 */
public final class PinnedSpansChild {
    private PinnedSpansChild() {}

    /** A provider with the span processor, exporting to spans as each span ends. */
    static SdkTracerProvider provider(InMemorySpanExporter spans) {
        return SdkTracerProvider.builder().addSpanProcessor(ThreadTimeSpanProcessor.create())
                .addSpanProcessor(SimpleSpanProcessor.create(spans)).build();
    }

    public static void main(String[] args) throws Exception {
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        InMemorySpanExporter spans = InMemorySpanExporter.create();
        try (SdkTracerProvider provider = PinnedSpansChild.provider(spans)) {
            Tracer tracer = provider.get("pinned");
            CyclicBarrier go = new CyclicBarrier(2);
            AtomicInteger finished = new AtomicInteger();
            long[] cpu = new long[2];
            Thread[] t = new Thread[2];
            for (int i = 0; i < 2; i++) {
                t[i] = new Thread(() -> {
                    Span span = tracer.spanBuilder("pending").startSpan();
                    long c0 = mx.getCurrentThreadCpuTime();
                    try {
                        go.await();
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                    Burn.burn(100_000_000);
                    long c1 = mx.getCurrentThreadCpuTime();
                    int order = finished.getAndIncrement();
                    cpu[order] = c1 - c0;
                    span.updateName("finished-" + order);
                    span.end();
                });
                t[i].start();
            }
            for (Thread x : t) {
                x.join();
            }
            for (int order = 0; order < 2; order++) {
                String name = "finished-" + order;
                SpanData s = spans.getFinishedSpanItems().stream().filter(d -> d.getName().equals(name)).findFirst()
                        .orElseThrow();
                Long wait = s.getAttributes().get(ThreadTimeSpanProcessor.RUN_WAIT_KEY);
                System.out.println(cpu[order] + " " + (wait == null ? -1 : wait));
            }
        }
    }
}
