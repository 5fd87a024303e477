package io.threadtime;

/**
 * CPU time of one task on the thread that runs it, virtual or platform.
 * <pre>{@code
 * TaskCpu cpu = TaskCpu.start();
 * handle(request);            // may park, sleep, block on I/O, change carrier
 * long ns = cpu.elapsedNanos();
 * }</pre>
 * On a virtual thread the figure is what the agent charged the thread in
 * between (see {@link VirtualThreadCpu}), so time spent parked, sleeping or
 * waiting for I/O is not counted, and work done on several carriers is. A
 * task that hands work to other threads is charged only for its own
 * thread's part. {@link #elapsedTimes()} adds, on a virtual thread, where
 * the rest went: waiting for a carrier, pinned, parked
 * ({@link VirtualThreadTimes}).
 */
public final class TaskCpu {
    private final Thread thread;
    private final long start;
    /** The start's four figures on a virtual thread; null on a platform thread (only the CPU is known). */
    private final VirtualThreadTimes startTimes;

    private TaskCpu(Thread thread, long start, VirtualThreadTimes startTimes) {
        this.thread = thread;
        this.start = start;
        this.startTimes = startTimes;
    }

    /** Starts measuring on the calling thread. */
    public static TaskCpu start() {
        Thread self = Thread.currentThread();
        if (ThreadMap.isVirtual(self)) {
            VirtualThreadTimes t = VirtualThreadCpu.currentThreadTimes();
            return new TaskCpu(self, t.cpuNanos(), t);
        }
        return new TaskCpu(self, VirtualThreadCpu.currentThreadCpuTime(), null);
    }

    /**
     * CPU time of the calling thread since {@link #start()}, ns; -1 if the
     * thread's CPU time cannot be read (a virtual thread without the agent,
     * or CPU time measurement switched off in the platform bean).
     *
     * @throws IllegalStateException if called on another thread than start()
     */
    public long elapsedNanos() {
        checkThread();
        long now = VirtualThreadCpu.currentThreadCpuTime();
        return start < 0 || now < 0 ? -1 : now - start;
    }

    /**
     * Since {@link #start()}: the CPU time as {@link #elapsedNanos()}, and on
     * a virtual thread its time waiting for a carrier, pinned and parked;
     * -1 for each figure not known (on a platform thread all but the CPU).
     *
     * @throws IllegalStateException if called on another thread than start()
     */
    public VirtualThreadTimes elapsedTimes() {
        checkThread();
        if (startTimes == null) {
            return VirtualThreadTimes.cpuOnly(elapsedNanos());
        }
        return VirtualThreadCpu.currentThreadTimes().minus(startTimes);
    }

    private void checkThread() {
        if (Thread.currentThread() != thread) {
            throw new IllegalStateException("TaskCpu is read on the thread that started it, not " + Thread.currentThread());
        }
    }
}
