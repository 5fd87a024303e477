import io.helidon.webserver.WebServer;
import io.threadtime.VirtualThreadCpu;
import io.threadtime.VirtualThreadTimes;
import java.io.InputStream;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.lang.reflect.Method;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.stream.Stream;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A Helidon 4 SE service on virtual threads (Helidon runs each request on
 * one), tried as a user would: GET /work burns ~0.8 ms of CPU in
 * three pieces around two blocking calls to GET /slow (a 1 ms sleep) on the
 * same server. The truth for each piece is its carrier's own CPU clock,
 * read by the JDK's bean by the carrier's id before and after it: a piece is
 * pure computation, so its virtual thread cannot unmount inside it (checked:
 * a piece that ends on another carrier is counted apart and left out). What
 * the agent charged is {@link VirtualThreadCpu#currentThreadCpuTime()} read
 * before the first piece and after the last; charged - burned is then the
 * agent's error plus the CPU the request spends between the pieces (its two
 * HTTP calls), which mounted mode inflates by whatever the OS took from the
 * carrier while the thread was mounted.
 * <pre>
 *   java [agent] --add-opens java.base/java.lang=ALL-UNNAMED -cp ... HelidonBench server PORTFILE
 *   java -cp ... HelidonBench client PORT SECONDS WARMUP CLIENTS
 * </pre>
 * The server writes its port to PORTFILE. The client runs CLIENTS platform
 * threads against /work for WARMUP seconds, resets the server's figures,
 * runs SECONDS more, and prints one line: requests/s, then the server's
 * figures (requests, charged &lt; 0.98 x burned, p50/p99/max of charged -
 * burned in us, pieces that moved), then where each request's time went.
 * <p>
 * Where the time went: each request's handler reads
 * {@link VirtualThreadCpu#currentThreadTimes()} and {@code System.nanoTime()}
 * at its start and end. Its wall time splits into CPU, carrier wait
 * (runnable, no carrier), parked (its two calls), pinned, and the rest:
 * mounted but off a CPU, which is its carriers' run-queue wait while it ran
 * (plus any stop of a carrier while mounted, such as a GC pause). The truth
 * beside them is the carriers' own {@code /proc/self/task/TID/schedstat}
 * (CPU and run-queue wait), read at the reset and at the end: the requests'
 * sums cannot exceed it, as the carriers also run the server's own virtual
 * threads. The p99 shares are each part's share of the summed wall time of
 * the slowest 1 % of requests.
 */
public final class HelidonBench {
    private static final long PIECE_NS = Long.getLong("bench.pieceNs", 267_000);
    private static final long SLOW_MS = Long.getLong("bench.slowMs", 1);
    private static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();
    private static final int CAP = 1 << 21;
    private static final long[] BURNED = new long[CAP], CHARGED = new long[CAP];
    /** Per request, ns: wall, CPU, carrier wait, pinned, parked (-1: unknown). */
    private static final long[][] PARTS = new long[5][CAP];
    private static final String[] PART_NAMES = {"wall", "cpu", "carrier_wait", "pinned", "parked"};
    private static volatile long[] carriers0 = carriers();
    private static final AtomicInteger N = new AtomicInteger();
    private static final AtomicLong MOVED = new AtomicLong();
    private static volatile long sink;
    private static int port;

    /** Thread.currentCarrierThread(), the server's only (needs --add-opens java.base/java.lang). */
    private static final class Carrier {
        static final MethodHandle CURRENT;

        static {
            try {
                Method m = Thread.class.getDeclaredMethod("currentCarrierThread");
                m.setAccessible(true);
                CURRENT = MethodHandles.lookup().unreflect(m);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }
    }

    private HelidonBench() {}

    public static void main(String[] args) throws Exception {
        if (args[0].equals("server")) {
            server(args[1]);
        } else {
            client(Integer.parseInt(args[1]), Integer.parseInt(args[2]), Integer.parseInt(args[3]),
                    Integer.parseInt(args[4]));
        }
    }

    private static void server(String portFile) throws Exception {
        WebServer server = WebServer.builder().port(0).routing(r -> r
                .get("/work", (req, res) -> res.send(work()))
                .get("/slow", (req, res) -> {
                    Thread.sleep(SLOW_MS);
                    res.send("ok");
                })
                .get("/stats", (req, res) -> res.send(stats(req.query().contains("reset")))))
                .build().start();
        port = server.port();
        java.nio.file.Path tmp = java.nio.file.Path.of(portFile + ".tmp");
        java.nio.file.Files.writeString(tmp, Integer.toString(port));
        java.nio.file.Files.move(tmp, java.nio.file.Path.of(portFile));
        Thread.currentThread().join();
    }

    /** One request: three pieces of burn around two calls to /slow. */
    private static String work() throws Exception {
        long burned = 0;
        long wall0 = System.nanoTime();
        VirtualThreadTimes times0 = VirtualThreadCpu.currentThreadTimes();
        long charged0 = VirtualThreadCpu.currentThreadCpuTime();
        for (int piece = 0; piece < 3; piece++) {
            if (piece > 0) {
                get(port, "/slow");
            }
            long b = piece();
            if (b < 0) {
                MOVED.incrementAndGet();
                return "moved";
            }
            burned += b;
        }
        long charged = VirtualThreadCpu.currentThreadCpuTime() - charged0;
        VirtualThreadTimes t = VirtualThreadCpu.currentThreadTimes().minus(times0);
        long wall = System.nanoTime() - wall0;
        int i = N.getAndIncrement();
        if (i < CAP) {
            BURNED[i] = burned;
            CHARGED[i] = charged0 < 0 ? -1 : charged;
            long[] parts = {wall, t.cpuNanos(), t.carrierWaitNanos(), t.pinnedNanos(), t.parkedNanos()};
            for (int k = 0; k < parts.length; k++) {
                PARTS[k][i] = parts[k];
            }
        }
        return "done";
    }

    /** Burns PIECE_NS of its carrier's CPU; what the carrier's clock says it burned, -1 if it moved. */
    private static long piece() {
        Thread carrier = carrier();
        long id = carrier.threadId();
        long start = MX.getThreadCpuTime(id), now;
        long x = sink;
        do {
            for (int k = 0; k < 2000; k++) {
                x = x * 6364136223846793005L + 1442695040888963407L;
            }
            now = MX.getThreadCpuTime(id);
        } while (now - start < PIECE_NS);
        sink = x;
        return carrier() == carrier ? now - start : -1;
    }

    private static Thread carrier() {
        try {
            return (Thread) Carrier.CURRENT.invokeExact();
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    private static String stats(boolean reset) {
        int n = Math.min(N.get(), CAP);
        StringBuilder s = new StringBuilder();
        long[] diff = new long[n];
        int low = 0, m = 0;
        for (int i = 0; i < n; i++) {
            if (CHARGED[i] < 0) {
                continue;
            }
            if (CHARGED[i] < 0.98 * BURNED[i]) {
                low++;
            }
            diff[m++] = CHARGED[i] - BURNED[i];
        }
        diff = Arrays.copyOf(diff, m);
        Arrays.sort(diff);
        s.append("requests=").append(n).append(" charged_low=").append(low);
        if (m > 0) {
            s.append(String.format(" p50_us=%.0f p99_us=%.0f max_us=%.0f", diff[m / 2] / 1e3,
                    diff[Math.min(m - 1, (int) (m * 0.99))] / 1e3, diff[m - 1] / 1e3));
        } else {
            s.append(" p50_us=- p99_us=- max_us=-");
        }
        s.append(" moved=").append(MOVED.get());
        where(s, n);
        if (reset) {
            N.set(0);
            MOVED.set(0);
            carriers0 = carriers();
        }
        return s.toString();
    }

    /**
     * Appends where the first n requests' time went: per part its p50 and p99
     * (us) and sum (ms), the rest (mounted off a CPU) the same, each part's
     * share of the slowest 1 %'s wall time (%), and the carriers' schedstat
     * deltas since the reset (ms). Requests with an unknown part are left out
     * (counted as unknown=).
     */
    private static void where(StringBuilder s, int n) {
        int m = 0;
        long[][] p = new long[PARTS.length + 1][n];
        for (int i = 0; i < n; i++) {
            long rest = PARTS[0][i];
            boolean known = true;
            for (int k = 1; k < PARTS.length; k++) {
                known &= PARTS[k][i] >= 0;
                rest -= PARTS[k][i];
            }
            if (!known) {
                continue;
            }
            for (int k = 0; k < PARTS.length; k++) {
                p[k][m] = PARTS[k][i];
            }
            p[PARTS.length][m++] = rest;
        }
        s.append(" unknown=").append(n - m);
        if (m == 0) {
            return;
        }
        Integer[] byWall = new Integer[m];
        for (int i = 0; i < m; i++) {
            byWall[i] = i;
        }
        long[] wall = p[0];
        Arrays.sort(byWall, (a, b) -> Long.compare(wall[b], wall[a]));
        int tail = Math.max(1, m / 100);
        long tailWall = 0;
        for (int j = 0; j < tail; j++) {
            tailWall += wall[byWall[j]];
        }
        for (int k = 0; k <= PARTS.length; k++) {
            String name = k < PARTS.length ? PART_NAMES[k] : "off_cpu";
            long[] v = Arrays.copyOf(p[k], m);
            long sum = 0, tailSum = 0;
            for (long x : v) {
                sum += x;
            }
            for (int j = 0; j < tail; j++) {
                tailSum += p[k][byWall[j]];
            }
            Arrays.sort(v);
            s.append(String.format(" %s_p50_us=%.0f %s_p99_us=%.0f %s_sum_ms=%.1f %s_tail_pct=%.1f", name,
                    v[m / 2] / 1e3, name, v[Math.min(m - 1, (int) (m * 0.99))] / 1e3, name, sum / 1e6, name,
                    100.0 * tailSum / tailWall));
        }
        long[] now = carriers(), then = carriers0;
        s.append(String.format(" carriers_cpu_ms=%.1f carriers_run_wait_ms=%.1f", (now[0] - then[0]) / 1e6,
                (now[1] - then[1]) / 1e6));
    }

    /**
     * The virtual-thread scheduler's carriers (ForkJoinPool workers), summed
     * from each one's {@code /proc/self/task/TID/schedstat}: {CPU ns, ns
     * runnable waiting for a CPU}. A carrier that ended since the last read
     * takes its figures with it; the pool keeps its workers under load.
     */
    private static long[] carriers() {
        long[] sum = new long[2];
        try (Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
            for (Path t : (Iterable<Path>) tasks::iterator) {
                try {
                    if (!Files.readString(t.resolve("comm")).startsWith("ForkJoinPool-")) {
                        continue;
                    }
                    String[] f = Files.readString(t.resolve("schedstat")).trim().split(" ");
                    sum[0] += Long.parseLong(f[0]);
                    sum[1] += Long.parseLong(f[1]);
                } catch (java.io.IOException gone) {
                    // the thread ended between the listing and the read
                }
            }
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return sum;
    }

    private static String get(int port, String path) throws Exception {
        HttpURLConnection c = (HttpURLConnection) URI.create("http://127.0.0.1:" + port + path).toURL().openConnection();
        try (InputStream in = c.getInputStream()) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    private static void client(int port, int seconds, int warmup, int clients) throws Exception {
        AtomicLong done = new AtomicLong();
        AtomicLong failed = new AtomicLong();
        long end = System.nanoTime() + (warmup + seconds) * 1_000_000_000L;
        Thread[] threads = new Thread[clients];
        for (int t = 0; t < clients; t++) {
            threads[t] = new Thread(() -> {
                while (System.nanoTime() < end) {
                    try {
                        get(port, "/work");
                        done.incrementAndGet();
                    } catch (Exception e) {
                        failed.incrementAndGet();
                    }
                }
            });
            threads[t].start();
        }
        Thread.sleep(warmup * 1000L);
        get(port, "/stats?reset");
        long d0 = done.get(), t0 = System.nanoTime();
        for (Thread t : threads) {
            t.join();
        }
        double rps = (done.get() - d0) / ((System.nanoTime() - t0) / 1e9);
        System.out.printf("rps=%.0f failed=%d %s%n", rps, failed.get(), get(port, "/stats"));
    }
}
