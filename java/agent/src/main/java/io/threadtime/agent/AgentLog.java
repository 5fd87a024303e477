package io.threadtime.agent;

import java.util.Locale;

/**
 * Where the agent's messages go, and which of them. Option {@code log=}
 * sets the level: {@code off}, {@code error}, {@code warning} (the default:
 * only what went wrong, each one line), {@code info} (also what the agent
 * chose and why, such as HotSpot's transition path) or {@code debug}.
 * Option {@code logger=} sets the sink: {@code stderr} (the default, one
 * line each starting {@code threadtime:}) or {@code system}, a
 * {@link System.Logger} named {@code io.threadtime}, so that the
 * application's logging decides what is shown and where. The default is
 * stderr because the agent speaks before the application has set its
 * logging up (asking for a logger in premain would fix
 * {@code java.util.logging}'s configuration too early) and again from a
 * shutdown hook (the exit dump), when {@code java.util.logging} may already
 * have closed its handlers.
 */
public final class AgentLog {
    public enum Level {
        OFF, ERROR, WARNING, INFO, DEBUG;

        static Level parse(String value) {
            for (Level l : values()) {
                if (l.name().toLowerCase(Locale.ROOT).equals(value)) {
                    return l;
                }
            }
            throw new IllegalArgumentException("expected off, error, warning, info or debug");
        }

        System.Logger.Level system() {
            switch (this) {
                case ERROR: return System.Logger.Level.ERROR;
                case WARNING: return System.Logger.Level.WARNING;
                case INFO: return System.Logger.Level.INFO;
                default: return System.Logger.Level.DEBUG;
            }
        }
    }

    private static volatile Level level = Level.INFO;
    private static volatile boolean system;

    private AgentLog() {}

    /** Set once from the options, before the agent says anything else. */
    public static void configure(Level l, boolean toSystemLogger) {
        level = l;
        system = toSystemLogger;
    }

    public static boolean enabled(Level l) {
        return l != Level.OFF && l.compareTo(level) <= 0;
    }

    public static void error(String message) {
        say(Level.ERROR, message);
    }

    public static void warn(String message) {
        say(Level.WARNING, message);
    }

    public static void info(String message) {
        say(Level.INFO, message);
    }

    public static void debug(String message) {
        say(Level.DEBUG, message);
    }

    /** n and the noun, singular or plural: "1 probe", "2 probes", "1 class", "3 classes". */
    public static String count(long n, String noun) {
        if (n == 1) {
            return "1 " + noun;
        }
        return n + " " + noun + (noun.endsWith("s") ? "es" : "s");
    }

    private static void say(Level l, String message) {
        if (!enabled(l)) {
            return;
        }
        if (system) {
            System.getLogger("io.threadtime").log(l.system(), message);
        } else {
            System.err.println("threadtime: " + message);
        }
    }
}
