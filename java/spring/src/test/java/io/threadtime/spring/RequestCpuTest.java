package io.threadtime.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import example.web.BurnApp;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Timer;
import io.threadtime.micrometer.ThreadTimeMeterBinder;
import io.threadtime.otel.CpuClock;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.HashSet;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A real Spring MVC request on embedded Tomcat, on a platform thread and
 * (JDK 21+ with threadtime's agent) on a virtual one: its CPU time is a
 * timer tagged exactly as its http.server.requests timer, and at least what
 * the handler burned by the JDK's own clock, and at most what the whole
 * process spent meanwhile.
 */
class RequestCpuTest {
    /** The fast clock may read up to 50 us above a later real read (ThreadTime.FAST_CLOCK_BOUND_NANOS). */
    private static final long BOUND_NS = 50_000;

    @Test
    void aRequestOnAPlatformThread() throws Exception {
        check(false);
    }

    @Test
    void aRequestOnAVirtualThread() throws Exception {
        assumeTrue(Runtime.version().feature() >= 21, "virtual threads need JDK 21");
        assumeTrue(CpuClock.virtualSource() != CpuClock.VirtualSource.NONE && !CpuClock.virtualIsMountedTime(),
                "a virtual thread's CPU time needs threadtime's agent");
        check(true);
    }

    private static void check(boolean virtual) throws Exception {
        BurnApp.BURNED.clear();
        SpringApplication app = new SpringApplication(BurnApp.class);
        try (ConfigurableApplicationContext context = app.run("--server.port=0",
                "--spring.threads.virtual.enabled=" + virtual, "--spring.main.banner-mode=off")) {
            int port = context.getEnvironment().getRequiredProperty("local.server.port", Integer.class);
            com.sun.management.OperatingSystemMXBean os =
                    (com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean();
            long processBefore = os.getProcessCpuTime();
            HttpClient client = HttpClient.newHttpClient();
            HttpResponse<String> r = client.send(HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/burn/30"))
                    .build(), HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).isEqualTo(200);
            MeterRegistry registry = context.getBean(MeterRegistry.class);
            // The observation stops after the response went out, and its
            // handlers record one after the other: wait for both timers (bounded).
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            Timer cpu, requests;
            while (((cpu = registry.find(ThreadTimeMeterBinder.REQUEST_CPU).tag("uri", "/burn/{ms}").timer()) == null
                    | (requests = registry.find("http.server.requests").tag("uri", "/burn/{ms}").timer()) == null)
                    && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertThat(cpu).as("the request's CPU timer").isNotNull();
            assertThat(requests).as("the request's http.server.requests timer").isNotNull();
            List<Tag> ours = cpu.getId().getTags(), theirs = requests.getId().getTags();
            assertThat(new HashSet<>(ours)).isEqualTo(new HashSet<>(theirs));
            assertThat(ours).contains(Tag.of("method", "GET"), Tag.of("status", "200"), Tag.of("outcome", "SUCCESS"));
            assertThat(cpu.count()).isEqualTo(1);
            assertThat(BurnApp.BURNED).hasSize(1);
            long burned = BurnApp.BURNED.peek();
            long ns = (long) cpu.totalTime(TimeUnit.NANOSECONDS);
            assertThat(ns).as("the request's CPU against what its handler burned").isGreaterThanOrEqualTo(burned - BOUND_NS);
            assertThat(ns).as("the request's CPU against the whole process's meanwhile")
                    .isLessThanOrEqualTo(os.getProcessCpuTime() - processBefore + BOUND_NS);
        }
    }
}
