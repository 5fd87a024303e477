package io.threadtime.agent.vthreads;

import java.lang.instrument.Instrumentation;
import java.util.Map;
import java.util.Set;
import java.util.jar.JarFile;

/**
 * A benchmark-only -javaagent: the threadtime JAR's own transformer, calling
 * io.threadtime.bench.TlHooks (a ThreadLocal per virtual thread) instead of
 * the threadtime accounts. Its argument is the JAR holding TlHooks.
 */
public final class ThreadLocalRoute {
    public static void premain(String hooksJar, Instrumentation inst) throws Exception {
        inst.appendToBootstrapClassLoaderSearch(new JarFile(hooksJar));
        Class<?> hooks = Class.forName("io.threadtime.bench.TlHooks", true, null);
        inst.redefineModule(Object.class.getModule(), Set.of(hooks.getModule()), Map.of(), Map.of(), Set.of(), Map.of());
        VirtualThreadTransformer t = new VirtualThreadTransformer("io/threadtime/bench/TlHooks");
        inst.addTransformer(t, true);
        inst.retransformClasses(Class.forName("java.lang.VirtualThread"));
        if (t.mismatch() != null)
            throw new IllegalStateException(t.mismatch());
    }
}
