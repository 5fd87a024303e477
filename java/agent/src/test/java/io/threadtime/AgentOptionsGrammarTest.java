package io.threadtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.threadtime.agent.AgentOptions;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The options the two agents share (mode=exact|mounted, events=on|off,
 * comma-separated, each at most once) are parsed twice: in C by the JVMTI
 * agent (jvmti/agent/agent.c parse_options) and in Java by the -javaagent
 * ({@link AgentOptions}). The same strings, good and bad, go to both: the
 * JVMTI agent the JAR carries, loaded by a child JVM (a refused option stops
 * it), and {@link AgentOptions#parse} here. events=empty is the JVMTI
 * agent's alone, everything else the -javaagent's alone, so neither is here.
 */
class AgentOptionsGrammarTest {
    static final List<String> GOOD = List.of("", "mode=exact", "mode=mounted", "events=on", "events=off",
            "mode=mounted,events=on", "events=off,mode=exact", "events=on,mode=mounted");
    static final List<String> BAD = List.of("mode=fast", "mode=", "mode", "foo", "foo=1", "events=yes", "events=",
            "mode=exact,mode=mounted", "mode=exact,mode=exact", "events=on,events=off", "mode=exact,", ",mode=exact",
            ",", "mode=exact,,events=on", "Mode=exact", "mode=EXACT", " mode=exact", "mode=exact ", "mode=exact;events=on",
            "mode=exact=mounted");

    @Test
    void bothParsersAcceptAndRefuseTheSameStrings() throws Exception {
        String agent = "-agentpath:" + VirtualThreadCpu.agentPath() + "=";
        List<String> differ = new ArrayList<>();
        for (String text : concat(GOOD, BAD)) {
            boolean java = javaAgentAccepts(text), jvmti = jvmtiAgentAccepts(agent + text);
            if (java != jvmti) {
                differ.add("'" + text + "': -javaagent " + (java ? "accepts" : "refuses") + ", JVMTI agent "
                        + (jvmti ? "accepts" : "refuses"));
            } else if (java != GOOD.contains(text)) {
                differ.add("'" + text + "': both " + (java ? "accept" : "refuse") + " it");
            }
        }
        assertEquals(List.of(), differ);
    }

    private static List<String> concat(List<String> a, List<String> b) {
        List<String> all = new ArrayList<>(a);
        all.addAll(b);
        return all;
    }

    private static boolean javaAgentAccepts(String text) {
        try {
            AgentOptions.parse(text, false);
            return true;
        } catch (IllegalArgumentException refused) {
            return false;
        }
    }

    /** A JVM that only prints its version, with the agent given these options:
     * exit 0 (on JDK 17 the agent then stays passive), or 1 once it refused them. */
    private static boolean jvmtiAgentAccepts(String agentOption) throws Exception {
        ChildJvm r = ChildJvm.runMerged(List.of(ProcessHandle.current().info().command().orElseThrow(),
                "-Xshare:auto", agentOption, "-version"));
        String out = r.out();
        int exit = r.exit();
        assertTrue(exit == 0 || out.contains("threadtime-vthreads: unknown or conflicting option"),
                agentOption + ": exit " + exit + " without the agent's refusal: " + out);
        return exit == 0;
    }
}
