package io.threadtime;

import java.util.List;

/**
 * The backends this JDK can run (JDK 17-21: JNI only). JDK 22+ loads the
 * version of this class under META-INF/versions/22, which adds FFM.
 */
final class Backends {
    private Backends() {}

    /** Names of the available backends, the default first. */
    static List<String> names() {
        return List.of("jni");
    }

    /** A new instance of the named backend; loads the native library. */
    static Backend create(String name) {
        if (name.equals("jni")) {
            return new JniBackend();
        }
        throw new IllegalArgumentException("threadtime: no backend '" + name + "' on JDK "
                + Runtime.version().feature() + " (available: " + names() + "; FFM needs JDK 22 or later)");
    }
}
