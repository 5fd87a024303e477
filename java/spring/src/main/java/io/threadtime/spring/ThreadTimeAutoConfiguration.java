package io.threadtime.spring;

import io.micrometer.core.instrument.MeterRegistry;
import io.threadtime.ThreadTimeMXBean;
import io.threadtime.micrometer.ThreadTimeMeterBinder;
import java.util.regex.Pattern;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * threadtime in a Spring Boot application, with nothing to write: the
 * Micrometer binder as a bean (Spring Boot's actuator binds every
 * {@code MeterBinder} bean to its registries and registers every
 * {@code ObservationHandler} bean with its observation registry, so the
 * binder's CPU-per-observation meters work too), and the drop-in
 * ThreadMXBean registered with JMX when {@code threadtime.jmx.enabled=true}.
 * Each part steps aside for a bean of the same type the application defines,
 * and is switched off by its property (see {@link ThreadTimeProperties}).
 */
@AutoConfiguration
@EnableConfigurationProperties(ThreadTimeProperties.class)
public class ThreadTimeAutoConfiguration {

    /** The meters, where Micrometer is on the class path. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(MeterRegistry.class)
    @ConditionalOnProperty(prefix = "threadtime.metrics", name = "enabled", matchIfMissing = true)
    static class Metrics {
        @Bean(destroyMethod = "close")
        @ConditionalOnMissingBean
        ThreadTimeMeterBinder threadTimeMeterBinder(ThreadTimeProperties properties) {
            String threads = properties.getMetrics().getThreads();
            return new ThreadTimeMeterBinder(threads == null || threads.isEmpty() ? null : Pattern.compile(threads),
                    properties.getMetrics().getRefresh());
        }
    }

    /** The drop-in bean under {@value ThreadTimeMXBean#OBJECT_NAME}, for as long as the context lives. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnProperty(prefix = "threadtime.jmx", name = "enabled")
    static class Jmx {
        @Bean
        @ConditionalOnMissingBean
        ThreadTimeMXBeanRegistration threadTimeMXBeanRegistration() {
            return new ThreadTimeMXBeanRegistration();
        }
    }
}
