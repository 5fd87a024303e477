package io.threadtime;

import java.nio.file.Path;

/**
 * CPU time of virtual threads, which {@code ThreadMXBean} reports as -1.
 * <p>
 * The figures come from one of two agents this JAR carries (see
 * {@link #mechanism()}):
 * <ul>
 * <li>the {@code java.lang.instrument} agent, the JAR itself:
 * <pre>{@code
 * java -javaagent:threadtime.jar=mode=exact ...
 * }</pre>
 * It hooks {@code java.lang.VirtualThread}'s mount and unmount, and costs
 * the clock reads and a few stores into the thread's own account per mount
 * and unmount (see {@link #accountsInThreads()}). <b>On JDK 21 only</b>,
 * {@code -XX:+UnlockExperimentalVMOptions -XX:-DoJVMTIVirtualThreadTransitions}
 * switches off HotSpot's JVMTI transition path, which any
 * {@code -javaagent} otherwise pays for on every mount and unmount (see
 * {@link #transitionPathOff()}); never on JDK 24 and later, where under it
 * virtual threads that contend on a monitor deadlock;</li>
 * <li>the JVMTI agent, for JVMs where the hooks do not apply and for
 * attaching to a running JVM:
 * <pre>{@code
 * java -agentpath:$(java -cp threadtime.jar io.threadtime.VirtualThreadCpu)=mode=exact ...
 * }</pre>
 * (the class's {@code main} extracts it and prints its path; options
 * {@code mode=exact|mounted}, {@code events=on|off|empty}). It needs
 * HotSpot's transition path, and refuses to start without it.</li>
 * </ul>
 * Either way, at every mount the carrier's clock is noted and at every
 * unmount the difference is added to the virtual thread's own account, so a
 * thread's figure follows it across parks, sleeps, blocking I/O and moves
 * between carriers. This class looks for the agents once, when it is first
 * used.
 * <p>
 * {@link ThreadTimeMXBean} answers through here for a virtual current thread,
 * so its {@code getCurrentThreadCpuTime()} is real on a virtual thread while
 * an agent charges. For a platform thread every method answers what the
 * platform bean does (read through threadtime, so fast). Without an agent,
 * virtual threads get -1, as from the platform; so do all threads while CPU
 * time measurement is switched off in the platform bean.
 */
public final class VirtualThreadCpu {
    /** What the agent is doing in this JVM. */
    public enum Mode {
        /** The agent is not loaded: virtual threads read -1, as from the platform. */
        ABSENT,
        /** Loaded, but this JVM lacks JVMTI 21, the virtual-thread capability or
         * the mount events; the agent said which on stderr and stays out of the way. */
        PASSIVE,
        /** Loaded with {@code events=off} (the JVM runs with virtual-thread support
         * switched on for JVMTI) or {@code events=empty} (the mount events are also
         * delivered, to callbacks that do nothing), but nothing is charged: for
         * cost comparisons. */
        EVENTS_OFF,
        /** Charging each stretch on a carrier with the carrier's precise CPU clock:
         * a cycle-counter read per mount and unmount while the carrier was not
         * switched out (the {@code -javaagent}, see {@link #clock()}), one system
         * call where it was (always, with the JVMTI agent). */
        EXACT,
        /** Charging each stretch on a carrier with the cycle counter: a few ns per
         * mount and unmount, but it counts time mounted, including time the carrier
         * was descheduled or blocked while the thread was pinned. */
        MOUNTED,
        /** The {@code -javaagent}'s hooks are in for the event log's mount and
         * unmount markers only (probes with no {@code mode=}): nothing charged. */
        MARKERS;

        /** True when virtual threads are being charged. */
        public boolean charging() {
            return this == EXACT || this == MOUNTED;
        }

        /**
         * The mode an agent reported by name: both agents hand their mode to
         * this class as one of these constants' names (the JVMTI agent from
         * C, the {@code -javaagent} across its class loader), so this enum
         * is the one list of modes; {@link #PASSIVE} for a name it does not
         * know.
         */
        static Mode named(String name) {
            for (Mode m : values()) {
                if (m.name().equals(name)) {
                    return m;
                }
            }
            return PASSIVE;
        }
    }

    /** Which agent charges virtual threads. */
    public enum Mechanism {
        /** Neither agent is loaded. */
        NONE,
        /** The {@code java.lang.instrument} agent ({@code -javaagent:threadtime.jar}). */
        JAVAAGENT,
        /** The JVMTI agent ({@code -agentpath:libthreadtime_vthreads.so}). */
        JVMTI
    }

    /** Chosen once: a static final, so the JIT sees one implementation. */
    private static final VirtualThreadAccounts ACCOUNTS = VirtualThreadAccounts.chosen();

    private VirtualThreadCpu() {}

    /** What the agent is doing in this JVM. */
    public static Mode mode() {
        return ACCOUNTS.mode();
    }

    /** Which agent is loaded (and, if {@link #mode()} charges, charging). */
    public static Mechanism mechanism() {
        return ACCOUNTS.mechanism();
    }

    /**
     * True when HotSpot's JVMTI transition path for virtual threads is
     * switched off ({@code -XX:+UnlockExperimentalVMOptions
     * -XX:-DoJVMTIVirtualThreadTransitions}, for JDK 21 only: on JDK 24 and
     * later it deadlocks virtual threads that contend on a monitor): the
     * {@code -javaagent} then costs only its own work, and the JVMTI agent
     * cannot work (it refuses to start). False when it is on, or on a JVM
     * without that flag.
     */
    public static boolean transitionPathOff() {
        return Boolean.FALSE.equals(HotSpotFlags.transitionsOn());
    }

    /** How many times a hook of the {@code -javaagent} failed inside
     * {@code VirtualThread} (each failure is swallowed; the first is reported
     * on stderr); 0 with the JVMTI agent or none. */
    public static long hookFailures() {
        return ACCOUNTS.hookFailures();
    }

    /** The clock virtual threads are charged with: in exact mode the
     * carrier's precise CPU clock, "thread-cpu-fast (rseq+tsc)" where the
     * {@code -javaagent} reads it without a system call while the carrier was
     * not switched out ({@link ThreadTime#currentThreadCpuClock()}),
     * "thread-cpu (syscall: why)" where each read is a system call, and
     * "thread-cpu" from the JVMTI agent; in mounted mode "tsc" or "cntvct"
     * (the cycle counter), "monotonic-raw" (the JVMTI agent where the counter
     * is not trusted) or "monotonic" ({@code System.nanoTime()}: the
     * {@code -javaagent} there); "none" when nothing is charged. */
    public static String clock() {
        return ACCOUNTS.clock();
    }

    /**
     * CPU time of the calling thread, ns: {@link ThreadTimeMXBean#getCurrentThreadCpuTime()}.
     * For a virtual thread that is what the agent charged it since its first
     * mount (-1 if the agent is not charging, or if the thread was already
     * running when the agent attached and has not been mounted since).
     */
    public static long currentThreadCpuTime() {
        return ThreadTimeMXBean.getInstance().getCurrentThreadCpuTime();
    }

    /** The calling virtual thread's figure, for the bean. */
    static long currentVirtual() {
        return ACCOUNTS.self(Thread.currentThread());
    }

    /**
     * CPU time of {@code thread}, ns; -1 if it has not started or has ended, as
     * {@code ThreadMXBean.getThreadCpuTime(long)} answers. For another virtual
     * thread that is running, the figure includes its current stretch on its
     * carrier; one that has been started but has not run yet (the scheduler
     * has not mounted it) reads 0, with either agent and wherever the
     * accounts are; -1 for every virtual thread while nothing charges.
     * Reading another virtual thread costs a few microseconds: the JVM
     * briefly holds that thread's mount transitions.
     */
    public static long threadCpuTime(Thread thread) {
        ThreadTimeMXBean bean = ThreadTimeMXBean.getInstance();
        if (thread == Thread.currentThread()) {
            return bean.getCurrentThreadCpuTime();
        }
        if (!ThreadMap.isVirtual(thread)) {
            return bean.getThreadCpuTime(thread.getId());
        }
        if (!bean.isThreadCpuTimeEnabled() || !thread.isAlive()) {
            return -1;
        }
        return ACCOUNTS.other(thread);
    }

    /**
     * The calling thread's CPU time and, on a virtual thread, where its time
     * off a CPU went: {@link VirtualThreadTimes}, -1 for each figure not
     * known here (on a platform thread every figure but the CPU). While CPU
     * time measurement is switched off in the platform bean
     * ({@code setThreadCpuTimeEnabled(false)}) every figure is -1, the waits
     * too, as {@link #threadTimes(Thread)} answers for another thread.
     */
    public static VirtualThreadTimes currentThreadTimes() {
        Thread self = Thread.currentThread();
        if (!ThreadMap.isVirtual(self)) {
            return VirtualThreadTimes.cpuOnly(currentThreadCpuTime());
        }
        return ThreadTimeMXBean.getInstance().isThreadCpuTimeEnabled() ? ACCOUNTS.times(self) : VirtualThreadTimes.UNKNOWN;
    }

    /**
     * {@code thread}'s figures, as {@link #currentThreadTimes()} gives the
     * calling thread's: all -1 for a thread that has not started or has
     * ended, for a virtual thread while nothing charges, and for every
     * thread while CPU time measurement is switched off. Another running
     * virtual thread's waits, parks and pinned parks count up to their last
     * end (one under way is booked when it ends); its CPU time as
     * {@link #threadCpuTime(Thread)} reads it.
     */
    public static VirtualThreadTimes threadTimes(Thread thread) {
        if (thread == Thread.currentThread()) {
            return currentThreadTimes();
        }
        if (!ThreadMap.isVirtual(thread)) {
            return VirtualThreadTimes.cpuOnly(threadCpuTime(thread));
        }
        if (!ThreadTimeMXBean.getInstance().isThreadCpuTimeEnabled() || !thread.isAlive()) {
            return VirtualThreadTimes.UNKNOWN;
        }
        return ACCOUNTS.times(thread);
    }

    /** Bytes the agent's accounts occupy outside the threads (64 per live
     * virtual thread plus spares); 0 when nothing is charged, and when the
     * accounts are in the threads ({@link #accountsInThreads()}). */
    public static long accountMemoryBytes() {
        return ACCOUNTS.bytes();
    }

    /**
     * Accounts held now: one per virtual thread that has been mounted and has
     * not yet ended; 0 when nothing is charged, and when the accounts are in
     * the threads ({@link #accountsInThreads()}: there is nothing to hold). A count that keeps growing
     * while the number of live virtual threads does not is a leak. Takes the
     * locks the agents take only when a thread starts or ends (the JVMTI
     * agent: when a carrier's spare accounts run out).
     */
    public static long accountsInUse() {
        return ACCOUNTS.inUse();
    }

    /**
     * True when the {@code -javaagent} keeps each virtual thread's account in
     * the thread itself: ten fields it adds to the thread's continuation as
     * that class loads, so that a mount or unmount stores into an object the
     * carrier already holds, and an ended thread's account goes with it. False
     * with the JVMTI agent, and with the {@code -javaagent} when it was given
     * {@code accounts=table} or could not add the fields (a virtual thread was
     * started before it, by another agent's {@code premain}; it says so on
     * stderr): then the accounts are in a table keyed by thread id, which
     * {@link #accountsInUse()} and {@link #accountMemoryBytes()} describe.
     */
    public static boolean accountsInThreads() {
        return ACCOUNTS.inThreads();
    }

    /**
     * The agent library this JAR carries, extracted next to the binding's own
     * library under a name without version or build,
     * {@code <java.io.tmpdir>/threadtime-<user>/libthreadtime_vthreads.so},
     * which stays the same across upgrades (each extraction brings it up to
     * this JAR's content); give it to {@code -agentpath}, or to
     * {@code jcmd <pid> JVMTI.agent_load}. Loading it
     * into this JVM after start-up (Attach API) needs
     * {@code -Djdk.attach.allowAttachSelf=true}, and on JDK 21+
     * {@code -XX:+EnableDynamicAgentLoading} to do so without a warning; a
     * virtual thread is then charged from its next mount, and this class, if
     * already used, keeps the mode it saw first.
     *
     * @throws UnsatisfiedLinkError if this is not linux-x86_64 or linux-aarch64, or the JAR lacks the agent
     * @throws java.io.UncheckedIOException if it cannot be extracted
     */
    public static Path agentPath() {
        String file = "lib" + NativeLibrary.AGENT_NAME + ".so";
        String otherwise = "give that file's path to -agentpath";
        byte[] bytes = NativeLibrary.bundled(file, otherwise);
        return NativeLibrary.extracting(file, otherwise, dir -> {
            dir.keep(); // for a JVM started later
            // the versioned copies earlier JARs made go
            return dir.put(file, bytes, "lib" + NativeLibrary.AGENT_NAME, ".so");
        });
    }

    /** Prints {@link #agentPath()}, for {@code -agentpath:$(...)} on a command line. */
    public static void main(String[] args) {
        System.out.println(agentPath());
    }
}
