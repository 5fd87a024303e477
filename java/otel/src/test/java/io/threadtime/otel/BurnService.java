package io.threadtime.otel;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.opentelemetry.api.GlobalOpenTelemetry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.Tracer;
import io.threadtime.TaskCpu;
import io.threadtime.ThreadTime;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.lang.reflect.Field;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * The service the tests and the benchmark put the OpenTelemetry agent in
 * front of: two HTTP servers on loopback in one JVM.
 * <ul>
 * <li>{@code /burn?id=N&ms=M&us=U&calls=K&wait=W&task=1} (front): burns M ms + U us
 *     of CPU in K+1 pieces, with a blocking call to the backend ({@code /wait?ms=W},
 *     W = 5 if not given) between pieces, and answers {@code burned=<ns>}: the
 *     CPU time the burns took, measured without threadtime (a platform
 *     thread's own clock from the platform bean; for a virtual thread, its
 *     carrier's clock around each piece: a burn never unmounts, so the
 *     carrier's CPU over it is the thread's). With {@code task=1} the handler
 *     also measures itself with {@link TaskCpu}, as an application would, and
 *     answers {@code burned=<ns> charged=<ns>} (-1 without accounting);</li>
 * <li>{@code /handoff?id=N} (front): starts a span on the request thread and
 *     ends it on another thread;</li>
 * <li>{@code /wait?ms=W} (backend): sleeps W ms (5 if not given), so the caller blocks.</li>
 * </ul>
 * Arguments: {@code virtual} (one virtual thread per request; JDK 21+) or
 * {@code platform} (a pool of 4). It also reads its own CPU time with
 * threadtime, from the application class loader, as an application using
 * both would. Prints {@code READY <port> app-threadtime=<backend>} when serving
 * and stops when its standard input closes. Reading a carrier's clock needs
 * {@code --add-opens java.base/java.lang=ALL-UNNAMED}.
 */
public final class BurnService {
    private static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();
    private static final HttpClient CLIENT = HttpClient.newHttpClient();
    private static final ExecutorService HANDOFF = Executors.newSingleThreadExecutor();
    private static volatile long sink;
    private static URI backend;
    private static Tracer tracer;

    private BurnService() {}

    public static void main(String[] args) throws Exception {
        boolean virtual = args.length > 0 && args[0].equals("virtual");
        // The application uses threadtime too, from its own class loader: it
        // must load its native library whatever the extension loaded.
        if (ThreadTime.currentThreadCpuTime() <= 0) {
            throw new IllegalStateException("the application's threadtime does not read its own CPU time");
        }
        // The OpenTelemetry agent bridges this application's API to its own
        // when the API's classes load. Once (a soak run of make test, JDK 25,
        // the -javaagent accounting), first loaded by a request's virtual
        // thread, the API stayed unbridged: it logged that it had no
        // configuration, and the /handoff spans went nowhere. So the API
        // loads here, on the main thread, before any request.
        tracer = GlobalOpenTelemetry.getTracer("threadtime-test");
        InetAddress lo = InetAddress.getLoopbackAddress();
        HttpServer back = HttpServer.create(new InetSocketAddress(lo, 0), 64);
        back.createContext("/wait", ex -> {
            try {
                Thread.sleep(Long.parseLong(query(ex).getOrDefault("ms", "5")));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            reply(ex, "ok");
        });
        back.setExecutor(Executors.newFixedThreadPool(4));
        back.start();
        backend = URI.create("http://" + lo.getHostAddress() + ":" + back.getAddress().getPort() + "/wait?ms=");

        HttpServer front = HttpServer.create(new InetSocketAddress(lo, 0), 256);
        front.createContext("/burn", BurnService::burn);
        front.createContext("/handoff", BurnService::handoff);
        front.setExecutor(virtual ? newVirtualPerTask() : Executors.newFixedThreadPool(4));
        front.start();
        System.out.println("READY " + front.getAddress().getPort() + " app-threadtime=" + ThreadTime.backend());
        System.out.flush();
        InputStream in = System.in;
        while (in.read() >= 0) {
            // until the parent closes our input
        }
        front.stop(0);
        back.stop(0);
        System.exit(0);
    }

    /** Executors.newVirtualThreadPerTaskExecutor(), called reflectively: this compiles for 17. */
    private static ExecutorService newVirtualPerTask() throws ReflectiveOperationException {
        return (ExecutorService) Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
    }

    private static void burn(HttpExchange ex) throws IOException {
        Map<String, String> q = query(ex);
        TaskCpu task = q.containsKey("task") ? TaskCpu.start() : null;
        long ns = Long.parseLong(q.getOrDefault("ms", "10")) * 1_000_000 + Long.parseLong(q.getOrDefault("us", "0")) * 1_000;
        int calls = Integer.parseInt(q.getOrDefault("calls", "1"));
        HttpRequest wait = HttpRequest.newBuilder(URI.create(backend + q.getOrDefault("wait", "5"))).build();
        long piece = ns / (calls + 1);
        long burned = 0;
        try {
            for (int i = 0; i <= calls; i++) {
                burned += burnPiece(piece);
                if (i < calls) {
                    CLIENT.send(wait, HttpResponse.BodyHandlers.ofString());
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
        reply(ex, "burned=" + burned + (task != null ? " charged=" + task.elapsedNanos() : ""));
    }

    private static void handoff(HttpExchange ex) throws IOException {
        Span span = tracer.spanBuilder("handoff").startSpan();
        Future<?> done = HANDOFF.submit(() -> span.end());
        try {
            done.get();
        } catch (Exception e) {
            throw new IOException(e);
        }
        reply(ex, "handed off");
    }

    /** Spins until the thread (or, on a virtual thread, its carrier) has
     * spent {@code nanos} of CPU; returns what it spent, ns. */
    private static long burnPiece(long nanos) {
        Thread clockOwner = carrierOrSelf();
        long start = MX.getThreadCpuTime(clockOwner.getId());
        long now = start;
        long x = sink;
        while (now - start < nanos) {
            for (int i = 0; i < 10_000; i++) {
                x = x * 6364136223846793005L + 1442695040888963407L;
            }
            now = MX.getThreadCpuTime(clockOwner.getId());
        }
        sink = x;
        if (carrierOrSelf() != clockOwner) {
            throw new IllegalStateException("a burn moved to another carrier; its CPU time is not known");
        }
        return now - start;
    }

    private static Thread carrierOrSelf() {
        Thread self = Thread.currentThread();
        try {
            Field f = Class.forName("java.lang.VirtualThread").getDeclaredField("carrierThread");
            if (!f.getDeclaringClass().isInstance(self)) {
                return self;
            }
            f.setAccessible(true);
            return (Thread) f.get(self);
        } catch (ClassNotFoundException jdk17) {
            return self;
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("reading a carrier needs --add-opens java.base/java.lang=ALL-UNNAMED", e);
        }
    }

    private static Map<String, String> query(HttpExchange ex) {
        Map<String, String> q = new HashMap<>();
        String raw = ex.getRequestURI().getRawQuery();
        if (raw != null) {
            for (String kv : raw.split("&")) {
                int eq = kv.indexOf('=');
                if (eq > 0) {
                    q.put(kv.substring(0, eq), kv.substring(eq + 1));
                }
            }
        }
        return q;
    }

    private static void reply(HttpExchange ex, String body) throws IOException {
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        ex.sendResponseHeaders(200, b.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(b);
        }
    }
}
