import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

/**
 * What a probe adds to a small method: madd (8 multiply-adds, ~2 ns bare)
 * called CALLS times in a loop, ROUNDS rounds; prints the best round's ns
 * per call, in the thread's CPU time (what the calls cost, whatever else the
 * machine runs) and in wall time. The same class runs bare, under
 * threadtime's probe, under JFR's jdk.MethodTiming; run.sh compares them.
 * The loop's result is printed so that the JIT keeps every call.
 */
public final class ProbeBench {
    private ProbeBench() {}

    static double madd(double x) {
        double a = x;
        a = a * 1.000001 + 0.25;
        a = a * 0.999999 + 0.5;
        a = a * 1.000002 + 0.125;
        a = a * 0.999998 + 0.75;
        a = a * 1.000003 + 0.0625;
        a = a * 0.999997 + 0.375;
        a = a * 1.000004 + 0.875;
        a = a * 0.999996 + 0.1875;
        return a;
    }

    public static void main(String[] args) {
        long calls = Long.parseLong(args[0]);
        int rounds = Integer.parseInt(args[1]);
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        double sink = 0;
        double best = Double.MAX_VALUE, bestWall = Double.MAX_VALUE;
        for (int r = 0; r < rounds; r++) {
            long c0 = threads.getCurrentThreadCpuTime();
            long t0 = System.nanoTime();
            for (long i = 0; i < calls; i++) {
                sink += madd(i);
            }
            bestWall = Math.min(bestWall, (double) (System.nanoTime() - t0) / calls);
            best = Math.min(best, (double) (threads.getCurrentThreadCpuTime() - c0) / calls);
        }
        System.out.printf("ns_per_call %.2f wall %.2f sink %.1f%n", best, bestWall, sink);
    }
}
