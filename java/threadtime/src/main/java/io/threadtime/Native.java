package io.threadtime;

/** The backend every public class calls through, chosen once per JVM. */
final class Native {
    /** System property choosing the backend: "ffm" (default on JDK 22+) or "jni". */
    static final String BACKEND_PROPERTY = "threadtime.backend";

    static final Backend B = Backends.create(System.getProperty(BACKEND_PROPERTY, Backends.names().get(0)));

    private Native() {}
}
