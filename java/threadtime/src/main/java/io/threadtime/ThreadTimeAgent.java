package io.threadtime;

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
import java.nio.file.Path;
import java.util.Enumeration;
import java.util.Map;
import java.util.Set;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.jar.JarOutputStream;

/**
 * The {@code java.lang.instrument} agent: {@code -javaagent:threadtime.jar}
 * with options {@code mode=exact|mounted} and {@code events=on|off},
 * comma-separated. It puts hooks into {@code java.lang.VirtualThread} (see
 * {@link VirtualThreadTransformer}) that charge each virtual thread the
 * carrier's CPU clock (exact) or the time it was mounted (mounted) in the
 * accounts of {@code io.threadtime.boot}, which it appends to the boot class
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
    static final String OPTIONS_HELP = "expected mode=exact|mounted, events=on|off";

    private ThreadTimeAgent() {}

    /** {@code -javaagent:threadtime.jar[=options]}. */
    public static void premain(String options, Instrumentation inst) {
        Options o = Options.parse(options);
        start(o, inst);
    }

    /** The parsed options; a wrong one throws with the message users see. */
    static final class Options {
        boolean exact = true;
        boolean hooks = true;

        static Options parse(String text) {
            Options o = new Options();
            if (text == null || text.isEmpty()) {
                return o;
            }
            boolean modeSeen = false, eventsSeen = false;
            for (String item : text.split(",", -1)) {
                boolean mode = item.equals("mode=exact") || item.equals("mode=mounted");
                boolean events = item.equals("events=on") || item.equals("events=off");
                if ((!mode && !events) || (mode && modeSeen) || (events && eventsSeen)) {
                    throw new IllegalArgumentException("threadtime: unknown or conflicting option '" + item
                            + "' in '" + text + "' (" + OPTIONS_HELP + ", each at most once)");
                }
                modeSeen |= mode;
                eventsSeen |= events;
                if (mode) {
                    o.exact = item.equals("mode=exact");
                } else {
                    o.hooks = item.equals("events=on");
                }
            }
            return o;
        }
    }

    private static void say(String line) {
        System.err.println("threadtime: " + line);
    }

    private static void start(Options o, Instrumentation inst) {
        int feature = Runtime.version().feature();
        if (feature < 21) {
            say("JDK " + Runtime.version() + " has no virtual threads (21+); the agent stays passive");
            return;
        }
        Boolean transitionsOn = transitionsOn();
        if (VirtualThreadAgent.probe() >= VirtualThreadAgent.EXACT) {
            say("the JVMTI virtual-thread agent is loaded and charging; this agent stays passive");
            return;
        }
        Class<?> config;
        try {
            config = appendHooks(inst);
        } catch (Exception | LinkageError e) {
            say("could not put the hook classes on the boot class path (" + e + "); the agent stays passive");
            return;
        }
        if (config == null) {
            return;
        }
        if (!o.hooks) {
            VtConfig.state(VtConfig.EVENTS_OFF);
            return;
        }
        if (Boolean.TRUE.equals(transitionsOn)) {
            say("HotSpot's JVMTI transition path is on: with any -javaagent each virtual-thread mount and unmount "
                    + "goes through it, ~90 ns more per Thread.yield() on JDK 25 and ~100 ns on JDK 21 (docs/benchmarks.md); "
                    + "-XX:+UnlockExperimentalVMOptions -XX:-" + TRANSITIONS_FLAG + " switches it off "
                    + "(then no JVMTI agent gets virtual-thread events; see java/README.md for what still works)");
        }
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            MethodHandle clock, carrierClock;
            String clockName;
            double nsPerTick = 1;
            if (o.exact) {
                clock = lookup.findVirtual(Backend.class, "selfTotal", MethodType.methodType(long.class))
                        .bindTo(Native.B);
                carrierClock = lookup.findVirtual(ThreadTimeMXBean.class, "getThreadCpuTime",
                        MethodType.methodType(long.class, long.class)).bindTo(ThreadTimeMXBean.getInstance());
                clockName = "thread-cpu";
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
            Class.forName("io.threadtime.boot.VtHooks", true, null); // its constants, before any hook runs
            // Nothing may be loaded, initialized or linked for the first time
            // inside a hook: a carrier runs them in the middle of a mount, and
            // with HotSpot's transition path on, a class being initialized by a
            // thread that waits for that mount to end deadlocks (seen once:
            // a carrier in mount() waiting for VtAccounts' initializer, whose
            // thread waited in the VM). One round trip through the hooks on
            // this thread, under its own id, which no virtual thread has,
            // does all of it now.
            Thread self = Thread.currentThread();
            VtHooks.mount(self, self);
            VtHooks.unmount(self);
            VtHooks.end(self);
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            say("could not set up the clock (" + e + "); the agent stays passive");
            VtConfig.state(VtConfig.PASSIVE);
            return;
        }
        instrument(inst, o.exact ? VtConfig.EXACT : VtConfig.MOUNTED);
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

    /**
     * Copies the classes of {@code io.threadtime.boot} from this agent's JAR
     * into a small JAR of their own, appends that to the boot class path and
     * checks that {@code java.base} can call them. Returns the boot copy of
     * {@link VtConfig}, or null (and says why) where that did not work.
     */
    private static Class<?> appendHooks(Instrumentation inst) throws IOException, ClassNotFoundException {
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
        Class<?> config = Class.forName("io.threadtime.boot.VtConfig", true, null);
        if (VtConfig.class != config) {
            say("io.threadtime.boot was already loaded from the class path; the agent stays passive");
            return null;
        }
        // java.base does not read the boot loader's unnamed module on JDK 21
        // and 25 (it does on 17): let it, so that VirtualThread can call the hooks.
        Module base = Object.class.getModule();
        Module hooksModule = config.getModule();
        if (!base.canRead(hooksModule)) {
            inst.redefineModule(base, Set.of(hooksModule), Map.of(), Map.of(), Set.of(), Map.of());
        }
        if (!base.canRead(hooksModule)) {
            say("java.base cannot be made to read the boot class path's classes on JDK " + Runtime.version()
                    + "; the agent stays passive");
            return null;
        }
        return config;
    }
}
