package io.threadtime.agent.vthreads;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.objectweb.asm.ClassReader;
import org.objectweb.asm.ClassVisitor;
import org.objectweb.asm.FieldVisitor;
import org.objectweb.asm.Opcodes;

/**
 * The account fields added to this JDK's virtual-thread continuation class
 * (JDK 21+): the four of them, private longs, added once; any other class,
 * loader, a redefinition, an unknown superclass or a name already taken
 * leaves the bytes alone with the reason. That the JVM loads the class with
 * them and the hooks charge through them is tested in java/agent/vthreads-tests.
 */
class ContinuationFieldsTest {
    static byte[] continuation() throws IOException {
        try (InputStream in = Object.class.getResourceAsStream("/" + ContinuationFields.TARGET + ".class")) {
            Assumptions.assumeTrue(in != null, "JDK " + Runtime.version() + " has no virtual threads");
            return in.readAllBytes();
        }
    }

    static byte[] transform(ContinuationFields t, byte[] bytes) {
        return t.transform(null, ContinuationFields.TARGET, null, null, bytes);
    }

    /** "name desc access" of each field the class declares. */
    static List<String> fields(byte[] bytes) {
        List<String> out = new ArrayList<>();
        new ClassReader(bytes).accept(new ClassVisitor(Opcodes.ASM9) {
            @Override
            public FieldVisitor visitField(int access, String name, String desc, String sig, Object value) {
                out.add(name + " " + desc + " " + access);
                return null;
            }
        }, 0);
        return out;
    }

    @Test
    void theAccountFieldsAreAddedToThisJdksClass() throws IOException {
        ContinuationFields t = new ContinuationFields();
        byte[] original = continuation();
        byte[] out = transform(t, original);
        assertNotNull(out, "not transformed: " + t.mismatch());
        assertNull(t.mismatch());
        List<String> before = fields(original), after = fields(out);
        assertEquals(before.size() + ContinuationFields.FIELDS.length, after.size(), after.toString());
        assertEquals(10, ContinuationFields.FIELDS.length, "the CPU account (4) and the waits (6)");
        assertTrue(after.containsAll(before), "a field of the class was lost: " + after);
        for (String f : ContinuationFields.FIELDS) {
            assertTrue(after.contains(f + " J " + (Opcodes.ACC_PRIVATE | Opcodes.ACC_SYNTHETIC)), f + " missing: " + after);
        }
    }

    @Test
    void otherClassesLoadersAndRedefinitionsAreLeftAlone() throws IOException {
        ContinuationFields t = new ContinuationFields();
        byte[] original = continuation();
        assertNull(t.transform(null, "java/lang/VirtualThread", null, null, original));
        assertNull(t.transform(ClassLoader.getSystemClassLoader(), ContinuationFields.TARGET, null, null, original));
        assertNull(t.transform(null, ContinuationFields.TARGET, Object.class, null, original));
        assertTrue(t.mismatch().contains("was loaded before threadtime's premain"), t.mismatch());
    }

    @Test
    void aFieldAlreadyThereIsNamed() throws IOException {
        ContinuationFields t = new ContinuationFields();
        byte[] once = transform(t, continuation());
        ContinuationFields again = new ContinuationFields();
        byte[] copy = once.clone();
        assertNull(transform(again, once));
        assertArrayEquals(copy, once, "the bytes were changed");
        assertTrue(again.mismatch().contains("already has a field threadtime$"), again.mismatch());
    }

    @Test
    void anotherSuperclassIsNamed() throws IOException {
        ContinuationFields t = new ContinuationFields();
        byte[] other = VirtualThreadTransformerTest.renamed(continuation(), ContinuationFields.SUPER,
                "jdk/internal/vm/ContinuatioN");
        assertNull(transform(t, other));
        assertTrue(t.mismatch().contains("extends jdk/internal/vm/ContinuatioN"), t.mismatch());
    }

    @Test
    void damagedBytesAreReportedNotThrown() {
        ContinuationFields t = new ContinuationFields();
        assertNull(transform(t, new byte[] {(byte) 0xCA, (byte) 0xFE, 0, 1}));
        assertTrue(t.mismatch().startsWith("reading java.lang.VirtualThread$VThreadContinuation failed"), t.mismatch());
    }
}
