package io.threadtime.otel;

import io.threadtime.CpuTimes;
import io.threadtime.ThreadTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * What the metrics read at each collection: the CPU time of platform threads
 * whose name matches a pattern, and the CPU time of the virtual-thread
 * scheduler's carrier threads. Shared by the OpenTelemetry metrics and the
 * Micrometer binder, so both report the same figures.
 * <p>
 * Threads are found through the root thread group (platform threads only;
 * virtual threads are in no group), a few microseconds per hundred threads.
 * Each read goes through threadtime: native speed for threads that are
 * mapped, the platform bean for the others (see {@link ThreadTime#register()}).
 */
public final class ThreadSampler {
    /** The JDK's class of the default scheduler's carrier threads (JDK 21-25). */
    static final String CARRIER_CLASS = "jdk.internal.misc.CarrierThread";

    private final Pattern names;
    /** Carriers seen at the last collection: thread id -> CPU ns then. */
    private final Map<Long, Long> carrierSeen = new HashMap<>();
    private long carrierSum;

    /**
     * @param names platform threads whose whole name matches this pattern get
     *              a per-thread figure; null for none (the default, since
     *              each thread is a time series)
     */
    public ThreadSampler(Pattern names) {
        this.names = names;
    }

    /** The per-thread pattern, or null. */
    public Pattern pattern() {
        return names;
    }

    /** One platform thread's split at a collection. */
    public static final class ThreadCpu {
        public final String name;
        public final long id;
        public final CpuTimes times;

        ThreadCpu(String name, long id, CpuTimes times) {
            this.name = name;
            this.id = id;
            this.times = times;
        }
    }

    /** The live platform threads whose name matches the pattern, with their
     * consistent CPU split; empty without a pattern. */
    public List<ThreadCpu> threads() {
        List<ThreadCpu> out = new ArrayList<>();
        if (names == null) {
            return out;
        }
        for (Thread t : platformThreads()) {
            String name = t.getName();
            if (names.matcher(name).matches()) {
                Optional<CpuTimes> times = ThreadTime.threadTimes(t);
                times.ifPresent(c -> out.add(new ThreadCpu(name, t.getId(), c)));
            }
        }
        return out;
    }

    /**
     * CPU time of the virtual-thread scheduler's carriers, ns, cumulative
     * from this sampler's first call: each call adds what every live carrier
     * spent since the previous call (a carrier's first sighting adds all it
     * spent so far). What a carrier spends between the last call and its exit
     * is missed; carriers live as long as they are busy, so that is an idle
     * carrier's last moments.
     */
    public synchronized long carrierNanos() {
        Map<Long, Long> now = new HashMap<>();
        for (Thread t : platformThreads()) {
            if (t.getClass().getName().equals(CARRIER_CLASS)) {
                long ns = ThreadTime.threadCpuTime(t);
                if (ns >= 0) {
                    now.put(t.getId(), ns);
                }
            }
        }
        for (Map.Entry<Long, Long> e : now.entrySet()) {
            long before = carrierSeen.getOrDefault(e.getKey(), 0L);
            carrierSum += Math.max(0, e.getValue() - before);
        }
        carrierSeen.clear();
        carrierSeen.putAll(now);
        return carrierSum;
    }

    /** Every live platform thread, from the root thread group. */
    static List<Thread> platformThreads() {
        ThreadGroup root = Thread.currentThread().getThreadGroup();
        while (root.getParent() != null) {
            root = root.getParent();
        }
        Thread[] all = new Thread[root.activeCount() + 16];
        int n;
        while ((n = root.enumerate(all, true)) == all.length) {
            all = new Thread[all.length * 2]; // more threads started since activeCount()
        }
        return Arrays.asList(all).subList(0, n);
    }
}
