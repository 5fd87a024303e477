package io.threadtime.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.threadtime.ThreadTimeMXBean;
import io.threadtime.micrometer.ThreadTimeMeterBinder;
import java.lang.management.ManagementFactory;
import javax.management.ObjectName;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.annotation.ImportCandidates;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The auto-configuration, and that Spring Boot finds it. */
class ThreadTimeAutoConfigurationTest {
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(ThreadTimeAutoConfiguration.class));

    @Test
    void springBootFindsItInTheImportsFile() {
        assertThat(ImportCandidates.load(AutoConfiguration.class, getClass().getClassLoader()).getCandidates())
                .contains(ThreadTimeAutoConfiguration.class.getName());
    }

    @Test
    void theBinderIsABeanThatBindsThreadTimesMeters() {
        runner.run(context -> {
            assertThat(context).hasSingleBean(ThreadTimeMeterBinder.class);
            MeterRegistry registry = new SimpleMeterRegistry();
            context.getBean(ThreadTimeMeterBinder.class).bindTo(registry);
            assertThat(registry.find(ThreadTimeMeterBinder.UNMEASURED).tag("reason", "no_clock").functionCounter())
                    .isNotNull();
        });
    }

    @Test
    void perThreadMetersFollowTheProperty() {
        runner.withPropertyValues("threadtime.metrics.threads=main", "threadtime.metrics.refresh=1h").run(context -> {
            MeterRegistry registry = new SimpleMeterRegistry();
            context.getBean(ThreadTimeMeterBinder.class).bindTo(registry);
            assertThat(registry.find(ThreadTimeMeterBinder.THREAD_CPU).tag("thread.name", "main").meters()).isNotEmpty();
        });
    }

    @Test
    void anApplicationsOwnBinderWins() {
        runner.withUserConfiguration(OwnBinder.class).run(context -> {
            assertThat(context).hasSingleBean(ThreadTimeMeterBinder.class);
            assertThat(context.getBean(ThreadTimeMeterBinder.class)).isSameAs(OwnBinder.BINDER);
        });
    }

    @Test
    void metricsCanBeSwitchedOff() {
        runner.withPropertyValues("threadtime.metrics.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean(ThreadTimeMeterBinder.class));
    }

    @Test
    void withoutMicrometerTheContextStillStarts() {
        runner.withClassLoader(new FilteredClassLoader(MeterRegistry.class)).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).doesNotHaveBean(ThreadTimeMeterBinder.class);
        });
    }

    @Test
    void theMXBeanIsRegisteredForTheContextsLifeWhenAsked() throws Exception {
        ObjectName name = new ObjectName(ThreadTimeMXBean.OBJECT_NAME);
        runner.run(context -> assertThat(ManagementFactory.getPlatformMBeanServer().isRegistered(name)).isFalse());
        runner.withPropertyValues("threadtime.jmx.enabled=true").run(context -> {
            assertThat(context).hasSingleBean(ThreadTimeMXBeanRegistration.class);
            assertThat(ManagementFactory.getPlatformMBeanServer().isRegistered(name)).isTrue();
            assertThat(ManagementFactory.getPlatformMBeanServer().getAttribute(name, "ThreadCpuTimeSupported"))
                    .isEqualTo(true);
        });
        assertThat(ManagementFactory.getPlatformMBeanServer().isRegistered(name)).isFalse();
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnBinder {
        static final ThreadTimeMeterBinder BINDER = new ThreadTimeMeterBinder();

        @Bean
        ThreadTimeMeterBinder myBinder() {
            return BINDER;
        }
    }
}
