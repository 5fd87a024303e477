package io.threadtime.agent.probes;

import io.threadtime.EventLog;
import io.threadtime.agent.AgentLog;
import io.threadtime.agent.probes.ProbeTransformer.MethodInfo;
import io.threadtime.agent.probes.ProbeTransformer.Plan;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

/**
 * The probe filters in force, the ids and names given to the probes, and what
 * each filter has matched (for the one line about a filter that matched
 * nothing). Used by the transformer, at class load, never on a probe's path.
 */
final class ProbeRegistry {
    private static final String INTRINSIC = "Ljdk/internal/vm/annotation/IntrinsicCandidate;";
    private final List<ProbeFilter> filters = new CopyOnWriteArrayList<>();
    private volatile Set<String> classNames = Set.of();
    private volatile boolean annotations;
    private final Map<String, Integer> ids = new ConcurrentHashMap<>();
    private final AtomicInteger nextId = new AtomicInteger(EventLog.PROBE_IDS);
    /** Classes changed so far (internal names), for probe=off. */
    private final Set<String> transformed = ConcurrentHashMap.newKeySet();
    private final Set<ProbeFilter> matched = ConcurrentHashMap.newKeySet();
    /** Filters that found their class but not their method or line: what the class had instead. */
    private final Map<ProbeFilter, String> nearMisses = new ConcurrentHashMap<>();
    /** Those of them whose class lacks the method itself (it may inherit it, or subclasses declare it). */
    private final Set<ProbeFilter> noMethod = ConcurrentHashMap.newKeySet();
    private final Set<String> refusals = ConcurrentHashMap.newKeySet();
    private final Set<ProbeFilter> refused = ConcurrentHashMap.newKeySet();
    /**
     * Classes (internal names) whose code a probe on a virtual thread runs to
     * keep its begin's CPU reading (a ThreadLocal: its map, the map's weak
     * entries), and Thread::isVirtual; set once probe.cpu=on takes that path.
     * A probe there would call itself.
     */
    private static final Set<String> VIRTUAL_PATH = Set.of("java/lang/ThreadLocal",
            "java/lang/ThreadLocal$ThreadLocalMap", "java/lang/ThreadLocal$ThreadLocalMap$Entry",
            "java/lang/ref/WeakReference", "java/lang/ref/Reference");
    private volatile boolean virtualPath;

    /** Keeps probes out of what a probe on a virtual thread runs (see {@link #VIRTUAL_PATH}). */
    void guardVirtualPath() {
        virtualPath = true;
    }

    private boolean onVirtualPath(String cls, String method) {
        return virtualPath && (VIRTUAL_PATH.contains(cls) || (cls.equals("java/lang/Thread") && method.equals("isVirtual")));
    }

    synchronized void add(List<ProbeFilter> more) {
        filters.addAll(more);
        Set<String> names = new TreeSet<>(classNames);
        for (ProbeFilter f : more) {
            if (f.className != null) {
                names.add(f.className);
            }
            annotations |= f.annotation != null;
        }
        classNames = Set.copyOf(names);
    }

    /** Forgets every filter (probe=off); ids and names stay, so that a trace keeps naming old events. */
    synchronized List<String> clear() {
        filters.clear();
        classNames = Set.of();
        annotations = false;
        List<String> was = new ArrayList<>(transformed);
        transformed.clear();
        return was;
    }

    boolean isEmpty() {
        return filters.isEmpty();
    }

    /** Cheap test before a class is read: could a filter match it? */
    boolean mayMatch(String internalName) {
        return (classNames.contains(internalName) || annotations) && !internalName.startsWith("io/threadtime/");
    }

    /** Whether a loaded class should be retransformed (annotations: only those kept at run time are seen). */
    boolean matchesLoaded(Class<?> c) {
        String name = c.getName().replace('.', '/');
        if (!mayMatch(name)) {
            return false;
        }
        if (classNames.contains(name)) {
            return true;
        }
        try {
            for (java.lang.annotation.Annotation a : c.getDeclaredAnnotations()) {
                if (annotated(a)) {
                    return true;
                }
            }
            for (java.lang.reflect.Method m : c.getDeclaredMethods()) {
                for (java.lang.annotation.Annotation a : m.getDeclaredAnnotations()) {
                    if (annotated(a)) {
                        return true;
                    }
                }
            }
        } catch (Throwable t) {
            // a class whose members cannot be resolved: not probed
        }
        return false;
    }

    private boolean annotated(java.lang.annotation.Annotation a) {
        String desc = "L" + a.annotationType().getName().replace('.', '/') + ";";
        return filters.stream().anyMatch(f -> desc.equals(f.annotation));
    }

    /** Which methods of this class get which probes (method name + descriptor to plan). */
    Map<String, Plan> plan(String cls, Set<String> classAnnotations, List<MethodInfo> methods) {
        Map<String, Plan> plans = new LinkedHashMap<>();
        Map<String, Integer> withCode = new HashMap<>();
        for (MethodInfo m : methods) {
            if (m.hasCode()) {
                withCode.merge(m.name, 1, Integer::sum);
            }
        }
        String dotted = cls.replace('/', '.');
        for (MethodInfo m : methods) {
            boolean timed = false;
            Map<Integer, Integer> lines = new TreeMap<>();
            for (ProbeFilter f : filters) {
                boolean hit = f.annotation != null
                        ? classAnnotations.contains(f.annotation) || m.annotations.contains(f.annotation)
                        : f.matches(cls, m.name);
                if (!hit) {
                    continue;
                }
                if (onVirtualPath(cls, m.name)) {
                    if (f.method != null) {
                        refuse(f, dotted + "::" + m.name + "(" + ProbeTransformer.parameters(m.desc)
                                + ") runs inside every probe on a virtual thread with probe.cpu=on");
                    }
                    continue;
                }
                if (!m.hasCode() || (cls.equals("java/lang/Object") && m.name.equals("<init>"))) {
                    if (f.method != null || (f.annotation != null && m.annotations.contains(f.annotation))) {
                        refuse(f, dotted + "::" + m.name + "(" + ProbeTransformer.parameters(m.desc) + ")"
                                + (m.hasCode() ? " runs for every object created"
                                : " is " + ((m.access & org.objectweb.asm.Opcodes.ACC_NATIVE) != 0 ? "native" : "abstract")
                                        + " (no bytecode)"));
                    }
                    continue;
                }
                if (f.isLine()) {
                    if (m.lines.contains(f.line)) {
                        lines.put(f.line, id(dotted + "::" + m.name + "@" + f.line));
                        matched.add(f);
                    }
                } else {
                    timed = true;
                    matched.add(f);
                }
            }
            if (timed || !lines.isEmpty()) {
                String name = dotted + "::" + m.name
                        + (withCode.get(m.name) > 1 ? "(" + ProbeTransformer.parameters(m.desc) + ")" : "");
                if (m.annotations.contains(INTRINSIC) && refusals.add(name + INTRINSIC)) {
                    AgentLog.warn("probe on " + name + ": a JIT intrinsic (@IntrinsicCandidate); compiled callers "
                            + "may run the JIT's own code instead of its bytecode, so calls from them can go uncounted");
                }
                plans.put(m.key(), new Plan(timed ? id(name) : -1, lines));
            }
        }
        noteMisses(cls, methods);
        return plans;
    }

    /** For filters naming this class that still matched nothing: what it has instead. */
    private void noteMisses(String cls, List<MethodInfo> methods) {
        for (ProbeFilter f : filters) {
            if (!cls.equals(f.className) || f.method == null || matched.contains(f)) {
                continue;
            }
            List<MethodInfo> same = methods.stream().filter(m -> m.name.equals(f.method)).collect(Collectors.toList());
            if (same.isEmpty()) {
                Set<String> names = methods.stream().map(m -> m.name).collect(Collectors.toCollection(TreeSet::new));
                nearMisses.put(f, cls.replace('/', '.') + " has no method " + f.method + "; nearest: "
                        + String.join(", ", nearest(f.method, names)));
                noMethod.add(f);
            } else if (f.isLine()) {
                String ranges = same.stream().filter(m -> !m.lines.isEmpty())
                        .map(m -> m.lines.first() + "-" + m.lines.last())
                        .collect(Collectors.joining(", "));
                nearMisses.put(f, f.method + " has no code on line " + f.line
                        + (ranges.isEmpty() ? " (the class has no line numbers)" : "; its lines: " + ranges));
            }
        }
    }

    private void refuse(ProbeFilter f, String why) {
        refused.add(f);
        if (refusals.add(f.text + why)) {
            AgentLog.warn("probe '" + f.text + "': " + why + ", so it is left out");
        }
    }

    /** The id of a probe name, given (and named in the log) the first time. */
    int id(String name) {
        return ids.computeIfAbsent(name, n -> {
            int id = nextId.getAndIncrement();
            try {
                EventLog.name(id, fit(n));
            } catch (RuntimeException | LinkageError e) {
                AgentLog.warn("could not name probe " + n + " (" + e + "); the trace shows its id " + id);
            }
            return id;
        });
    }

    /** A name cut to what the log keeps, at a character boundary. */
    static String fit(String name) {
        byte[] utf8 = name.getBytes(StandardCharsets.UTF_8);
        if (utf8.length <= EventLog.NAME_MAX) {
            return name;
        }
        int n = EventLog.NAME_MAX;
        while ((utf8[n] & 0xC0) == 0x80) {
            n--;
        }
        return new String(utf8, 0, n, StandardCharsets.UTF_8);
    }

    void transformed(String internalName) {
        transformed.add(internalName);
    }

    int probes() {
        return ids.size();
    }

    /**
     * One line per filter that matched nothing: what its class has instead,
     * or the nearest loaded class names.
     */
    List<String> unmatched(Class<?>[] loaded) {
        List<String> lines = new ArrayList<>();
        Set<String> loadedNames = null;
        for (ProbeFilter f : filters) {
            if (matched.contains(f) || refused.contains(f)) {
                continue;
            }
            String miss = nearMisses.get(f);
            if (miss != null && noMethod.contains(f)) {
                miss += declaredElsewhere(f, loaded);
            }
            if (miss == null) {
                if (loadedNames == null) {
                    loadedNames = new TreeSet<>();
                    for (Class<?> c : loaded) {
                        if (!c.isArray() && !c.isPrimitive() && !c.isHidden()) {
                            loadedNames.add(c.getName());
                        }
                    }
                }
                String dotted = f.annotation != null ? null : f.className.replace('/', '.');
                int dot = dotted == null || f.method != null ? -1 : dotted.lastIndexOf('.');
                miss = f.annotation != null ? "no loaded class or method carries it"
                        : dot > 0 && loadedNames.contains(dotted.substring(0, dot))
                                ? "no class " + dotted + " was loaded; for method " + dotted.substring(dot + 1)
                                        + " of class " + dotted.substring(0, dot) + ", write "
                                        + dotted.substring(0, dot) + "::" + dotted.substring(dot + 1)
                                : "no class " + dotted + " was loaded; nearest: "
                                        + String.join(", ", nearest(dotted, loadedNames));
            }
            lines.add("probe '" + f.text + "' matched nothing: " + miss);
        }
        return lines;
    }

    /**
     * Where the method a class lacks is declared instead, among the loaded
     * classes: the superclass it inherits it from, and subclasses (a probe
     * goes into the class that declares the method).
     */
    private static String declaredElsewhere(ProbeFilter f, Class<?>[] loaded) {
        String dotted = f.className.replace('/', '.');
        Class<?> cls = null;
        for (Class<?> c : loaded) {
            if (c.getName().equals(dotted)) {
                cls = c;
                break;
            }
        }
        if (cls == null) {
            return "";
        }
        StringBuilder b = new StringBuilder();
        try {
            for (Class<?> s = cls.getSuperclass(); s != null; s = s.getSuperclass()) {
                if (declares(s, f.method)) {
                    b.append("; it inherits it from ").append(s.getName());
                    break;
                }
            }
            List<String> subclasses = new ArrayList<>();
            for (Class<?> c : loaded) {
                if (c != cls && !c.isArray() && cls.isAssignableFrom(c) && declares(c, f.method)) {
                    subclasses.add(c.getName());
                }
            }
            if (!subclasses.isEmpty()) {
                b.append("; loaded subclasses declaring it (probe those): ")
                        .append(String.join(", ", subclasses.subList(0, Math.min(3, subclasses.size()))));
            }
        } catch (Throwable t) {
            // a class whose members cannot be resolved: no more to say
        }
        return b.toString();
    }

    private static boolean declares(Class<?> c, String method) {
        for (java.lang.reflect.Method m : c.getDeclaredMethods()) {
            if (m.getName().equals(method)) {
                return true;
            }
        }
        return false;
    }

    /** Up to three names closest to a name (edit distance). */
    static List<String> nearest(String name, Set<String> names) {
        return names.stream().sorted(Comparator.comparingInt((String n) -> distance(name, n)).thenComparing(n -> n))
                .limit(3).collect(Collectors.toList());
    }

    static int distance(String a, String b) {
        int[] prev = new int[b.length() + 1], cur = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            prev[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            cur[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int sub = prev[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                cur[j] = Math.min(sub, Math.min(prev[j] + 1, cur[j - 1] + 1));
            }
            int[] t = prev;
            prev = cur;
            cur = t;
        }
        return prev[b.length()];
    }
}
