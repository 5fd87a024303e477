package example.web;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

/**
 * A Spring MVC application with one handler that burns CPU and records what
 * it burned, by the JDK's own clock on a platform thread: the request
 * thread's on a platform thread, the carrier's on a virtual one (a burn
 * without a blocking call never leaves its carrier; the handler checks that
 * it did not).
 */
@SpringBootApplication
public class BurnApp {
    private static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();
    private static volatile long sink;

    /** What each request's handler burned, ns, in request order. */
    public static final ConcurrentLinkedQueue<Long> BURNED = new ConcurrentLinkedQueue<>();

    @RestController
    static class Burner {
        @GetMapping("/burn/{ms}")
        String burn(@PathVariable("ms") int ms) {
            long id = platformId();
            long start = MX.getThreadCpuTime(id), now = start, x = sink;
            while (now - start < ms * 1_000_000L) {
                for (int i = 0; i < 10_000; i++) {
                    x = x * 6364136223846793005L + 1442695040888963407L;
                }
                now = MX.getThreadCpuTime(id);
            }
            sink = x;
            if (platformId() != id) {
                throw new IllegalStateException("the burn changed carrier");
            }
            BURNED.add(now - start);
            return "burned";
        }
    }

    /**
     * The id of the platform thread running the caller: itself, or a virtual
     * thread's carrier, found by the name its toString() ends with
     * ("VirtualThread[#22]/runnable@ForkJoinPool-1-worker-1").
     */
    static long platformId() {
        Thread self = Thread.currentThread();
        String s = self.toString();
        int at = s.lastIndexOf('@');
        if (!s.startsWith("VirtualThread[") || at < 0) {
            return self.getId();
        }
        String carrier = s.substring(at + 1);
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().equals(carrier)) {
                return t.getId();
            }
        }
        throw new IllegalStateException("no carrier named " + carrier);
    }
}
