package io.threadtime;

import java.lang.management.ManagementFactory;

/**
 * What this JVM says about HotSpot's virtual-thread transition path, for the
 * agent and for the API ({@link VirtualThreadCpu#transitionPathOff()}), with or
 * without the agent loaded.
 */
final class HotSpotFlags {
    /** HotSpot's experimental flag that routes every mount and unmount through
     * JVMTI's transition code when any JVMTI environment exists. */
    static final String TRANSITIONS_FLAG = "DoJVMTIVirtualThreadTransitions";
    /** JDK 24 and later let a virtual thread unmount while it holds or waits
     * for a monitor (JEP 491), and there the flag above hangs such threads. */
    static final boolean MONITORS_UNMOUNT = Runtime.version().feature() >= 24;
    static final String FLAG_HANG = "virtual threads that contend on a monitor can deadlock "
            + "(every run of jvmti/bench/flag_hang.sh on JDK 25, with no agent at all)";

    private HotSpotFlags() {}

    /**
     * Whether HotSpot's transition path is on ({@value #TRANSITIONS_FLAG}),
     * from the diagnostic bean; null on a JVM without that flag. The bean
     * hides an experimental flag until {@code -XX:+UnlockExperimentalVMOptions}:
     * hidden on HotSpot 21+, it has its default, on.
     */
    static Boolean transitionsOn() {
        return Transitions.ON;
    }

    private static final class Transitions {
        static final Boolean ON = read();

        private static Boolean read() {
            com.sun.management.HotSpotDiagnosticMXBean bean;
            try {
                bean = ManagementFactory.getPlatformMXBean(com.sun.management.HotSpotDiagnosticMXBean.class);
            } catch (IllegalArgumentException | LinkageError notHotSpot) {
                return null;
            }
            try {
                return Boolean.valueOf(bean.getVMOption(TRANSITIONS_FLAG).getValue());
            } catch (IllegalArgumentException hidden) {
                // Hidden while experimental options are locked (then it is at its
                // default, on), or absent (a JVM older than 21 or not HotSpot).
                try {
                    boolean locked = bean.getVMOption("UnlockExperimentalVMOptions").getValue().equals("false");
                    return locked && Runtime.version().feature() >= 21 ? Boolean.TRUE : null;
                } catch (IllegalArgumentException notHotSpot) {
                    return null;
                }
            }
        }
    }
}
