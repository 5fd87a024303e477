package io.threadtime.agent.probes;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import example.ProbeTarget;
import io.threadtime.agent.probes.hooks.ProbeConfig;
import java.io.IOException;
import java.io.InputStream;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.objectweb.asm.ClassReader;
import org.objectweb.asm.ClassVisitor;
import org.objectweb.asm.Label;
import org.objectweb.asm.MethodVisitor;
import org.objectweb.asm.Opcodes;

/**
 * The probe transformer in this JVM, with the probe calls bound to a
 * recorder instead of the native log: ProbeTarget transformed and loaded by
 * its own class loader (so the JVM's verifier checks it), every call counted
 * exactly, return values and exceptions (stack traces included) unchanged.
 * The agent with the native log is tested in child JVMs (ProbeAgentTest).
 */
public class ProbeTransformerTest {
    /** What the probes did, in order: "b:ID", "e:ID", "x:ID" (thrown), "l:ID". */
    static final List<String> CALLS = new ArrayList<>();
    static long clock;

    public static synchronized long begin(int id) {
        CALLS.add("b:" + id);
        return ++clock;
    }

    public static synchronized void end(int id, long t0, boolean thrown) {
        CALLS.add((thrown ? "x:" : "e:") + id);
        assertTrue(t0 > 0, "end got the time word of its begin");
    }

    public static synchronized void line(int id) {
        CALLS.add("l:" + id);
    }

    @BeforeAll
    static void bind() throws ReflectiveOperationException {
        MethodHandles.Lookup l = MethodHandles.lookup();
        ProbeConfig.install(l.findStatic(ProbeTransformerTest.class, "begin", MethodType.methodType(long.class, int.class)),
                l.findStatic(ProbeTransformerTest.class, "end",
                        MethodType.methodType(void.class, int.class, long.class, boolean.class)),
                l.findStatic(ProbeTransformerTest.class, "line", MethodType.methodType(void.class, int.class)));
    }

    static byte[] bytes(Class<?> c) throws IOException {
        try (InputStream in = c.getResourceAsStream(c.getSimpleName() + ".class")) {
            return in.readAllBytes();
        }
    }

    /** ProbeTarget with these filters' probes, loaded apart; the registry for its ids. */
    static Class<?> probed(ProbeRegistry registry, String... filters) throws Exception {
        List<ProbeFilter> fs = new ArrayList<>();
        for (String f : filters) {
            fs.add(ProbeFilter.parse(f));
        }
        registry.add(fs);
        byte[] out = new ProbeTransformer(registry, null).probe(null, null, "example/ProbeTarget",
                bytes(ProbeTarget.class));
        assertNotNull(out, "nothing probed");
        return new ClassLoader(ProbeTransformerTest.class.getClassLoader()) {
            Class<?> define() {
                return defineClass("example.ProbeTarget", out, 0, out.length);
            }
        }.define();
    }

    static synchronized List<String> take() {
        List<String> c = new ArrayList<>(CALLS);
        CALLS.clear();
        return c;
    }

    static Object call(Object target, String name, Class<?>[] types, Object... args) throws Throwable {
        Method m = target.getClass().getMethod(name, types);
        try {
            return m.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    @Test
    void everyCallIsOneBeginAndOneEndAndValuesAreUnchanged() throws Throwable {
        ProbeRegistry r = new ProbeRegistry();
        Class<?> c = probed(r, "example.ProbeTarget::square", "example.ProbeTarget::sum");
        int square = r.id("example.ProbeTarget::square"), sum = r.id("example.ProbeTarget::sum");
        Object t = c.getConstructor(int.class).newInstance(5);
        take();
        for (int i = 0; i < 1000; i++) {
            assertEquals(i * i, c.getMethod("square", int.class).invoke(null, i));
        }
        assertEquals(4950L, call(t, "sum", new Class<?>[] {long.class}, 100L));
        List<String> calls = take();
        assertEquals(2002, calls.size(), calls.toString());
        assertEquals(1000, calls.stream().filter(("b:" + square)::equals).count());
        assertEquals(1000, calls.stream().filter(("e:" + square)::equals).count());
        assertEquals(List.of("b:" + sum, "e:" + sum), calls.subList(2000, 2002));
    }

    @Test
    void anExceptionLeavesWithTheSameStackTraceAndItsEndMarkedThrown() throws Throwable {
        ProbeRegistry r = new ProbeRegistry();
        Class<?> c = probed(r, "example.ProbeTarget::fail", "example.ProbeTarget::caughtInside",
                "example.ProbeTarget::locked");
        int fail = r.id("example.ProbeTarget::fail");
        Object t = c.getConstructor(int.class).newInstance(1);
        Object plain = new ProbeTarget(1);
        take();
        Throwable probedEx = failWithBoom(t), plainEx = failWithBoom(plain);
        assertEquals(IllegalStateException.class, probedEx.getClass());
        assertEquals("boom", probedEx.getMessage());
        assertEquals(frames(plainEx), frames(probedEx));
        assertTrue(frames(probedEx).get(0).startsWith("example.ProbeTarget.fail:ProbeTarget.java:"), frames(probedEx)::toString);
        assertEquals("empty", call(t, "fail", new Class<?>[] {String.class}, ""));
        assertEquals(List.of("b:" + fail, "x:" + fail, "b:" + fail, "e:" + fail), take());

        int caught = r.id("example.ProbeTarget::caughtInside");
        assertEquals(7, call(t, "caughtInside", new Class<?>[0]));
        assertEquals(List.of("b:" + caught, "e:" + caught), take(), "the method's own handler comes first");

        int locked = r.id("example.ProbeTarget::locked");
        assertEquals(3, call(t, "locked", new Class<?>[] {int.class}, 2));
        assertThrows(ArithmeticException.class, () -> call(t, "locked", new Class<?>[] {int.class}, -1));
        assertEquals(List.of("b:" + locked, "e:" + locked, "b:" + locked, "x:" + locked), take());
        assertTrue(!Thread.holdsLock(t), "monitors released");
    }

    /** What fail("boom") threw, each call from this same line. */
    static Throwable failWithBoom(Object target) {
        try {
            call(target, "fail", new Class<?>[] {String.class}, "boom");
        } catch (Throwable t) {
            return t;
        }
        throw new AssertionError("fail() returned");
    }

    /** Class, method, file and line of each frame up to failWithBoom: what a user compares. */
    static List<String> frames(Throwable t) {
        List<String> f = new ArrayList<>();
        for (StackTraceElement e : t.getStackTrace()) {
            if (e.getMethodName().equals("failWithBoom")) {
                break;
            }
            f.add(e.getClassName() + "." + e.getMethodName() + ":" + e.getFileName() + ":" + e.getLineNumber());
        }
        return f;
    }

    @Test
    void constructorsBeginAfterTheirSuperOrThisCall() throws Throwable {
        ProbeRegistry r = new ProbeRegistry();
        Class<?> c = probed(r, "example.ProbeTarget::<init>");
        int init = r.id("example.ProbeTarget::<init>(int)");
        int noArgs = r.id("example.ProbeTarget::<init>()");
        take();
        Object t = c.getConstructor().newInstance();
        assertEquals(3, c.getDeclaredField("value").get(t));
        // this(...) runs the other constructor before this one's begin
        assertEquals(List.of("b:" + init, "e:" + init, "b:" + noArgs, "e:" + noArgs), take());
    }

    @Test
    void aClassFilterProbesEveryMethodWithCodeAndALineProbeFiresAtItsLine() throws Throwable {
        int first = lines(ProbeTarget.class, "lines").first();
        ProbeRegistry r = new ProbeRegistry();
        Class<?> c = probed(r, "example.ProbeTarget::lines@" + (first + 1));
        int line = r.id("example.ProbeTarget::lines@" + (first + 1));
        Object t = c.getConstructor(int.class).newInstance(1);
        take();
        assertEquals(6, call(t, "lines", new Class<?>[] {int.class}, 2));
        assertEquals(6, call(t, "lines", new Class<?>[] {int.class}, 2));
        assertEquals(List.of("l:" + line, "l:" + line), take());

        ProbeRegistry all = new ProbeRegistry();
        Class<?> whole = probed(all, "example.ProbeTarget");
        Object w = whole.getConstructor(int.class).newInstance(1);
        assertEquals(6, call(w, "lines", new Class<?>[] {int.class}, 2));
        List<String> calls = take();
        int lines = all.id("example.ProbeTarget::lines");
        assertTrue(calls.containsAll(List.of("b:" + lines, "e:" + lines)), calls.toString());
        assertEquals(List.of(), all.unmatched(new Class<?>[0]));
    }

    @Test
    void nativeMethodsAreRefusedAndMissesNameWhatIsThere() throws Throwable {
        ProbeRegistry r = new ProbeRegistry();
        probed(r, "example.ProbeTarget::square", "example.ProbeTarget::nativeMethod",
                "example.ProbeTarget::sqare", "example.ProbeTarget::lines@9999", "example.ProbeTaget::x",
                "@example.NoSuchAnnotation");
        List<String> misses = r.unmatched(new Class<?>[] {ProbeTarget.class, String.class});
        assertEquals(4, misses.size(), misses.toString());
        assertTrue(misses.get(0).contains("'example.ProbeTarget::sqare' matched nothing")
                && misses.get(0).contains("nearest: square"), misses.get(0));
        assertTrue(misses.get(1).contains("no code on line 9999; its lines: "), misses.get(1));
        assertTrue(misses.get(2).contains("no class example.ProbeTaget was loaded; nearest: example.ProbeTarget"),
                misses.get(2));
        assertTrue(misses.get(3).contains("no loaded class or method carries it"), misses.get(3));
    }

    @Test
    void otherClassesAreLeftAlone() throws IOException {
        ProbeRegistry r = new ProbeRegistry();
        r.add(List.of(ProbeFilter.parse("example.ProbeTarget::square")));
        ProbeTransformer t = new ProbeTransformer(r, null);
        byte[] b = bytes(ProbeTarget.class);
        assertNull(t.transform(null, null, "example/Other", null, null, b));
        assertNull(t.probe(null, null, "example/ProbeTarget", bytes(ProbeTransformerTest.class)));
    }

    @Test
    void filtersFollowJfrSyntaxAndBadOnesSayWhy() {
        ProbeFilter m = ProbeFilter.parse("java.util.HashMap$TreeNode::find");
        assertEquals("java/util/HashMap$TreeNode", m.className);
        assertEquals("find", m.method);
        assertEquals(0, m.line);
        assertEquals("<clinit>", ProbeFilter.parse("java.lang.String::<clinit>").method);
        assertNull(ProbeFilter.parse("java.lang.String").method);
        assertEquals("Ljdk/internal/vm/annotation/IntrinsicCandidate;",
                ProbeFilter.parse("@jdk.internal.vm.annotation.IntrinsicCandidate").annotation);
        assertEquals(42, ProbeFilter.parse("a.B::c@42").line);
        for (String[] bad : new String[][] {{"", "empty filter"}, {"a..B", "is not a class name"},
                {"a.B::", "no method name"}, {"a.B::1x", "is not a method name"}, {"a.B::c@0", "not a line number"},
                {"a.B::c@x", "not a line number"}, {"@", "no annotation name"}, {"io.threadtime.EventLog", "threadtime's own"},
                {"java.lang.invoke.MethodHandle::invoke", "a probe's own call"}}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ProbeFilter.parse(bad[0]));
            assertTrue(e.getMessage().contains(bad[1]), bad[0] + ": " + e.getMessage());
        }
    }

    /** The lines the line number table gives a method of a class. */
    public static TreeSet<Integer> lines(Class<?> c, String method) throws IOException {
        TreeSet<Integer> lines = new TreeSet<>();
        new ClassReader(bytes(c)).accept(new ClassVisitor(Opcodes.ASM9) {
            @Override
            public MethodVisitor visitMethod(int access, String name, String desc, String sig, String[] ex) {
                return !name.equals(method) ? null : new MethodVisitor(Opcodes.ASM9) {
                    @Override
                    public void visitLineNumber(int line, Label start) {
                        lines.add(line);
                    }
                };
            }
        }, 0);
        return lines;
    }

}
