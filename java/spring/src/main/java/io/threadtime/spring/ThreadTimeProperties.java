package io.threadtime.spring;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * {@code threadtime.*} properties:
 * <ul>
 * <li>{@code threadtime.metrics.enabled} (default true): the Micrometer meters;</li>
 * <li>{@code threadtime.metrics.threads}: a regular expression; live platform
 *     threads whose whole name matches get per-thread CPU counters (each
 *     thread is two series, so none by default);</li>
 * <li>{@code threadtime.metrics.refresh} (default 15s): how often to look for
 *     new and ended threads;</li>
 * <li>{@code threadtime.jmx.enabled} (default false, as Spring's own
 *     {@code spring.jmx.enabled}): registers the drop-in ThreadMXBean as
 *     {@code io.threadtime:type=Threading}.</li>
 * </ul>
 */
@ConfigurationProperties("threadtime")
public class ThreadTimeProperties {
    private final Metrics metrics = new Metrics();
    private final Jmx jmx = new Jmx();

    public Metrics getMetrics() {
        return metrics;
    }

    public Jmx getJmx() {
        return jmx;
    }

    public static class Metrics {
        private boolean enabled = true;
        private String threads;
        private Duration refresh = Duration.ofSeconds(15);

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public String getThreads() {
            return threads;
        }

        public void setThreads(String threads) {
            this.threads = threads;
        }

        public Duration getRefresh() {
            return refresh;
        }

        public void setRefresh(Duration refresh) {
            this.refresh = refresh;
        }
    }

    public static class Jmx {
        private boolean enabled;

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }
    }
}
