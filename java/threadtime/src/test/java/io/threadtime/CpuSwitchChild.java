package io.threadtime;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.concurrent.CountDownLatch;

/**
 * Run by VirtualThreadCpuSwitchTest in a child JVM under the JVMTI agent:
 * switches CPU time measurement off in the JDK's own bean, then prints
 * {@link VirtualThreadCpu}'s answers for the main (platform) thread, for a
 * virtual thread asking about itself and about another, parked virtual
 * thread, with the JDK bean's answer on the main thread beside them; then,
 * with measurement switched on again, the virtual thread's own answer and
 * the process's CPU time (the JDK's operating-system bean). Each line is a
 * label and numbers.
 */
public final class CpuSwitchChild {
    private static volatile long sink;

    private CpuSwitchChild() {}

    public static void main(String[] args) throws Exception {
        ThreadMXBean jdk = ManagementFactory.getThreadMXBean();
        CountDownLatch release = new CountDownLatch(1);
        Thread other = Work.virtualWaiter(CpuSwitchChild::spin, release);
        StringBuilder out = new StringBuilder("mode " + VirtualThreadCpu.mode() + "\n");
        jdk.setThreadCpuTimeEnabled(false);
        out.append("jdk-off ").append(jdk.getCurrentThreadCpuTime()).append('\n');
        out.append("platform-off ").append(line(VirtualThreadCpu.currentThreadTimes())).append('\n');
        Thread self = (Thread) Thread.class.getMethod("startVirtualThread", Runnable.class).invoke(null, (Runnable) () -> {
            spin();
            out.append("self-off ").append(line(VirtualThreadCpu.currentThreadTimes())).append('\n');
            out.append("cpu-off ").append(VirtualThreadCpu.currentThreadCpuTime()).append('\n');
            out.append("other-off ").append(line(VirtualThreadCpu.threadTimes(other))).append('\n');
            jdk.setThreadCpuTimeEnabled(true);
            out.append("self-on ").append(line(VirtualThreadCpu.currentThreadTimes())).append('\n');
        });
        self.join();
        release.countDown();
        other.join();
        long process = ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
        System.out.print(out.append("process ").append(process).append('\n'));
    }

    private static String line(VirtualThreadTimes t) {
        return t.cpuNanos() + " " + t.carrierWaitNanos() + " " + t.pinnedNanos() + " " + t.parkedNanos();
    }

    /** Some CPU work, without a clock: the JDK's bean reads -1 on a virtual thread. */
    private static void spin() {
        long x = sink;
        for (int i = 0; i < 5_000_000; i++) {
            x = x * 6364136223846793005L + 1442695040888963407L;
        }
        sink = x;
    }
}
