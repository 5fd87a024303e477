package io.threadtime;

import com.sun.tools.attach.AgentInitializationException;
import com.sun.tools.attach.VirtualMachine;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code java -jar threadtime.jar attach PID OPTIONS}: loads this JAR's agent
 * into a running JVM (the Attach API) with probe options: {@code probe=...}
 * and {@code probes=@FILE} add probes, {@code probe=off} takes them all out,
 * {@code dump=PATH} writes the trace now. Relative paths are taken from the
 * directory this command runs in. The options are checked here first, so a
 * wrong one changes nothing in the target. Exit status 0, 1 (the attach or
 * the agent failed) or 2 (usage, bad options).
 */
public final class Main {
    private Main() {}

    public static void main(String[] args) {
        if (args.length != 3 || !args[0].equals("attach") || !args[1].matches("[0-9]+")) {
            System.err.println("usage: java -jar threadtime.jar attach PID OPTIONS\n"
                    + "  OPTIONS, comma-separated: " + AgentOptions.ATTACH_HELP.substring("expected ".length()));
            System.exit(2);
        }
        String options = absolutePaths(args[2]);
        try {
            AgentOptions.parse(options, true);
        } catch (IllegalArgumentException e) {
            System.err.println(e.getMessage());
            System.exit(2);
        }
        String warnings = null;
        try {
            String jar = Path.of(Main.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
            VirtualMachine vm = VirtualMachine.attach(args[1]);
            try {
                try {
                    vm.loadAgent(jar, options);
                } catch (AgentInitializationException e) {
                    // The protocol carries only the return code; agentmain left its message.
                    String why = vm.getSystemProperties().getProperty(ThreadTimeAgent.ATTACH_ERROR);
                    System.err.println("threadtime: the agent in JVM " + args[1] + " failed: "
                            + (why != null ? why : e.getMessage() + "; its stderr says why"));
                    System.exit(1);
                }
                warnings = vm.getSystemProperties().getProperty(ThreadTimeAgent.ATTACH_WARNINGS);
            } finally {
                vm.detach();
            }
        } catch (Exception e) {
            System.err.println("threadtime: could not attach to JVM " + args[1] + ": " + e);
            System.exit(1);
        }
        if (warnings != null && !warnings.isEmpty()) {
            warnings.lines().forEach(l -> System.err.println("threadtime: " + l));
        }
        System.err.println("threadtime: JVM " + args[1] + " took " + options);
    }

    /** out=, dump= and probes=@ made absolute here, where the user typed them. */
    static String absolutePaths(String options) {
        List<String> out = new ArrayList<>();
        for (String item : options.split(",", -1)) {
            for (String key : List.of("out=", "dump=", "probes=@")) {
                if (item.startsWith(key) && item.length() > key.length()) {
                    item = key + Path.of(item.substring(key.length())).toAbsolutePath();
                }
            }
            out.add(item);
        }
        return String.join(",", out);
    }
}
