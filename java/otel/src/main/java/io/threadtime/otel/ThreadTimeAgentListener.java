package io.threadtime.otel;

import io.opentelemetry.javaagent.extension.AgentListener;
import io.opentelemetry.sdk.autoconfigure.AutoConfiguredOpenTelemetrySdk;

/** Registers {@link ThreadTimeMetrics} once the agent's SDK is built. */
public final class ThreadTimeAgentListener implements AgentListener {
    @Override
    public void afterAgent(AutoConfiguredOpenTelemetrySdk sdk) {
        ThreadTimeMetrics.register(sdk.getOpenTelemetrySdk(), ThreadTimeExtension.processor(), ThreadTimeExtension.threads());
    }
}
