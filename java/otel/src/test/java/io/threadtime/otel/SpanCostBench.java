package io.threadtime.otel;

import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * What the span processor itself costs per span (not a test): a loop that
 * starts and ends spans on one thread, on an SDK tracer provider without
 * processors, on one with {@link ThreadTimeSpanProcessor} leaving out the
 * waits ({@code create(false)}) and on one with it whole, interleaved
 * {@code rounds} times; ns per span, medians. The waits' part is the last
 * two's difference, set beside one {@code pread} of the thread's
 * {@code /proc/thread-self/schedstat} from Java (a positional
 * {@code FileChannel} read of a channel kept open), timed in the same
 * rounds: the floor a span's run-queue wait is held to (two of them). Run it
 * on a platform thread and on a virtual thread (JDK 21+, with the
 * virtual-thread accounting for the processor to read anything).
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
        Tracer noWaits = SdkTracerProvider.builder().addSpanProcessor(ThreadTimeSpanProcessor.create(false)).build()
                .get("bench");
        Tracer measured = SdkTracerProvider.builder().addSpanProcessor(ThreadTimeSpanProcessor.create()).build().get("bench");
        ExecutorService exec = virtual
                ? (ExecutorService) Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null)
                : Executors.newSingleThreadExecutor();
        double[] a = new double[rounds], c = new double[rounds], b = new double[rounds], p = new double[rounds];
        double[] waits = new double[rounds];
        for (int r = -1; r < rounds; r++) { // round -1 warms up
            double x = run(exec, bare, spans);
            double z = run(exec, noWaits, spans);
            double y = run(exec, measured, spans);
            double q = preads(exec, spans);
            if (r >= 0) {
                a[r] = x;
                c[r] = z;
                b[r] = y;
                p[r] = q;
                waits[r] = y - z;
            }
        }
        exec.shutdown();
        Arrays.sort(a);
        Arrays.sort(b);
        Arrays.sort(c);
        Arrays.sort(p);
        Arrays.sort(waits);
        System.out.printf("java %s, %s thread, virtual-thread source %s, %d rounds of %d spans%n",
                Runtime.version(), virtual ? "virtual" : "platform", CpuClock.virtualSource(), rounds, spans);
        System.out.printf("SDK span, no processor:          %7.0f ns/span (median; min %.0f, max %.0f)%n", a[rounds / 2], a[0], a[rounds - 1]);
        System.out.printf("SDK span + ThreadTimeSpanProcessor: %4.0f ns/span (median; min %.0f, max %.0f)%n", b[rounds / 2], b[0], b[rounds - 1]);
        System.out.printf("processor adds:                  %7.0f ns/span%n", b[rounds / 2] - a[rounds / 2]);
        System.out.printf("SDK span + processor, no waits:  %7.0f ns/span (median; min %.0f, max %.0f)%n", c[rounds / 2], c[0], c[rounds - 1]);
        System.out.printf("the waits add:                   %7.0f ns/span (median of each round's difference; min %.0f, max %.0f)%n",
                waits[rounds / 2], waits[0], waits[rounds - 1]);
        System.out.printf("one pread of schedstat:          %7.0f ns (median; min %.0f, max %.0f)%n", p[rounds / 2], p[0], p[rounds - 1]);
        System.out.printf("the waits / one pread:           %7.2f (the floor: 2)%n", waits[rounds / 2] / p[rounds / 2]);
        System.out.printf("fast clock: %s%n", io.threadtime.ThreadTime.currentThreadCpuClock());
    }

    /** ns per positional read of the executor thread's schedstat, on a channel it keeps open for the round. */
    private static double preads(ExecutorService exec, int n) throws Exception {
        Future<Double> f = exec.submit(() -> {
            try (FileChannel ch = FileChannel.open(Path.of("/proc/thread-self/schedstat"), StandardOpenOption.READ)) {
                ByteBuffer buf = ByteBuffer.allocateDirect(96);
                long sink = 0, t0 = System.nanoTime();
                for (int i = 0; i < n; i++) {
                    buf.clear();
                    sink += ch.read(buf, 0);
                }
                double ns = (System.nanoTime() - t0) / (double) n;
                return sink > 0 ? ns : -1;
            }
        });
        return f.get(10, TimeUnit.MINUTES);
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
