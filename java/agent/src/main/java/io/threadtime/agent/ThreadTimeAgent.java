package io.threadtime.agent;

import io.threadtime.AgentAccess;
import io.threadtime.agent.probes.ProbeAgent;
import io.threadtime.agent.vthreads.VirtualThreadSetup;
import java.lang.instrument.Instrumentation;

/**
 * The {@code java.lang.instrument} agent's entry points:
 * {@code -javaagent:threadtime.jar[=options]} and attaching to a running JVM
 * ({@code threadtime attach PID options}). As little as possible happens
 * here: the options are parsed ({@link AgentOptions}), the messages set up
 * ({@link AgentLog}), the clock switched ({@code FastClock}), and the work
 * handed to {@link VirtualThreadSetup}
 * (virtual-thread accounting) and {@link ProbeAgent} (probes and the event
 * log).
 * <p>
 * A wrong option at start stops the JVM with one line and exit status 1,
 * before {@code main} runs, as a wrong JVM option does. Anything else that
 * keeps the agent out (a JDK without virtual threads, a
 * {@code VirtualThread} of another shape, the JVMTI agent already charging)
 * is one warning, and the JVM runs on as without the agent.
 */
public final class ThreadTimeAgent {
    private ThreadTimeAgent() {}

    /** {@code -javaagent:threadtime.jar[=options]}. */
    public static void premain(String options, Instrumentation inst) {
        AgentOptions o;
        try {
            o = AgentOptions.parse(options, false);
        } catch (IllegalArgumentException e) {
            // Thrown out of premain, this would abort the JVM (exit 134) under
            // a stack trace and java.lang.instrument's assertion lines.
            System.err.println(e.getMessage());
            System.exit(1);
            return;
        }
        AgentLog.configure(o.logLevel, o.systemLogger);
        try {
            start(o, inst);
        } catch (RuntimeException | LinkageError e) {
            AgentLog.error("the agent could not start (" + e + "); the program runs without it");
        }
    }

    /**
     * Loaded into a running JVM through the Attach API
     * ({@code threadtime attach PID options}): adds probes ({@code probe=},
     * {@code probes=}), takes them all out again ({@code probe=off}), writes
     * the trace now ({@code dump=PATH}). A wrong option fails the attach with
     * the message (the attacher prints it) and changes nothing.
     */
    public static void agentmain(String options, Instrumentation inst) {
        // The attach protocol carries only agentmain's return code (102 when
        // it throws): the attaching side (cli/attach.c, Main) reads these two
        // properties to say why, and which filters matched nothing.
        System.clearProperty(ATTACH_ERROR);
        System.clearProperty(ATTACH_WARNINGS);
        try {
            AgentOptions o = AgentOptions.parse(options, true);
            AgentLog.configure(o.logLevel, o.systemLogger);
            if (o.runsLog()) {
                // the boot classes first: ProbeConfig must not be loaded here yet
                if (!HookClassPath.append(inst)) {
                    throw new IllegalStateException(
                            "threadtime: the probe classes could not be put on the boot class path");
                }
                ProbeAgent.start(o, inst, false);
                System.setProperty(ATTACH_WARNINGS, String.join("\n", ProbeAgent.unmatched()));
            }
            if (o.probesOff) {
                ProbeAgent.removeProbes();
            }
            if (o.dump != null) {
                ProbeAgent.dumpNow(o.dump);
            }
        } catch (RuntimeException | Error e) {
            System.setProperty(ATTACH_ERROR, String.valueOf(e.getMessage()));
            throw e;
        }
    }

    /** Where agentmain leaves the message it failed with, for the attaching side. */
    static final String ATTACH_ERROR = "threadtime.attach.error";
    /** Where agentmain leaves the filters that match nothing yet, a line each, for the attaching side. */
    static final String ATTACH_WARNINGS = "threadtime.attach.warnings";

    private static void start(AgentOptions o, Instrumentation inst) {
        if (o.fastClock != null) {
            try {
                AgentAccess.setFastClock(o.fastClock);
            } catch (RuntimeException | LinkageError e) {
                AgentLog.warn("fastclock=" + (o.fastClock ? "on" : "off") + " could not be applied (" + e + ")");
            }
        }
        boolean log = o.runsLog();
        if (Runtime.version().feature() < 21) {
            if (!log) {
                AgentLog.warn("JDK " + Runtime.version() + " has no virtual threads (21+); the agent stays passive");
            }
        } else {
            VirtualThreadSetup.install(o, inst);
        }
        if (!log) {
            return;
        }
        if (!HookClassPath.append(inst)) {
            AgentLog.warn("no probes and no event log: the probe classes could not be put on the boot class path");
            return;
        }
        try {
            ProbeAgent.start(o, inst, true);
        } catch (RuntimeException | LinkageError e) {
            AgentLog.warn("the probes and the event log could not be set up (" + e + "); the program runs without them");
        }
    }
}
