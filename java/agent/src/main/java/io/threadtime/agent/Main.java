package io.threadtime.agent;

import io.threadtime.AgentAccess;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import sun.misc.Signal;

/**
 * {@code java -jar threadtime.jar COMMAND ...}: the {@code threadtime}
 * command line tool ({@code dump}, {@code run}, {@code bench},
 * {@code attach}, {@code version}; docs/cli.md), run from the copy this JAR
 * carries for this platform. It is extracted as the native library is
 * ({@code ExtractionDirectory}), with the library {@code run} preloads
 * beside it; {@code attach} loads this JAR as the agent unless given
 * {@code --jar}. The exit status is the tool's: 2 for a wrong command or
 * usage.
 */
public final class Main {
    /** The executable's name in the JAR, beside the libraries. */
    static final String COMMAND = "threadtime";
    /** The library {@code threadtime run} preloads into the command it runs. */
    static final String RUN_LIBRARY = "libthreadtime_run";

    private Main() {}

    public static void main(String[] args) {
        String otherwise = "install threadtime's command and run it directly";
        int status;
        try {
            byte[] command = AgentAccess.bundled(COMMAND, otherwise);
            byte[] preload = AgentAccess.bundled(RUN_LIBRARY + ".so", otherwise);
            status = AgentAccess.extracting("the threadtime command", otherwise, dir -> {
                Path exe = dir.putVersioned(COMMAND, "", command);
                Path lib = dir.putVersioned(RUN_LIBRARY, ".so", preload);
                ProcessBuilder pb = new ProcessBuilder(arguments(exe, args)).inheritIO();
                pb.environment().put("THREADTIME_RUN_LIB", lib.toString());
                // Set before the command starts (a handler, unlike SIG_IGN, is
                // not inherited across exec), so no signal finds the JVM's own.
                Forward forward = new Forward();
                Process p = pb.start();
                forward.started(p);
                dir.unlock(); // started: others may extract while it runs
                // This JVM ends when the command does, through the normal
                // path: the extraction directory is cleaned up on the way.
                return waitFor(p);
            });
        } catch (UnsatisfiedLinkError | UncheckedIOException e) {
            System.err.println(e.getMessage());
            status = 1;
        }
        System.exit(status);
    }

    /** The command line: the tool, then args, with this JAR as attach's agent unless --jar names one. */
    static List<String> arguments(Path exe, String[] args) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(exe.toString());
        cmd.addAll(List.of(args));
        if (args.length > 0 && args[0].equals("attach") && !List.of(args).contains("--jar")) {
            Path jar = jar();
            if (jar == null) {
                throw new IOException("threadtime attach needs --jar JAR: this class was not loaded from a JAR");
            }
            cmd.add(2, "--jar");
            cmd.add(3, jar.toString());
        }
        return cmd;
    }

    /** The JAR this class came from; null if it came from a directory or elsewhere. */
    static Path jar() {
        try {
            Path p = Path.of(Main.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            return p.toString().endsWith(".jar") ? p : null;
        } catch (URISyntaxException | RuntimeException e) {
            return null;
        }
    }

    /** How a user runs the threadtime command: {@code java -jar} this JAR, or {@code threadtime}. */
    public static String commandLine() {
        Path jar = jar();
        return jar != null ? "java -jar " + jar : "threadtime";
    }

    /**
     * While the command runs, this JVM waits for it as a shell waits for a
     * foreground job. Ctrl-C sends SIGINT to the terminal's whole process
     * group: the command and the native threadtime have it already, so this
     * JVM ignores it (its default, a shutdown that ended threadtime with
     * SIGTERM, cost the report once the command was done). SIGTERM and
     * SIGHUP, which may be this JVM's alone, go on to threadtime as SIGTERM
     * (it forwards them to the command), one that comes before it started
     * as soon as it has; this JVM then exits with the command's status.
     * Where the JVM keeps these signals for itself (-Xrs), they keep their
     * default.
     */
    private static final class Forward {
        private Process process;
        private boolean asked;

        Forward() {
            try {
                Signal.handle(new Signal("INT"), sig -> {});
                Signal.handle(new Signal("TERM"), sig -> term());
                Signal.handle(new Signal("HUP"), sig -> term());
            } catch (IllegalArgumentException e) {
                // -Xrs, or a signal ignored from the start: left as it is
            }
        }

        synchronized void started(Process p) {
            process = p;
            if (asked) {
                p.destroy();
            }
        }

        private synchronized void term() {
            asked = true;
            if (process != null) {
                process.destroy();
            }
        }
    }

    private static int waitFor(Process p) {
        while (true) {
            try {
                return p.waitFor();
            } catch (InterruptedException e) {
                // the command decides when it ends
            }
        }
    }
}
