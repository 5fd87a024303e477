package io.threadtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.threadtime.agent.AgentOptions;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The -javaagent's options against their rows in the settings table
 * (src/settings.def, which docs/settings.md is generated from; Java cannot
 * include it, so it reads it). The parser knows exactly the table's keys, at
 * start and when attaching; takes every value a row allows (each enum
 * value, both ends of a number's range) and refuses those just outside it;
 * and a row's default is what the parser gives when the option is left out.
 */
class AgentSettingsTest {
    /** TT_AGENT(KEY, TYPE, RANGE, DEFAULT, WHEN, DOC): the first five. */
    private static final Pattern ROW = Pattern.compile(
            "^TT_AGENT\\(\"([^\"]*)\",\\s*\"([^\"]*)\",\\s*\"([^\"]*)\",\\s*\"([^\"]*)\",\\s*\"([^\"]*)\"",
            Pattern.MULTILINE);
    /** A filter the parser takes (a class outside the packages it refuses). */
    private static final String FILTER = "java.util.HashMap::resize";

    @TempDir
    Path dir;

    record Row(String key, String type, String range, String dflt, String when) {
        boolean atStart() {
            return !when.equals("attach");
        }

        boolean atAttach() {
            return !when.equals("start");
        }
    }

    static List<Row> rows() throws Exception {
        String text = Files.readString(SourceTree.file("src/settings.def"));
        List<Row> rows = new ArrayList<>();
        Matcher m = ROW.matcher(text);
        while (m.find()) {
            rows.add(new Row(m.group(1), m.group(2), m.group(3), m.group(4), m.group(5)));
        }
        assertFalse(rows.isEmpty(), "no TT_AGENT row in src/settings.def");
        return rows;
    }

    @Test
    void theParserKnowsExactlyTheTablesKeys() throws Exception {
        Set<String> start = new TreeSet<>(), attach = new TreeSet<>();
        for (Row r : rows()) {
            if (r.atStart()) {
                start.add(r.key());
            }
            if (r.atAttach()) {
                attach.add(r.key());
            }
        }
        assertEquals(start, new TreeSet<>(keys("START_KEYS")), "keys at start (-javaagent)");
        assertEquals(attach, new TreeSet<>(keys("ATTACH_KEYS")), "keys when attaching");
    }

    @Test
    void everyValueInARowsRangeIsTakenAndTheNextOnesOutsideAreNot() throws Exception {
        List<String> wrong = new ArrayList<>();
        for (Row r : rows()) {
            for (boolean attach : new boolean[] {false, true}) {
                if (attach ? !r.atAttach() : !r.atStart()) {
                    continue;
                }
                for (String v : good(r)) {
                    String refused = refusal(r, v, attach);
                    if (refused != null) {
                        wrong.add(r.key() + "=" + v + (attach ? " (attach)" : " (start)") + " refused: " + refused);
                    }
                }
                for (String v : bad(r)) {
                    if (refusal(r, v, attach) == null) {
                        wrong.add(r.key() + "=" + v + (attach ? " (attach)" : " (start)") + " taken");
                    }
                }
            }
        }
        assertEquals(List.of(), wrong);
    }

    @Test
    void aRowsDefaultIsWhatLeavingTheOptionOutGives() throws Exception {
        int checked = 0;
        for (Row r : rows()) {
            if (r.dflt().isEmpty() || !r.atStart()) {
                continue;
            }
            AgentOptions none = AgentOptions.parse(companion(r).replaceAll(",$", ""), false);
            AgentOptions given = AgentOptions.parse(companion(r) + r.key() + "=" + r.dflt(), false);
            for (Field f : AgentOptions.class.getDeclaredFields()) {
                // modeGiven records that mode= was written at all, whatever its value.
                if (Modifier.isStatic(f.getModifiers()) || f.getName().equals("modeGiven")) {
                    continue;
                }
                f.setAccessible(true);
                assertEquals(comparable(f.get(none)), comparable(f.get(given)),
                        r.key() + "=" + r.dflt() + " changes " + f.getName());
            }
            checked++;
        }
        assertFalse(checked == 0);
    }

    /** What an option needs beside it to be parsed at all: probe.cpu= needs probes. */
    private static String companion(Row r) {
        return r.key().equals("probe.cpu") ? "probe=" + FILTER + "," : "";
    }

    /** A field's value as equals() can compare it: a list of filters by their texts. */
    private static Object comparable(Object v) throws ReflectiveOperationException {
        if (!(v instanceof List<?> list)) {
            return v;
        }
        List<Object> texts = new ArrayList<>();
        for (Object filter : list) {
            Field text = filter.getClass().getDeclaredField("text");
            text.setAccessible(true);
            texts.add(text.get(filter));
        }
        return texts;
    }

    @SuppressWarnings("unchecked")
    private static Set<String> keys(String field) throws Exception {
        Field f = AgentOptions.class.getDeclaredField(field);
        f.setAccessible(true);
        return (Set<String>) f.get(null);
    }

    /** Values the row allows: each of an enum's, both ends of a number's, one of the others'. */
    private List<String> good(Row r) throws Exception {
        switch (r.type()) {
            case "enum":
                return List.of(r.range().split("\\|"));
            case "uint":
                String[] ends = r.range().split("\\.\\.");
                return List.of(ends[0], ends[1]);
            case "path":
                return List.of(dir.resolve("out.ttrace").toString());
            case "file":
                Path filters = dir.resolve("filters.txt");
                Files.writeString(filters, FILTER + "\n");
                return List.of("@" + filters);
            case "filters":
                return List.of(FILTER, FILTER + ";java.util.ArrayList");
            default:
                throw new AssertionError("a type AgentSettingsTest does not know: " + r);
        }
    }

    /** Values just outside the row's range. */
    private List<String> bad(Row r) {
        switch (r.type()) {
            case "enum":
                String first = r.range().split("\\|")[0];
                return List.of("sundial", first.toUpperCase(Locale.ROOT), first + " ", "");
            case "uint":
                String[] ends = r.range().split("\\.\\.");
                return List.of(Long.toString(Long.parseLong(ends[0]) - 1), Long.toString(Long.parseLong(ends[1]) + 1),
                        "12x", "");
            case "path":
                return List.of("", dir.toString(), dir.resolve("no-such-dir/out.ttrace").toString());
            case "file":
                return List.of("", "@", "@" + dir.resolve("no-such-file"), dir.resolve("filters.txt").toString());
            case "filters":
                return List.of("", FILTER + ";", "io.threadtime.ThreadTime");
            default:
                throw new AssertionError("a type AgentSettingsTest does not know: " + r);
        }
    }

    /** Why the parser refuses key=value (with what the option needs beside it), null if it takes it. */
    private static String refusal(Row r, String value, boolean attach) {
        try {
            Objects.requireNonNull(AgentOptions.parse(companion(r) + r.key() + "=" + value, attach));
            return null;
        } catch (IllegalArgumentException e) {
            return e.getMessage();
        }
    }
}
