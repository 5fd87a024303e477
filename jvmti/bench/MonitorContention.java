import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * Virtual threads contending on one monitor, some of them parking while they
 * hold it (as the JDK's HttpServer does inside its event lock): THREADS
 * virtual threads loop { compute; synchronized (LOCK) { every 4th pass park
 * 20 us } ; every 8th pass park 50 us } for SECONDS. Prints "completed N
 * passes", or "HUNG after N passes" and exits 1 when no pass completed for 5 s.
 * It needs no agent: it shows what HotSpot's flag
 * -XX:-DoJVMTIVirtualThreadTransitions does to virtual threads that block on a
 * monitor (jvmti/bench/flag_hang.sh runs it with and without the flag).
 *
 *   java -Djdk.virtualThreadScheduler.parallelism=2 MonitorContention THREADS SECONDS
 */
public final class MonitorContention {
    private static final Object LOCK = new Object();
    private static final AtomicLong PASSES = new AtomicLong();
    private static volatile long sink;

    public static void main(String[] args) throws InterruptedException {
        int threads = Integer.parseInt(args[0]);
        long end = System.nanoTime() + Long.parseLong(args[1]) * 1_000_000_000L;
        for (int t = 0; t < threads; t++) {
            Thread.ofVirtual().start(() -> {
                long x = 0;
                for (int i = 0; ; i++) {
                    for (int k = 0; k < 2000; k++) {
                        x = x * 31 + k;
                    }
                    synchronized (LOCK) {
                        sink = x;
                        if ((i & 3) == 0) {
                            LockSupport.parkNanos(20_000); // parks holding the monitor
                        }
                    }
                    PASSES.incrementAndGet();
                    if ((i & 7) == 0) {
                        LockSupport.parkNanos(50_000);
                    }
                }
            });
        }
        long last = -1, progressAt = System.nanoTime();
        while (System.nanoTime() < end) {
            Thread.sleep(200); // a benchmark's watchdog: polls the pass count
            long p = PASSES.get();
            if (p != last) {
                last = p;
                progressAt = System.nanoTime();
            } else if (System.nanoTime() - progressAt > 5_000_000_000L) {
                System.out.println("HUNG after " + p + " passes");
                System.exit(1);
            }
        }
        System.out.println("completed " + last + " passes");
        System.exit(0);
    }
}
