package io.threadtime.agent.probes;

import static io.threadtime.agent.probes.ProbeTransformerTest.bytes;
import static io.threadtime.agent.probes.ProbeTransformerTest.lines;
import static io.threadtime.agent.probes.ProbeTransformerTest.take;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import example.ProbeShapes;
import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.objectweb.asm.ClassWriter;
import org.objectweb.asm.Label;
import org.objectweb.asm.MethodVisitor;
import org.objectweb.asm.Opcodes;

/**
 * The probe transformer on method shapes ProbeTransformerTest's target does
 * not have (example.ProbeShapes, and a class written here with two lines at
 * one place), with ProbeTransformerTest's recorder: each class transformed
 * and loaded apart, so the JVM's verifier checks it, and every probe call
 * asserted in order.
 */
class ProbeShapesTest {
    @BeforeAll
    static void bind() throws ReflectiveOperationException {
        ProbeTransformerTest.bind();
    }

    /** The class (internal name, bytes) with these filters' probes, loaded and initialized apart. */
    static Class<?> probed(ProbeRegistry registry, String name, byte[] bytes, String... filters) throws Exception {
        List<ProbeFilter> fs = new ArrayList<>();
        for (String f : filters) {
            fs.add(ProbeFilter.parse(f));
        }
        registry.add(fs);
        byte[] out = new ProbeTransformer(registry, null).probe(null, null, name, bytes);
        assertNotNull(out, "nothing probed");
        Class<?> c = new ClassLoader(ProbeShapesTest.class.getClassLoader()) {
            Class<?> define() {
                return defineClass(name.replace('/', '.'), out, 0, out.length);
            }
        }.define();
        return Class.forName(c.getName(), true, c.getClassLoader());
    }

    static Class<?> shapes(ProbeRegistry registry, String... filters) throws Exception {
        return probed(registry, "example/ProbeShapes", bytes(ProbeShapes.class), filters);
    }

    static Object invoke(Class<?> c, String name, Class<?>[] types, Object... args) throws Throwable {
        Method m = c.getMethod(name, types);
        try {
            return m.invoke(null, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    static Object construct(Class<?> c, Class<?>[] types, Object... args) throws Throwable {
        Constructor<?> k = c.getConstructor(types);
        try {
            return k.newInstance(args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    @Test
    void aStaticInitializerIsTimedOnceWhenTheClassInitializes() throws Throwable {
        take();
        ProbeRegistry r = new ProbeRegistry();
        Class<?> c = shapes(r, "example.ProbeShapes::<clinit>");
        int clinit = r.id("example.ProbeShapes::<clinit>");
        assertEquals(List.of("b:" + clinit, "e:" + clinit), take());
        assertEquals(ProbeShapes.START, c.getField("START").get(null));
        assertEquals(List.of(), take());
    }

    @Test
    void constructorsBeginAfterTheirThisOrSuperCallAndEndThrownOnlyOnceBegun() throws Throwable {
        ProbeRegistry r = new ProbeRegistry();
        Class<?> c = shapes(r, "example.ProbeShapes::<init>");
        int flag = r.id("example.ProbeShapes::<init>(boolean)");
        int ld = r.id("example.ProbeShapes::<init>(long,double)");
        take();
        assertEquals(10L, c.getField("total").get(construct(c, new Class<?>[] {boolean.class}, true)));
        assertEquals(2L, c.getField("total").get(construct(c, new Class<?>[] {boolean.class}, false)));
        assertEquals(List.of("b:" + ld, "e:" + ld, "b:" + flag, "e:" + flag, "b:" + ld, "e:" + ld, "b:" + flag,
                "e:" + flag), take());

        int handled = r.id("example.ProbeShapes::<init>(int)");
        assertEquals(6L, c.getField("total").get(construct(c, new Class<?>[] {int.class}, 3)));
        assertEquals(-3L, c.getField("total").get(construct(c, new Class<?>[] {int.class}, -3)));
        assertEquals(List.of("b:" + handled, "e:" + handled, "b:" + handled, "e:" + handled), take(),
                "a handler after super() neither begins again nor loses its return's end");

        Throwable e = assertThrows(IllegalArgumentException.class,
                () -> construct(c, new Class<?>[] {long.class, double.class}, -1L, 1.0));
        assertEquals("negative -1", e.getMessage());
        assertEquals(List.of("b:" + ld, "x:" + ld), take(), "thrown after super(): its end, marked thrown");

        // Thrown in this()'s argument, before either constructor began: no probe call at all;
        // thrown in the called constructor: its pair only, the caller never began.
        assertThrows(NumberFormatException.class, () -> construct(c, new Class<?>[] {String.class}, "zz"));
        assertEquals(List.of(), take());
        assertThrows(IllegalArgumentException.class, () -> construct(c, new Class<?>[] {String.class}, "-3"));
        assertEquals(List.of("b:" + ld, "x:" + ld), take());
    }

    @Test
    void longAndDoubleLocalsMovedForTheNewSlotKeepTheirValues() throws Throwable {
        ProbeRegistry r = new ProbeRegistry();
        Class<?> c = shapes(r, "example.ProbeShapes::mix");
        int mix = r.id("example.ProbeShapes::mix");
        Class<?>[] types = {long.class, double.class, int.class, long.class};
        take();
        for (int n : new int[] {0, 1, 7}) {
            assertEquals(ProbeShapes.mix(3L, 0.25, n, 1L << 40), invoke(c, "mix", types, 3L, 0.25, n, 1L << 40));
        }
        assertEquals(Collections.nCopies(3, List.of("b:" + mix, "e:" + mix)).stream().flatMap(List::stream).toList(),
                take());
    }

    @Test
    void anExceptionFromANestedTryEndsThrownOnlyWhenItLeavesTheMethod() throws Throwable {
        ProbeRegistry r = new ProbeRegistry();
        Class<?> c = shapes(r, "example.ProbeShapes::nested");
        int nested = r.id("example.ProbeShapes::nested");
        Class<?>[] types = {int.class};
        take();
        assertEquals(5, invoke(c, "nested", types, 5));
        assertEquals(-1, invoke(c, "nested", types, 0));
        Throwable e = assertThrows(IllegalStateException.class, () -> invoke(c, "nested", types, -4));
        assertEquals("inner -4", e.getMessage());
        assertEquals("nested", e.getStackTrace()[0].getMethodName());
        assertEquals(List.of("b:" + nested, "e:" + nested, "b:" + nested, "e:" + nested, "b:" + nested,
                "x:" + nested), take());
    }

    @Test
    void lineProbesAtLoopHeadsFireEachTimeTheLineRuns() throws Throwable {
        int head = lines(ProbeShapes.class, "countDown").first();
        int first = lines(ProbeShapes.class, "loop").first();
        int cond = first + 1, body = first + 2;
        ProbeRegistry r = new ProbeRegistry();
        Class<?> c = shapes(r, "example.ProbeShapes::countDown", "example.ProbeShapes::countDown@" + head,
                "example.ProbeShapes::loop", "example.ProbeShapes::loop@" + cond, "example.ProbeShapes::loop@" + body);
        int down = r.id("example.ProbeShapes::countDown"), downLine = r.id("example.ProbeShapes::countDown@" + head);
        int loop = r.id("example.ProbeShapes::loop"), condLine = r.id("example.ProbeShapes::loop@" + cond);
        int bodyLine = r.id("example.ProbeShapes::loop@" + body);
        Class<?>[] types = {int.class};
        take();
        assertEquals(-1, invoke(c, "countDown", types, 5));
        assertEquals(List.of("b:" + down, "l:" + downLine, "l:" + downLine, "l:" + downLine, "e:" + down), take());
        assertEquals(3, invoke(c, "loop", types, 3));
        assertEquals(List.of("b:" + loop, "l:" + condLine, "l:" + bodyLine, "l:" + condLine, "l:" + bodyLine,
                "l:" + condLine, "l:" + bodyLine, "l:" + condLine, "e:" + loop), take());
    }

    /**
     * A class javac would not write: the line number table gives lines 10
     * and 11 to the method's first instruction (as for a line with no code
     * of its own). A breakpoint on either line stops there, so both probes
     * fire, in the table's order.
     */
    @Test
    void twoLinesAtOnePlaceBothFire() throws Throwable {
        ClassWriter w = new ClassWriter(ClassWriter.COMPUTE_MAXS | ClassWriter.COMPUTE_FRAMES);
        w.visit(Opcodes.V17, Opcodes.ACC_PUBLIC, "example/TwoLines", null, "java/lang/Object", null);
        MethodVisitor m = w.visitMethod(Opcodes.ACC_PUBLIC | Opcodes.ACC_STATIC, "run", "()I", null, null);
        m.visitCode();
        Label start = new Label();
        m.visitLabel(start);
        m.visitLineNumber(10, start);
        m.visitLineNumber(11, start);
        m.visitIntInsn(Opcodes.BIPUSH, 42);
        m.visitInsn(Opcodes.IRETURN);
        m.visitMaxs(0, 0);
        m.visitEnd();
        w.visitEnd();
        ProbeRegistry r = new ProbeRegistry();
        Class<?> c = probed(r, "example/TwoLines", w.toByteArray(), "example.TwoLines::run@11",
                "example.TwoLines::run@10");
        take();
        assertEquals(42, invoke(c, "run", new Class<?>[0]));
        assertEquals(List.of("l:" + r.id("example.TwoLines::run@10"), "l:" + r.id("example.TwoLines::run@11")), take());
    }
}
