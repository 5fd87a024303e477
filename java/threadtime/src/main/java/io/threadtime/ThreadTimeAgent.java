package io.threadtime;

import io.threadtime.boot.ProbeConfig;
import io.threadtime.boot.Probes;
import io.threadtime.boot.VtConfig;
import io.threadtime.boot.VtHooks;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.lang.instrument.Instrumentation;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Enumeration;
import java.util.Map;
import java.util.Set;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.jar.JarOutputStream;

/**
 * The {@code java.lang.instrument} agent: {@code -javaagent:threadtime.jar}
 * with options {@code mode=exact|mounted}, {@code events=on|off} and
 * {@code accounts=threads|table}, and the
 * probes' {@code probe=}, {@code probes=@FILE}, {@code probe.cpu=},
 * {@code out=} and {@code ring=} (see {@link ProbeAgent}), and
 * {@code fastclock=on|off} (see {@link FastClock}), comma-separated.
 * It puts hooks into {@code java.lang.VirtualThread} (see
 * {@link VirtualThreadTransformer}) that charge each virtual thread the
 * carrier's CPU clock (exact) or the time it was mounted (mounted) in
 * accounts it adds to the threads (see {@link ContinuationFields}), through
 * the hooks of {@code io.threadtime.boot}, which it appends to the boot class
 * path so that {@code java.base} can call them. {@link VirtualThreadCpu}
 * answers from them.
 * <p>
 * A wrong option stops the JVM with a message. Anything else that keeps the
 * hooks out (a JDK without virtual threads, a {@code VirtualThread} of
 * another shape, the JVMTI agent already charging) is one line on stderr
 * starting {@code threadtime:}, and the JVM runs on as without the agent.
 */
public final class ThreadTimeAgent {
    /** HotSpot's experimental flag that routes every mount and unmount through
     * JVMTI's transition code when any JVMTI environment exists. */
    static final String TRANSITIONS_FLAG = "DoJVMTIVirtualThreadTransitions";
    /** JDK 24 and later let a virtual thread unmount while it holds or waits
     * for a monitor (JEP 491), and there the flag above hangs such threads. */
    static final boolean MONITORS_UNMOUNT = Runtime.version().feature() >= 24;
    static final String FLAG_HANG = "virtual threads that contend on a monitor can deadlock "
            + "(every run of jvmti/bench/flag_hang.sh on JDK 25, with no agent at all)";
    static final String OPTIONS_HELP = "expected mode=exact|mounted, events=on|off, accounts=threads|table, "
            + "probe=FILTER[;FILTER...], "
            + "probes=@FILE, probe.cpu=on|off, out=PATH, ring=N, fastclock=on|off";
    static final String ATTACH_HELP = "expected probe=FILTER[;FILTER...], probes=@FILE, probe=off, probe.cpu=on|off, "
            + "out=PATH, ring=N, dump=PATH";

    private ThreadTimeAgent() {}

    /** {@code -javaagent:threadtime.jar[=options]}. */
    public static void premain(String options, Instrumentation inst) {
        Options o = Options.parse(options, false);
        start(o, inst);
    }

    /**
     * Loaded into a running JVM through the Attach API
     * ({@code threadtime attach PID options}): adds probes ({@code probe=},
     * {@code probes=}), takes them all out again ({@code probe=off}), writes
     * the trace now ({@code dump=PATH}). A wrong option fails the attach with
     * the message and changes nothing.
     */
    public static void agentmain(String options, Instrumentation inst) {
        Options o = Options.parse(options, true);
        if (o.runsLog()) {
            // bootClasses first: it must find ProbeConfig not yet loaded here
            if (!bootClasses(inst)) {
                throw new IllegalStateException("threadtime: the probe classes could not be put on the boot class path");
            }
            ProbeAgent.start(o, inst, false);
        }
        if (o.probesOff) {
            ProbeAgent.removeProbes();
        }
        if (o.dump != null) {
            ProbeAgent.dumpNow(o.dump);
        }
    }

    /** The parsed options; a wrong one throws with the message users see. */
    static final class Options {
        boolean exact = true;
        boolean modeGiven;
        boolean hooks = true;
        boolean table;
        final List<ProbeFilter> filters = new ArrayList<>();
        boolean cpu;
        Path out;
        int ring;
        boolean probesOff;
        Path dump;
        Boolean fastClock; // fastclock=: null when not given

        /** Whether the agent runs the event log (and writes it at exit). */
        boolean runsLog() {
            return !filters.isEmpty() || out != null || ring != 0;
        }

        static Options parse(String text, boolean attach) {
            Options o = new Options();
            if (text == null || text.isEmpty()) {
                if (attach) {
                    throw new IllegalArgumentException("threadtime: no options (" + ATTACH_HELP + ")");
                }
                return o;
            }
            Set<String> seen = new HashSet<>();
            int pos = 0;
            for (String item : text.split(",", -1)) {
                int at = pos + 1; // 1-based, as an editor counts
                pos += item.length() + 1;
                int eq = item.indexOf('=');
                String key = eq < 0 ? item : item.substring(0, eq);
                String value = eq < 0 ? "" : item.substring(eq + 1);
                boolean known = eq > 0 && (attach ? ATTACH_KEYS : START_KEYS).contains(key);
                if (!known || !seen.add(key)) {
                    String help = attach && START_KEYS.contains(key) && !ATTACH_KEYS.contains(key)
                            ? "mode=, events= and accounts= work only at start (-javaagent): the VirtualThread hooks "
                                    + "go in then"
                            : !attach && ATTACH_KEYS.contains(key) && !START_KEYS.contains(key)
                                    ? key + "= works only when attaching to a running JVM"
                                    : (attach ? ATTACH_HELP : OPTIONS_HELP) + ", each at most once";
                    throw new IllegalArgumentException(where(item, text, at) + " (" + help + ")");
                }
                try {
                    o.set(key, value, at + key.length() + 1, attach);
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException(where(item, text, at) + ": " + e.getMessage());
                }
            }
            String conflict = null;
            if (!o.hooks && o.runsLog()) {
                conflict = "events=off leaves VirtualThread without the hooks that write the log's virtual-thread markers; "
                        + "drop it, or drop probe=/probes=/out=/ring=";
            } else if (seen.contains("probe.cpu") && o.filters.isEmpty()) {
                conflict = "probe.cpu= needs probe= or probes=";
            } else if (o.probesOff && (seen.contains("probes") || seen.contains("probe.cpu"))) {
                conflict = "probe=off takes every probe out; it cannot come with probes= or probe.cpu=";
            }
            if (conflict != null) {
                throw new IllegalArgumentException("threadtime: conflicting options in '" + text + "': " + conflict);
            }
            return o;
        }

        /** The start of every option error, worded as the JVMTI agent words it (issue 11). */
        private static String where(String item, String text, int at) {
            return "threadtime: unknown or conflicting option '" + item + "' in '" + text + "' at character " + at;
        }

        private static final Set<String> START_KEYS = Set.of("mode", "events", "accounts", "probe", "probes", "probe.cpu",
                "out", "ring", "fastclock");
        private static final Set<String> ATTACH_KEYS = Set.of("probe", "probes", "probe.cpu", "out", "ring", "dump");

        /** One option's value; column is where the value starts in the option text. */
        private void set(String key, String value, int column, boolean attach) {
            switch (key) {
                case "mode":
                    exact = value.equals("exact");
                    modeGiven = true;
                    if (!exact && !value.equals("mounted")) {
                        throw new IllegalArgumentException("expected exact or mounted");
                    }
                    break;
                case "events":
                    hooks = value.equals("on");
                    if (!hooks && !value.equals("off")) {
                        throw new IllegalArgumentException("expected on or off");
                    }
                    break;
                case "accounts":
                    table = value.equals("table");
                    if (!table && !value.equals("threads")) {
                        throw new IllegalArgumentException("expected threads or table");
                    }
                    break;
                case "probe.cpu":
                    cpu = value.equals("on");
                    if (!cpu && !value.equals("off")) {
                        throw new IllegalArgumentException("expected on or off");
                    }
                    break;
                case "probe":
                    if (value.equals("off")) {
                        if (!attach) {
                            throw new IllegalArgumentException("probe=off takes probes out of a running JVM (attach)");
                        }
                        probesOff = true;
                        break;
                    }
                    int c = column;
                    for (String f : value.split(";", -1)) {
                        try {
                            filters.add(ProbeFilter.parse(f));
                        } catch (IllegalArgumentException e) {
                            throw new IllegalArgumentException("filter '" + f + "' at character " + c + ": " + e.getMessage());
                        }
                        c += f.length() + 1;
                    }
                    break;
                case "probes":
                    filters.addAll(readFilters(value));
                    break;
                case "out":
                    out = writablePath(value);
                    break;
                case "dump":
                    dump = writablePath(value);
                    break;
                case "ring":
                    try {
                        ring = Integer.parseInt(value);
                    } catch (NumberFormatException e) {
                        ring = -1;
                    }
                    if (ring < 16 || ring > (1 << 23)) {
                        throw new IllegalArgumentException("expected records per thread ring, 16 to " + (1 << 23));
                    }
                    break;
                case "fastclock":
                    fastClock = FastClock.parse(value);
                    break;
                default:
                    throw new IllegalStateException(key);
            }
        }

        /** probes=@FILE: one filter a line; blank lines and lines starting with # are skipped. */
        private static List<ProbeFilter> readFilters(String value) {
            if (!value.startsWith("@") || value.length() == 1) {
                throw new IllegalArgumentException("expected @FILE");
            }
            Path file = Path.of(value.substring(1));
            List<String> lines;
            try {
                lines = Files.readAllLines(file);
            } catch (IOException | RuntimeException e) {
                throw new IllegalArgumentException("cannot read " + file.toAbsolutePath() + " (" + e + ")");
            }
            List<ProbeFilter> filters = new ArrayList<>();
            for (int i = 0; i < lines.size(); i++) {
                String line = lines.get(i).strip();
                if (line.isEmpty() || line.startsWith("#")) {
                    continue;
                }
                try {
                    filters.add(ProbeFilter.parse(line));
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException("filter '" + line + "' on line " + (i + 1) + " of "
                            + file.toAbsolutePath() + ": " + e.getMessage());
                }
            }
            if (filters.isEmpty()) {
                throw new IllegalArgumentException(file.toAbsolutePath() + " holds no filter");
            }
            return filters;
        }

        /** A file path whose directory exists and is writable. */
        private static Path writablePath(String value) {
            if (value.isEmpty()) {
                throw new IllegalArgumentException("expected a file path");
            }
            Path p = Path.of(value).toAbsolutePath();
            Path dir = p.getParent();
            if (Files.isDirectory(p) || dir == null || !Files.isDirectory(dir) || !Files.isWritable(dir)) {
                throw new IllegalArgumentException(p + " cannot be written (" + (Files.isDirectory(p) ? "a directory"
                        : "no writable directory " + dir) + ")");
            }
            return p;
        }
    }

    static void say(String line) {
        System.err.println("threadtime: " + line);
    }

    private static void start(Options o, Instrumentation inst) {
        if (o.fastClock != null) {
            try {
                FastClock.set(o.fastClock);
            } catch (RuntimeException | LinkageError e) {
                say("fastclock=" + (o.fastClock ? "on" : "off") + " could not be applied (" + e + ")");
            }
        }
        boolean log = o.runsLog();
        if (Runtime.version().feature() < 21) {
            if (!log) {
                say("JDK " + Runtime.version() + " has no virtual threads (21+); the agent stays passive");
            }
        } else {
            virtualThreads(o, inst);
        }
        if (!log) {
            return;
        }
        if (!bootClasses(inst)) {
            say("no probes and no event log: the probe classes could not be put on the boot class path");
            return;
        }
        try {
            ProbeAgent.start(o, inst, true);
        } catch (RuntimeException | LinkageError e) {
            say("the probes and the event log could not be set up (" + e + "); the program runs without them");
        }
    }

    /**
     * The VirtualThread hooks (JDK 21+): accounting in the mode asked for
     * (exact by default), plus the event log's mount and unmount markers when
     * the agent runs the log; with the log (probe=, probes=, out=, ring=) and
     * no mode= given, the markers alone, so that probes cost no clock reads
     * per mount.
     */
    private static void virtualThreads(Options o, Instrumentation inst) {
        boolean accounting = o.modeGiven || !o.runsLog();
        Boolean transitionsOn = transitionsOn();
        if (VirtualThreadAgent.probe() >= VirtualThreadAgent.EXACT) {
            say("the JVMTI virtual-thread agent is loaded and charging; this agent's VirtualThread hooks stay out"
                    + (o.runsLog() ? " (so the trace has no virtual-thread markers)" : ""));
            return;
        }
        if (!bootClasses(inst)) {
            return;
        }
        try {
            if (Class.forName(VtConfig.class.getName(), false, null) != VtConfig.class) {
                say("io.threadtime.boot was already loaded from the class path; the VirtualThread hooks stay out");
                return;
            }
        } catch (ClassNotFoundException e) {
            say("the VirtualThread hooks are not on the boot class path (" + e + "); they stay out");
            return;
        }
        if (!o.hooks) {
            VtConfig.state(VtConfig.EVENTS_OFF);
            return;
        }
        if (Boolean.TRUE.equals(transitionsOn)) {
            say("HotSpot's JVMTI transition path is on: with any -javaagent each virtual-thread mount and unmount "
                    + "goes through it, ~90 ns more per Thread.yield() on JDK 25 and ~100 ns on JDK 21 (docs/benchmarks.md); "
                    + (MONITORS_UNMOUNT
                            ? "leave it on with this JDK: under -XX:-" + TRANSITIONS_FLAG + " " + FLAG_HANG
                            : "-XX:+UnlockExperimentalVMOptions -XX:-" + TRANSITIONS_FLAG + " switches it off "
                                    + "(then no JVMTI agent gets virtual-thread events; see java/README.md for what still works)"));
        } else if (Boolean.FALSE.equals(transitionsOn) && MONITORS_UNMOUNT) {
            say("-XX:-" + TRANSITIONS_FLAG + " on JDK " + Runtime.version().feature() + ": under it " + FLAG_HANG
                    + "; leave the flag out with this JDK (the accounting works without it)");
        }
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            if (o.runsLog()) {
                MethodType mark = MethodType.methodType(void.class, long.class);
                VtConfig.markers(lookup.findVirtual(Backend.class, "eventMount", mark).bindTo(Native.B),
                        lookup.findVirtual(Backend.class, "eventUnmount", mark).bindTo(Native.B));
            }
            Object warmUp = null; // a continuation for the warm-up, when the accounts are in them
            if (accounting) {
                installClock(o.exact, lookup);
                if (!o.table) {
                    warmUp = fieldsInContinuations(inst);
                }
            }
            Class.forName("io.threadtime.boot.VtHooks", true, null); // its constants, before any hook runs
            // Nothing may be loaded, initialized or linked for the first time
            // inside a hook: a carrier runs them in the middle of a mount, and
            // with HotSpot's transition path on, a class being initialized by a
            // thread that waits for that mount to end deadlocks (seen once:
            // a carrier in mount() waiting for VtAccounts' initializer, whose
            // thread waited in the VM). One round trip through the hooks on
            // this thread, under its own id, which no virtual thread has,
            // does all of it now (the log does not run yet: no marker is written),
            // on a continuation of its own when the accounts are in them.
            Thread self = Thread.currentThread();
            VtHooks.mount(self, self, warmUp);
            VtHooks.unmount(self, warmUp);
            VtHooks.end(self, warmUp);
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            say("could not set up the clock (" + e + "); the agent stays passive");
            VtConfig.state(VtConfig.PASSIVE);
            return;
        }
        instrument(inst, !accounting ? VtConfig.MARKERS : o.exact ? VtConfig.EXACT : VtConfig.MOUNTED);
    }

    /**
     * Has {@link ContinuationFields} add the account fields to the virtual
     * threads' continuation class as it loads, loads it, makes one instance
     * for the hooks' warm-up, and opens {@code java.lang} to the hooks'
     * module, whose handles on those fields need it; the hooks then keep the
     * accounts there, and this returns the instance. Where any of that cannot
     * be done, one line says why, the hooks keep the accounts in a table (a
     * lookup at each mount and unmount, a lock at each thread's first mount
     * and end), and this returns null.
     */
    private static Object fieldsInContinuations(Instrumentation inst) {
        ContinuationFields fields = new ContinuationFields();
        inst.addTransformer(fields, false);
        String why;
        Object warmUp = null;
        try {
            Class<?> cont = Class.forName(VtConfig.CONTINUATION_CLASS, false, null);
            why = fields.mismatch();
            if (why == null) {
                warmUp = instance(cont);
                inst.redefineModule(Object.class.getModule(), Set.of(), Map.of(),
                        Map.of("java.lang", Set.of(VtConfig.class.getModule())), Set.of(), Map.of());
                why = VtConfig.useFields();
            }
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            Throwable cause = e;
            while (cause.getCause() != null) {
                cause = cause.getCause();
            }
            why = cause instanceof UnsupportedOperationException
                    ? "this JVM runs virtual threads without continuations (" + cause + ")"
                    : "it could not be prepared: " + cause;
        } finally {
            inst.removeTransformer(fields);
        }
        if (why != null) {
            say("the accounts go in a table, not in the virtual threads: " + why
                    + "; that costs a lookup per mount and unmount");
            return null;
        }
        return warmUp;
    }

    /**
     * An instance of the continuation class, never run, made without a
     * constructor: no virtual thread is made, so {@code VirtualThread}'s own
     * initialization (its scheduler, read from system properties the program
     * may still set) is left for the program's first virtual thread. It does
     * initialize {@code jdk.internal.vm.Continuation} if the JVM has not yet
     * (JDK 25 has at start-up), which reads
     * {@code jdk.preserveScopedValueCache}; and it fails where the JVM has no
     * continuations, whose virtual threads are OS threads.
     */
    private static Object instance(Class<?> cont) throws ReflectiveOperationException {
        Class<?> unsafeClass = Class.forName("sun.misc.Unsafe");
        java.lang.reflect.Field f = unsafeClass.getDeclaredField("theUnsafe");
        f.setAccessible(true);
        return unsafeClass.getMethod("allocateInstance", Class.class).invoke(f.get(null), cont);
    }

    /** The accounting's clocks, for the hooks. */
    private static void installClock(boolean exact, MethodHandles.Lookup lookup) throws ReflectiveOperationException {
        MethodHandle clock, carrierClock;
        String clockName;
        double nsPerTick = 1;
        if (exact) {
            // The carrier's own clock, without a system call while the kernel
            // shows that the carrier was not switched out (FastClock).
            clock = FastClock.reader();
            carrierClock = lookup.findVirtual(ThreadTimeMXBean.class, "getThreadCpuTime",
                    MethodType.methodType(long.class, long.class)).bindTo(ThreadTimeMXBean.getInstance());
            String how = FastClock.name();
            clockName = (how.startsWith("syscall") ? "thread-cpu (" : "thread-cpu-fast (") + how + ")";
        } else {
            // The cycle counter where the core's calibration trusts it (cheaper
            // than System.nanoTime() here), else System.nanoTime().
            double hz = CycleCounter.hz();
            if (hz > 0) {
                clock = CycleCounter.reader();
                nsPerTick = 1e9 / hz;
                clockName = "tsc";
            } else {
                clock = lookup.findStatic(System.class, "nanoTime", MethodType.methodType(long.class));
                clockName = "monotonic";
            }
            carrierClock = MethodHandles.dropArguments(clock, 0, long.class);
        }
        MethodHandle current = lookup.findStatic(VirtualThreadCpu.class, "currentThreadCpuTime",
                MethodType.methodType(long.class));
        VtConfig.install(clock, carrierClock, current, clockName, nsPerTick);
    }

    /** The transformer in, VirtualThread retransformed, the state set. */
    private static void instrument(Instrumentation inst, int state) {
        Class<?> target;
        try {
            target = Class.forName("java.lang.VirtualThread", false, null);
        } catch (ClassNotFoundException e) {
            say("JDK " + Runtime.version() + " has no java.lang.VirtualThread; the agent stays passive");
            VtConfig.state(VtConfig.PASSIVE);
            return;
        }
        if (!inst.isRetransformClassesSupported() || !inst.isModifiableClass(target)) {
            say("this JVM cannot retransform java.lang.VirtualThread; the agent stays passive");
            VtConfig.state(VtConfig.PASSIVE);
            return;
        }
        // The transformer stays registered: another agent retransforming
        // VirtualThread later (the OpenTelemetry agent does) has the JVM start
        // again from the original bytes and run every retransform-capable
        // transformer, ours included, so the hooks stay in.
        VirtualThreadTransformer transformer = new VirtualThreadTransformer();
        inst.addTransformer(transformer, true);
        String why;
        try {
            // The state first: a hook may run as soon as the class is replaced.
            VtConfig.state(state);
            inst.retransformClasses(target);
            why = transformer.mismatch();
        } catch (Throwable t) {
            why = "retransforming it failed: " + t;
        }
        if (why != null) {
            inst.removeTransformer(transformer);
            VtConfig.state(VtConfig.PASSIVE);
            say("java.lang.VirtualThread of JDK " + Runtime.version() + " is not a shape this agent knows (" + why
                    + "); nothing instrumented, virtual threads read -1");
        }
    }

    /**
     * Whether HotSpot's transition path is on ({@value #TRANSITIONS_FLAG}),
     * from the diagnostic bean; null on a JVM without that flag. The bean
     * hides an experimental flag until {@code -XX:+UnlockExperimentalVMOptions}:
     * hidden on HotSpot 21+, it has its default, on.
     */
    static Boolean transitionsOn() {
        return Transitions.ON;
    }

    private static final class Transitions {
        static final Boolean ON = read();

        private static Boolean read() {
            com.sun.management.HotSpotDiagnosticMXBean bean;
            try {
                bean = ManagementFactory.getPlatformMXBean(com.sun.management.HotSpotDiagnosticMXBean.class);
            } catch (IllegalArgumentException | LinkageError notHotSpot) {
                return null;
            }
            try {
                return Boolean.valueOf(bean.getVMOption(TRANSITIONS_FLAG).getValue());
            } catch (IllegalArgumentException hidden) {
                // Hidden while experimental options are locked (then it is at its
                // default, on), or absent (a JVM older than 21 or not HotSpot).
                try {
                    boolean locked = bean.getVMOption("UnlockExperimentalVMOptions").getValue().equals("false");
                    return locked && Runtime.version().feature() >= 21 ? Boolean.TRUE : null;
                } catch (IllegalArgumentException notHotSpot) {
                    return null;
                }
            }
        }
    }

    private static Boolean bootAppended;

    /**
     * Copies the classes of {@code io.threadtime.boot} from this agent's JAR
     * into a small JAR of their own, appends that to the boot class path
     * (once) and checks that {@code java.base} can call them. False (and one
     * line saying why) where that did not work.
     */
    static synchronized boolean bootClasses(Instrumentation inst) {
        if (bootAppended == null) {
            try {
                bootAppended = appendHooks(inst);
            } catch (Exception | LinkageError e) {
                say("could not put the hook classes on the boot class path (" + e + "); the agent stays passive");
                bootAppended = false;
            }
        }
        return bootAppended;
    }

    private static boolean appendHooks(Instrumentation inst) throws IOException, ClassNotFoundException {
        File jar = new File(ThreadTimeAgent.class.getProtectionDomain().getCodeSource().getLocation().getPath());
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        try (JarFile in = new JarFile(jar); JarOutputStream out = new JarOutputStream(buf)) {
            for (Enumeration<JarEntry> e = in.entries(); e.hasMoreElements();) {
                JarEntry entry = e.nextElement();
                if (entry.getName().startsWith("io/threadtime/boot/") && entry.getName().endsWith(".class")) {
                    JarEntry copy = new JarEntry(entry.getName());
                    copy.setTime(0); // the same bytes every time: one file per version
                    out.putNextEntry(copy);
                    try (InputStream s = in.getInputStream(entry)) {
                        s.transferTo(out);
                    }
                    out.closeEntry();
                }
            }
        }
        Path hooks = NativeLibrary.install("threadtime-hooks", ".jar", buf.toByteArray(),
                "start the JVM with a writable java.io.tmpdir");
        inst.appendToBootstrapClassLoaderSearch(new JarFile(hooks.toFile()));
        // Each must be the boot loader's copy; one loaded from the class path
        // before (a program that used threadtime before attaching) cannot be.
        for (Class<?> c : List.of(ProbeConfig.class, Probes.class)) {
            if (Class.forName(c.getName(), false, null) != c) {
                say(c.getName() + " was already loaded from the class path, not the boot class path: "
                        + "no hooks or probes (load threadtime as -javaagent, or attach before the program uses it)");
                return false;
            }
        }
        // java.base does not read the boot loader's unnamed module on JDK 21
        // and 25 (it does on 17): let it, so that VirtualThread and probed
        // JDK classes can call the hooks. Other named modules are let read
        // it by the probe transformer, as it reaches their classes.
        Module base = Object.class.getModule();
        Module hooksModule = VtConfig.class.getModule();
        if (!base.canRead(hooksModule)) {
            inst.redefineModule(base, Set.of(hooksModule), Map.of(), Map.of(), Set.of(), Map.of());
        }
        if (!base.canRead(hooksModule)) {
            say("java.base cannot be made to read the boot class path's classes on JDK " + Runtime.version()
                    + "; the agent stays passive");
            return false;
        }
        return true;
    }
}
