package io.threadtime;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * JNI against FFM: the same core calls through each backend, no API layer
 * on top. Compare with the C figures of `threadtime bench` for the cost of
 * the crossing itself. JDK 17-21 have only "jni": run with -p backend=jni.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
@State(Scope.Benchmark)
public class BackendBench {
    @Param({"ffm", "jni"})
    public String backend;

    private Backend b;
    private final byte[] text = EventLog.encode("sixteen-chars-ab", new byte[EventLog.TEXT_MAX + 1]);

    @Setup(Level.Trial)
    public void setUp() {
        b = Backends.create(backend);
        EventLog.start();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        EventLog.stop();
    }

    @Benchmark
    public long selfUserRaw() {
        return b.selfUser();
    }

    @Benchmark
    public long selfTotal() {
        return b.selfTotal();
    }

    @Benchmark
    public void event() {
        b.event(1);
    }

    @Benchmark
    public void eventText() {
        b.eventText(2, text);
    }
}
