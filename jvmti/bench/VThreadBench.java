import io.threadtime.VirtualThreadCpu;
import java.lang.invoke.MethodHandle;
import java.lang.management.ManagementFactory;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;

/**
 * The cost of the virtual-thread agent on the workload it is worst at: many
 * short virtual threads that do nothing but give up their carrier, so the
 * mounts and unmounts are all there is.
 *
 *   java [-agentpath:...] -cp threadtime.jar:. VThreadBench THREADS YIELDS [IN_FLIGHT]
 *
 * Starts THREADS virtual threads that each yield YIELDS times (so each is
 * mounted YIELDS + 1 times), at most IN_FLIGHT of them alive at once (0: no
 * bound), waits for all, and prints the agent's mode, the wall time of that
 * run in ms, the CPU time the whole JVM spent over it in ms (steadier than
 * wall time on a shared machine), and the CPU time the last thread was
 * charged in ns. A whole untimed run comes first, so that the timed one runs
 * compiled code and the JIT compilers are mostly idle.
 * <p>
 * Why the bound: with no bound, how many threads are alive at once depends
 * on how fast the starting thread outruns the carriers. Measured on JDK 25
 * with a 1 GB heap, the same command did 4 young collections in one run and
 * 31 in the next (1.6 s and 7.5 s of JVM CPU, no agent): the collector, not
 * the mounts, made the figure. With 10,000 in flight every run does the same
 * 3 collections.
 * <p>
 * {@code -Dbench.reads=cpu}, {@code counter} or {@code monotonic} (run with no agent): each thread
 * reads that clock ({@link BenchClocks}) where the hooks would, once after
 * each mount and once before each unmount: the reads alone, the floor under
 * the agent's modes (exact reads {@code cpu}, mounted {@code counter}).
 */
public final class VThreadBench {
    public static void main(String[] args) throws InterruptedException {
        int threads = Integer.parseInt(args[0]), yields = Integer.parseInt(args[1]);
        int inFlight = args.length > 2 ? Integer.parseInt(args[2]) : 0;
        var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        run(threads, yields, inFlight);
        long start = System.nanoTime(), cpu = os.getProcessCpuTime();
        long charged = run(threads, yields, inFlight);
        long wall = System.nanoTime() - start;
        cpu = os.getProcessCpuTime() - cpu;
        System.out.printf("%s %.1f %.1f %d%n", VirtualThreadCpu.mode(), wall / 1e6, cpu / 1e6, charged);
    }

    private static volatile long lastCharged;
    private static volatile long sink;
    /** Constant, as the hooks' handles are, so the JIT inlines the read. */
    private static final MethodHandle CLOCK = clock();

    private static MethodHandle clock() {
        try {
            return BenchClocks.named(System.getProperty("bench.reads", "none"));
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    private static long run(int threads, int yields, int inFlight) throws InterruptedException {
        CountDownLatch done = new CountDownLatch(threads);
        Semaphore slots = new Semaphore(inFlight > 0 ? inFlight : Integer.MAX_VALUE);
        Runnable task = () -> {
            long reads = 0;
            if (CLOCK != null)
                reads += BenchClocks.read(CLOCK);
            for (int i = 0; i < yields; i++) {
                if (CLOCK != null)
                    reads += BenchClocks.read(CLOCK);
                Thread.yield();
                if (CLOCK != null)
                    reads += BenchClocks.read(CLOCK);
            }
            if (CLOCK != null)
                reads += BenchClocks.read(CLOCK);
            if (reads == 42)
                sink = reads; // keeps the reads, without a shared write per thread
            if (done.getCount() == 1)
                lastCharged = VirtualThreadCpu.currentThreadCpuTime();
            done.countDown();
            slots.release();
        };
        for (int i = 0; i < threads; i++) {
            slots.acquire();
            Thread.startVirtualThread(task);
        }
        done.await();
        return lastCharged;
    }
}
