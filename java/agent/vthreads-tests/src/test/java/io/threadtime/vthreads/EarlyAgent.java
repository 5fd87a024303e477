package io.threadtime.vthreads;

import java.lang.instrument.Instrumentation;

/**
 * A -javaagent listed before threadtime's in {@link PlacementTest}: its
 * premain starts and joins a virtual thread, so the continuation class is
 * loaded before threadtime's premain can add the account fields.
 */
public final class EarlyAgent {
    public static void premain(String options, Instrumentation inst) throws InterruptedException {
        Thread.ofVirtual().start(() -> { }).join();
    }
}
