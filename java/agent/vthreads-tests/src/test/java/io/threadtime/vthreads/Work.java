package io.threadtime.vthreads;

import io.threadtime.VirtualThreadCpu;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.lang.reflect.Field;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * What the tests do on virtual threads, and how they know what a virtual
 * thread burned without asking the agent: a burn never unmounts, so the CPU
 * its carrier spent over the burn is what the virtual thread burned.
 */
final class Work {
    static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();
    static final long MS = 1_000_000L;
    private static final Field CARRIER;
    static volatile long sink;

    static {
        try {
            CARRIER = Class.forName("java.lang.VirtualThread").getDeclaredField("carrierThread");
            CARRIER.setAccessible(true);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private Work() {}

    /** The mechanism this JVM was started with, as the pom says
     * (-Dthreadtime.test.mechanism=JVMTI|JAVAAGENT|NONE; JVMTI by default). */
    static VirtualThreadCpu.Mechanism mechanism() {
        return VirtualThreadCpu.Mechanism.valueOf(System.getProperty("threadtime.test.mechanism", "JVMTI"));
    }

    /** Whether the accounts are in the threads: with the -javaagent unless the
     * pom gives it accounts=table (-Dthreadtime.test.accounts=table). */
    static boolean accountsInThreads() {
        return mechanism() == VirtualThreadCpu.Mechanism.JAVAAGENT
                && !System.getProperty("threadtime.test.accounts", "threads").equals("table");
    }

    /** Whether this JVM runs with HotSpot's transition path switched off, as the pom says. */
    static boolean transitionPathOff() {
        return Boolean.getBoolean("threadtime.test.transitions.off");
    }

    /** The carrier the calling virtual thread is mounted on. */
    static Thread carrier() {
        try {
            return (Thread) CARRIER.get(Thread.currentThread());
        } catch (IllegalAccessException e) {
            throw new AssertionError(e);
        }
    }

    /** Spins on the calling virtual thread until its carrier has spent {@code nanos}
     * of CPU time; returns that CPU time, ns, as the carrier's clock saw it. */
    static long burn(long nanos) {
        Thread carrier = carrier();
        long start = MX.getThreadCpuTime(carrier.threadId()), now = start, x = sink;
        if (start < 0)
            throw new AssertionError("the carrier's CPU time cannot be read (measurement switched off?)");
        while (now - start < nanos) {
            for (int i = 0; i < 20_000; i++)
                x = x * 31 + i;
            now = MX.getThreadCpuTime(carrier.threadId());
        }
        sink = x;
        if (carrier() != carrier)
            throw new AssertionError("a burn unmounted; its CPU time is not known");
        return now - start;
    }

    /** Waits for a latch, failing after a minute instead of hanging. */
    static void await(CountDownLatch latch) {
        try {
            if (!latch.await(60, TimeUnit.SECONDS))
                throw new AssertionError("waited a minute for a latch that never opened");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** Polls a condition every millisecond until it holds, failing after a
     * minute with what was awaited. */
    static void awaitTrue(BooleanSupplier condition, String what) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0)
                throw new AssertionError("waited a minute for " + what);
            try {
                Thread.sleep(1);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }

    /**
     * Whether the figure of a virtual thread that runs {@code wait} (a wait
     * of ten seconds or more that an interrupt ends) stood still across two
     * reads 20 ms apart, once its state said it waits. Mounted mode charges
     * wall time while mounted, so a figure that stands still says the thread
     * was unmounted, whatever the OS scheduled meanwhile; a mounted one
     * always moves. Polls until it stands still or the thread ends.
     */
    static boolean figureStandsStillDuring(Body wait) throws Exception {
        Thread v = waiter(wait);
        boolean still = false;
        while (!still && v.isAlive()) {
            long a = VirtualThreadCpu.threadCpuTime(v);
            Thread.sleep(20);
            long b = VirtualThreadCpu.threadCpuTime(v);
            still = a >= 0 && a == b && v.isAlive();
        }
        v.interrupt();
        v.join();
        return still;
    }

    /** Whether the figure of a virtual thread that runs {@code wait} moves
     * across two reads 20 ms apart once its state says it waits: a pinned
     * wait stays mounted, and mounted mode charges it. */
    static boolean figureMovesDuring(Body wait) throws Exception {
        Thread v = waiter(wait);
        long a = VirtualThreadCpu.threadCpuTime(v);
        Thread.sleep(20);
        long b = VirtualThreadCpu.threadCpuTime(v);
        boolean alive = v.isAlive();
        v.interrupt();
        v.join();
        return alive && a >= 0 && b > a;
    }

    /** A virtual thread running wait (its interrupt ends it), once its state says it waits. */
    private static Thread waiter(Body wait) {
        Thread v = Thread.ofVirtual().name("waiter").start(() -> {
            try {
                wait.run(0);
            } catch (InterruptedException ended) {
                // the test has what it waited for
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
        awaitTrue(() -> v.getState() == Thread.State.TIMED_WAITING, "the waiter to wait");
        return v;
    }

    /** {@link #moveToAnotherCarrier(long)} with spinners that burn nothing first. */
    static Thread moveToAnotherCarrier() {
        return moveToAnotherCarrier(0);
    }

    /**
     * Moves the calling virtual thread to another carrier, for certain; the
     * scheduler must have exactly two. It parks, two virtual threads that
     * spin without yielding take both carriers, and the one not on the
     * carrier it left lets go only after it has been unparked: the one
     * carrier free then is the other one. Each spinner first burns
     * {@code spinnerBurn} ns of its carrier's CPU, and the mover is unparked
     * only after both have: the carrier it left (which runs a spinner only
     * once it has parked) burns that much while it is parked. Returns the
     * carrier it left.
     */
    static Thread moveToAnotherCarrier(long spinnerBurn) {
        Thread mover = Thread.currentThread();
        Thread from = carrier();
        CountDownLatch spinning = new CountDownLatch(2);
        Thread[] on = new Thread[2];
        AtomicBoolean[] release = {new AtomicBoolean(), new AtomicBoolean()};
        AtomicBoolean resume = new AtomicBoolean();
        for (int i = 0; i < 2; i++) {
            int k = i;
            Thread.ofVirtual().name("spinner-" + k).start(() -> {
                on[k] = carrier();
                if (spinnerBurn > 0)
                    burn(spinnerBurn);
                spinning.countDown();
                while (!release[k].get())
                    Thread.onSpinWait();
            });
        }
        Thread.ofPlatform().name("mover-coordinator").start(() -> {
            await(spinning); // both carriers spin, so the mover is parked
            resume.set(true);
            LockSupport.unpark(mover); // queued: no carrier is free
            release[on[0] == from ? 1 : 0].set(true);
        });
        while (!resume.get())
            LockSupport.park();
        release[0].set(true);
        release[1].set(true);
        return from;
    }

    /** Gives up the carrier in one of three ways, by turn. */
    static void pause(int turn) throws InterruptedException {
        switch (turn % 3) {
            case 0 -> Thread.yield();
            case 1 -> LockSupport.parkNanos(MS);
            default -> Thread.sleep(1);
        }
    }

    /**
     * What {@code VirtualThreadCpu.threadCpuTime} answers for a virtual
     * thread that has been started but has not run: every carrier
     * (parallelism 2) is held by a virtual thread that spins without
     * unmounting, so the scheduler cannot mount it. Null if it ran all the
     * same (the pool added a carrier): the test then has nothing to check.
     */
    static Long figureBeforeItRuns() throws Exception {
        int carriers = Integer.getInteger("jdk.virtualThreadScheduler.parallelism", 2);
        AtomicBoolean release = new AtomicBoolean(), ran = new AtomicBoolean();
        CountDownLatch holding = new CountDownLatch(carriers);
        List<Thread> holders = new ArrayList<>();
        Thread waiting = null;
        long figure;
        try {
            for (int i = 0; i < carriers; i++) {
                holders.add(Thread.ofVirtual().start(() -> {
                    holding.countDown();
                    while (!release.get())
                        Thread.onSpinWait();
                }));
            }
            await(holding);
            waiting = Thread.ofVirtual().start(() -> ran.set(true));
            figure = VirtualThreadCpu.threadCpuTime(waiting);
            if (ran.get() || !waiting.isAlive())
                return null;
        } finally {
            release.set(true);
            for (Thread h : holders)
                h.join();
            if (waiting != null)
                waiting.join();
        }
        if (VirtualThreadCpu.threadCpuTime(waiting) != -1)
            throw new AssertionError("an ended thread read " + VirtualThreadCpu.threadCpuTime(waiting));
        return figure;
    }

    /** The scheduler's carrier threads, alive now. */
    static List<Thread> carriers() {
        List<Thread> out = new ArrayList<>();
        for (Thread t : Thread.getAllStackTraces().keySet())
            if (t.getClass().getName().equals("jdk.internal.misc.CarrierThread"))
                out.add(t);
        return out;
    }

    /** CPU time of every carrier alive now, ns, by thread id. */
    static Map<Long, Long> carrierCpu() {
        Map<Long, Long> out = new HashMap<>();
        for (Thread t : carriers())
            out.put(t.threadId(), MX.getThreadCpuTime(t.threadId()));
        return out;
    }

    interface Body {
        void run(int index) throws Exception;
    }

    /** Runs body(0..n-1) on n virtual threads and waits for all; rethrows the first failure. */
    static void onVirtualThreads(int n, Body body) throws Exception {
        Throwable[] failure = new Throwable[n];
        Thread[] threads = new Thread[n];
        for (int i = 0; i < n; i++) {
            int index = i;
            threads[i] = Thread.ofVirtual().name("work-" + i).start(() -> {
                try {
                    body.run(index);
                } catch (Throwable t) {
                    failure[index] = t;
                }
            });
        }
        for (Thread t : threads)
            t.join();
        for (Throwable t : failure)
            if (t != null)
                throw new AssertionError("a virtual thread failed", t);
    }

    /** A loopback server that answers every byte it reads with one byte, after a delay:
     * a client's read blocks on I/O for that long. */
    static final class SlowEcho implements AutoCloseable {
        private final ServerSocket server;
        private final Thread acceptor;

        SlowEcho(long delayMillis) throws IOException {
            server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
            acceptor = Thread.ofPlatform().daemon().name("slow-echo").start(() -> {
                while (!server.isClosed()) {
                    try {
                        Socket s = server.accept();
                        Thread.ofPlatform().daemon().start(() -> answer(s, delayMillis));
                    } catch (IOException closed) {
                        return;
                    }
                }
            });
        }

        private static void answer(Socket s, long delayMillis) {
            try (s; InputStream in = s.getInputStream(); OutputStream out = s.getOutputStream()) {
                int b;
                while ((b = in.read()) >= 0) {
                    Thread.sleep(delayMillis);
                    out.write(b);
                    out.flush();
                }
            } catch (IOException | InterruptedException done) {
                // the client went away
            }
        }

        /** One round trip from the calling thread: blocks until the answer comes. */
        void roundTrip(Socket s) {
            try {
                s.getOutputStream().write(1);
                s.getOutputStream().flush();
                if (s.getInputStream().read() < 0)
                    throw new IOException("slow echo closed the connection");
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        Socket connect() throws IOException {
            return new Socket(server.getInetAddress(), server.getLocalPort());
        }

        @Override
        public void close() throws IOException, InterruptedException {
            server.close();
            acceptor.join();
        }
    }
}
