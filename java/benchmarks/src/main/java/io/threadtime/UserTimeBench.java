package io.threadtime;

import java.lang.management.ManagementFactory;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The platform ThreadMXBean against threadtime (its own API and its drop-in
 * bean), each row beside its baseline in the same run. "Other thread" is a
 * mapped platform thread blocked on a latch. User time is the consistent
 * split (for the current thread the fast clock's total in getrusage()'s
 * proportion, for another three clock reads); the ...Raw rows read the raw tick clock (one clock read), so the
 * pair shows what the truthful figure costs. Average time gives the means
 * the ratios are taken from; sample mode gives the tail (each sample also
 * pays two System.nanoTime() reads, ~50 ns, which flatters no one).
 */
@BenchmarkMode({Mode.AverageTime, Mode.SampleTime})
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
@State(Scope.Benchmark)
public class UserTimeBench {
    private final com.sun.management.ThreadMXBean mxbean =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    private final ThreadTimeMXBean bean = ThreadTimeMXBean.getInstance();
    private final CountDownLatch release = new CountDownLatch(1);
    private Thread other;
    private long otherId;

    @Setup(Level.Trial)
    public void startOther() throws InterruptedException {
        CountDownLatch mapped = new CountDownLatch(1);
        other = new Thread(() -> {
            ThreadTime.register();
            mapped.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "bench-other");
        other.setDaemon(true);
        other.start();
        mapped.await();
        otherId = other.getId();
    }

    @TearDown(Level.Trial)
    public void stopOther() throws InterruptedException {
        release.countDown();
        other.join();
    }

    @Benchmark
    public long mxbeanCurrentThreadUserTime() {
        return mxbean.getCurrentThreadUserTime();
    }

    @Benchmark
    public long threadtimeCurrentThreadUserTime() {
        return ThreadTime.currentThreadUserTime();
    }

    @Benchmark
    public long threadtimeCurrentThreadUserTimeRaw() {
        return ThreadTime.currentThreadUserTimeRaw();
    }

    @Benchmark
    public long dropInBeanCurrentThreadUserTime() {
        return bean.getCurrentThreadUserTime();
    }

    @Benchmark
    public long mxbeanCurrentThreadCpuTime() {
        return mxbean.getCurrentThreadCpuTime();
    }

    @Benchmark
    public long threadtimeCurrentThreadCpuTime() {
        return ThreadTime.currentThreadCpuTime();
    }

    @Benchmark
    public long dropInBeanCurrentThreadCpuTime() {
        return bean.getCurrentThreadCpuTime();
    }

    @Benchmark
    public CpuTimes threadtimeCurrentThreadTimes() {
        return ThreadTime.currentThreadTimes();
    }

    @Benchmark
    public long mxbeanOtherThreadUserTime() {
        return mxbean.getThreadUserTime(otherId);
    }

    @Benchmark
    public long threadtimeOtherThreadUserTime() {
        return ThreadTime.threadUserTime(other);
    }

    @Benchmark
    public long threadtimeOtherThreadUserTimeRaw() {
        return ThreadTime.threadUserTimeRaw(other);
    }

    @Benchmark
    public long dropInBeanOtherThreadUserTime() {
        return bean.getThreadUserTime(otherId);
    }

    @Benchmark
    public long mxbeanOtherThreadCpuTime() {
        return mxbean.getThreadCpuTime(otherId);
    }

    @Benchmark
    public long threadtimeOtherThreadCpuTime() {
        return ThreadTime.threadCpuTime(other);
    }
}
