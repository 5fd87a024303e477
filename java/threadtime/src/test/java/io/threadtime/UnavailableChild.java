package io.threadtime;

import java.lang.management.ManagementFactory;
import java.util.concurrent.CountDownLatch;

/**
 * Run in a child JVM whose native library cannot load (NativeUnavailableTest):
 * prints what the drop-in bean answers beside the platform bean's own reads
 * around it, and what ThreadTime calls throw, twice.
 */
public final class UnavailableChild {
    private UnavailableChild() {}

    public static void main(String[] args) throws Exception {
        com.sun.management.ThreadMXBean platform =
                (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        ThreadTimeMXBean bean = ThreadTimeMXBean.getInstance();
        long sum = 0;
        for (int i = 0; i < 5_000_000; i++) {
            sum += i ^ (sum >>> 3);
        }
        System.out.println("work=" + sum);
        // Each of the bean's figures lies between two of the platform's reads.
        long p0 = platform.getCurrentThreadCpuTime();
        long b = bean.getCurrentThreadCpuTime();
        long p1 = platform.getCurrentThreadCpuTime();
        System.out.println("current=" + (p0 > 0 && p0 <= b && b <= p1));
        long u0 = platform.getCurrentThreadUserTime();
        long bu = bean.getCurrentThreadUserTime();
        long u1 = platform.getCurrentThreadUserTime();
        System.out.println("currentUser=" + (u0 <= bu && bu <= u1));

        CountDownLatch done = new CountDownLatch(1);
        Thread other = new Thread(() -> {
            try {
                done.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "other");
        other.start();
        long id = other.getId();
        long o0 = platform.getThreadCpuTime(id);
        long o = bean.getThreadCpuTime(id);
        long[] many = bean.getThreadCpuTime(new long[] {id, Thread.currentThread().getId()});
        long o1 = platform.getThreadCpuTime(id);
        System.out.println("other=" + (o0 >= 0 && o0 <= o && o <= many[0] && many[0] <= o1));
        System.out.println("manySelf=" + (many[1] >= b));
        done.countDown();
        other.join();
        System.out.println("ended=" + bean.getThreadCpuTime(id));

        for (int i = 0; i < 2; i++) {
            try {
                System.out.println("threadtime=" + ThreadTime.currentThreadCpuTime());
            } catch (UnsupportedOperationException e) {
                System.out.println("threw=" + e.getMessage());
            }
        }
    }
}
