package io.threadtime;

import java.lang.invoke.MethodHandle;

/**
 * Whether a thread is virtual, on JDK 17-20: through a method handle on
 * {@code Thread.isVirtual()} where it exists (a preview API in 19-20), else
 * never. JDK 21+ loads the version under META-INF/versions/21, which calls
 * it directly: a handle made on the first call costs that call a class spun
 * for the handle.
 */
final class VirtualThreads {
    /** Looked up on 19-20 only: on 17-18 the failed lookup would cost a first call ~3 ms for nothing. */
    private static final MethodHandle IS_VIRTUAL = Runtime.version().feature() >= 19
            ? ThreadMap.findOptional(Thread.class, "isVirtual", boolean.class) : null;

    private VirtualThreads() {}

    static boolean is(Thread t) {
        try {
            return IS_VIRTUAL != null && (boolean) IS_VIRTUAL.invokeExact(t);
        } catch (Throwable e) {
            throw new AssertionError(e);
        }
    }
}
