package io.threadtime;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.lang.reflect.Method;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * Run by {@link VirtualThreadWaitsTest} in a JVM of its own, under the
 * -javaagent and with one carrier ({@code -Djdk.virtualThreadScheduler.parallelism=1}):
 * a virtual thread sleeping inside {@code synchronized}, a parked one whose
 * task is submitted again, then N burners that yield, started together. Prints what the agent charged beside what the
 * test takes as truth (System.nanoTime() around the sleep, the carriers' own
 * CPU clocks), as key=value lines; the test compares them.
 */
public final class VirtualThreadWaitsChild {
    static final long SLEEP_MS = 200;
    static final int BURNERS = 4;

    private VirtualThreadWaitsChild() {}

    public static void main(String[] args) throws Exception {
        Method start = Thread.class.getMethod("startVirtualThread", Runnable.class); // compiles for JDK 17
        System.out.println("mode=" + VirtualThreadCpu.mode());

        // A sleep holding a monitor: pinned on JDK 21, unmounted on 24+.
        AtomicReference<String> pinned = new AtomicReference<>();
        Object lock = new Object();
        Thread sleeper = (Thread) start.invoke(null, (Runnable) () -> {
            synchronized (lock) {
                VirtualThreadTimes before = VirtualThreadCpu.currentThreadTimes();
                long t0 = System.nanoTime();
                try {
                    Thread.sleep(SLEEP_MS);
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
                long t1 = System.nanoTime();
                VirtualThreadTimes d = VirtualThreadCpu.currentThreadTimes().minus(before);
                pinned.set("sleep_pinned=" + d.pinnedNanos() + "\nsleep_parked=" + d.parkedNanos()
                        + "\nsleep_wall=" + (t1 - t0));
            }
        });
        sleeper.join();
        System.out.println(pinned.get());
        resubmittedWhileParked(start);

        // N burners on one carrier, all runnable before any runs: a virtual
        // thread starts them, holding the only carrier until it ends.
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        Map<Long, Long> before = carriers(mx);
        VirtualThreadTimes[] seen = new VirtualThreadTimes[BURNERS];
        Thread[] burners = new Thread[BURNERS];
        Thread starter = (Thread) start.invoke(null, (Runnable) () -> {
            for (int i = 0; i < BURNERS; i++) {
                int k = i;
                try {
                    burners[k] = (Thread) start.invoke(null, (Runnable) () -> {
                        for (int r = 0; r < 50; r++) {
                            burn(200_000);
                            Thread.yield();
                        }
                        seen[k] = VirtualThreadCpu.currentThreadTimes();
                    });
                } catch (ReflectiveOperationException e) {
                    throw new AssertionError(e);
                }
            }
        });
        starter.join();
        for (Thread b : burners) {
            b.join();
        }
        Map<Long, Long> after = carriers(mx);
        long carrierCpu = 0;
        for (Map.Entry<Long, Long> e : after.entrySet()) {
            carrierCpu += e.getValue() - before.getOrDefault(e.getKey(), 0L);
        }
        long waits = 0, parked = 0, pinnedSum = 0;
        for (VirtualThreadTimes t : seen) {
            waits += t.carrierWaitNanos();
            parked += t.parkedNanos();
            pinnedSum += t.pinnedNanos();
        }
        System.out.println("burners=" + BURNERS + "\ncarriers=" + after.size() + "\ncarrier_cpu=" + carrierCpu
                + "\nburner_waits=" + waits + "\nburner_parked=" + parked + "\nburner_pinned=" + pinnedSum);
    }

    /**
     * A parked thread's task submitted again, as the JDK does when it puts
     * back the task of a thread it suspended for a stack trace
     * (VirtualThread.tryGetStackTrace): the thread is not made runnable (the
     * task finds it parked and returns), so the whole park is parked time,
     * from before this thread saw it parked (its unmount) until after this
     * thread read the clock to unpark it. Needs java.lang opened to this module.
     */
    private static void resubmittedWhileParked(Method start) throws Exception {
        AtomicReference<VirtualThreadTimes> parked = new AtomicReference<>();
        Thread parker = (Thread) start.invoke(null, (Runnable) () -> {
            VirtualThreadTimes before = VirtualThreadCpu.currentThreadTimes();
            LockSupport.park();
            parked.set(VirtualThreadCpu.currentThreadTimes().minus(before));
        });
        while (parker.getState() != Thread.State.WAITING) {
            Thread.sleep(1);
        }
        long seen = System.nanoTime();
        Method submit = parker.getClass().getDeclaredMethod("submitRunContinuation");
        submit.setAccessible(true);
        submit.invoke(parker);
        Thread.sleep(SLEEP_MS);
        long unparked = System.nanoTime();
        LockSupport.unpark(parker);
        parker.join();
        System.out.println("resubmitted_parked=" + parked.get().parkedNanos() + "\nresubmitted_wall=" + (unparked - seen));
    }

    private static volatile long sink;

    /** Work by count, not by a clock: the same for every burner. */
    private static void burn(int iterations) {
        long x = System.nanoTime() | 1;
        for (int i = 0; i < iterations; i++) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
        }
        sink = x;
    }

    /** The default scheduler's carriers and their CPU time now, by thread id. */
    private static Map<Long, Long> carriers(ThreadMXBean mx) {
        Map<Long, Long> cpu = new HashMap<>();
        for (ThreadInfo info : mx.getThreadInfo(mx.getAllThreadIds())) {
            if (info != null && info.getThreadName().startsWith("ForkJoinPool-1-worker-")) {
                cpu.put(info.getThreadId(), mx.getThreadCpuTime(info.getThreadId()));
            }
        }
        return cpu;
    }
}
