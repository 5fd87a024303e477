package io.threadtime.otel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.threadtime.VirtualThreadCpu;
import io.threadtime.agent.ThreadTimeAgent;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The real OpenTelemetry Java agent with the extension JAR, in front of
 * {@link BurnService} in a JVM of the same Java as this test's. Spans go to
 * the agent's console exporter (stderr), which the test reads.
 * <p>
 * Each {@code /burn} request burns {@value #BURN_MS} ms in three pieces
 * around two blocking calls to the backend, three requests at a time on two
 * carriers, so while one request waits another burns on its carrier: a span
 * charged with its carrier's time would be a whole piece ({@value #BURN_MS}/3
 * ms) over. The bound above what was burned: 10 % + 5 ms, the JVMTI agent's
 * per-thread bound (jvmti/README.md), plus 5 ms for the request's own work
 * (parsing, two HTTP client calls); a platform thread's split reads in
 * microseconds, so it may read up to {@value #SPLIT_SLACK_NS} ns below.
 */
class AgentServiceTest {
    static final int BURN_MS = 90;
    static final int REQUESTS = 6;
    static final int WARMUP = 3;
    static final long SPLIT_SLACK_NS = 50_000;
    static final Pattern SPAN = Pattern.compile("LoggingSpanExporter - '([^']*)' : \\S+ \\S+ (\\w+) .*AttributesMap\\{data=\\{(.*)\\}, capacity");

    static final int FEATURE = Runtime.version().feature();

    @Test
    void virtualThreadsWithJvmtiAccounting() throws Exception {
        assumeTrue(FEATURE >= 21, "virtual threads need JDK 21+");
        assertVirtualThreadsCharged("vthreads-jvmti", List.of("-agentpath:" + VirtualThreadCpu.agentPath() + "=mode=exact"));
    }

    /** The threadtime JAR as a {@code -javaagent}, the recommended set-up (on
     * JDK 21 with HotSpot's transition path off); the extension reads the
     * accounts through the boot class path. */
    @Test
    void virtualThreadsWithTheJavaagent() throws Exception {
        assumeTrue(FEATURE >= 21, "virtual threads need JDK 21+");
        Path jar = Path.of(ThreadTimeAgent.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        assertTrue(Files.isRegularFile(jar), "the tests run against the packaged threadtime-agent JAR, not " + jar);
        // The flag only where it is recommended: on JDK 24+ it deadlocks
        // virtual threads that contend on a monitor, as HttpServer's do.
        List<String> jvm = FEATURE < 24
                ? List.of("-XX:+UnlockExperimentalVMOptions", "-XX:-DoJVMTIVirtualThreadTransitions", "-javaagent:" + jar + "=mode=exact")
                : List.of("-javaagent:" + jar + "=mode=exact");
        assertVirtualThreadsCharged("vthreads-javaagent", jvm);
    }

    /** Every server span on a virtual thread carries what its request burned,
     * within the bound, and no user/system split; handed-off spans none. */
    private static void assertVirtualThreadsCharged(String name, List<String> jvm) throws Exception {
        try (Service s = Service.start(name, jvm, "virtual")) {
            Map<Integer, Long> burned = s.burnRequests();
            s.handoff(2);
            Map<String, Map<String, String>> spans = s.awaitServerSpans(burned.keySet());
            for (Map.Entry<Integer, Long> e : burned.entrySet()) {
                Map<String, String> a = spans.get(Integer.toString(e.getKey()));
                assertWithinBound(e.getKey(), a, e.getValue(), 0);
                assertFalse(a.containsKey(ThreadTimeSpanProcessor.USER), "a virtual thread has no user/system split: " + a);
            }
            s.assertHandoffs(2);
            assertFalse(s.stderr().contains("threadtime-otel:"), "no limitation to report:\n" + s.stderr());
        }
    }

    @Test
    void virtualThreadsWithoutAccountingSayWhyOnce() throws Exception {
        assumeTrue(FEATURE >= 21, "virtual threads need JDK 21+");
        try (Service s = Service.start("vthreads-none", List.of(), "virtual")) {
            Map<Integer, Long> burned = s.burnRequests();
            Map<String, Map<String, String>> spans = s.awaitServerSpans(burned.keySet());
            for (Map<String, String> a : spans.values()) {
                assertFalse(a.containsKey(ThreadTimeSpanProcessor.TOTAL), "no virtual-thread accounting, yet: " + a);
            }
            // The backend's spans run on platform threads: still measured.
            assertTrue(s.spans().stream().anyMatch(sp -> sp.name.equals("GET /wait") && sp.attributes.containsKey(ThreadTimeSpanProcessor.USER)),
                    "the backend's platform-thread spans keep their CPU time");
            assertEquals(1, s.countLines("threadtime-otel: no virtual-thread accounting"), s.stderr());
            s.awaitUnmeasured("no_clock", burned.size() + WARMUP);
        }
    }

    @Test
    void platformThreads() throws Exception {
        try (Service s = Service.start("platform", List.of(), "platform")) {
            Map<Integer, Long> burned = s.burnRequests();
            s.handoff(1);
            Map<String, Map<String, String>> spans = s.awaitServerSpans(burned.keySet());
            for (Map.Entry<Integer, Long> e : burned.entrySet()) {
                Map<String, String> a = spans.get(Integer.toString(e.getKey()));
                long total = assertWithinBound(e.getKey(), a, e.getValue(), SPLIT_SLACK_NS);
                long user = Long.parseLong(assertPresent(a, ThreadTimeSpanProcessor.USER));
                long system = Long.parseLong(assertPresent(a, ThreadTimeSpanProcessor.SYSTEM));
                assertEquals(total, user + system, "a consistent split: " + a);
            }
            s.assertHandoffs(1);
            if (FEATURE < 21) {
                assertEquals(1, s.countLines("threadtime-otel: JDK " + FEATURE + " has no virtual threads"), s.stderr());
            }
        }
    }

    /** The span's total, checked against what its request burned (see the class comment). */
    private static long assertWithinBound(int id, Map<String, String> attributes, long burned, long slackBelow) {
        long cpu = Long.parseLong(assertPresent(attributes, ThreadTimeSpanProcessor.TOTAL));
        assertTrue(cpu >= burned - slackBelow, "span " + id + ": " + cpu + " ns < burned " + burned);
        assertTrue(cpu <= burned + burned / 10 + 10_000_000, "span " + id + ": " + cpu + " ns, burned " + burned + ": over the bound");
        return cpu;
    }

    private static String assertPresent(Map<String, String> attributes, String key) {
        assertNotNull(attributes, "span missing");
        String v = attributes.get(key);
        assertNotNull(v, key + " missing from " + attributes);
        return v;
    }

    /** One exported span: name, kind, attributes as printed. */
    static final class ExportedSpan {
        final String name;
        final String kind;
        final Map<String, String> attributes;

        ExportedSpan(String name, String kind, Map<String, String> attributes) {
            this.name = name;
            this.kind = kind;
            this.attributes = attributes;
        }
    }

    /** BurnService under the agent and the extension, in its own JVM. */
    static final class Service implements AutoCloseable {
        static final Duration WAIT = Duration.ofSeconds(90);
        private final Process process;
        private final Path err;
        private final URI base;
        private final HttpClient client = HttpClient.newHttpClient();
        private int nextId = 1;

        private Service(Process process, Path err, URI base) {
            this.process = process;
            this.err = err;
            this.base = base;
        }

        /** The test's service: agent, extension and console exporters, after {@code extraJvm}. */
        static Service start(String name, List<String> extraJvm, String mode) throws Exception {
            List<String> jvm = new ArrayList<>(extraJvm);
            jvm.addAll(agentArguments());
            jvm.add("-Dotel.traces.exporter=console");
            jvm.add("-Dotel.metrics.exporter=console");
            jvm.add("-Dotel.metric.export.interval=500");
            return launch(Path.of(System.getProperty("test.dir", "target/service-runs"), "jdk" + FEATURE), name, jvm, mode);
        }

        /**
         * BurnService in a JVM of this test's Java with these options, its
         * stderr in {@code dir/name.stderr}; returns once it serves.
         */
        static Service launch(Path dir, String name, List<String> jvm, String mode) throws Exception {
            Files.createDirectories(dir);
            Path err = dir.resolve(name + ".stderr");
            List<String> cmd = new ArrayList<>();
            cmd.add(ProcessHandle.current().info().command().orElseThrow());
            cmd.addAll(jvm);
            cmd.add("-Djdk.virtualThreadScheduler.parallelism=2");
            cmd.add("--add-opens");
            cmd.add("java.base/java.lang=ALL-UNNAMED");
            cmd.add("-cp");
            cmd.add(System.getProperty("java.class.path"));
            cmd.add(BurnService.class.getName());
            cmd.add(mode);
            Process p = new ProcessBuilder(cmd).redirectError(err.toFile()).start();
            BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
            ExecutorService reader = Executors.newSingleThreadExecutor();
            try {
                Future<String> ready = reader.submit(out::readLine);
                String line = ready.get(WAIT.toSeconds(), TimeUnit.SECONDS);
                if (line == null || !line.startsWith("READY ")) {
                    p.destroyForcibly();
                    throw new AssertionError("the service did not start (" + line + "):\n" + Files.readString(err));
                }
                return new Service(p, err, URI.create("http://127.0.0.1:" + line.split(" ")[1]));
            } finally {
                reader.shutdownNow();
            }
        }

        /** CPU time of the service's JVM so far (all its threads), ns. */
        long cpuNanos() {
            return process.info().totalCpuDuration().orElseThrow(() -> new IllegalStateException("no CPU time for the service")).toNanos();
        }

        /** The service's process. */
        ProcessHandle handle() {
            return process.toHandle();
        }

        /** The service's address. */
        URI base() {
            return base;
        }

        /** What a user adds to the command line, plus quieter exporters. */
        static List<String> agentArguments() {
            List<String> a = new ArrayList<>();
            a.add("-javaagent:" + System.getProperty("otel.agent.jar"));
            a.add("-Dotel.javaagent.extensions=" + System.getProperty("extension.jar"));
            a.add("-Dotel.logs.exporter=none");
            a.add("-Dotel.java.disabled.resource.providers=io.opentelemetry.instrumentation.resources.ProcessResourceProvider");
            if (FEATURE >= 22) {
                a.add("--enable-native-access=ALL-UNNAMED");
            }
            return a;
        }

        /** The warm-up requests (not checked), then the measured ones, three at a time;
         * id -> CPU ns the service burned for it. */
        Map<Integer, Long> burnRequests() throws Exception {
            for (int i = 0; i < WARMUP; i++) {
                burn(nextId++);
            }
            ExecutorService pool = Executors.newFixedThreadPool(3);
            try {
                Map<Integer, Future<Long>> pending = new HashMap<>();
                for (int i = 0; i < REQUESTS; i++) {
                    int id = nextId++;
                    pending.put(id, pool.submit(() -> burn(id)));
                }
                Map<Integer, Long> burned = new HashMap<>();
                for (Map.Entry<Integer, Future<Long>> e : pending.entrySet()) {
                    burned.put(e.getKey(), e.getValue().get(WAIT.toSeconds(), TimeUnit.SECONDS));
                }
                return burned;
            } finally {
                pool.shutdownNow();
            }
        }

        private long burn(int id) throws IOException, InterruptedException {
            String body = get("/burn?id=" + id + "&ms=" + BURN_MS + "&calls=2");
            if (!body.startsWith("burned=")) {
                throw new AssertionError("unexpected answer: " + body);
            }
            return Long.parseLong(body.substring(7));
        }

        void handoff(int n) throws IOException, InterruptedException {
            for (int i = 0; i < n; i++) {
                get("/handoff?id=" + nextId++);
            }
        }

        private String get(String path) throws IOException, InterruptedException {
            HttpResponse<String> r = client.send(HttpRequest.newBuilder(base.resolve(path)).timeout(WAIT).build(),
                    HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 200) {
                throw new AssertionError(path + ": HTTP " + r.statusCode());
            }
            return r.body();
        }

        String stderr() throws IOException {
            return Files.readString(err);
        }

        long countLines(String prefix) throws IOException {
            return stderr().lines().filter(l -> l.startsWith(prefix)).count();
        }

        List<ExportedSpan> spans() throws IOException {
            List<ExportedSpan> out = new ArrayList<>();
            for (String line : stderr().lines().toList()) {
                Matcher m = SPAN.matcher(line);
                if (m.find()) {
                    out.add(new ExportedSpan(m.group(1), m.group(2), attributes(m.group(3))));
                }
            }
            return out;
        }

        /** Splits "k=v, k=v" as the console exporter prints attributes (our
         * values hold no ", "). */
        private static Map<String, String> attributes(String s) {
            Map<String, String> a = new HashMap<>();
            for (String kv : s.split(", ")) {
                int eq = kv.indexOf('=');
                if (eq > 0) {
                    a.put(kv.substring(0, eq), kv.substring(eq + 1));
                }
            }
            return a;
        }

        /** Waits (bounded) until a SERVER span for each id is exported; id -> attributes. */
        Map<String, Map<String, String>> awaitServerSpans(Iterable<Integer> ids) throws Exception {
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (true) {
                Map<String, Map<String, String>> byId = new HashMap<>();
                for (ExportedSpan sp : spans()) {
                    String q = sp.attributes.get("url.query");
                    if (sp.kind.equals("SERVER") && sp.name.equals("GET /burn") && q != null && q.startsWith("id=")) {
                        byId.put(q.substring(3, q.indexOf('&')), sp.attributes);
                    }
                }
                boolean all = true;
                for (int id : ids) {
                    all &= byId.containsKey(Integer.toString(id));
                }
                if (all) {
                    return byId;
                }
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("spans not exported within " + WAIT + "; have " + byId.keySet() + "\n" + stderr());
                }
                Thread.sleep(100);
            }
        }

        /** The handoff spans: exported, without CPU attributes, and counted. */
        void assertHandoffs(int n) throws Exception {
            long deadline = System.nanoTime() + WAIT.toNanos();
            List<ExportedSpan> handoffs;
            while ((handoffs = spans().stream().filter(sp -> sp.name.equals("handoff")).toList()).size() < n) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError(n + " handoff spans not exported within " + WAIT + "\n" + stderr());
                }
                Thread.sleep(100);
            }
            for (ExportedSpan sp : handoffs) {
                assertTrue(sp.attributes.keySet().stream().noneMatch(k -> k.startsWith("threadtime.")),
                        "a span ended on another thread has no CPU attribute: " + sp.attributes);
            }
            awaitUnmeasured("other_thread", n);
        }

        /** Waits (bounded) until an export of threadtime.span.unmeasured{reason}
         * shows at least {@code n}. */
        void awaitUnmeasured(String reason, long n) throws Exception {
            long deadline = System.nanoTime() + WAIT.toNanos();
            long seen = -1;
            while (System.nanoTime() < deadline) {
                for (String line : stderr().lines().toList()) {
                    int at = line.indexOf("name=threadtime.span.unmeasured");
                    if (at >= 0) {
                        Matcher m = Pattern.compile("reason=\"" + reason + "\"\\}, value=(\\d+)").matcher(line.substring(at));
                        if (m.find()) {
                            seen = Long.parseLong(m.group(1));
                        }
                    }
                }
                if (seen >= n) {
                    return;
                }
                Thread.sleep(100);
            }
            throw new AssertionError("threadtime.span.unmeasured{reason=" + reason + "} is " + seen + ", not >= " + n
                    + " within " + WAIT + "\n" + stderr());
        }

        @Override
        public void close() throws Exception {
            process.getOutputStream().close(); // the service's signal to stop
            if (!process.waitFor(WAIT.toSeconds(), TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new AssertionError("the service did not stop when asked");
            }
        }
    }
}
