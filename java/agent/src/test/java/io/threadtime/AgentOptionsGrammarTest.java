package io.threadtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.threadtime.agent.AgentOptions;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The options the two agents share are one table's rows (src/settings.def:
 * a TT_JVMTI row names a -javaagent row the JVMTI agent reads too, and adds
 * values of its own). The JVMTI agent's parser is generated from them
 * (jvmti/agent/options.h); the -javaagent's {@link AgentOptions} is written
 * by hand. Strings made from those rows, good and bad, go to both: the JVMTI
 * agent the JAR carries, loaded by a child JVM (a refused option stops it),
 * and {@link AgentOptions#parse} here. Both must take each value of the
 * shared rows, alone and together, and refuse the same bad strings; the
 * JVMTI agent's own values only it takes.
 */
class AgentOptionsGrammarTest {
    /** TT_JVMTI(KEY, EXTRA, DOC): the first two. */
    private static final Pattern JVMTI_ROW = Pattern.compile("^TT_JVMTI\\(\"([^\"]*)\",\\s*\"([^\"]*)\"",
            Pattern.MULTILINE);

    /** Each shared key, its -javaagent values, and the JVMTI agent's own. */
    record Shared(String key, List<String> values, List<String> extra) {}

    static List<Shared> shared() throws Exception {
        Map<String, AgentSettingsTest.Row> rows = new LinkedHashMap<>();
        for (AgentSettingsTest.Row r : AgentSettingsTest.rows()) {
            rows.put(r.key(), r);
        }
        List<Shared> shared = new ArrayList<>();
        Matcher m = JVMTI_ROW.matcher(Files.readString(SourceTree.file("src/settings.def")));
        while (m.find()) {
            AgentSettingsTest.Row r = rows.get(m.group(1));
            assertTrue(r != null && r.type().equals("enum") && r.atStart(),
                    "TT_JVMTI(\"" + m.group(1) + "\") names no enum -javaagent option read at start");
            shared.add(new Shared(r.key(), List.of(r.range().split("\\|")),
                    m.group(2).isEmpty() ? List.of() : List.of(m.group(2).split("\\|"))));
        }
        assertFalse(shared.size() < 2, "fewer than two TT_JVMTI rows in src/settings.def: " + shared);
        return shared;
    }

    @Test
    void bothParsersAcceptAndRefuseTheSameStrings() throws Exception {
        List<Shared> shared = shared();
        List<String> good = new ArrayList<>(List.of(""));
        List<String> own = new ArrayList<>();
        List<String> bad = new ArrayList<>(List.of("foo", "foo=1", ",", "=", "sundial=on"));
        for (Shared s : shared) {
            String k = s.key(), first = s.values().get(0), last = s.values().get(s.values().size() - 1);
            for (String v : s.values()) {
                good.add(k + "=" + v);
            }
            for (String v : s.extra()) {
                own.add(k + "=" + v);
            }
            bad.addAll(List.of(k + "=sundial", k + "=", k, k + "=" + first.toUpperCase(Locale.ROOT),
                    k.toUpperCase(Locale.ROOT) + "=" + first, " " + k + "=" + first, k + "=" + first + " ",
                    k + "=" + first + "," + k + "=" + last, k + "=" + first + "," + k + "=" + first,
                    k + "=" + first + ",", "," + k + "=" + first, k + "=" + first + "=" + last));
        }
        // Two options together, in both orders, and what a separator other than one comma does to them.
        Shared a = shared.get(0), b = shared.get(1);
        String x = a.key() + "=" + a.values().get(a.values().size() - 1), y = b.key() + "=" + b.values().get(0);
        good.addAll(List.of(x + "," + y, y + "," + x));
        bad.addAll(List.of(x + ",," + y, x + ";" + y, x + " " + y));
        if (!b.extra().isEmpty()) {
            own.add(x + "," + b.key() + "=" + b.extra().get(0));
        }

        String agent = "-agentpath:" + VirtualThreadCpu.agentPath() + "=";
        List<String> differ = new ArrayList<>();
        for (List<String> texts : List.of(good, own, bad)) {
            for (String text : texts) {
                boolean java = javaAgentAccepts(text), jvmti = jvmtiAgentAccepts(agent + text);
                boolean wantJava = texts == good, wantJvmti = texts != bad;
                if (java != wantJava || jvmti != wantJvmti) {
                    differ.add("'" + text + "': -javaagent " + (java ? "accepts" : "refuses") + ", JVMTI agent "
                            + (jvmti ? "accepts" : "refuses"));
                }
            }
        }
        assertEquals(List.of(), differ);
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
