package io.threadtime;

import java.lang.invoke.MethodHandle;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The calling thread's CPU time: threadtime's read, which skips
 * the system call while the kernel's rseq area shows no switch, against the
 * JDK's {@code getCurrentThreadCpuTime()} (one {@code clock_gettime}), the
 * same clock read by a system call through threadtime, and a bare
 * cycle-counter read through the same kind of downcall (the physical floor:
 * the fast read is that counter plus a load and a compare). The floor of the
 * issue: {@code threadTime} at most 0.1 x {@code jdk}. java/benchmarks/fastclock.sh
 * runs it 5 times interleaved and prints the medians.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
@State(Scope.Thread)
public class FastClockBench {
    private static final MethodHandle COUNTER;

    static {
        try {
            COUNTER = CycleCounter.reader();
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final ThreadMXBean jdk = ManagementFactory.getThreadMXBean();
    private final ThreadTimeMXBean bean = ThreadTimeMXBean.getInstance();

    /** ThreadTime.currentThreadCpuTime(): the fast read. */
    @Benchmark
    public long threadTime() {
        return ThreadTime.currentThreadCpuTime();
    }

    /** The drop-in bean's getCurrentThreadCpuTime(): the same read behind the bean's checks. */
    @Benchmark
    public long dropInBean() {
        return bean.getCurrentThreadCpuTime();
    }

    /** The JDK's getCurrentThreadCpuTime(): one clock_gettime. */
    @Benchmark
    public long jdk() {
        return jdk.getCurrentThreadCpuTime();
    }

    /** The same clock by a system call through threadtime (tt_self_total_ns). */
    @Benchmark
    public long syscall() {
        return Native.B.selfTotal();
    }

    /** A bare cycle-counter read (rdtsc) through the same kind of downcall: the floor. */
    @Benchmark
    public long counter() throws Throwable {
        return (long) COUNTER.invokeExact();
    }
}
