package io.threadtime.otel;

import io.opentelemetry.sdk.autoconfigure.spi.AutoConfigurationCustomizer;
import io.opentelemetry.sdk.autoconfigure.spi.AutoConfigurationCustomizerProvider;
import io.opentelemetry.sdk.autoconfigure.spi.ConfigProperties;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.regex.Pattern;

/**
 * The OpenTelemetry Java agent extension: adds {@link ThreadTimeSpanProcessor}
 * to the agent's tracer provider ({@link ThreadTimeAgentListener} then
 * registers the metrics). Used as
 * {@code -javaagent:opentelemetry-javaagent.jar -Dotel.javaagent.extensions=threadtime-otel-<version>-extension.jar}.
 * <p>
 * The extension JAR carries its own copy of the threadtime classes, since an
 * extension's class loader sees neither the application's classes nor its
 * libraries. A JNI library can be loaded by one class loader only, so that
 * copy extracts the native library under a name of its own (the JAR's
 * {@code threadtime.properties} names the copy {@code otel-extension}),
 * and the application's threadtime, if any, keeps loading its own file.
 * <p>
 * Configuration (system property, or the environment variable in capitals
 * with {@code _}): {@value #THREADS} = a regular expression over thread
 * names, for the per-thread metric.
 */
public final class ThreadTimeExtension implements AutoConfigurationCustomizerProvider {
    /** The per-thread metric's thread-name pattern. */
    public static final String THREADS = "threadtime.metrics.threads";

    private static volatile ThreadTimeSpanProcessor processor;
    private static volatile Pattern threads;

    @Override
    public void customize(AutoConfigurationCustomizer customizer) {
        customizer.addTracerProviderCustomizer((builder, config) -> {
            start(config);
            return builder.addSpanProcessor(processor);
        });
    }

    private static synchronized void start(ConfigProperties config) {
        if (processor != null) {
            return;
        }
        String pattern = config.getString(THREADS);
        threads = pattern == null || pattern.isEmpty() ? null : Pattern.compile(pattern);
        loadNative();
        String limitation = CpuClock.limitation();
        if (limitation != null) {
            System.err.println("threadtime-otel: " + limitation);
        }
        processor = ThreadTimeSpanProcessor.createQuietly();
    }

    /**
     * Loads the extension's own native library now, in the agent's start-up
     * before any application code runs. A library named by
     * {@code -Dthreadtime.library} or found on {@code java.library.path} is
     * the application's: the extension must not take it, or the
     * application's threadtime could not load it after.
     */
    private static void loadNative() {
        String named = System.getProperty("threadtime.library");
        for (String dir : System.getProperty("java.library.path", "").split(File.pathSeparator)) {
            if (!dir.isEmpty() && Files.exists(Paths.get(dir, "libthreadtime_java.so"))) {
                CpuClock.disablePlatform("libthreadtime_java.so is on java.library.path (" + dir
                        + "), where the application's threadtime loads it from; spans on platform threads get no CPU time");
                return;
            }
        }
        if (named != null) {
            System.clearProperty("threadtime.library");
        }
        try {
            CpuClock.mark(); // loads and maps the calling thread; reports a failure itself
        } finally {
            if (named != null) {
                System.setProperty("threadtime.library", named);
            }
        }
    }

    /** The processor the tracer provider got, or null before the agent set it up. */
    static ThreadTimeSpanProcessor processor() {
        return processor;
    }

    /** The per-thread metric's pattern, or null. */
    static Pattern threads() {
        return threads;
    }
}
