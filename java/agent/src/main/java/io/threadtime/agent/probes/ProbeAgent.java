package io.threadtime.agent.probes;

import io.threadtime.AgentAccess;
import io.threadtime.EventLog;
import io.threadtime.ThreadTimeException;
import io.threadtime.VirtualThreadCpu;
import io.threadtime.agent.AgentLog;
import io.threadtime.agent.AgentOptions;
import io.threadtime.agent.Main;
import io.threadtime.agent.probes.hooks.ProbeConfig;
import io.threadtime.agent.probes.hooks.Probes;
import java.lang.instrument.Instrumentation;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The agent's probes and its event log: puts the probe transformer in,
 * retransforms the loaded classes the filters match, runs the log and writes
 * it at exit. Everything here runs at start-up, at attach or at exit; the
 * probes themselves only call {@link Probes}.
 */
public final class ProbeAgent {
    private static final ProbeRegistry REGISTRY = new ProbeRegistry();
    private static ProbeTransformer transformer;
    private static Instrumentation inst;
    private static Boolean cpu;
    private static volatile Path out;
    private static boolean exitHook;

    private ProbeAgent() {}

    /** Where the trace goes at exit unless out= says otherwise. */
    static Path defaultOut() {
        return Path.of("threadtime-" + ProcessHandle.current().pid() + ".ttrace").toAbsolutePath();
    }

    /**
     * The log started (if it is not running), the probes of these options in,
     * and the exit dump set up. The boot classes must be on the boot class
     * path already.
     */
    public static synchronized void start(AgentOptions o, Instrumentation instrumentation, boolean atStart) {
        inst = instrumentation;
        if (!o.filters.isEmpty()) {
            if (cpu != null && cpu != o.cpu) {
                throw new IllegalArgumentException("threadtime: probe.cpu=" + (o.cpu ? "on" : "off")
                        + " differs from the probes already in (probe.cpu is fixed by the first probes)");
            }
            if (cpu == null) {
                install(o.cpu, atStart);
            }
        }
        startLog(o.ring);
        if (atStart) {
            AgentAccess.nameCurrent(); // main: premain runs on it
        }
        if (o.out != null) {
            out = o.out;
        }
        if (!exitHook) {
            exitHook = true;
            Runtime.getRuntime().addShutdownHook(new Thread(ProbeAgent::atExit, "threadtime-exit-dump"));
        }
        if (!o.filters.isEmpty()) {
            REGISTRY.add(o.filters);
            if (transformer == null) {
                transformer = new ProbeTransformer(REGISTRY, inst);
                inst.addTransformer(transformer, true);
            }
            retransform(c -> REGISTRY.matchesLoaded(c));
        }
    }

    /** Binds the probe calls for {@link Probes} and initializes it. */
    private static void install(boolean withCpu, boolean atStart) {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            String suffix = withCpu ? "Cpu" : "";
            // The calling thread's name goes into the log at its first probe
            // (a method's begin or a line's event).
            MethodHandle first = AgentAccess.firstNames();
            MethodHandle begin = MethodHandles.foldArguments(AgentAccess.backend("probeBegin" + suffix, MethodType.methodType(long.class, int.class)), first);
            MethodHandle end = AgentAccess.backend("probeEnd" + suffix, MethodType.methodType(void.class, int.class, long.class, boolean.class));
            MethodHandle line = MethodHandles.foldArguments(AgentAccess.backend("event", MethodType.methodType(void.class, int.class)), first);
            if (withCpu) {
                installVirtual(lookup);
            }
            ProbeConfig.install(begin, end, line);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("threadtime: the probe calls cannot be bound", e);
        }
        cpu = withCpu;
        // Initialize and link Probes now, not inside the first probed method
        // (which may be one the class loader itself runs). end(.., 0, ..)
        // records nothing; begin does only while the log runs, so it is
        // called only at start-up, before this agent starts the log.
        if (atStart) {
            Probes.end(0, Probes.begin(0), false);
        } else {
            Probes.end(0, 0, false);
        }
    }

    /**
     * probe.cpu=on where virtual threads are charged (mode=exact or mounted,
     * or the JVMTI agent): their probed calls take their CPU from their own
     * account ({@link Probes}), and the probes must stay out of what that
     * path runs. Elsewhere (JDK 17, no charging agent) nothing changes:
     * their calls are counted as not attributable, as before.
     */
    private static void installVirtual(MethodHandles.Lookup lookup) throws ReflectiveOperationException {
        if (Runtime.version().feature() < 21 || !VirtualThreadCpu.mode().charging()) {
            return;
        }
        MethodHandle isVirtual = lookup.findVirtual(Thread.class, "isVirtual", MethodType.methodType(boolean.class));
        MethodHandle beginPlain = AgentAccess.backend("probeBegin", MethodType.methodType(long.class, int.class));
        MethodHandle account = AgentAccess.currentVirtual();
        MethodHandle endMeasured = AgentAccess.backend("probeEndMeasured", MethodType.methodType(
                void.class, int.class, long.class, long.class, int.class, boolean.class));
        int measure = AgentAccess.probeMeasure(VirtualThreadCpu.mode() == VirtualThreadCpu.Mode.EXACT);
        ProbeConfig.installVirtual(isVirtual, beginPlain, account, endMeasured, measure);
        REGISTRY.guardVirtualPath();
    }

    /** Starts the log unless the program (or an earlier attach) runs it. */
    private static void startLog(int ring) {
        if (AgentAccess.agentRunsLog()) { // an earlier attach (or the start) of this agent runs it
            if (ring != 0) {
                AgentLog.warn("the event log already runs with the ring it was started with; ring=" + ring
                        + " not applied");
            }
            return;
        }
        try {
            EventLog.start(new EventLog.Options(ring, null, null, false));
            AgentAccess.agentRunsLog(AgentLog::info);
        } catch (ThreadTimeException e) {
            if (e.errno() != 114) { // EALREADY: the program's own log, or ours from before
                throw e;
            }
            if (ring != 0 && !AgentAccess.agentRunsLog()) {
                AgentLog.warn("the event log was already running; ring=" + ring + " not applied");
            }
        }
    }

    /** Retransforms the loaded classes that pass the test, one at a time (one failure spoils no other). */
    private static int retransform(java.util.function.Predicate<Class<?>> which) {
        int n = 0;
        for (Class<?> c : inst.getAllLoadedClasses()) {
            if (c.isArray() || c.isPrimitive() || !which.test(c)) {
                continue;
            }
            if (!inst.isModifiableClass(c)) {
                AgentLog.warn("class " + c.getName() + " cannot be retransformed by this JVM; left without probes");
                continue;
            }
            try {
                inst.retransformClasses(c);
                n++;
            } catch (Throwable t) {
                AgentLog.warn("could not retransform " + c.getName() + " (" + t + "); left without probes");
            }
        }
        return n;
    }

    /** probe=off: the transformer out and every class it changed back to its bytecode without probes. */
    public static synchronized void removeProbes() {
        if (transformer == null) {
            AgentLog.info("probe=off: no probes are in");
            return;
        }
        inst.removeTransformer(transformer);
        transformer = null;
        Set<String> changed = Set.copyOf(REGISTRY.clear());
        int n = retransform(c -> changed.contains(c.getName().replace('.', '/')));
        AgentLog.info("probes removed: " + AgentLog.count(n, "class") + " back to " + (n == 1 ? "its" : "their")
                + " own bytecode");
    }

    /** The filters that match nothing among the classes loaded now, a line each. */
    public static synchronized List<String> unmatched() {
        return inst == null ? List.of() : REGISTRY.unmatched(inst.getAllLoadedClasses());
    }

    /** dump=PATH at attach: the trace now. */
    public static void dumpNow(Path path) {
        EventLog.dump(path);
        AgentLog.info("trace written to " + path);
    }

    /** The exit dump, and the filters that matched nothing. */
    private static void atExit() {
        try {
            if (inst != null) {
                for (String line : REGISTRY.unmatched(inst.getAllLoadedClasses())) {
                    AgentLog.warn(line);
                }
            }
            if (Probes.failures() > 0) {
                AgentLog.warn(AgentLog.count(Probes.failures(), "probe call") + " failed and recorded nothing");
            }
            Path target = out != null ? out : defaultOut();
            List<String> tried = new ArrayList<>();
            for (Path p : List.of(target, Path.of(System.getProperty("java.io.tmpdir"),
                    "threadtime-" + ProcessHandle.current().pid() + ".ttrace"))) {
                try {
                    EventLog.dump(p);
                    AgentLog.warn((tried.isEmpty() ? "" : "could not write " + String.join("; ", tried) + "; ")
                            + "trace written to " + p + " (" + AgentLog.count(REGISTRY.probes(), "probe") + "; read it with: "
                            + Main.commandLine() + " dump --summary " + p + ")");
                    return;
                } catch (ThreadTimeException e) {
                    tried.add(p + " (" + e.getMessage() + ")");
                }
            }
            AgentLog.warn("could not write the trace: " + String.join("; ", tried));
        } catch (Throwable t) {
            AgentLog.warn("the exit dump failed (" + t + ")");
        }
    }
}
