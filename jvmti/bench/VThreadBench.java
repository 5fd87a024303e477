import io.threadtime.VirtualThreadCpu;
import java.lang.management.ManagementFactory;
import java.util.concurrent.CountDownLatch;

/**
 * The cost of the virtual-thread agent on the workload it is worst at: many
 * short virtual threads that do nothing but give up their carrier, so the
 * mounts and unmounts are all there is.
 *
 *   java [-agentpath:...] -cp threadtime.jar:. VThreadBench THREADS YIELDS
 *
 * Starts THREADS virtual threads that each yield YIELDS times (so each is
 * mounted YIELDS + 1 times), waits for all, and prints the agent's mode, the
 * wall time of that run in ms, the CPU time the whole JVM spent over it in
 * ms (steadier than wall time on a shared machine), and the CPU time the last
 * thread was charged in ns. A warm-up run of a tenth of the threads comes
 * first and is not timed.
 */
public final class VThreadBench {
    public static void main(String[] args) throws InterruptedException {
        int threads = Integer.parseInt(args[0]), yields = Integer.parseInt(args[1]);
        var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        run(threads / 10, yields);
        long start = System.nanoTime(), cpu = os.getProcessCpuTime();
        long charged = run(threads, yields);
        long wall = System.nanoTime() - start;
        cpu = os.getProcessCpuTime() - cpu;
        System.out.printf("%s %.1f %.1f %d%n", VirtualThreadCpu.mode(), wall / 1e6, cpu / 1e6, charged);
    }

    private static volatile long lastCharged;

    private static long run(int threads, int yields) throws InterruptedException {
        CountDownLatch done = new CountDownLatch(threads);
        Runnable task = () -> {
            for (int i = 0; i < yields; i++)
                Thread.yield();
            if (done.getCount() == 1)
                lastCharged = VirtualThreadCpu.currentThreadCpuTime();
            done.countDown();
        };
        for (int i = 0; i < threads; i++)
            Thread.startVirtualThread(task);
        done.await();
        return lastCharged;
    }
}
