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
 * thread's part.
 */
public final class TaskCpu {
    private final Thread thread;
    private final long start;

    private TaskCpu(Thread thread, long start) {
        this.thread = thread;
        this.start = start;
    }

    /** Starts measuring on the calling thread. */
    public static TaskCpu start() {
        return new TaskCpu(Thread.currentThread(), VirtualThreadCpu.currentThreadCpuTime());
    }

    /**
     * CPU time of the calling thread since {@link #start()}, ns; -1 if the
     * thread's CPU time cannot be read (a virtual thread without the agent,
     * or CPU time measurement switched off in the platform bean).
     *
     * @throws IllegalStateException if called on another thread than start()
     */
    public long elapsedNanos() {
        if (Thread.currentThread() != thread) {
            throw new IllegalStateException("TaskCpu is read on the thread that started it, not " + Thread.currentThread());
        }
        long now = VirtualThreadCpu.currentThreadCpuTime();
        return start < 0 || now < 0 ? -1 : now - start;
    }
}
