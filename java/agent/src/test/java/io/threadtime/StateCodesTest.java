package io.threadtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.threadtime.agent.vthreads.hooks.VtConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The JVMTI agent's state codes (jvmti/agent/agent.c, VT_STATE_*) are the
 * ones Java reads them with ({@link VtConfig}, which the -javaagent's hooks
 * report too): same names, same numbers.
 */
class StateCodesTest {
    @Test
    void theJvmtiAgentsCodesAreVtConfigs() throws Exception {
        Path source = SourceTree.file("jvmti/agent/agent.c");
        Matcher codes = Pattern.compile("\\bVT_STATE_(\\w+) = (-?\\d+),").matcher(Files.readString(source));
        Map<String, Integer> c = new LinkedHashMap<>();
        while (codes.find()) {
            c.put(codes.group(1), Integer.parseInt(codes.group(2)));
        }
        assertTrue(c.size() >= 4, "the VT_STATE_ enum not found in " + source + ": " + c);
        for (Map.Entry<String, Integer> e : c.entrySet()) {
            int java;
            try {
                java = VtConfig.class.getField(e.getKey()).getInt(null);
            } catch (NoSuchFieldException missing) {
                throw new AssertionError("VtConfig has no " + e.getKey() + " for the agent's VT_STATE_" + e.getKey());
            }
            assertEquals(e.getValue().intValue(), java, "VT_STATE_" + e.getKey() + " in " + source);
        }
    }
}
