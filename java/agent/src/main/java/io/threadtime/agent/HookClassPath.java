package io.threadtime.agent;

import io.threadtime.AgentAccess;
import io.threadtime.agent.probes.hooks.ProbeConfig;
import io.threadtime.agent.probes.hooks.Probes;
import io.threadtime.agent.vthreads.hooks.VirtualThreadHooks;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.lang.instrument.Instrumentation;
import java.nio.file.Path;
import java.util.Enumeration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.jar.JarOutputStream;

/**
 * Puts the hook packages (the classes that instrumented {@code java.base}
 * code calls: {@link VirtualThreadHooks}'s for virtual threads, {@link Probes}' for the
 * probes) on the boot class path, once per JVM.
 */
public final class HookClassPath {
    private HookClassPath() {}

    private static Boolean bootAppended;

    /** The packages that go on the boot class path, as directories in the JAR.
     * Named, not taken from a class: a class literal here would load that
     * class from the class path before the boot loader could. */
    private static final Set<String> HOOK_PACKAGES = Set.of("io/threadtime/agent/vthreads/hooks",
            "io/threadtime/agent/probes/hooks");

    /** The directory of a JAR entry's name: its package, for a class. */
    private static String packageOf(String entry) {
        int slash = entry.lastIndexOf('/');
        return slash < 0 ? "" : entry.substring(0, slash);
    }

    /**
     * Copies the classes of the hook packages from this agent's JAR
     * into a small JAR of their own, appends that to the boot class path
     * (once) and checks that {@code java.base} can call them. False (and one
     * line saying why) where that did not work.
     */
    public static synchronized boolean append(Instrumentation inst) {
        if (bootAppended == null) {
            try {
                bootAppended = appendHooks(inst);
            } catch (Exception | LinkageError e) {
                AgentLog.warn("could not put the hook classes on the boot class path (" + e + "); the agent stays passive");
                bootAppended = false;
            }
        }
        return bootAppended;
    }

    private static boolean appendHooks(Instrumentation inst) throws IOException, ClassNotFoundException {
        File jar = new File(HookClassPath.class.getProtectionDomain().getCodeSource().getLocation().getPath());
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        try (JarFile in = new JarFile(jar); JarOutputStream out = new JarOutputStream(buf)) {
            for (Enumeration<JarEntry> e = in.entries(); e.hasMoreElements();) {
                JarEntry entry = e.nextElement();
                if (HOOK_PACKAGES.contains(packageOf(entry.getName())) && entry.getName().endsWith(".class")) {
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
        // The JVM opens the JAR here and keeps it open: a directory for this
        // JVM alone may be removed right after.
        AgentAccess.extracting("the hook classes", "start the JVM with a java.io.tmpdir only you can change", dir -> {
            Path hooks = dir.putVersioned("threadtime-hooks", ".jar", buf.toByteArray());
            inst.appendToBootstrapClassLoaderSearch(new JarFile(hooks.toFile()));
            return hooks;
        });
        // Each must be the boot loader's copy; one loaded from the class path
        // before (a program that used threadtime before attaching) cannot be.
        for (Class<?> c : List.of(ProbeConfig.class, Probes.class)) {
            if (Class.forName(c.getName(), false, null) != c) {
                AgentLog.warn(c.getName() + " was already loaded from the class path, not the boot class path: "
                        + "no hooks or probes (load threadtime as -javaagent, or attach before the program uses it)");
                return false;
            }
        }
        // java.base does not read the boot loader's unnamed module on JDK 21
        // and 25 (it does on 17): let it, so that VirtualThread and probed
        // JDK classes can call the hooks. Other named modules are let read
        // it by the probe transformer, as it reaches their classes.
        Module base = Object.class.getModule();
        Module hooksModule = VirtualThreadHooks.class.getModule();
        if (!base.canRead(hooksModule)) {
            inst.redefineModule(base, Set.of(hooksModule), Map.of(), Map.of(), Set.of(), Map.of());
        }
        if (!base.canRead(hooksModule)) {
            AgentLog.warn("java.base cannot be made to read the boot class path's classes on JDK " + Runtime.version()
                    + "; the agent stays passive");
            return false;
        }
        return true;
    }}
