package io.threadtime;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The kernel's own figures, read by the tests from /proc and the cgroup
 * filesystem with their own parsing, never through threadtime: the truth the
 * scheduler-account tests hold threadtime's answers to. Public, for the
 * OpenTelemetry and Micrometer modules' tests (the test JAR).
 */
public final class KernelFiles {
    private KernelFiles() {}

    /** The calling thread's native id: /proc/thread-self links to "PID/task/TID". */
    public static int currentTid() {
        try {
            Path link = Files.readSymbolicLink(Path.of("/proc/thread-self"));
            return Integer.parseInt(link.getFileName().toString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** {on CPU ns, run-queue wait ns, timeslices} of thread tid of this process. */
    public static long[] schedstat(int tid) {
        String[] f = read("/proc/self/task/" + tid + "/schedstat").trim().split(" ");
        return new long[] {Long.parseLong(f[0]), Long.parseLong(f[1]), Long.parseLong(f[2])};
    }

    /** {voluntary, involuntary} context switches of thread tid of this process. */
    public static long[] switches(int tid) {
        Map<String, String> status = new HashMap<>();
        for (String line : read("/proc/self/task/" + tid + "/status").split("\n")) {
            int colon = line.indexOf(':');
            if (colon > 0) {
                status.put(line.substring(0, colon), line.substring(colon + 1).trim());
            }
        }
        return new long[] {Long.parseLong(status.get("voluntary_ctxt_switches")),
            Long.parseLong(status.get("nonvoluntary_ctxt_switches"))};
    }

    /** Waits (up to a minute) until thread tid of this process is blocked: its timeslices stop moving across 20 ms. */
    public static void awaitBlocked(int tid) throws InterruptedException {
        for (int tries = 0; tries < 3000; tries++) {
            long before = schedstat(tid)[2];
            Thread.sleep(20);
            if (schedstat(tid)[2] == before) {
                return;
            }
        }
        throw new AssertionError("thread " + tid + " never blocked");
    }

    /** command run under taskset on the first CPU this process may use: every thread of it on that CPU. */
    public static List<String> onOneCpu(List<String> command) {
        List<String> out = new ArrayList<>(List.of("taskset", "-c", firstCpu()));
        out.addAll(command);
        return out;
    }

    /** Pins thread tid of this process to the first CPU this process may use (taskset -p). */
    public static void pinToOneCpu(int tid) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("taskset", "-p", "-c", firstCpu(), Integer.toString(tid))
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (p.waitFor() != 0) {
            throw new AssertionError("taskset could not pin thread " + tid + ": " + out);
        }
    }

    /** The first CPU in this process's allowed list (Cpus_allowed_list of /proc/self/status). */
    private static String firstCpu() {
        String allowed = Arrays.stream(read("/proc/self/status").split("\n"))
                .filter(l -> l.startsWith("Cpus_allowed_list:")).findFirst().orElseThrow();
        return allowed.substring(allowed.indexOf(':') + 1).trim().split("[,-]")[0];
    }

    /** The native ids of this process's threads now. */
    public static List<Integer> tasks() {
        List<Integer> out = new ArrayList<>();
        try (var entries = Files.list(Path.of("/proc/self/task"))) {
            entries.forEach(p -> out.add(Integer.parseInt(p.getFileName().toString())));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out;
    }

    /**
     * This process's cgroup's cpu.stat at the usual mount points (v1 at
     * /sys/fs/cgroup/cpu, v2 at /sys/fs/cgroup), found by /proc/self/cgroup;
     * null where neither is there.
     */
    public static Path cpuStatPath() {
        String[] lines = read("/proc/self/cgroup").split("\n");
        for (String line : lines) {
            String[] f = line.split(":", 3);
            if (f.length == 3 && List.of(f[1].split(",")).contains("cpu")) {
                Path p = Path.of("/sys/fs/cgroup/cpu" + stripSlash(f[2]) + "/cpu.stat");
                if (Files.exists(p)) {
                    return p;
                }
            }
        }
        for (String line : lines) {
            String[] f = line.split(":", 3);
            if (f.length == 3 && f[0].equals("0") && f[1].isEmpty()) {
                Path p = Path.of("/sys/fs/cgroup" + stripSlash(f[2]) + "/cpu.stat");
                if (Files.exists(p)) {
                    return p;
                }
            }
        }
        return null;
    }

    /** {throttled periods, throttled ns} from a cpu.stat file (v1 throttled_time, v2 throttled_usec). */
    public static long[] cpuStat(Path path) {
        Map<String, Long> f = new HashMap<>();
        for (String line : read(path.toString()).split("\n")) {
            String[] kv = line.trim().split(" ");
            if (kv.length == 2) {
                f.put(kv[0], Long.parseLong(kv[1]));
            }
        }
        long ns = f.containsKey("throttled_usec") ? f.get("throttled_usec") * 1000 : f.get("throttled_time");
        return new long[] {f.get("nr_throttled"), ns};
    }

    private static String stripSlash(String path) {
        return path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
    }

    private static String read(String path) {
        try {
            return Files.readString(Path.of(path));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
