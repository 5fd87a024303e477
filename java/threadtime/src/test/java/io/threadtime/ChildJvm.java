package io.threadtime;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** A class (ChildMain unless named) run on this JVM's java, on this class path, with other options. */
record ChildJvm(int exit, String out, String err) {
    static final String GRANT = "--enable-native-access=ALL-UNNAMED";

    static ChildJvm run(List<String> jvmOptions, String... args) throws Exception {
        return run(null, jvmOptions, ChildMain.class.getName(), args);
    }

    /** The java command running main with these options and arguments. */
    static List<String> command(List<String> jvmOptions, String main, String... args) {
        List<String> cmd = new ArrayList<>();
        cmd.add(ProcessHandle.current().info().command().orElseThrow());
        cmd.addAll(jvmOptions);
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(main);
        cmd.addAll(List.of(args));
        return cmd;
    }

    /** main run in directory dir (null: this one's), to its end. */
    static ChildJvm run(Path dir, List<String> jvmOptions, String main, String... args) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(command(jvmOptions, main, args));
        if (dir != null) {
            pb.directory(dir.toFile());
        }
        return finish(pb.start(), String.join(" ", pb.command()));
    }

    /** command run to its end, standard error merged into out(). */
    static ChildJvm runMerged(List<String> command) throws Exception {
        return finish(new ProcessBuilder(command).redirectErrorStream(true).start(), String.join(" ", command));
    }

    /** How long a child may run before it counts as hung. */
    static final long HUNG_SECONDS = 180;

    /**
     * Process p (named what in a failure) read to its end, standard output
     * and error each on a thread of its own. One that has not ended within
     * HUNG_SECONDS fails the test with what it printed so far, after a
     * SIGQUIT (a JVM prints its threads' stacks to standard output on it)
     * and a forced end of it and its children: a hung child never holds the
     * test run.
     */
    static ChildJvm finish(Process p, String what) throws Exception {
        CompletableFuture<String> out = drainAsync(p.getInputStream());
        CompletableFuture<String> err = drainAsync(p.getErrorStream());
        if (!p.waitFor(HUNG_SECONDS, TimeUnit.SECONDS)) {
            new ProcessBuilder("kill", "-QUIT", Long.toString(p.pid())).start().waitFor(10, TimeUnit.SECONDS);
            Thread.sleep(2000);
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
            fail(what + " did not end within " + HUNG_SECONDS + " s\nstdout:\n"
                    + out.completeOnTimeout("(still open)", 5, TimeUnit.SECONDS).get() + "\nstderr:\n"
                    + err.completeOnTimeout("(still open)", 5, TimeUnit.SECONDS).get());
        }
        // A grandchild that outlives the child may still hold the pipes.
        String open = "(cut: a process the child started still holds this stream)";
        return new ChildJvm(p.exitValue(), out.completeOnTimeout(open, 30, TimeUnit.SECONDS).get(),
                err.completeOnTimeout(open, 30, TimeUnit.SECONDS).get());
    }

    /**
     * Reads a stream to its end on a thread of its own (not the common pool:
     * with one or two CPUs it has one thread, which a child that lives on
     * would hold).
     */
    static CompletableFuture<String> drainAsync(InputStream in) {
        CompletableFuture<String> f = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                f.complete(drain(in));
            } catch (RuntimeException e) {
                f.completeExceptionally(e);
            }
        }, "drain");
        t.setDaemon(true);
        t.start();
        return f;
    }

    private static String drain(InputStream in) {
        try {
            ByteArrayOutputStream buf = new ByteArrayOutputStream();
            in.transferTo(buf);
            return buf.toString(StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The value of a "key=value" line the child printed, else null. */
    String value(String key) {
        return out.lines().filter(l -> l.startsWith(key + "=")).map(l -> l.substring(key.length() + 1))
                .findFirst().orElse(null);
    }

    @Override
    public String toString() {
        return "exit " + exit + "\nstdout:\n" + out + "\nstderr:\n" + err;
    }
}
