import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

/**
 * What a probe adds to a small method: madd (8 multiply-adds, ~2 ns bare)
 * called CALLS times in a loop, ROUNDS rounds; prints the best round's ns
 * per call, in the thread's CPU time (what the calls cost, whatever else the
 * machine runs) and in wall time. The same class runs bare, under
 * threadtime's probe, under JFR's jdk.MethodTiming; run.sh compares them.
 * The loop's result is printed so that the JIT keeps every call.
 * <p>
 * A third argument {@code virtual} (JDK 21+, with {@code --add-opens
 * java.base/java.lang=ALL-UNNAMED}) runs the loop on a virtual thread and
 * reads its carrier's CPU time instead (the loop never blocks, so the thread
 * stays on that carrier): what a probe costs there, where probe.cpu=on reads
 * the thread's own account.
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

    public static void main(String[] args) throws Exception {
        long calls = Long.parseLong(args[0]);
        int rounds = Integer.parseInt(args[1]);
        if (args.length > 2 && args[2].equals("virtual")) {
            java.lang.reflect.Method carrier = Thread.class.getDeclaredMethod("currentCarrierThread");
            carrier.setAccessible(true);
            Exception[] failed = {null};
            // Thread.ofVirtual().start(task), through reflection: this compiles for JDK 17
            Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
            Thread t = (Thread) Class.forName("java.lang.Thread$Builder").getMethod("start", Runnable.class)
                    .invoke(builder, (Runnable) () -> {
                        try {
                            long id = ((Thread) carrier.invoke(null)).getId();
                            run(calls, rounds, () -> ManagementFactory.getThreadMXBean().getThreadCpuTime(id));
                            if (((Thread) carrier.invoke(null)).getId() != id) {
                                throw new IllegalStateException("the loop changed carriers");
                            }
                        } catch (Exception e) {
                            failed[0] = e;
                        }
                    });
            t.join();
            if (failed[0] != null) {
                throw failed[0];
            }
            return;
        }
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        run(calls, rounds, threads::getCurrentThreadCpuTime);
    }

    private static void run(long calls, int rounds, java.util.function.LongSupplier cpu) {
        double sink = 0;
        double best = Double.MAX_VALUE, bestWall = Double.MAX_VALUE;
        for (int r = 0; r < rounds; r++) {
            long c0 = cpu.getAsLong();
            long t0 = System.nanoTime();
            for (long i = 0; i < calls; i++) {
                sink += madd(i);
            }
            bestWall = Math.min(bestWall, (double) (System.nanoTime() - t0) / calls);
            best = Math.min(best, (double) (cpu.getAsLong() - c0) / calls);
        }
        System.out.printf("ns_per_call %.2f wall %.2f sink %.1f%n", best, bestWall, sink);
    }
}
