package io.threadtime.vthreads;

import static io.threadtime.vthreads.Work.MS;

import io.threadtime.VirtualThreadCpu;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;

/**
 * Run by LateAttachTest in its own JVM: a virtual thread burns, parks, and
 * the parent attaches the agent while it is parked; then it burns again and
 * a new virtual thread burns too. Prints "ready" when the agent may be
 * attached, waits for a line on stdin, then prints
 * "mode burnedBefore burnedAfter chargedEarly burnedNew chargedNew".
 */
public final class LateAttachChild {
    public static void main(String[] args) throws Exception {
        long[] early = new long[3];
        AtomicBoolean attached = new AtomicBoolean();
        Thread t = Thread.ofVirtual().start(() -> {
            early[0] = Work.burn(40 * MS);
            while (!attached.get()) // park may return early
                LockSupport.park();
            long start = VirtualThreadCpu.currentThreadCpuTime();
            early[1] = Work.burn(20 * MS);
            early[2] = VirtualThreadCpu.currentThreadCpuTime();
            if (start < 0)
                early[2] = -2;
        });
        // Parked, not only done burning: the attach must find it off its carrier.
        Work.awaitTrue(() -> t.getState() == Thread.State.WAITING, "the burner to park");
        System.out.println("ready");
        new BufferedReader(new InputStreamReader(System.in)).readLine();
        VirtualThreadCpu.Mode mode = VirtualThreadCpu.mode(); // first use: after the attach
        attached.set(true);
        LockSupport.unpark(t);
        t.join();
        long[] late = new long[2];
        Work.onVirtualThreads(1, i -> {
            long start = VirtualThreadCpu.currentThreadCpuTime();
            late[0] = Work.burn(20 * MS);
            late[1] = VirtualThreadCpu.currentThreadCpuTime() - start;
        });
        System.out.println(mode + " " + early[0] + " " + early[1] + " " + early[2] + " " + late[0] + " " + late[1]);
    }
}
