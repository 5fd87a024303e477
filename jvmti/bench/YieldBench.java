import io.threadtime.VirtualThreadCpu;
import java.lang.invoke.MethodHandle;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

/**
 * What one mount plus one unmount costs: one virtual thread calling
 * Thread.yield() on one carrier (run with -Djdk.virtualThreadScheduler.parallelism=1),
 * YIELDS yields per round, ROUNDS rounds; prints the mechanism, the mode and
 * the best round's ns per yield. With "reads", the loop itself also reads the
 * carrier's CPU clock before and after each yield, through the same call the
 * exact mode's hooks make (threadtime's backend, tt_self_total_ns): what the
 * two clock reads of a mount and an unmount cost in this context, with no
 * agent.
 * <p>
 * Also printed: the carrier's own CPU time per yield in its best round
 * (the JDK's bean by the carrier's id, read at each round's ends). On a
 * shared machine the wall figure also counts the time the carrier waited
 * for a CPU; this one does not. NaN where the carrier could not be found.
 *
 *   java [agent] -Djdk.virtualThreadScheduler.parallelism=1 -cp threadtime.jar:. YieldBench [YIELDS] [ROUNDS] [reads]
 */
public final class YieldBench {
    public static void main(String[] args) throws Exception {
        int yields = args.length > 0 ? Integer.parseInt(args[0]) : 300_000;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 5;
        MethodHandle clock = args.length > 2 && args[2].equals("reads") ? BenchClocks.named("cpu") : null;
        double[] best = {Double.MAX_VALUE, Double.MAX_VALUE};
        long[] sink = {0};
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        Thread t = Thread.ofVirtual().start(() -> {
            long carrier = carrierId();
            for (int r = 0; r < rounds; r++) {
                long cpu = carrier < 0 ? 0 : threads.getThreadCpuTime(carrier);
                long start = System.nanoTime();
                for (int i = 0; i < yields; i++) {
                    if (clock != null)
                        sink[0] += BenchClocks.read(clock);
                    Thread.yield();
                    if (clock != null)
                        sink[0] += BenchClocks.read(clock);
                }
                best[0] = Math.min(best[0], (System.nanoTime() - start) / (double) yields);
                if (carrier >= 0)
                    best[1] = Math.min(best[1], (threads.getThreadCpuTime(carrier) - cpu) / (double) yields);
            }
        });
        t.join();
        System.out.printf("%s %s %.1f %.1f%n", VirtualThreadCpu.mechanism(), VirtualThreadCpu.mode(), best[0],
                best[1] == Double.MAX_VALUE ? Double.NaN : best[1]);
    }

    /** The scheduler's one worker (parallelism=1), the carrier; -1 if there is not exactly one. */
    private static long carrierId() {
        long id = -1;
        int found = 0;
        for (Thread p : Thread.getAllStackTraces().keySet()) {
            if (p.getName().startsWith("ForkJoinPool-") && p.getName().contains("-worker-")) {
                id = p.threadId();
                found++;
            }
        }
        return found == 1 ? id : -1;
    }
}
