package io.threadtime.otel;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Run by RunWaitTest in a child JVM (JDK 21+) under the {@code -javaagent}
 * in exact mode, with one carrier. Two virtual threads, each in a span
 * started before they are released together, burn in short pieces with a
 * {@code Thread.yield()} after each, so each is always runnable: prints
 * "carrier CPU WAIT_FIRST WAIT_SECOND", the carrier's CPU (the JDK bean)
 * from the release to the first one's end and the two spans'
 * threadtime.vthread.carrier_wait_ns. Then a span around a 100 ms sleep
 * inside {@code synchronized}: "pinned PINNED SLEPT", its
 * threadtime.vthread.pinned_ns and the sleep by System.nanoTime().
 */
public final class VirtualSpansChild {
    private VirtualSpansChild() {}

    private static volatile long sink;

    public static void main(String[] args) throws Exception {
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        InMemorySpanExporter spans = InMemorySpanExporter.create();
        try (SdkTracerProvider provider = PinnedSpansChild.provider(spans)) {
            Tracer tracer = provider.get("virtual");
            AtomicLong carrier = new AtomicLong(), released = new AtomicLong(), firstEnd = new AtomicLong();
            CyclicBarrier go = new CyclicBarrier(2, () -> {
                carrier.set(carrierId());
                released.set(mx.getThreadCpuTime(carrier.get()));
            });
            AtomicInteger finished = new AtomicInteger();
            Thread[] t = new Thread[2];
            for (int i = 0; i < 2; i++) {
                t[i] = startVirtual(() -> {
                    Span span = tracer.spanBuilder("pending").startSpan();
                    try {
                        go.await();
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                    long x = sink;
                    for (int piece = 0; piece < 400; piece++) {
                        for (int k = 0; k < 50_000; k++) {
                            x = x * 6364136223846793005L + 1442695040888963407L;
                        }
                        Thread.yield();
                    }
                    sink = x;
                    int order = finished.getAndIncrement();
                    if (order == 0) {
                        firstEnd.set(mx.getThreadCpuTime(carrier.get()));
                    }
                    span.updateName("finished-" + order);
                    span.end();
                });
            }
            for (Thread x : t) {
                x.join();
            }
            System.out.println("carrier " + (firstEnd.get() - released.get()) + " " + carrierWait(spans, "finished-0")
                    + " " + carrierWait(spans, "finished-1"));
            Object lock = new Object();
            long[] slept = new long[1];
            startVirtual(() -> {
                Span span = tracer.spanBuilder("pinned").startSpan();
                synchronized (lock) {
                    long t0 = System.nanoTime();
                    try {
                        Thread.sleep(100);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    slept[0] = System.nanoTime() - t0;
                }
                span.end();
            }).join();
            SpanData pinned = find(spans, "pinned");
            Long p = pinned.getAttributes().get(ThreadTimeSpanProcessor.PINNED_KEY);
            System.out.println("pinned " + (p == null ? -1 : p) + " " + slept[0]);
        }
    }

    private static long carrierWait(InMemorySpanExporter spans, String name) {
        Long w = find(spans, name).getAttributes().get(ThreadTimeSpanProcessor.CARRIER_WAIT_KEY);
        return w == null ? -1 : w;
    }

    private static SpanData find(InMemorySpanExporter spans, String name) {
        return spans.getFinishedSpanItems().stream().filter(d -> d.getName().equals(name)).findFirst().orElseThrow();
    }

    /** Thread.startVirtualThread, which this module's Java 17 build cannot name. */
    private static Thread startVirtual(Runnable r) {
        try {
            return (Thread) Thread.class.getMethod("startVirtualThread", Runnable.class).invoke(null, r);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The one carrier of the default scheduler (parallelism 1). */
    private static long carrierId() {
        return ThreadSampler.platformThreads().stream()
                .filter(x -> x.getClass().getName().equals(ThreadSampler.CARRIER_CLASS)).findFirst().orElseThrow()
                .getId();
    }
}
