package io.threadtime.agent.vthreads;

import io.threadtime.agent.vthreads.hooks.VirtualThreadHooks;
import java.lang.instrument.ClassFileTransformer;
import java.security.ProtectionDomain;
import org.objectweb.asm.ClassReader;
import org.objectweb.asm.ClassVisitor;
import org.objectweb.asm.ClassWriter;
import org.objectweb.asm.FieldVisitor;
import org.objectweb.asm.Opcodes;

/**
 * Gives each virtual thread's continuation
 * ({@code java.lang.VirtualThread$VThreadContinuation}, one per virtual
 * thread, made with it) ten {@code long} fields for its account, so that the
 * hooks reach the account through an object they are handed, with no lookup.
 * <p>
 * {@code VirtualThread} itself is loaded before any agent runs, and a
 * retransformation cannot add fields. Its continuation class is loaded with
 * the first virtual thread, which in a program that starts none before the
 * agent's {@code premain} is after it: the agent has this transformer add the
 * fields as the class is first loaded (it does not retransform), then loads
 * the class at once. Where the class was loaded before (another agent made a
 * virtual thread first) or is not the shape known here, the transformer is
 * not applied and the hooks keep their accounts in a table instead
 * ({@code hooks.TableAccounts}).
 * <p>
 * Added without the retransform capability, so the fields stay part of the
 * class when another agent retransforms it later: the JVM starts a
 * retransformation from what load-time-only transformers produced.
 */
final class ContinuationFields implements ClassFileTransformer {
    static final String TARGET = VirtualThreadHooks.CONTINUATION_CLASS.replace('.', '/');
    static final String SUPER = "jdk/internal/vm/Continuation";
    /** The names the fields get; {@code hooks.ContinuationAccounts} writes and reads them. */
    static final String[] FIELDS = {VirtualThreadHooks.TOTAL_FIELD, VirtualThreadHooks.MARK_FIELD, VirtualThreadHooks.CARRIER_FIELD,
        VirtualThreadHooks.SEQ_FIELD, VirtualThreadHooks.READY_FIELD, VirtualThreadHooks.SINCE_FIELD, VirtualThreadHooks.WAIT_FIELD,
        VirtualThreadHooks.PINNED_FIELD, VirtualThreadHooks.PARKED_FIELD, VirtualThreadHooks.MOUNTED_FIELD};
    private static final String NAME = VirtualThreadHooks.CONTINUATION_CLASS;

    private volatile String mismatch = NAME + " was loaded before threadtime's premain (an agent before it "
            + "started a virtual thread or retransformed VirtualThread): put -javaagent:threadtime.jar first";
    private volatile boolean applied;

    /** Why the fields are not there, or null once they are. */
    String mismatch() {
        return applied ? null : mismatch;
    }

    @Override
    public byte[] transform(ClassLoader loader, String name, Class<?> redefined, ProtectionDomain pd, byte[] bytes) {
        if (loader != null || !TARGET.equals(name) || redefined != null) {
            return null;
        }
        try {
            ClassReader reader = new ClassReader(bytes);
            if (!SUPER.equals(reader.getSuperName())) {
                mismatch = NAME + " extends " + reader.getSuperName() + ", not " + SUPER;
                return null;
            }
            ClassWriter writer = new ClassWriter(reader, 0);
            String[] clash = new String[1];
            reader.accept(new ClassVisitor(Opcodes.ASM9, writer) {
                @Override
                public FieldVisitor visitField(int access, String fname, String desc, String sig, Object value) {
                    for (String f : FIELDS) {
                        if (f.equals(fname)) {
                            clash[0] = fname;
                        }
                    }
                    return super.visitField(access, fname, desc, sig, value);
                }

                @Override
                public void visitEnd() {
                    for (String f : FIELDS) {
                        super.visitField(Opcodes.ACC_PRIVATE | Opcodes.ACC_SYNTHETIC, f, "J", null, null).visitEnd();
                    }
                    super.visitEnd();
                }
            }, 0);
            if (clash[0] != null) {
                mismatch = NAME + " already has a field " + clash[0];
                return null;
            }
            applied = true;
            return writer.toByteArray();
        } catch (Throwable t) {
            mismatch = "reading " + NAME + " failed: " + t;
            return null;
        }
    }
}
