package io.threadtime;

import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The backends of JDK 22+: FFM (the default) and JNI. Before the first one
 * is created, checks that the JDK grants this module native access and, if
 * not, says once which flag grants it; the library goes on working wherever
 * the JDK only warns.
 */
final class Backends {
    private static final AtomicBoolean CHECKED = new AtomicBoolean();

    private Backends() {}

    static List<String> names() {
        return List.of("ffm", "jni");
    }

    static Backend create(String name) {
        Module module = Backends.class.getModule();
        if (CHECKED.compareAndSet(false, true) && !module.isNativeAccessEnabled()) {
            System.getLogger("io.threadtime").log(System.Logger.Level.WARNING, NativeAccess.message(module));
        }
        return switch (name) {
            case "ffm" -> new FfmBackend();
            case "jni" -> new JniBackend();
            default -> throw new IllegalArgumentException(
                    "threadtime: no backend '" + name + "' (available: " + names() + ")");
        };
    }
}
