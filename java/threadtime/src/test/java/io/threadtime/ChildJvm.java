package io.threadtime;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** ChildMain run on this JVM's java, on this class path, with other options. */
record ChildJvm(int exit, String out, String err) {
    static final String GRANT = "--enable-native-access=ALL-UNNAMED";

    static ChildJvm run(List<String> jvmOptions, String... args) throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add(ProcessHandle.current().info().command().orElseThrow());
        cmd.addAll(jvmOptions);
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(ChildMain.class.getName());
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).start();
        CompletableFuture<String> err = CompletableFuture.supplyAsync(() -> drain(p.getErrorStream()));
        String out = drain(p.getInputStream());
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), "child JVM hung");
        return new ChildJvm(p.exitValue(), out, err.get());
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
