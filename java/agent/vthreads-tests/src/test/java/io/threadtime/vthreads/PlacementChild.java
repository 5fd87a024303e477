package io.threadtime.vthreads;

import io.threadtime.VirtualThreadCpu;
import io.threadtime.agent.vthreads.hooks.ContinuationAccounts;
import io.threadtime.agent.vthreads.hooks.TableAccounts;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.concurrent.locks.LockSupport;

/**
 * Run by {@link PlacementTest} in a JVM of its own, started as the README
 * says (no {@code --add-opens}) with one carrier: a virtual thread burns
 * without unmounting while its carrier's CPU clock is read around the burn,
 * so what it burned is known without the agent. Prints
 * "MODE IN_THREADS FAILURES BURNED CHARGED ENDED LIVE": ENDED is the hooks'
 * figure for a thread that has ended, LIVE for one parked.
 */
public final class PlacementChild {
    static volatile long sink;

    public static void main(String[] args) throws Exception {
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        long[] figures = new long[2];
        Thread burner = Thread.ofVirtual().start(() -> {
            long carrier = carrier(mx);
            long charged = VirtualThreadCpu.currentThreadCpuTime();
            long start = mx.getThreadCpuTime(carrier), now = start, x = 0;
            while (now - start < 30_000_000L) {
                for (int i = 0; i < 20_000; i++)
                    x = x * 31 + i;
                now = mx.getThreadCpuTime(carrier);
            }
            sink = x;
            figures[0] = now - start;
            figures[1] = VirtualThreadCpu.currentThreadCpuTime() - charged;
        });
        burner.join();
        Thread parked = Thread.ofVirtual().start(LockSupport::park);
        while (parked.getState() != Thread.State.WAITING)
            Thread.onSpinWait();
        long live = hooks(parked);
        LockSupport.unpark(parked);
        parked.join();
        System.out.println(VirtualThreadCpu.mode() + " " + VirtualThreadCpu.accountsInThreads() + " "
                + VirtualThreadCpu.hookFailures() + " " + figures[0] + " " + figures[1] + " "
                + hooks(burner) + " " + live);
    }

    /** The hooks' own figure for {@code t}, from wherever they keep the accounts. */
    private static long hooks(Thread t) {
        return VirtualThreadCpu.accountsInThreads() ? ContinuationAccounts.other(t) : TableAccounts.other(t);
    }

    /** The one carrier (parallelism 1), by the name the JDK gives it. */
    private static long carrier(ThreadMXBean mx) {
        for (ThreadInfo t : mx.getThreadInfo(mx.getAllThreadIds()))
            if (t != null && t.getThreadName().startsWith("ForkJoinPool-") && t.getThreadName().contains("worker"))
                return t.getThreadId();
        throw new AssertionError("no carrier thread found");
    }
}
