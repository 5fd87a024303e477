package io.threadtime.otel;

import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import java.util.Arrays;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * What the span processor itself costs per span (not a test): a loop that
 * starts and ends spans on one thread, on an SDK tracer provider without
 * processors and on one with {@link ThreadTimeSpanProcessor}, interleaved
 * {@code rounds} times; ns per span, medians. Run it on a platform thread
 * and on a virtual thread (JDK 21+, with the virtual-thread accounting for
 * the processor to read anything).
 * <p>
 * Arguments: {@code rounds spansPerRound platform|virtual}.
 */
public final class SpanCostBench {
    private SpanCostBench() {}

    public static void main(String[] args) throws Exception {
        int rounds = Integer.parseInt(args[0]);
        int spans = Integer.parseInt(args[1]);
        boolean virtual = args[2].equals("virtual");
        Tracer bare = SdkTracerProvider.builder().build().get("bench");
        Tracer measured = SdkTracerProvider.builder().addSpanProcessor(ThreadTimeSpanProcessor.create()).build().get("bench");
        ExecutorService exec = virtual
                ? (ExecutorService) Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null)
                : Executors.newSingleThreadExecutor();
        double[] a = new double[rounds];
        double[] b = new double[rounds];
        for (int r = -1; r < rounds; r++) { // round -1 warms up
            double x = run(exec, bare, spans);
            double y = run(exec, measured, spans);
            if (r >= 0) {
                a[r] = x;
                b[r] = y;
            }
        }
        exec.shutdown();
        Arrays.sort(a);
        Arrays.sort(b);
        System.out.printf("java %s, %s thread, virtual-thread source %s, %d rounds of %d spans%n",
                Runtime.version(), virtual ? "virtual" : "platform", CpuClock.virtualSource(), rounds, spans);
        System.out.printf("SDK span, no processor:          %7.0f ns/span (median; min %.0f, max %.0f)%n", a[rounds / 2], a[0], a[rounds - 1]);
        System.out.printf("SDK span + ThreadTimeSpanProcessor: %4.0f ns/span (median; min %.0f, max %.0f)%n", b[rounds / 2], b[0], b[rounds - 1]);
        System.out.printf("processor adds:                  %7.0f ns/span%n", b[rounds / 2] - a[rounds / 2]);
    }

    private static double run(ExecutorService exec, Tracer tracer, int spans) throws Exception {
        Future<Double> f = exec.submit(() -> {
            long t0 = System.nanoTime();
            for (int i = 0; i < spans; i++) {
                tracer.spanBuilder("s").startSpan().end();
            }
            return (System.nanoTime() - t0) / (double) spans;
        });
        return f.get(10, TimeUnit.MINUTES);
    }
}
