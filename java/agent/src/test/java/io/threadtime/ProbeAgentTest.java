package io.threadtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import example.ProbeApp;
import io.threadtime.agent.ThreadTimeAgent;
import io.threadtime.agent.probes.ProbeTransformerTest;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent's probes in child JVMs ({@code -javaagent:threadtime.jar=probe=...}),
 * on this JDK: a user method and JDK methods (one already loaded at start,
 * one loaded later) counted exactly, exceptional exits, virtual threads, a
 * line probe, the OpenTelemetry agent alongside, bad options, attach and
 * detach. The traces are read back with the CLI ({@code threadtime dump
 * --format csv}). Nothing here depends on timing.
 */
class ProbeAgentTest {
    static final int FEATURE = Runtime.version().feature();
    static final String APP = ProbeApp.class.getName();
    static final String WORK = "example.ProbeApp::work";
    static final String OCTAL = "java.lang.Integer::toOctalString";
    static final String BASE64 = "java.util.Base64$Encoder::encodeToString";

    static String jar() throws Exception {
        return Path.of(ThreadTimeAgent.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
    }

    static String agent(String options) throws Exception {
        return "-javaagent:" + jar() + "=" + options;
    }

    /** One event of a trace, by CSV column name. */
    record Event(Map<String, String> f) {
        String get(String column) {
            String v = f.get(column);
            assertNotNull(v, "no column " + column + " in the CSV: " + f.keySet());
            return v;
        }

        String kind() {
            return get("kind");
        }

        String name() {
            return get("name");
        }
    }

    /** The trace as the CLI's CSV. */
    static List<Event> read(Path trace) throws Exception {
        String cli = System.getProperty("threadtime.cli");
        assertTrue(cli != null && Files.isExecutable(Path.of(cli)),
                "the threadtime CLI is needed to read traces (make build; -Dthreadtime.cli=" + cli + ")");
        ChildJvm r = ChildJvm.finish(new ProcessBuilder(cli, "dump", "--format", "csv", trace.toString()).start(),
                "threadtime dump " + trace);
        assertEquals(0, r.exit(), () -> "threadtime dump " + trace + ": " + r.err());
        List<String> lines = r.out().lines().collect(Collectors.toList());
        List<String> header = csv(lines.get(0));
        List<Event> events = new ArrayList<>();
        for (String line : lines.subList(1, lines.size())) {
            List<String> cells = csv(line);
            Map<String, String> f = new HashMap<>();
            for (int i = 0; i < header.size(); i++) {
                f.put(header.get(i), i < cells.size() ? cells.get(i) : "");
            }
            events.add(new Event(f));
        }
        return events;
    }

    /** One CSV line's fields (quoted fields may hold commas and doubled quotes). */
    static List<String> csv(String line) {
        List<String> out = new ArrayList<>();
        StringBuilder cur = new StringBuilder();
        boolean quoted = false;
        for (int i = 0; i < line.length(); i++) {
            char c = line.charAt(i);
            if (quoted) {
                if (c == '"' && i + 1 < line.length() && line.charAt(i + 1) == '"') {
                    cur.append('"');
                    i++;
                } else if (c == '"') {
                    quoted = false;
                } else {
                    cur.append(c);
                }
            } else if (c == '"') {
                quoted = true;
            } else if (c == ',') {
                out.add(cur.toString());
                cur.setLength(0);
            } else {
                cur.append(c);
            }
        }
        out.add(cur.toString());
        return out;
    }

    static long count(List<Event> events, String kind, String name) {
        return events.stream().filter(e -> e.kind().equals(kind) && e.name().equals(name)).count();
    }

    static ChildJvm app(Path dir, List<String> jvm, String... args) throws Exception {
        List<String> options = new ArrayList<>(List.of(ChildJvm.GRANT));
        options.addAll(jvm);
        return ChildJvm.run(dir, options, APP, args);
    }

    @Test
    void userAndJdkMethodsAreCountedExactlyAndALineProbeFiresAtItsLine(@TempDir Path dir) throws Exception {
        int line = new ArrayList<>(ProbeTransformerTest.lines(ProbeApp.class, "lineWork")).get(1);
        String lineProbe = "example.ProbeApp::lineWork@" + line;
        Path trace = dir.resolve("calls.ttrace");
        ChildJvm c = app(dir, List.of(agent("probe=" + WORK + ";" + OCTAL + ";" + BASE64 + ";" + lineProbe
                + ",out=" + trace)), "calls", "1000");
        assertEquals(0, c.exit(), c::toString);
        assertTrue(c.err().contains("threadtime: trace written to " + trace), c::toString);
        assertFalse(c.err().contains("matched nothing"), c::toString);
        List<Event> events = read(trace);
        for (String name : List.of(WORK, OCTAL, BASE64)) {
            assertEquals(1000, count(events, "begin", name), name);
            assertEquals(1000, count(events, "end", name), name);
        }
        assertEquals(1000, count(events, "instant", lineProbe), lineProbe);
    }

    @Test
    void theTraceGoesToTheWorkingDirectoryByDefaultAndCpuProbesCarryCpuTimes(@TempDir Path dir) throws Exception {
        ChildJvm c = app(dir, List.of(agent("probe=" + WORK + ",probe.cpu=on,ring=1024")), "calls", "10");
        assertEquals(0, c.exit(), c::toString);
        List<Path> traces;
        try (var s = Files.list(dir)) {
            traces = s.filter(p -> p.getFileName().toString().matches("threadtime-[0-9]+\\.ttrace")).collect(Collectors.toList());
        }
        assertEquals(1, traces.size(), c::toString);
        assertTrue(c.err().contains("trace written to " + traces.get(0).toRealPath()), c::toString);
        List<Event> events = read(traces.get(0));
        assertEquals(10, count(events, "begin_cpu", WORK));
        assertEquals(10, count(events, "end_cpu", WORK));
        assertEquals(0, count(events, "begin", WORK));
    }

    @Test
    void anExceptionLeavesAsBeforeAndItsEndIsMarkedThrown(@TempDir Path dir) throws Exception {
        Path trace = dir.resolve("throws.ttrace");
        ChildJvm probed = app(dir, List.of(agent("probe=example.ProbeApp::mayThrow,out=" + trace)), "throws", "10");
        ChildJvm plain = app(dir, List.of(), "throws", "10");
        assertEquals(0, probed.exit(), probed::toString);
        assertEquals("5", probed.value("thrown"), probed::toString);
        assertEquals(plain.value("exception"), probed.value("exception"));
        assertEquals(plain.value("top"), probed.value("top"), "the same stack trace");
        List<Event> ends = read(trace).stream()
                .filter(e -> e.kind().equals("end") && e.name().equals("example.ProbeApp::mayThrow"))
                .collect(Collectors.toList());
        assertEquals(10, ends.size());
        assertEquals(5, ends.stream().filter(ProbeAgentTest::thrown).count(), ends::toString);
    }

    static boolean thrown(Event e) {
        return e.get("thrown").equals("1");
    }

    @Test
    void aProbedMethodThatSleepsOnVirtualThreadsBelongsToItsThread(@TempDir Path dir) throws Exception {
        assumeTrue(FEATURE >= 21, "virtual threads need JDK 21");
        Path trace = dir.resolve("vthreads.ttrace");
        String sleepy = "example.ProbeApp::sleepy";
        ChildJvm c = app(dir, List.of("-Djdk.virtualThreadScheduler.parallelism=2",
                agent("probe=" + sleepy + ",out=" + trace)), "vthreads", "4", "5");
        assertEquals(0, c.exit(), c::toString);
        List<String> ids = Arrays.asList(c.value("vthreads").split(" "));
        assertEquals(4, ids.size(), c::toString);
        List<Event> events = read(trace);
        for (String id : ids) {
            for (String kind : List.of("begin", "end")) {
                long n = events.stream().filter(e -> e.kind().equals(kind) && e.name().equals(sleepy)
                        && e.get("vthread").equals(id)).count();
                assertEquals(5, n, kind + "s of virtual thread " + id);
            }
        }
        assertEquals(40, events.stream().filter(e -> e.name().equals(sleepy)).count(), "every event on its thread");
    }

    /** A figure of one row of {@code threadtime dump --summary --format json}, by its name. */
    static long summaryField(Path trace, String name, String field) throws Exception {
        ChildJvm r = ChildJvm.finish(new ProcessBuilder(System.getProperty("threadtime.cli"), "dump", "--summary",
                "--format", "json", trace.toString()).start(), "threadtime dump --summary " + trace);
        assertEquals(0, r.exit(), () -> "threadtime dump --summary " + trace + ": " + r.err());
        String out = r.out();
        String row = out.lines().filter(l -> l.contains("\"name\":\"" + name + "\"")).findFirst()
                .orElseThrow(() -> new AssertionError("no row " + name + " in " + out));
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("\"" + field + "\":(-?[0-9]+|null)").matcher(row);
        assertTrue(m.find(), () -> "no " + field + " in " + row);
        assertNotEquals("null", m.group(1), () -> field + " is null in " + row);
        return Long.parseLong(m.group(1));
    }

    /**
     * probe.cpu=on with mode=exact on virtual threads. Every
     * call parks in the middle (and may resume on another carrier), yet every
     * call gets a CPU figure from its thread's own account; together they
     * hold at least the CPU the burns took on their carriers' clocks (read
     * independently, through the JDK) and at most the calls' wall time.
     */
    @Test
    void probedCallsOnVirtualThreadsGetTheirCpuFromTheThreadsOwnAccount(@TempDir Path dir) throws Exception {
        assumeTrue(FEATURE >= 21, "virtual threads need JDK 21");
        Path trace = dir.resolve("vcpu.ttrace");
        // ThreadLocal::get runs inside each of these probes: it is refused,
        // not probed (a probe there would call itself without end).
        ChildJvm c = virtualThreadCpu(dir, trace, List.of(agent("mode=exact,probe=example.ProbeApp::burnAndSleep;"
                + "java.lang.ThreadLocal::get,probe.cpu=on,out=" + trace)));
        assertFalse(c.err().contains("failed and recorded nothing"), c::toString);
        List<Event> events = read(trace);
        assertEquals(0, events.stream().filter(e -> e.name().startsWith("java.lang.ThreadLocal")).count());
        String method = "example.ProbeApp::burnAndSleep";
        // The trace's own ends carry the figures too (the rings hold every call here).
        List<Event> ends = events.stream().filter(e -> e.name().equals(method) && e.kind().startsWith("end"))
                .collect(Collectors.toList());
        assertEquals(200, ends.size());
        assertTrue(ends.stream().allMatch(e -> e.kind().equals("end_cpu_total") && !e.get("value").isEmpty()),
                () -> "an end without a figure: " + ends);
        assertEquals(200, count(events, "begin", method), "a plain begin opens each call");
    }

    /** The same with the JVMTI agent charging the virtual threads (the -javaagent's hooks stay out). */
    @Test
    void probedCallsOnVirtualThreadsGetTheirCpuFromTheJvmtiAgentsAccount(@TempDir Path dir) throws Exception {
        assumeTrue(FEATURE >= 21, "virtual threads need JDK 21");
        Path lib;
        try {
            lib = VirtualThreadCpu.agentPath();
        } catch (UnsatisfiedLinkError e) {
            assumeTrue(false, "no JVMTI agent for this platform in the JAR: " + e.getMessage());
            return;
        }
        Path trace = dir.resolve("vcpu-jvmti.ttrace");
        virtualThreadCpu(dir, trace, List.of("-agentpath:" + lib + "=mode=exact",
                agent("probe=example.ProbeApp::burnAndSleep,probe.cpu=on,out=" + trace)));
    }

    /**
     * mode=mounted: each call gets the time its thread was mounted, shown as
     * such and never as CPU; it is at least the burns' CPU (a thread mounted
     * runs or waits for its carrier) and at most the wall time.
     */
    @Test
    void probedCallsOnVirtualThreadsGetTheirTimeMountedInMountedMode(@TempDir Path dir) throws Exception {
        assumeTrue(FEATURE >= 21, "virtual threads need JDK 21");
        Path trace = dir.resolve("mounted.ttrace");
        virtualThreadCpu(dir, trace, List.of(agent("mode=mounted,probe=example.ProbeApp::burnAndSleep,probe.cpu=on,"
                + "out=" + trace)), "mounted");
        assertEquals(0, summaryField(trace, "example.ProbeApp::burnAndSleep", "cpu_calls"), "time mounted is not CPU");
    }

    static ChildJvm virtualThreadCpu(Path dir, Path trace, List<String> agents) throws Exception {
        return virtualThreadCpu(dir, trace, agents, "cpu");
    }

    /**
     * 20 virtual threads call burnAndSleep 10 times each under these agents;
     * checks the summary's figure ("cpu" or "mounted") of those calls against
     * the burns and the wall time.
     */
    static ChildJvm virtualThreadCpu(Path dir, Path trace, List<String> agents, String figure) throws Exception {
        String method = "example.ProbeApp::burnAndSleep";
        List<String> jvm = new ArrayList<>(List.of("--add-opens", "java.base/java.lang=ALL-UNNAMED"));
        jvm.addAll(agents);
        ChildJvm c = app(dir, jvm, "vcpu", "20", "10");
        assertEquals(0, c.exit(), c::toString);
        assertEquals("0", c.value("failed"), c::toString);
        long burned = Long.parseLong(c.value("burned"));
        assertTrue(burned > 0, c::toString);
        assertEquals(200, summaryField(trace, method, "calls"));
        assertEquals(200, summaryField(trace, method, figure + "_calls"), "every call has a figure");
        assertEquals(0, summaryField(trace, method, "cpu_apart"));
        long cpu = summaryField(trace, method, figure + "_ns");
        long wall = summaryField(trace, method, "total_ns");
        // The agents read the fast clock, which may run ahead of the kernel's
        // by its bound where a call began on such a read and ended on a fresh
        // one: each call may come out that much short, not just one of them.
        long slack = summaryField(trace, method, figure + "_calls") * ThreadTime.FAST_CLOCK_BOUND_NANOS;
        assertTrue(cpu >= burned - slack, "CPU " + cpu + " ns below the " + burned + " ns the burns took, less "
                + slack + " ns (the fast clock's bound once per call)");
        assertTrue(cpu <= wall, "CPU " + cpu + " ns above the calls' wall time " + wall + " ns");
        return c;
    }

    @Test
    void theOpenTelemetryAgentAlongside(@TempDir Path dir) throws Exception {
        String otel = System.getProperty("threadtime.test.otel");
        assertTrue(otel != null && Files.isRegularFile(Path.of(otel)), "the OpenTelemetry agent JAR: " + otel);
        List<String> quiet = List.of("-Dotel.traces.exporter=none", "-Dotel.metrics.exporter=none",
                "-Dotel.logs.exporter=none");
        for (boolean otelFirst : new boolean[] {true, false}) {
            Path trace = dir.resolve("otel-" + otelFirst + ".ttrace");
            String ours = agent("probe=" + WORK + ";" + OCTAL + ",out=" + trace);
            List<String> jvm = new ArrayList<>(quiet);
            jvm.addAll(otelFirst ? List.of("-javaagent:" + otel, ours) : List.of(ours, "-javaagent:" + otel));
            ChildJvm c = app(dir, jvm, "calls", "100");
            assertEquals(0, c.exit(), c::toString);
            List<Event> events = read(trace);
            for (String name : List.of(WORK, OCTAL)) {
                assertEquals(100, count(events, "begin", name), name + (otelFirst ? " after" : " before") + " otel");
                assertEquals(100, count(events, "end", name), name);
            }
        }
    }

    @Test
    void badOptionsStopTheJvmAndNameTheOptionAndItsPlace(@TempDir Path dir) throws Exception {
        String[][] cases = {
            {"probe=a..B", "bad option 'probe=a..B': filter 'a..B' at character 7"},
            {"mode=exact,probe=a.B::c;x.Y::", "at character 12", "filter 'x.Y::' at character 25: no method name after '::'"},
            {"probe=io.threadtime.EventLog::start", "threadtime's own"},
            {"probe=a.B::c@0", "not a line number"},
            {"ring=3,probe=a.B", "bad option 'ring=3' at character 1 of 'ring=3,probe=a.B'", "16 to"},
            {"probe=a.B,probe=c.D", "conflicting option 'probe=c.D' at character 11 of 'probe=a.B,probe=c.D'"},
            {"events=off,probe=a.B", "conflicting options", "events=off"},
            {"probe.cpu=on", "probe.cpu= needs probe="},
            {"probe=off", "probe=off takes probes out of a running JVM"},
            {"out=" + dir.resolve("no-such-dir").resolve("x.ttrace"), "cannot be written"},
            {"probes=@" + dir.resolve("missing.txt"), "no file " + dir.resolve("missing.txt")},
            {"dump=x.ttrace", "works only when attaching"},
        };
        for (String[] c : cases) {
            ChildJvm r = app(dir, List.of(agent(c[0])), "calls", "1");
            assertNotEquals(0, r.exit(), () -> c[0] + ": " + r);
            for (int i = 1; i < c.length; i++) {
                assertTrue(r.err().contains(c[i]), "'" + c[0] + "' should say '" + c[i] + "': " + r);
            }
        }
        try (var s = Files.list(dir)) {
            assertEquals(0, s.filter(p -> p.toString().endsWith(".ttrace")).count(), "no trace from a refused start");
        }
    }

    @Test
    void filtersFromAFileAndOnesThatMatchNothingAreNamedWithTheNearestNames(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("probes.txt");
        Files.writeString(file, "# what to time\n" + WORK + "\n\nexample.ProbeApp::wrok\nexample.ProbeAp::main\n"
                + "java.lang.Integer::toOctalString@65000\n");
        Path trace = dir.resolve("file.ttrace");
        ChildJvm c = app(dir, List.of(agent("probes=@" + file + ",out=" + trace)), "calls", "3");
        assertEquals(0, c.exit(), c::toString);
        assertTrue(c.err().contains("probe 'example.ProbeApp::wrok' matched nothing: example.ProbeApp has no method wrok; "
                + "nearest: work"), c::toString);
        assertTrue(c.err().contains("probe 'example.ProbeAp::main' matched nothing: no class example.ProbeAp was loaded; "
                + "nearest: example.ProbeApp"), c::toString);
        assertTrue(c.err().contains("probe 'java.lang.Integer::toOctalString@65000' matched nothing: toOctalString has no "
                + "code on line 65000"), c::toString);
        assertFalse(c.err().contains("'" + WORK + "' matched nothing"), c::toString);
        assertEquals(3, count(read(trace), "begin", WORK));
    }

    @Test
    void attachAddsProbesDumpsAndDetachRestoresTheBytecode(@TempDir Path dir) throws Exception {
        List<String> jvm = new ArrayList<>(List.of(ChildJvm.GRANT));
        if (FEATURE >= 21) {
            jvm.add("-XX:+EnableDynamicAgentLoading"); // JEP 451: else a warning on 21+
        }
        Process p = new ProcessBuilder(ChildJvm.command(jvm, APP, "wait")).directory(dir.toFile()).start();
        CompletableFuture<String> err = ChildJvm.drainAsync(p.getErrorStream());
        try (BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
                Writer in = new OutputStreamWriter(p.getOutputStream(), StandardCharsets.UTF_8)) {
            assertEquals("ready", out.readLine());
            String pid = Long.toString(p.pid());
            Path first = dir.resolve("first.ttrace"), second = dir.resolve("second.ttrace");
            assertEquals(0, attach(pid, "probe=" + WORK), err::toString);
            command(in, out, "calls 7");
            assertEquals(0, attach(pid, "dump=" + first));
            command(in, out, "calls 2");
            assertEquals(0, attach(pid, "probe=off,dump=" + second));
            command(in, out, "calls 5"); // after detach: not recorded
            Path third = dir.resolve("third.ttrace");
            assertEquals(0, attachWithCli(pid, "dump=" + third), "threadtime attach, the CLI's form");
            assertNotEquals(0, attach(pid, "mode=exact"), "mode= is refused at attach");
            // The attaching side hears what matched nothing, and why the agent failed.
            ChildJvm miss = ChildJvm.run(null, List.of(), "-jar", jar(), "attach", pid, "probe=example.NoSuchApp::run");
            assertEquals(0, miss.exit(), miss.toString());
            assertTrue(miss.err().contains("probe 'example.NoSuchApp::run' matched nothing"), miss.toString());
            ChildJvm cli = ChildJvm.finish(new ProcessBuilder(System.getProperty("threadtime.cli"), "attach", "--jar",
                    jar(), pid, "probe=a..b").redirectErrorStream(true).start(), "threadtime attach");
            assertNotEquals(0, cli.exit(), cli.out());
            assertTrue(cli.out().contains("bad option 'probe=a..b'"), cli.out());
            in.write("exit\n");
            in.flush();
            assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the child did not end");
            assertEquals(7, count(read(first), "begin", WORK));
            assertEquals(9, count(read(second), "end", WORK));
            assertEquals(9, count(read(third), "begin", WORK), "no probe after probe=off");
        } finally {
            p.destroyForcibly();
        }
        String stderr = err.get(60, TimeUnit.SECONDS);
        assertTrue(stderr.contains("probes removed: 1 class back to its own bytecode"), stderr);
    }

    /** {@code threadtime attach --jar JAR PID options} (the CLI runs the target's own java): its exit status. */
    static int attachWithCli(String pid, String options) throws Exception {
        ChildJvm r = ChildJvm.finish(new ProcessBuilder(System.getProperty("threadtime.cli"), "attach", "--jar", jar(),
                pid, options).redirectErrorStream(true).start(), "threadtime attach " + options);
        assertTrue(r.out().contains("threadtime: JVM " + pid + " took " + options), r.out());
        return r.exit();
    }

    /** One line to the waiting child, then its "ready". */
    static void command(Writer in, BufferedReader out, String line) throws IOException {
        in.write(line + "\n");
        in.flush();
        assertEquals("ready", out.readLine(), line);
    }

    /** {@code java -jar threadtime.jar attach PID options}: its exit status. */
    static int attach(String pid, String options) throws Exception {
        ChildJvm r = ChildJvm.run(null, List.of(), "-jar", jar(), "attach", pid, options);
        if (r.exit() != 0) {
            System.err.println("attach " + options + ": " + r);
        }
        return r.exit();
    }
}
