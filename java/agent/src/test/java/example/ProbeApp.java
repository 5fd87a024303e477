package example;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * Run in child JVMs by ProbeAgentTest, with the agent's probes on its
 * methods and on JDK methods it calls; it prints what it did, one
 * "key=value" line each, and the test reads the trace back.
 * <ul>
 * <li>{@code calls N}: N calls each of work, Integer.toOctalString and
 * Base64.Encoder.encodeToString, and of lineWork;</li>
 * <li>{@code throws N}: N calls of mayThrow, every second one throwing; the
 * top frames of the first exception;</li>
 * <li>{@code vthreads THREADS CALLS} (JDK 21+): each virtual thread calls sleepy
 * CALLS times, sleepy parks in the middle;</li>
 * <li>{@code vcpu THREADS CALLS} (JDK 21+, with
 * {@code --add-opens java.base/java.lang=ALL-UNNAMED}): each virtual thread
 * calls burnAndSleep CALLS times; burnAndSleep burns CPU, sleeps 1 ms (the
 * thread unmounts, and may come back on another carrier) and burns again.
 * Each burn is measured on its carrier's own CPU clock (the JDK's
 * ThreadMXBean, independent of the agent); the sum is printed as
 * "burned=NS";</li>
 * <li>{@code wait}: reads commands from stdin: "calls N" runs work N times,
 * "exit" ends; "ready" after each.</li>
 * </ul>
 */
public final class ProbeApp {
    static long sink;

    private ProbeApp() {}

    public static long work(long x) {
        long r = x;
        for (int i = 0; i < 8; i++) {
            r = r * 31 + i;
        }
        return r;
    }

    public static int lineWork(int n) {
        int a = n * 3;
        int b = a + 7;
        return b;
    }

    public static int mayThrow(int i) {
        if (i % 2 == 1) {
            throw new IllegalStateException("odd " + i);
        }
        return i;
    }

    public static void sleepy(int i) throws InterruptedException {
        sink += i;
        Thread.sleep(1);
        sink += i;
    }

    static final java.util.concurrent.atomic.AtomicLong BURNED = new java.util.concurrent.atomic.AtomicLong();
    static Method carrier;

    /** Busy work with no blocking point, so the virtual thread stays on its carrier throughout. */
    static void burn(int i) throws Exception {
        java.lang.management.ThreadMXBean bean = java.lang.management.ManagementFactory.getThreadMXBean();
        long id = ((Thread) carrier.invoke(null)).getId();
        long before = bean.getThreadCpuTime(id);
        long r = i;
        for (int k = 0; k < 200_000; k++) {
            r = r * 31 + k;
        }
        sink += r;
        long after = bean.getThreadCpuTime(id);
        if (((Thread) carrier.invoke(null)).getId() != id || before < 0 || after < before) {
            throw new IllegalStateException("the burn left its carrier, or its clock failed");
        }
        BURNED.addAndGet(after - before);
    }

    public static void burnAndSleep(int i) throws Exception {
        burn(i);
        Thread.sleep(1);
        burn(i);
    }

    /** Runs body on THREADS virtual threads started together; returns their ids. */
    static String onVirtualThreads(int threads, Runnable body) throws Exception {
        List<Thread> started = new ArrayList<>();
        CountDownLatch go = new CountDownLatch(1);
        // Thread.ofVirtual().start(task), through reflection: this compiles for JDK 17
        Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
        Method start = Class.forName("java.lang.Thread$Builder").getMethod("start", Runnable.class);
        for (int t = 0; t < threads; t++) {
            started.add((Thread) start.invoke(builder, (Runnable) () -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
                body.run();
            }));
        }
        go.countDown();
        StringBuilder ids = new StringBuilder();
        for (Thread t : started) {
            t.join();
            ids.append(ids.length() == 0 ? "" : " ").append(t.getId());
        }
        return ids.toString();
    }

    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "calls": {
                int n = Integer.parseInt(args[1]);
                Base64.Encoder enc = Base64.getEncoder();
                byte[] bytes = {1, 2, 3};
                for (int i = 0; i < n; i++) {
                    sink += work(i) + Integer.toOctalString(i).length() + enc.encodeToString(bytes).length() + lineWork(i);
                }
                System.out.println("calls=" + n);
                break;
            }
            case "throws": {
                int n = Integer.parseInt(args[1]);
                int thrown = 0;
                for (int i = 0; i < n; i++) {
                    try {
                        sink += mayThrow(i);
                    } catch (IllegalStateException e) {
                        if (thrown++ == 0) {
                            StackTraceElement[] st = e.getStackTrace();
                            System.out.println("exception=" + e);
                            System.out.println("top=" + st[0] + " " + st[1]);
                        }
                    }
                }
                System.out.println("thrown=" + thrown);
                break;
            }
            case "vthreads": {
                int threads = Integer.parseInt(args[1]), calls = Integer.parseInt(args[2]);
                List<Thread> started = new ArrayList<>();
                CountDownLatch go = new CountDownLatch(1);
                // Thread.ofVirtual().start(task), through reflection: this compiles for JDK 17
                Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
                Method start = Class.forName("java.lang.Thread$Builder").getMethod("start", Runnable.class);
                for (int t = 0; t < threads; t++) {
                    started.add((Thread) start.invoke(builder, (Runnable) () -> {
                        try {
                            go.await();
                            for (int i = 0; i < calls; i++) {
                                sleepy(i);
                            }
                        } catch (InterruptedException e) {
                            throw new IllegalStateException(e);
                        }
                    }));
                }
                go.countDown();
                StringBuilder ids = new StringBuilder();
                for (Thread t : started) {
                    t.join();
                    ids.append(ids.length() == 0 ? "" : " ").append(t.getId());
                }
                System.out.println("vthreads=" + ids);
                break;
            }
            case "vcpu": {
                int threads = Integer.parseInt(args[1]), calls = Integer.parseInt(args[2]);
                carrier = Thread.class.getDeclaredMethod("currentCarrierThread");
                carrier.setAccessible(true);
                java.util.concurrent.atomic.AtomicLong failed = new java.util.concurrent.atomic.AtomicLong();
                String ids = onVirtualThreads(threads, () -> {
                    for (int i = 0; i < calls; i++) {
                        try {
                            burnAndSleep(i);
                        } catch (Exception e) {
                            failed.incrementAndGet();
                            e.printStackTrace();
                        }
                    }
                });
                System.out.println("vthreads=" + ids);
                System.out.println("failed=" + failed);
                System.out.println("burned=" + BURNED);
                break;
            }
            case "wait": {
                System.out.println("ready");
                System.out.flush();
                BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
                for (String line; (line = in.readLine()) != null && !line.equals("exit");) {
                    if (line.startsWith("calls ")) {
                        for (int i = Integer.parseInt(line.substring(6)); i > 0; i--) {
                            sink += work(i);
                        }
                    }
                    System.out.println("ready");
                    System.out.flush();
                }
                break;
            }
            default:
                throw new IllegalArgumentException(args[0]);
        }
    }
}
