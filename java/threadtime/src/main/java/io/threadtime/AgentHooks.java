package io.threadtime;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

/**
 * The {@code -javaagent}'s hook classes as this JVM's boot loader holds
 * them. They come with the agent's JAR (artifact {@code threadtime-agent}),
 * not with this one, and the agent appends them to the boot class path at
 * start, so that {@code java.base} can call them and every class loader
 * sees the one copy. This API finds them by name there: a program that
 * loads the API in a class loader of its own still reads the accounts the
 * agent keeps, and without the agent nothing is found.
 */
final class AgentHooks {
    /** The package of the virtual-thread hooks and the accounts they write. */
    static final String VIRTUAL_THREADS = "io.threadtime.agent.vthreads.hooks.";

    private AgentHooks() {}

    /** The boot loader's class {@code name}, or null when the agent did not put it there. */
    static Class<?> find(String name) {
        try {
            return Class.forName(name, true, null);
        } catch (ClassNotFoundException absent) {
            return null;
        }
    }

    /**
     * Public static method {@code method} of the boot loader's class
     * {@code name}. Only called once the agent is known to be there, to fill
     * a static final field (so the JIT calls the hook's method directly).
     */
    static MethodHandle method(String name, String method, Class<?> returns, Class<?>... parameters) {
        Class<?> c = find(name);
        if (c == null) {
            throw new IllegalStateException("threadtime: " + name + " is not on the boot class path");
        }
        try {
            return MethodHandles.publicLookup().findStatic(c, method, MethodType.methodType(returns, parameters));
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("threadtime: the agent's " + name + " has no " + method
                    + " (an agent JAR of another version?)", e);
        }
    }
}
