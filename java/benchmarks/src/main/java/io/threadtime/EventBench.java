package io.threadtime;

import java.util.concurrent.TimeUnit;
import jdk.jfr.Recording;
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
 * An event through threadtime beside the two things a Java program would
 * use instead: a System.nanoTime() read (the timestamp alone) and a JFR
 * event commit to a running in-memory recording. Average time: these cost
 * 10-100 ns, where sample mode would mostly measure its own timer.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
@State(Scope.Benchmark)
public class EventBench {
    /** What the JFR row commits: one int, like event(int). */
    @jdk.jfr.Name("threadtime.bench.Event")
    @jdk.jfr.StackTrace(false)
    static final class JfrEvent extends jdk.jfr.Event {
        int id;
    }

    private Recording recording;
    private long value;

    @Setup(Level.Trial)
    public void start() {
        EventLog.start();
        recording = new Recording();
        recording.enable(JfrEvent.class);
        recording.setToDisk(false);
        recording.start();
    }

    @TearDown(Level.Trial)
    public void stop() {
        recording.close();
        EventLog.stop();
    }

    @Benchmark
    public long nanoTime() {
        return System.nanoTime();
    }

    @Benchmark
    public void eventInt() {
        EventLog.event(1);
    }

    @Benchmark
    public void eventText() {
        EventLog.event(2, "sixteen-chars-ab");
    }

    @Benchmark
    public void eventValue() {
        EventLog.event(3, value++);
    }

    @Benchmark
    public void interval() {
        try (EventLog.Interval i = EventLog.interval(4)) {
            value++;
        }
    }

    @Benchmark
    public void jfrCommit() {
        JfrEvent e = new JfrEvent();
        e.id = 1;
        e.commit();
    }
}
