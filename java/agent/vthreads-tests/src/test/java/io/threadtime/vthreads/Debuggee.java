package io.threadtime.vthreads;

import io.threadtime.VirtualThreadCpu;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.concurrent.locks.LockSupport;

/**
 * The JVM a debugger attaches to in {@link UnderTheFlagTest}: three virtual
 * threads park, it prints "ready", and once a line comes on stdin (the
 * debugger has listed the threads and gone) a virtual thread burns and it
 * prints "charged NS MECHANISM MODE".
 */
public final class Debuggee {
    public static void main(String[] args) throws Exception {
        Thread[] parked = new Thread[3];
        for (int i = 0; i < parked.length; i++)
            parked[i] = Thread.ofVirtual().name("parked-" + i).start(LockSupport::park);
        System.out.println("ready");
        new BufferedReader(new InputStreamReader(System.in)).readLine();
        for (Thread t : parked) {
            LockSupport.unpark(t);
            t.join();
        }
        long[] charged = new long[1];
        Thread.ofVirtual().start(() -> {
            long start = VirtualThreadCpu.currentThreadCpuTime();
            Work.burn(20 * Work.MS);
            Thread.yield();
            charged[0] = VirtualThreadCpu.currentThreadCpuTime() - start;
        }).join();
        System.out.println("charged " + charged[0] + " " + VirtualThreadCpu.mechanism() + " " + VirtualThreadCpu.mode());
    }
}
