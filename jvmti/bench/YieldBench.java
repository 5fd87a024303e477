import io.threadtime.VirtualThreadCpu;

/**
 * What one mount plus one unmount costs: one virtual thread calling
 * Thread.yield() on one carrier (run with -Djdk.virtualThreadScheduler.parallelism=1),
 * YIELDS yields per round, ROUNDS rounds; prints the mechanism, the mode and
 * the best round's ns per yield.
 *
 *   java [agent] -Djdk.virtualThreadScheduler.parallelism=1 -cp threadtime.jar:. YieldBench [YIELDS] [ROUNDS]
 */
public final class YieldBench {
    public static void main(String[] args) throws InterruptedException {
        int yields = args.length > 0 ? Integer.parseInt(args[0]) : 300_000;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 5;
        double[] best = {Double.MAX_VALUE};
        Thread t = Thread.ofVirtual().start(() -> {
            for (int r = 0; r < rounds; r++) {
                long start = System.nanoTime();
                for (int i = 0; i < yields; i++)
                    Thread.yield();
                best[0] = Math.min(best[0], (System.nanoTime() - start) / (double) yields);
            }
        });
        t.join();
        System.out.printf("%s %s %.1f%n", VirtualThreadCpu.mechanism(), VirtualThreadCpu.mode(), best[0]);
    }
}
