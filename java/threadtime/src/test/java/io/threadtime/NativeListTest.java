package io.threadtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Backend.java is the one list of native calls: each method names its core
 * function as the header declares it. Held here against the headers, the JNI
 * natives of JniBackend, their C functions in threadtime_jni.c, and (JDK
 * 22+) the FFM backend, which links its handles from that list.
 */
class NativeListTest {
    /** Every Backend method that calls the core, by name. */
    private static Map<String, Method> calls() {
        Map<String, Method> out = new TreeMap<>();
        for (Method m : Backend.class.getMethods()) {
            if (m.isAnnotationPresent(Backend.Calls.class)) {
                out.put(m.getName(), m);
            }
        }
        return out;
    }

    private static Backend.Calls of(Method m) {
        return m.getAnnotation(Backend.Calls.class);
    }

    private static String jniName(Method m) {
        return of(m).jni().isEmpty() ? m.getName() : of(m).jni();
    }

    private static String symbol(String decl) {
        Matcher n = Pattern.compile("(\\w+)\\s*\\(").matcher(decl);
        assertTrue(n.find(), decl);
        return n.group(1);
    }

    @Test
    void everyDeclarationIsTheHeadersOwn() throws Exception {
        StringBuilder headers = new StringBuilder();
        try (var files = Files.list(SourceTree.file("include/threadtime/threadtime.h").getParent())) {
            for (Path h : files.filter(p -> p.toString().endsWith(".h")).toList()) {
                headers.append(Files.readString(h).replaceAll("\\s+", " "));
            }
        }
        List<String> missing = new ArrayList<>();
        for (Method m : calls().values()) {
            String decl = "TT_API " + of(m).value().replaceAll("\\s+", " ") + ";";
            if (!headers.toString().contains(decl)) {
                missing.add(m.getName() + ": " + decl);
            }
        }
        assertEquals(List.of(), missing, "declarations not found in include/threadtime/*.h");
        assertTrue(calls().size() >= 30, () -> "only " + calls().size() + " calls listed");
    }

    @Test
    void everyCallHasItsJniNativeAndCFunction() throws Exception {
        String c = Files.readString(SourceTree.file("java/threadtime/native/threadtime_jni.c"));
        // Each C function of JniBackend and the text up to the next one.
        Map<String, String> bodies = new TreeMap<>();
        Matcher f = Pattern.compile("(?:FN\\(|Java_io_threadtime_JniBackend_)(\\w+)\\)?\\(").matcher(c);
        List<int[]> at = new ArrayList<>();
        List<String> names = new ArrayList<>();
        while (f.find()) {
            names.add(f.group(1));
            at.add(new int[] {f.start()});
        }
        for (int i = 0; i < names.size(); i++) {
            bodies.put(names.get(i), c.substring(at.get(i)[0], i + 1 < at.size() ? at.get(i + 1)[0] : c.length()));
        }
        TreeSet<String> natives = new TreeSet<>();
        for (Method m : JniBackend.class.getDeclaredMethods()) {
            if (Modifier.isNative(m.getModifiers())) {
                natives.add(m.getName());
            }
        }
        assertEquals(natives, new TreeSet<>(bodies.keySet()), "JniBackend's natives against threadtime_jni.c's functions");
        for (Method m : calls().values()) {
            String jni = jniName(m);
            assertTrue(natives.contains(jni), () -> m.getName() + ": no native " + jni + " in JniBackend");
            String sym = symbol(of(m).value());
            assertTrue(Pattern.compile("\\b" + sym + "\\b").matcher(bodies.get(jni)).find(),
                    () -> "threadtime_jni.c's " + jni + " does not call " + sym + ":\n" + bodies.get(jni));
            Method nat = JniBackend.class.getDeclaredMethod(jni, jni.equals(m.getName()) ? m.getParameterTypes() : new Class<?>[0]);
            assertEquals(m.getReturnType(), nat.getReturnType(), jni);
        }
        // What is native but not listed: only the fast clock's decision, made at load.
        natives.removeAll(calls().values().stream().map(NativeListTest::jniName).collect(Collectors.toSet()));
        assertEquals(new TreeSet<>(List.of("decideFastClock")), natives);
    }

    /** The FFM backend links exactly the calls listed as FFM ones, each with its declaration's descriptor. */
    @Test
    void theFfmBackendLinksWhatTheListSays() throws Exception {
        assumeTrue(Runtime.version().feature() >= 22, "the FFM backend needs JDK 22+");
        Class<?> ffm = Class.forName("io.threadtime.FfmBackend");
        TreeSet<String> listed = new TreeSet<>(), overridden = new TreeSet<>();
        for (Method m : calls().values()) {
            if (of(m).ffm() != Backend.Ffm.JNI) {
                listed.add(m.getName());
            }
        }
        Field methods = ffm.getDeclaredField("METHODS"), ready = ffm.getDeclaredField("READY");
        methods.setAccessible(true);
        ready.setAccessible(true);
        Backend b = Backends.create("ffm");
        b.linkNow();
        String[] linked = (String[]) methods.get(null);
        boolean[] done = (boolean[]) ready.get(null);
        for (int i = 0; i < linked.length; i++) {
            String m = linked[i];
            overridden.add(m);
            assertTrue(done[i], () -> "not linked: " + m);
        }
        assertEquals(listed, overridden, "the FFM backend's links against Backend's list");
        Method descriptor = Class.forName("io.threadtime.FfmLinker").getDeclaredMethod("descriptor", String.class);
        descriptor.setAccessible(true);
        Class<?> fd = Class.forName("java.lang.foreign.FunctionDescriptor");
        Method args = fd.getMethod("argumentLayouts"), ret = fd.getMethod("returnLayout");
        Method carrier = Class.forName("java.lang.foreign.ValueLayout").getMethod("carrier");
        for (String name : listed) {
            Method m = calls().get(name);
            assertEquals(ffm, ffm.getMethod(name, m.getParameterTypes()).getDeclaringClass(), "FfmBackend overrides " + name);
            // Each C type's carrier is the Java type's, or what it is passed as: an address for a
            // handle (long) or an array, an int for a boolean.
            Object d = descriptor.invoke(null, of(m).value());
            List<?> layouts = (List<?>) args.invoke(d);
            int zeros = layouts.size() - m.getParameterCount();
            assertTrue(zeros >= 0, name);
            for (int i = 0; i < m.getParameterCount(); i++) {
                String passed = carrier.invoke(layouts.get(zeros + i)).toString(), java = m.getParameterTypes()[i].toString();
                boolean asAddress = passed.endsWith("MemorySegment") && (java.equals("long") || m.getParameterTypes()[i].isArray());
                assertTrue(passed.equals(java) || asAddress || (passed.equals("int") && java.equals("boolean")),
                        () -> name + ": C " + passed + " for Java " + java);
            }
            Object r = ((java.util.Optional<?>) ret.invoke(d)).orElse(null);
            assertEquals(m.getReturnType().toString(), r == null ? "void" : carrier.invoke(r).toString(), name + " returns");
        }
    }

    /**
     * An os.arch the JDK's linker refuses, with the library named: the calls
     * stay on JNI and work, and the one warning names the option as the cause.
     */
    @Test
    void aLinkerThatRefusesLeavesTheCallsOnJni() throws Exception {
        assumeTrue(Runtime.version().feature() >= 22, "the FFM backend needs JDK 22+");
        String library = NativeLibrary.load().split(" ")[0];
        ChildJvm c = ChildJvm.run(null, List.of(ChildJvm.GRANT, "-D" + NativeLibrary.PROPERTY + "=" + library,
                "-Dos.arch=foo"), UnlinkedChild.class.getName());
        assertEquals(0, c.exit(), c::toString);
        assertTrue(c.out().matches("(?s)read [1-9][0-9]* backend ffm\\s*"), c::toString);
        assertTrue(c.err().contains("FFM could not link") && c.err().contains("-Dos.arch=foo is on the java command line")
                && c.err().contains("stay on JNI"), c::toString);
    }

    /** Calls made before their handles are linked (through JNI) and after (FFM) read one clock, in a fresh JVM. */
    @Test
    void callsKeepTheirAnswersAcrossTheLink() throws Exception {
        assumeTrue(Runtime.version().feature() >= 22, "the FFM backend needs JDK 22+");
        ChildJvm c = ChildJvm.run(null, List.of(ChildJvm.GRANT), LinkChild.class.getName());
        assertEquals(0, c.exit(), c::toString);
        assertTrue(c.out().contains("linked"), c::toString);
    }
}
