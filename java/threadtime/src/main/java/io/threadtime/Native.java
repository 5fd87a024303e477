package io.threadtime;

import java.lang.reflect.Proxy;

/**
 * The backend every public class calls through, chosen once per JVM.
 * <p>
 * Bound softly: when the backend cannot be made (no native library for this
 * platform, a missing or wrong file, a backend that does not exist, native
 * access denied), that is said once, through {@link System.Logger}, and
 * {@link #B} is a stand-in whose every call throws the
 * {@link UnsupportedOperationException} of {@link NativeLibrary#unavailable},
 * naming the platform and the cause; never a class that failed to initialize
 * and answers {@link NoClassDefFoundError} ever after.
 * {@link ThreadTimeMXBean} then answers from the platform bean.
 */
final class Native {
    /** System property choosing the backend: "ffm" (default on JDK 22+) or "jni". */
    static final String BACKEND_PROPERTY = "threadtime.backend";

    /** Why the backend could not be made; null when it was. */
    private static final Throwable FAILURE;
    static final Backend B;

    static {
        Backend b = null;
        Throwable failure = null;
        try {
            b = Backends.create(System.getProperty(BACKEND_PROPERTY, Backends.names().get(0)));
        } catch (RuntimeException | LinkageError e) {
            failure = reason(e);
            b = unavailable(failure);
            System.getLogger("io.threadtime").log(System.Logger.Level.WARNING,
                    NativeLibrary.unavailable(failure).getMessage() + "; ThreadTime, EventLog and VirtualThreadCpu calls throw");
        }
        FAILURE = failure;
        B = b;
    }

    private Native() {}

    /** Whether the backend works (else every call throws, see the class comment). */
    static boolean available() {
        return FAILURE == null;
    }

    /**
     * What to name as the cause: the first in the chain with a message of
     * its own, past the wrappers (the FFM backend's failed class
     * initialization; NativeLibrary.load()'s exception, which adds the
     * platform that is added again when it is reported).
     */
    private static Throwable reason(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && (t.getMessage() == null || t instanceof ExceptionInInitializerError
                || t instanceof UnsupportedOperationException)) {
            t = t.getCause();
        }
        return t;
    }

    /** A backend whose every call throws the exception naming why there is none. */
    private static Backend unavailable(Throwable failure) {
        return (Backend) Proxy.newProxyInstance(Backend.class.getClassLoader(), new Class<?>[] {Backend.class},
                (proxy, method, args) -> {
                    switch (method.getName()) {
                        case "toString": return "unavailable backend (" + failure + ")";
                        case "hashCode": return System.identityHashCode(proxy);
                        case "equals": return proxy == args[0];
                        default: throw NativeLibrary.unavailable(failure);
                    }
                });
    }
}
