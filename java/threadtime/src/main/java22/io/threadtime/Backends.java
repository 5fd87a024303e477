package io.threadtime;

import java.util.List;

/**
 * The backends of JDK 22+: FFM (the default) and JNI. Without
 * {@code --enable-native-access} the JDK itself warns, naming that flag, and
 * threadtime adds nothing to it; where the JDK denies access instead, the
 * load fails with {@link NativeAccess#message}.
 */
final class Backends {
    private Backends() {}

    static List<String> names() {
        return List.of("ffm", "jni");
    }

    static Backend create(String name) {
        return switch (name) {
            case "ffm" -> new FfmBackend();
            case "jni" -> new JniBackend();
            default -> throw new IllegalArgumentException(
                    "threadtime: no backend '" + name + "' (available: " + names() + ")");
        };
    }
}
