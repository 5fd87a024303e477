// Writes the Java fixture of python/tests/test_trace.py (java_events.trace)
// through io.threadtime.EventLog; run by make_java_trace.sh.
import io.threadtime.EventLog;
import java.nio.file.Path;

public class JavaTrace {
    public static void main(String[] args) throws Exception {
        EventLog.start();
        EventLog.threadName("java-main");
        EventLog.event(1);
        EventLog.event(2, "from Java");
        EventLog.event(3, -1L);
        Thread worker = new Thread(() -> {
            EventLog.threadName("java-worker");
            try (EventLog.Interval i = EventLog.interval(4)) {
                EventLog.event(5, "inside");
            }
        });
        worker.start();
        worker.join();
        EventLog.stop();
        EventLog.dump(Path.of(args[0]));
    }
}
