package io.threadtime.otel;

import io.threadtime.VirtualThreadCpu;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * The benchmark behind "CPU per request" in docs/benchmarks.md (not a test):
 * {@link BurnService} on virtual threads, under a closed-loop load of
 * {@code concurrency} clients in this JVM (Java HttpClient, one request at a
 * time each), in three configurations started in turn, {@code rounds} times:
 * <ul>
 * <li>{@code no agent}: the JVM alone (the floor);</li>
 * <li>{@code otel}: the OpenTelemetry Java agent;</li>
 * <li>{@code otel+accounting}: the agent and threadtime's JVMTI agent in exact
 *     mode, without the extension (what the accounting alone costs);</li>
 * <li>{@code otel+extension}: the agent and the extension, without the
 *     accounting (virtual threads unmeasured: what the extension alone costs);</li>
 * <li>{@code otel+threadtime}: the agent, the extension and the JVMTI agent in
 *     exact mode (what a user runs for CPU per request on virtual threads).</li>
 * </ul>
 * Spans are made and processed but not exported ({@code otel.traces.exporter=none}),
 * so the figures are the agents' own costs. Per run: {@code warmup} s of load,
 * then {@code seconds} s measured; throughput, the 99th percentile latency,
 * and the service JVM's CPU time per request.
 * Prints one line per run and a table of medians.
 * <p>
 * Arguments: {@code rounds seconds warmup concurrency burnMicros calls outputDir}.
 */
public final class LoadBench {
    private LoadBench() {}

    public static void main(String[] args) throws Exception {
        int rounds = Integer.parseInt(args[0]);
        int seconds = Integer.parseInt(args[1]);
        int warmup = Integer.parseInt(args[2]);
        int concurrency = Integer.parseInt(args[3]);
        int burnMicros = Integer.parseInt(args[4]);
        int calls = Integer.parseInt(args[5]);
        Path out = Path.of(args[6]);
        String agent = System.getProperty("otel.agent.jar");
        String extension = System.getProperty("extension.jar");
        Map<String, List<String>> configs = new LinkedHashMap<>();
        configs.put("no agent", List.of());
        configs.put("otel", List.of("-javaagent:" + agent, "-Dotel.traces.exporter=none",
                "-Dotel.metrics.exporter=none", "-Dotel.logs.exporter=none"));
        configs.put("otel+accounting", List.of("-agentpath:" + VirtualThreadCpu.agentPath() + "=mode=exact",
                "-javaagent:" + agent, "-Dotel.traces.exporter=none", "-Dotel.metrics.exporter=none", "-Dotel.logs.exporter=none"));
        configs.put("otel+extension", List.of("-javaagent:" + agent, "-Dotel.javaagent.extensions=" + extension,
                "--enable-native-access=ALL-UNNAMED", "-Dotel.traces.exporter=none", "-Dotel.metrics.exporter=none",
                "-Dotel.logs.exporter=none"));
        configs.put("otel+threadtime", List.of("-agentpath:" + VirtualThreadCpu.agentPath() + "=mode=exact",
                "-javaagent:" + agent, "-Dotel.javaagent.extensions=" + extension, "--enable-native-access=ALL-UNNAMED",
                "-Dotel.traces.exporter=none", "-Dotel.metrics.exporter=none", "-Dotel.logs.exporter=none"));
        String path = "/burn?ms=0&us=" + burnMicros + "&calls=" + calls;
        System.out.printf("java %s, %d rounds, %d s measured after %d s, concurrency %d, GET %s%n",
                Runtime.version(), rounds, seconds, warmup, concurrency, path);
        Map<String, List<double[]>> results = new LinkedHashMap<>();
        List<String> names = new ArrayList<>(configs.keySet());
        String only = System.getProperty("configs"); // e.g. -Dconfigs=otel,otel+extension
        if (only != null) {
            names.retainAll(List.of(only.split(",")));
        }
        for (int r = 0; r < rounds; r++) {
            for (int k = 0; k < names.size(); k++) {
                String name = names.get((k + r) % names.size()); // rotate the order each round
                try (AgentServiceTest.Service s = AgentServiceTest.Service.launch(out, name.replace(' ', '-').replace('+', '-'),
                        configs.get(name), "virtual")) {
                    double[] run = load(s.base().resolve(path), s::cpuNanos, concurrency, warmup, seconds);
                    results.computeIfAbsent(name, n -> new ArrayList<>()).add(run);
                    System.out.printf("round %d  %-16s %8.1f req/s  p99 %6.2f ms  %7.1f us CPU/request%n", r + 1, name, run[0], run[1], run[2]);
                }
            }
        }
        System.out.println();
        System.out.println("| configuration | req/s, median (min-max) | p99 ms, median (min-max) | service CPU us/request, median (min-max) | req/s vs otel | p99 vs otel | CPU/request vs otel |");
        System.out.println("|---|---:|---:|---:|---:|---:|---:|");
        double[] base = medians(results.get("otel"));
        for (String name : names) {
            double[] m = medians(results.get(name));
            double[][] range = ranges(results.get(name));
            System.out.printf("| %s | %.0f (%.0f-%.0f) | %.2f (%.2f-%.2f) | %.0f (%.0f-%.0f) | %.3f | %.3f | %.3f |%n", name,
                    m[0], range[0][0], range[0][1], m[1], range[1][0], range[1][1], m[2], range[2][0], range[2][1],
                    m[0] / base[0], m[1] / base[1], m[2] / base[2]);
        }
        System.exit(0); // the HTTP clients' selector threads would keep the JVM alive
    }

    /**
     * Closed-loop load: {req/s, p99 ms, the service's CPU us per request}
     * over the measured window. The service's CPU time (all its threads,
     * from the kernel) is read when the window opens and closes; unlike
     * throughput it does not move with what else the machine runs.
     */
    static double[] load(URI uri, LongSupplier serviceCpu, int concurrency, int warmup, int seconds) throws Exception {
        ExecutorService io = Executors.newFixedThreadPool(2);
        HttpClient client = HttpClient.newBuilder().executor(io).build();
        HttpRequest req = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(30)).build();
        long start = System.nanoTime();
        long measureFrom = start + TimeUnit.SECONDS.toNanos(warmup);
        long end = measureFrom + TimeUnit.SECONDS.toNanos(seconds);
        ExecutorService clients = Executors.newFixedThreadPool(concurrency);
        List<Future<long[]>> futures = new ArrayList<>();
        for (int c = 0; c < concurrency; c++) {
            futures.add(clients.submit(() -> {
                long[] lat = new long[1 << 16];
                int n = 0;
                while (true) {
                    long t0 = System.nanoTime();
                    if (t0 >= end) {
                        break;
                    }
                    HttpResponse<String> r = client.send(req, HttpResponse.BodyHandlers.ofString());
                    long t1 = System.nanoTime();
                    if (r.statusCode() != 200) {
                        throw new IllegalStateException("HTTP " + r.statusCode());
                    }
                    if (t0 >= measureFrom && t1 <= end) {
                        if (n == lat.length) {
                            lat = Arrays.copyOf(lat, n * 2);
                        }
                        lat[n++] = t1 - t0;
                    }
                }
                return Arrays.copyOf(lat, n);
            }));
        }
        TimeUnit.NANOSECONDS.sleep(measureFrom - System.nanoTime()); // a benchmark: the window's edges are times
        long cpu0 = serviceCpu.getAsLong();
        TimeUnit.NANOSECONDS.sleep(end - System.nanoTime());
        long cpu1 = serviceCpu.getAsLong();
        List<long[]> all = new ArrayList<>();
        for (Future<long[]> f : futures) {
            all.add(f.get(seconds + warmup + 120, TimeUnit.SECONDS));
        }
        clients.shutdown();
        io.shutdown();
        long[] lat = all.stream().flatMapToLong(Arrays::stream).sorted().toArray();
        if (lat.length == 0) {
            throw new IllegalStateException("no request completed in the measured window");
        }
        return new double[] {lat.length / (double) seconds, lat[(int) Math.min(lat.length - 1, Math.ceil(lat.length * 0.99) - 1)] / 1e6,
            (cpu1 - cpu0) / 1e3 / lat.length};
    }

    private static double[] medians(List<double[]> runs) {
        return new double[] {median(runs, 0), median(runs, 1), median(runs, 2)};
    }

    private static double median(List<double[]> runs, int i) {
        double[] v = runs.stream().mapToDouble(r -> r[i]).sorted().toArray();
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }

    private static double[][] ranges(List<double[]> runs) {
        double[][] r = new double[3][];
        for (int i = 0; i < 3; i++) {
            int k = i;
            r[i] = new double[] {runs.stream().mapToDouble(x -> x[k]).min().orElseThrow(), runs.stream().mapToDouble(x -> x[k]).max().orElseThrow()};
        }
        return r;
    }
}
