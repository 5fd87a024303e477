package io.threadtime.otel;

import io.threadtime.VirtualThreadCpu;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * The HTTP benchmarks of docs/benchmarks.md (not tests): {@link BurnService}
 * on virtual threads (one per request), under a closed-loop load of
 * {@code concurrency} clients in this JVM (Java's HttpClient, one request at
 * a time each). Each request burns {@code burnMicros} of CPU in
 * {@code calls + 1} pieces around {@code calls} blocking calls to a second
 * server in the service's JVM, which answers after {@code waitMs}. Every
 * configuration is a fresh service JVM of this JVM's Java; the
 * configurations run in turn, in an order rotated each round, {@code rounds}
 * times. Per run: {@code warmup} s of load, then {@code seconds} s measured:
 * throughput, the 99th percentile latency, the service JVM's CPU time per
 * request (all its threads, from the kernel), and the load average when the
 * window opened. Prints one line per run and a table of medians with each
 * configuration's min-max.
 * <p>
 * Two suites:
 * <ul>
 * <li>{@code vthreads}: no agent; the JVMTI agent in mounted and
 *     exact mode; the {@code -javaagent} in both modes, with and without
 *     HotSpot's transition flag ({@code -XX:-DoJVMTIVirtualThreadTransitions},
 *     which the JVMTI agent refuses); no agent with the flag. The handler
 *     measures itself with {@code TaskCpu} and the table sets what the
 *     accounting charged per request beside what the burns took, measured
 *     on the carrier's clock without threadtime. Ratios are to no agent.</li>
 * <li>{@code otel}: no agent; the OpenTelemetry agent alone; with
 *     the extension (virtual threads unmeasured); with the extension and the
 *     JVMTI agent in exact mode; the OpenTelemetry agent with the flag; with the
 *     flag, the extension and {@code -javaagent:threadtime.jar=mode=exact} (the
 *     command line docs/cpu-per-request.md recommends). Spans are made and
 *     processed but not exported ({@code otel.traces.exporter=none}). Ratios
 *     are to the OpenTelemetry agent alone, with the flag where the
 *     configuration has it.</li>
 * </ul>
 * Arguments: {@code suite rounds seconds warmup concurrency burnMicros calls waitMs outputDir}.
 * System properties: {@code threadtime.jar} (the {@code -javaagent}),
 * {@code otel.agent.jar} and {@code extension.jar} (the otel suite),
 * {@code configs} (a comma-separated subset), {@code jfr} (configurations to
 * record with JFR's profile settings into outputDir).
 */
public final class LoadBench {
    private static final int FEATURE = Runtime.version().feature();
    private static final List<String> FLAG = List.of("-XX:+UnlockExperimentalVMOptions", "-XX:-DoJVMTIVirtualThreadTransitions");
    private static final List<String> QUIET_OTEL = List.of("-Dotel.traces.exporter=none", "-Dotel.metrics.exporter=none",
            "-Dotel.logs.exporter=none");

    private LoadBench() {}

    /** One measured run: req/s, p99 ms, CPU us/request, burned us/request,
     * charged us/request (-1 if none), requests charged less than burned, load average. */
    private record Run(double rps, double p99, double cpu, double burned, double charged, long under, double load) {
        double get(int i) {
            return switch (i) {
                case 0 -> rps;
                case 1 -> p99;
                case 2 -> cpu;
                case 3 -> burned;
                case 4 -> charged;
                default -> under;
            };
        }
    }

    public static void main(String[] args) {
        int status = 1;
        try {
            run(args);
            status = 0;
        } catch (Exception e) {
            e.printStackTrace();
        } finally {
            System.exit(status); // the load's client threads would keep a failed run's JVM alive
        }
    }

    private static void run(String[] args) throws Exception {
        String suite = args[0];
        int rounds = Integer.parseInt(args[1]);
        int seconds = Integer.parseInt(args[2]);
        int warmup = Integer.parseInt(args[3]);
        int concurrency = Integer.parseInt(args[4]);
        int burnMicros = Integer.parseInt(args[5]);
        int calls = Integer.parseInt(args[6]);
        int waitMs = Integer.parseInt(args[7]);
        Path out = Path.of(args[8]);
        boolean vthreads = switch (suite) {
            case "vthreads" -> true;
            case "otel" -> false;
            default -> throw new IllegalArgumentException("suite: vthreads or otel, not " + suite);
        };
        Map<String, List<String>> configs = vthreads ? vthreadConfigs() : otelConfigs();
        String path = "/burn?ms=0&us=" + burnMicros + "&calls=" + calls + "&wait=" + waitMs + (vthreads ? "&task=1" : "");
        List<String> names = new ArrayList<>(configs.keySet());
        String only = System.getProperty("configs"); // e.g. -Dconfigs=otel,otel+extension
        if (only != null) {
            names.retainAll(List.of(only.split(",")));
        }
        List<String> jfr = List.of(System.getProperty("jfr", "").split(","));
        System.out.printf("java %s, %d CPUs, %d rounds, %d s measured after %d s, concurrency %d, GET %s%n",
                Runtime.version(), Runtime.getRuntime().availableProcessors(), rounds, seconds, warmup, concurrency, path);
        Map<String, List<Run>> results = new LinkedHashMap<>();
        Map<String, Integer> hangs = new LinkedHashMap<>();
        for (int r = 0; r < rounds; r++) {
            for (int k = 0; k < names.size(); k++) {
                String name = names.get((k + r) % names.size()); // rotate the order each round
                String file = name.replace(' ', '-').replace('+', '-');
                List<String> jvm = new ArrayList<>(configs.get(name));
                if (jfr.contains(name)) {
                    jvm.add("-Xlog:jfr+startup=error"); // its "Started recording" line would go where READY is awaited
                    jvm.add("-XX:StartFlightRecording=settings=profile,filename=" + out.toAbsolutePath().resolve(file + "-" + (r + 1) + ".jfr"));
                }
                AgentServiceTest.Service s = AgentServiceTest.Service.launch(out, file, jvm, "virtual");
                Run run;
                try {
                    run = load(s.base().resolve(path), s::cpuNanos, concurrency, warmup, seconds);
                } catch (Exception e) {
                    if (!(e instanceof ExecutionException && e.getCause() instanceof HttpTimeoutException)) {
                        s.handle().destroyForcibly();
                        throw e;
                    }
                    // A request that takes 30 s on loopback is a service that hangs: say
                    // where its threads are, stop it, and go on with the next run.
                    Path dump = out.resolve(file + "-" + (r + 1) + "-hang.txt");
                    threadDump(s.handle(), dump);
                    s.handle().destroyForcibly();
                    hangs.merge(name, 1, Integer::sum);
                    System.out.printf("round %d  %-28s HUNG: a request took over 30 s; the service's threads are in %s%n", r + 1, name, dump);
                    continue;
                }
                try (s) {
                    results.computeIfAbsent(name, n -> new ArrayList<>()).add(run);
                    System.out.printf("round %d  %-28s %8.1f req/s  p99 %6.2f ms  %7.1f us CPU/request  burned %6.1f us  charged %6.1f us"
                            + "  (%d under)  load %.2f%n", r + 1, name, run.rps, run.p99, run.cpu, run.burned, run.charged, run.under, run.load);
                }
            }
        }
        double[] load = results.values().stream().flatMap(List::stream).mapToDouble(Run::load).sorted().toArray();
        System.out.printf("%nload average (1 min) when the windows opened: %.2f-%.2f, median %.2f%n%n", load[0], load[load.length - 1],
                median(load));
        if (vthreads) {
            System.out.println("| configuration | req/s | x no agent | p99 ms | service CPU us/request | x no agent | burned us/request"
                    + " | charged us/request | charged - burned | requests charged < burned |");
            System.out.println("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        } else {
            System.out.println("| configuration | req/s | p99 ms | service CPU us/request | vs | req/s vs | p99 vs | CPU/request vs |");
            System.out.println("|---|---:|---:|---:|---|---:|---:|---:|");
        }
        for (String name : names) {
            List<Run> runs = results.get(name);
            if (runs == null) {
                System.out.printf("| %s | every run hung |%n", name);
                continue;
            }
            String base = baseline(vthreads, name);
            List<Run> b = results.getOrDefault(base, runs);
            String rps = cell(runs, 0, "%.0f"), p99 = cell(runs, 1, "%.2f"), cpu = cell(runs, 2, "%.0f");
            if (vthreads) {
                double charged = median(runs, 4), burned = median(runs, 3);
                System.out.printf("| %s | %s | %.3f | %s | %s | %.3f | %s | %s | %s | %d |%n", name, rps, median(runs, 0) / median(b, 0), p99,
                        cpu, median(runs, 2) / median(b, 2), cell(runs, 3, "%.0f"), charged < 0 ? "-" : cell(runs, 4, "%.0f"),
                        charged < 0 ? "-" : String.format("%+.0f", charged - burned), runs.stream().mapToLong(Run::under).sum());
            } else {
                System.out.printf("| %s | %s | %s | %s | %s | %.3f | %.3f | %.3f |%n", name, rps, p99, cpu, base,
                        median(runs, 0) / median(b, 0), median(runs, 1) / median(b, 1), median(runs, 2) / median(b, 2));
            }
        }
        hangs.forEach((name, n) -> System.out.printf("%s: %d run(s) hung (not in the medians)%n", name, n));
    }

    /**
     * The Java threads of a service that stopped answering (jcmd Thread.print,
     * given 60 s, where this Java has jcmd), then every thread's kernel state
     * and wait channel from /proc, which answers even when the JVM does not.
     */
    private static void threadDump(ProcessHandle service, Path file) throws Exception {
        StringBuilder text = new StringBuilder();
        Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
        if (Files.isExecutable(jcmd)) {
            Path jstack = Files.createTempFile(file.getParent(), "jcmd", ".txt");
            Process p = new ProcessBuilder(jcmd.toString(), Long.toString(service.pid()), "Thread.print")
                    .redirectErrorStream(true).redirectOutput(jstack.toFile()).start();
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                text.append("jcmd Thread.print did not answer within 60 s\n");
            }
            text.append(Files.readString(jstack));
            Files.delete(jstack);
        } else {
            text.append("no jcmd in ").append(jcmd.getParent()).append("\n");
        }
        text.append("\n/proc: tid, name, state, wchan\n");
        try (var tasks = Files.list(Path.of("/proc", Long.toString(service.pid()), "task"))) {
            for (Path t : tasks.sorted().toList()) {
                String stat = Files.readString(t.resolve("stat"));
                String name = stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
                String state = stat.substring(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
                text.append(t.getFileName()).append(' ').append(name).append(' ').append(state).append(' ')
                        .append(Files.readString(t.resolve("wchan")).trim()).append('\n');
            }
        } catch (java.io.IOException gone) {
            text.append("(the process ended: ").append(gone.getMessage()).append(")\n");
        }
        Files.writeString(file, text);
    }

    /** What the vthreads suite's ratios are taken against: no agent; the otel suite's: the OpenTelemetry agent, with the flag if this one has it. */
    private static String baseline(boolean vthreads, String name) {
        return vthreads ? "no agent" : name.startsWith("otel+flag") ? "otel+flag" : "otel";
    }

    private static List<String> nativeAccess() {
        return FEATURE >= 22 ? List.of("--enable-native-access=ALL-UNNAMED") : List.of();
    }

    private static List<String> join(List<?>... parts) {
        List<String> all = new ArrayList<>();
        for (List<?> p : parts) {
            p.forEach(o -> all.add(o.toString()));
        }
        return all;
    }

    private static String threadtimeJar() {
        String jar = System.getProperty("threadtime.jar");
        if (jar == null || !Files.isRegularFile(Path.of(jar))) {
            throw new IllegalArgumentException("-Dthreadtime.jar=<the threadtime JAR, used as -javaagent> is missing or not a file: " + jar);
        }
        return jar;
    }

    private static Map<String, List<String>> vthreadConfigs() {
        String ja = "-javaagent:" + threadtimeJar();
        String jvmti = "-agentpath:" + VirtualThreadCpu.agentPath();
        List<String> na = nativeAccess();
        Map<String, List<String>> c = new LinkedHashMap<>();
        c.put("no agent", na);
        c.put("no agent+flag", join(FLAG, na));
        c.put("jvmti mounted", join(List.of(jvmti + "=mode=mounted"), na));
        c.put("jvmti exact", join(List.of(jvmti + "=mode=exact"), na));
        c.put("javaagent mounted", join(List.of(ja + "=mode=mounted"), na));
        c.put("javaagent mounted+flag", join(FLAG, List.of(ja + "=mode=mounted"), na));
        c.put("javaagent exact", join(List.of(ja + "=mode=exact"), na));
        c.put("javaagent exact+flag", join(FLAG, List.of(ja + "=mode=exact"), na));
        return c;
    }

    private static Map<String, List<String>> otelConfigs() {
        String otel = "-javaagent:" + System.getProperty("otel.agent.jar");
        String ext = "-Dotel.javaagent.extensions=" + System.getProperty("extension.jar");
        String jvmti = "-agentpath:" + VirtualThreadCpu.agentPath() + "=mode=exact";
        List<String> na = nativeAccess();
        Map<String, List<String>> c = new LinkedHashMap<>();
        c.put("no agent", na);
        c.put("otel", join(List.of(otel), QUIET_OTEL, na));
        c.put("otel+extension", join(List.of(otel, ext), QUIET_OTEL, na));
        c.put("otel+extension+jvmti", join(List.of(jvmti, otel, ext), QUIET_OTEL, na));
        c.put("otel+flag", join(FLAG, List.of(otel), QUIET_OTEL, na));
        c.put("otel+flag+extension+javaagent", join(FLAG, List.of("-javaagent:" + threadtimeJar() + "=mode=exact", otel, ext), QUIET_OTEL, na));
        return c;
    }

    /**
     * Closed-loop load over the measured window. The service's CPU time (all
     * its threads, from the kernel) is read when the window opens and closes;
     * unlike throughput it does not move with what else the machine runs.
     */
    static Run load(URI uri, LongSupplier serviceCpu, int concurrency, int warmup, int seconds) throws Exception {
        ExecutorService io = Executors.newFixedThreadPool(2);
        HttpClient client = HttpClient.newBuilder().executor(io).build();
        HttpRequest req = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(30)).build();
        long start = System.nanoTime();
        long measureFrom = start + TimeUnit.SECONDS.toNanos(warmup);
        long end = measureFrom + TimeUnit.SECONDS.toNanos(seconds);
        ExecutorService clients = Executors.newFixedThreadPool(concurrency);
        // per client: latencies; and burned ns, charged ns, requests charged < burned
        List<Future<long[][]>> futures = new ArrayList<>();
        for (int c = 0; c < concurrency; c++) {
            futures.add(clients.submit(() -> {
                long[] lat = new long[1 << 16];
                long[] sums = new long[3];
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
                        long[] bc = burnedCharged(r.body());
                        sums[0] += bc[0];
                        sums[1] += bc[1];
                        sums[2] += bc[1] >= 0 && bc[1] < bc[0] ? 1 : 0;
                    }
                }
                return new long[][] {Arrays.copyOf(lat, n), sums};
            }));
        }
        TimeUnit.NANOSECONDS.sleep(measureFrom - System.nanoTime()); // a benchmark: the window's edges are times
        double loadAverage = loadAverage();
        long cpu0 = serviceCpu.getAsLong();
        TimeUnit.NANOSECONDS.sleep(end - System.nanoTime());
        long cpu1 = serviceCpu.getAsLong();
        List<long[]> all = new ArrayList<>();
        long burned = 0, charged = 0, under = 0;
        for (Future<long[][]> f : futures) {
            long[][] got = f.get(seconds + warmup + 120, TimeUnit.SECONDS);
            all.add(got[0]);
            burned += got[1][0];
            charged += got[1][1];
            under += got[1][2];
        }
        clients.shutdown();
        io.shutdown();
        long[] lat = all.stream().flatMapToLong(Arrays::stream).sorted().toArray();
        if (lat.length == 0) {
            throw new IllegalStateException("no request completed in the measured window");
        }
        int n = lat.length;
        return new Run(n / (double) seconds, lat[(int) Math.min(n - 1, Math.ceil(n * 0.99) - 1)] / 1e6, (cpu1 - cpu0) / 1e3 / n,
                burned / 1e3 / n, charged < 0 ? -1 : charged / 1e3 / n, under, loadAverage);
    }

    /** {burned ns, charged ns or -1} from {@code burned=B[ charged=C]}. */
    private static long[] burnedCharged(String body) {
        long burned = -1, charged = -1;
        for (String kv : body.trim().split(" ")) {
            if (kv.startsWith("burned=")) {
                burned = Long.parseLong(kv.substring(7));
            } else if (kv.startsWith("charged=")) {
                charged = Long.parseLong(kv.substring(8));
            }
        }
        if (burned < 0) {
            throw new IllegalStateException("unexpected answer: " + body);
        }
        return new long[] {burned, charged};
    }

    /** The 1-minute load average, from /proc/loadavg; -1 where there is none. */
    private static double loadAverage() {
        try {
            return Double.parseDouble(Files.readString(Path.of("/proc/loadavg")).split(" ")[0]);
        } catch (java.io.IOException | RuntimeException e) {
            return -1;
        }
    }

    private static String cell(List<Run> runs, int i, String fmt) {
        double[] v = runs.stream().mapToDouble(r -> r.get(i)).sorted().toArray();
        return String.format(fmt + " (" + fmt + "-" + fmt + ")", median(v), v[0], v[v.length - 1]);
    }

    private static double median(List<Run> runs, int i) {
        return median(runs.stream().mapToDouble(r -> r.get(i)).sorted().toArray());
    }

    private static double median(double[] sorted) {
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }
}
