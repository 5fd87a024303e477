package io.threadtime.otel;

import io.threadtime.ThreadTime;
import io.threadtime.ThreadTimeException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The run-queue wait of this process's threads by group of thread names, for
 * a counter read at each collection: every thread the kernel lists in
 * {@code /proc/self/task} (the JVM's own, such as its GC and compiler
 * threads, included), its wait read with {@link ThreadTime#threadSched(int)}
 * (two small {@code /proc} files, ~10 us a thread), grouped by
 * {@link #groupThreadName}. Shared by the OpenTelemetry metrics and the
 * Micrometer binder, so both report the same figures; so are the names of
 * those meters and of the cgroup's throttling.
 * <p>
 * A thread is named by the kernel's name for it ({@code comm}), which
 * HotSpot sets to the first 15 bytes of the Java name of every thread it
 * starts; where those 15 bytes are the start of the names of live platform
 * threads that all fall in one group, that group is the name (so
 * {@code ForkJoinPool-1-worker-12}, whose kernel name is
 * {@code ForkJoinPool-1-}, counts as {@code ForkJoinPool-1-worker}).
 * <p>
 * Each collection adds to a thread's group what the thread waited since the
 * last one, so a thread renamed into another group leaves what it waited
 * before in the old group and is counted once: the groups together never
 * exceed what the threads waited. A series never goes back. A thread that
 * exits keeps in its group what it waited up to the last collection; what
 * it waited after that is not counted. A thread whose read fails otherwise
 * than by its exit (EACCES, EIO, a file that did not parse) is left out of
 * that collection with the figure it had, and counted in
 * {@link #skippedReads()} (the meter {@value #THREAD_RUN_WAIT_SKIPPED}); the
 * first such failure is logged once.
 */
public final class RunWaitSampler {
    /** The meters' names, the same in the OpenTelemetry and Micrometer forms and in threadtime's Python module. */
    public static final String THREAD_RUN_WAIT = "threadtime.thread.run_wait.time";
    public static final String CGROUP_THROTTLED = "threadtime.cgroup.cpu.throttled.time";
    public static final String CGROUP_THROTTLED_PERIODS = "threadtime.cgroup.cpu.throttled.periods";
    /** Reads that failed; threadtime's Python module counts its own under the same name. */
    public static final String THREAD_RUN_WAIT_SKIPPED = "threadtime.thread.run_wait.skipped";

    /** "pool-1-thread-3" -> "pool-1-thread": a number after the last - or _,
     *  and what follows it in parentheses (a name Python's threading adds). */
    private static final Pattern NUMBERED = Pattern.compile("^(.+?)[-_][0-9]+( \\(.*\\))?$");
    /** The most bytes of a name the kernel keeps (TASK_COMM_LEN less its NUL). */
    private static final int COMM_BYTES = 15;
    /** The errno of a read of a thread that has exited. */
    private static final int ESRCH = 3;

    /** Reads one thread's run-queue wait, ns, by native id (ThreadTime.threadSched outside tests). */
    interface WaitReader {
        long runWaitNanos(int tid) throws IOException;
    }

    private final WaitReader reader;
    /** Reads that failed otherwise than by the thread's exit (guarded by this). */
    private long skipped;
    /** tid -> {group, wait ns} at the last collection. */
    private Map<Integer, Seen> live = new HashMap<>();
    /** group -> wait counted in it so far, ns. */
    private final Map<String, Long> totals = new TreeMap<>();

    private record Seen(String group, long waitNanos) {}

    /** A sampler reading each thread with {@link ThreadTime#threadSched(int)}. */
    public RunWaitSampler() {
        this(tid -> ThreadTime.threadSched(tid).runWaitNanos());
    }

    RunWaitSampler(WaitReader reader) {
        this.reader = reader;
    }

    /**
     * The series a thread's figures are counted in: its name without the
     * number that tells a pool's threads apart, as threadtime's Python
     * module groups them ({@code threadtime.otel.group_thread_name}).
     */
    public static String groupThreadName(String name) {
        Matcher m = NUMBERED.matcher(name);
        return m.matches() ? m.group(1) + (m.group(2) == null ? "" : m.group(2)) : name;
    }

    /**
     * Whether this kernel keeps a run-queue wait per thread (schedstat): a
     * thread of this process, named by its native id as a collection names
     * it, answers {@link ThreadTime#threadSched(int)}. It does not depend on
     * the calling thread, which may be a virtual one.
     */
    public static boolean available() {
        try {
            for (Path task : tasks()) {
                try {
                    ThreadTime.threadSched(tid(task));
                    return true;
                } catch (ThreadTimeException e) {
                    if (e.errno() != ESRCH) {
                        return false;
                    }
                }
            }
            return false;
        } catch (IOException | RuntimeException | LinkageError e) {
            return false;
        }
    }

    /** Whether this process's cgroup's CPU figures can be read
     *  ({@link ThreadTime#cgroupCpu()}): where not, no series rather than zeros. */
    public static boolean cgroupVisible() {
        try {
            ThreadTime.cgroupCpu();
            return true;
        } catch (RuntimeException | LinkageError e) {
            return false;
        }
    }

    /** {group: wait ns} now, sorted by group; each never below what it was at the last call. */
    public synchronized Map<String, Long> waits() {
        Map<Integer, Seen> now = sample();
        if (now == null) {
            return new TreeMap<>(totals);
        }
        now.forEach((tid, seen) -> {
            Seen before = live.get(tid);
            // The same thread: what it waited since, in the group it is in now.
            // New, or its tid reused by a thread that waited less: all of it.
            long since = before != null && seen.waitNanos >= before.waitNanos
                    ? seen.waitNanos - before.waitNanos : seen.waitNanos;
            totals.merge(seen.group, since, Long::sum);
        });
        live = now;
        return new TreeMap<>(totals);
    }

    /**
     * How many times a thread's read failed at a collection otherwise than
     * by the thread's exit (EACCES, EIO, a file that did not parse), so that
     * it was left out of that collection with the figure it had; a listing
     * of /proc/self/task that failed counts once, every thread then keeping
     * its figure.
     */
    public synchronized long skippedReads() {
        return skipped;
    }

    /** Every live thread's group and wait now; null when /proc/self/task cannot be listed. */
    private Map<Integer, Seen> sample() {
        Map<String, String> groups = javaGroups();
        Map<Integer, Seen> out = new HashMap<>();
        List<Path> tasks;
        try {
            tasks = tasks();
        } catch (IOException e) {
            skip(-1, e);
            return null;
        }
        for (Path task : tasks) {
            int tid = tid(task);
            try {
                String comm = new String(Files.readAllBytes(task.resolve("comm")), StandardCharsets.UTF_8)
                        .stripTrailing();
                long wait = reader.runWaitNanos(tid);
                String group = groups.get(comm);
                out.put(tid, new Seen(group != null ? group : groupThreadName(comm), wait));
            } catch (NoSuchFileException e) {
                // exited since the listing
            } catch (ThreadTimeException e) {
                if (e.errno() != ESRCH) { // ESRCH: exited since the listing
                    skipKeeping(tid, e, out);
                }
            } catch (IOException e) {
                skipKeeping(tid, e, out);
            }
        }
        return out;
    }

    /** Thread tid could not be read: it keeps, for this collection, the figure it had at the last one. */
    private void skipKeeping(int tid, Exception why, Map<Integer, Seen> out) {
        Seen last = live.get(tid);
        if (last != null) {
            out.put(tid, last);
        }
        skip(tid, why);
    }

    /** Counts a skipped read (tid -1: the whole listing); the first is logged, once for this sampler. */
    private void skip(int tid, Exception why) {
        if (skipped++ == 0) {
            System.getLogger("io.threadtime.otel").log(System.Logger.Level.WARNING, "threadtime: the run-queue wait of "
                    + (tid < 0 ? "every thread (/proc/self/task)" : "thread " + tid) + " could not be read; skipped"
                    + " for this collection, as any later failure is (counted in " + THREAD_RUN_WAIT_SKIPPED + ")", why);
        }
    }

    /** This process's threads now, as /proc/self/task lists them. */
    private static List<Path> tasks() throws IOException {
        try (Stream<Path> s = Files.list(Path.of("/proc/self/task"))) {
            return s.toList();
        }
    }

    private static int tid(Path task) {
        return Integer.parseInt(task.getFileName().toString());
    }

    /** Kernel name -> group of the live platform threads whose names start
     *  with it, where they all fall in one group. */
    private static Map<String, String> javaGroups() {
        Map<String, String> out = new HashMap<>();
        Map<String, Boolean> clash = new HashMap<>();
        for (Thread t : ThreadSampler.platformThreads()) {
            String name = t.getName();
            byte[] utf8 = name.getBytes(StandardCharsets.UTF_8);
            String comm = utf8.length <= COMM_BYTES ? name
                    : new String(Arrays.copyOf(utf8, COMM_BYTES), StandardCharsets.UTF_8);
            String group = groupThreadName(name);
            String had = out.putIfAbsent(comm, group);
            if (had != null && !had.equals(group)) {
                clash.put(comm, true);
            }
        }
        clash.keySet().forEach(out::remove);
        return out;
    }
}
