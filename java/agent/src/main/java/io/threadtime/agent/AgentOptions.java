package io.threadtime.agent;

import io.threadtime.AgentAccess;
import io.threadtime.EventLog;
import io.threadtime.agent.probes.ProbeFilter;
import io.threadtime.VirtualThreadCpu.Mode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The agent's options, comma-separated: at start ({@code -javaagent}) and
 * when attaching. A wrong one throws an {@link IllegalArgumentException}
 * whose message is the one line users see: which option, where, and what
 * was expected.
 */
public final class AgentOptions {
    static final String OPTIONS_HELP = "expected mode=exact|mounted, events=on|off, accounts=threads|table, "
            + "probe=FILTER[;FILTER...], probes=@FILE, probe.cpu=on|off, out=PATH, ring=N, "
            + "fastclock=on|off, log=off|error|warning|info|debug, logger=stderr|system";
    static final String ATTACH_HELP = "expected probe=FILTER[;FILTER...], probes=@FILE, probe=off, probe.cpu=on|off, "
            + "out=PATH, ring=N, dump=PATH, log=off|error|warning|info|debug, logger=stderr|system";

    private static final Set<String> START_KEYS = Set.of("mode", "events", "accounts", "probe", "probes", "probe.cpu",
            "out", "ring", "fastclock", "log", "logger");
    private static final Set<String> ATTACH_KEYS = Set.of("probe", "probes", "probe.cpu", "out", "ring", "dump", "log",
            "logger");

    /** {@code mode=}: {@link Mode#EXACT} (the default) or {@link Mode#MOUNTED}. */
    public Mode mode = Mode.EXACT;
    /** Whether {@code mode=} was given: with probes and no {@code mode=}, nothing is charged. */
    public boolean modeGiven;
    public boolean hooks = true;
    public boolean table;
    public final List<ProbeFilter> filters = new ArrayList<>();
    public boolean cpu;
    public Path out;
    public int ring;
    public boolean probesOff;
    public Path dump;
    public Boolean fastClock; // fastclock=: null when not given
    public AgentLog.Level logLevel = AgentLog.Level.INFO;
    public boolean systemLogger;

    /** Whether the agent runs the event log (and writes it at exit). */
    public boolean runsLog() {
        return !filters.isEmpty() || out != null || ring != 0;
    }

    public static AgentOptions parse(String text, boolean attach) {
        AgentOptions o = new AgentOptions();
        if (text == null || text.isEmpty()) {
            if (attach) {
                throw new IllegalArgumentException("threadtime: no options (" + ATTACH_HELP + ")");
            }
            return o;
        }
        Set<String> seen = new HashSet<>();
        int pos = 0;
        for (String item : text.split(",", -1)) {
            int at = pos + 1; // 1-based, as an editor counts
            pos += item.length() + 1;
            int eq = item.indexOf('=');
            String key = eq < 0 ? item : item.substring(0, eq);
            String value = eq < 0 ? "" : item.substring(eq + 1);
            if (item.isEmpty()) {
                throw new IllegalArgumentException("threadtime: empty option at character " + at + " of '" + text
                        + "' (a comma too many?)");
            }
            Set<String> keys = attach ? ATTACH_KEYS : START_KEYS;
            if (!keys.contains(key)) {
                String help = attach && START_KEYS.contains(key)
                        ? "mode=, events= and accounts= work only at start (-javaagent): the VirtualThread hooks go in then"
                        : !attach && ATTACH_KEYS.contains(key)
                                ? key + "= works only when attaching to a running JVM"
                                : attach ? ATTACH_HELP : OPTIONS_HELP;
                throw new IllegalArgumentException("threadtime: unknown option " + where(item, text, at) + " ("
                        + help + ")");
            }
            if (eq < 0) {
                throw new IllegalArgumentException("threadtime: option " + where(item, text, at)
                        + " has no value (write " + key + "=VALUE)");
            }
            if (!seen.add(key)) {
                throw new IllegalArgumentException("threadtime: conflicting option " + where(item, text, at) + ": "
                        + key + "= was given before (each option at most once)");
            }
            try {
                o.set(key, value, at + key.length() + 1, attach);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("threadtime: bad option " + where(item, text, at) + ": "
                        + e.getMessage());
            }
        }
        String conflict = null;
        if (!o.hooks && o.runsLog()) {
            conflict = "events=off leaves VirtualThread without the hooks that write the log's virtual-thread markers; "
                    + "drop it, or drop probe=/probes=/out=/ring=";
        } else if (seen.contains("probe.cpu") && o.filters.isEmpty()) {
            conflict = "probe.cpu= needs probe= or probes=";
        } else if (o.probesOff && (seen.contains("probes") || seen.contains("probe.cpu"))) {
            conflict = "probe=off takes every probe out; it cannot come with probes= or probe.cpu=";
        }
        if (conflict != null) {
            throw new IllegalArgumentException("threadtime: conflicting options in '" + text + "': " + conflict);
        }
        return o;
    }

    /** 'item', and where it is when the text holds more than it. */
    private static String where(String item, String text, int at) {
        return "'" + item + "'" + (item.equals(text) ? "" : " at character " + at + " of '" + text + "'");
    }

    /** One option's value; column is where the value starts in the option text. */
    private void set(String key, String value, int column, boolean attach) {
        switch (key) {
            case "mode":
                modeGiven = true;
                if (value.equals("exact")) {
                    mode = Mode.EXACT;
                } else if (value.equals("mounted")) {
                    mode = Mode.MOUNTED;
                } else {
                    throw new IllegalArgumentException("expected exact or mounted");
                }
                break;
            case "events":
                hooks = onOff(value);
                break;
            case "accounts":
                table = value.equals("table");
                if (!table && !value.equals("threads")) {
                    throw new IllegalArgumentException("expected threads or table");
                }
                break;
            case "probe.cpu":
                cpu = onOff(value);
                break;
            case "probe":
                if (value.equals("off")) {
                    if (!attach) {
                        throw new IllegalArgumentException("probe=off takes probes out of a running JVM (attach)");
                    }
                    probesOff = true;
                    break;
                }
                int c = column;
                for (String f : value.split(";", -1)) {
                    try {
                        filters.add(ProbeFilter.parse(f));
                    } catch (IllegalArgumentException e) {
                        throw new IllegalArgumentException("filter '" + f + "' at character " + c + ": " + e.getMessage());
                    }
                    c += f.length() + 1;
                }
                break;
            case "probes":
                filters.addAll(readFilters(value));
                break;
            case "out":
                out = writablePath(value);
                break;
            case "dump":
                dump = writablePath(value);
                break;
            case "ring":
                try {
                    ring = Integer.parseInt(value);
                } catch (NumberFormatException e) {
                    ring = -1;
                }
                if (ring < EventLog.RING_MIN || ring > EventLog.RING_MAX) {
                    throw new IllegalArgumentException("expected records per thread ring, " + EventLog.RING_MIN
                            + " to " + EventLog.RING_MAX);
                }
                break;
            case "fastclock":
                fastClock = AgentAccess.parseFastClock(value);
                break;
            case "log":
                logLevel = AgentLog.Level.parse(value);
                break;
            case "logger":
                systemLogger = value.equals("system");
                if (!systemLogger && !value.equals("stderr")) {
                    throw new IllegalArgumentException("expected stderr or system");
                }
                break;
            default:
                throw new IllegalStateException(key);
        }
    }

    private static boolean onOff(String value) {
        if (!value.equals("on") && !value.equals("off")) {
            throw new IllegalArgumentException("expected on or off");
        }
        return value.equals("on");
    }

    /** probes=@FILE: one filter a line; blank lines and lines starting with # are skipped. */
    private static List<ProbeFilter> readFilters(String value) {
        if (!value.startsWith("@") || value.length() == 1) {
            throw new IllegalArgumentException("expected @FILE, a file of filters, one a line");
        }
        Path file = Path.of(value.substring(1)).toAbsolutePath();
        List<String> lines;
        try {
            lines = Files.readAllLines(file);
        } catch (java.nio.file.NoSuchFileException e) {
            throw new IllegalArgumentException("no file " + file);
        } catch (IOException | RuntimeException e) {
            throw new IllegalArgumentException("cannot read " + file + " (" + e + ")");
        }
        List<ProbeFilter> filters = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            try {
                filters.add(ProbeFilter.parse(line));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("filter '" + line + "' on line " + (i + 1) + " of " + file + ": "
                        + e.getMessage());
            }
        }
        if (filters.isEmpty()) {
            throw new IllegalArgumentException(file + " holds no filter");
        }
        return filters;
    }

    /** A file path whose directory exists and is writable. */
    private static Path writablePath(String value) {
        if (value.isEmpty()) {
            throw new IllegalArgumentException("expected a file path");
        }
        Path p = Path.of(value).toAbsolutePath();
        Path dir = p.getParent();
        if (Files.isDirectory(p)) {
            throw new IllegalArgumentException(p + " is a directory; name a file");
        }
        if (dir == null || !Files.isDirectory(dir)) {
            throw new IllegalArgumentException(p + " cannot be written: no directory " + dir);
        }
        if (!Files.isWritable(dir)) {
            throw new IllegalArgumentException(p + " cannot be written: directory " + dir + " is not writable");
        }
        return p;
    }
}
