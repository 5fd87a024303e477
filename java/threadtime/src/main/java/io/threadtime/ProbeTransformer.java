package io.threadtime;

import io.threadtime.boot.Probes;
import java.lang.instrument.ClassFileTransformer;
import java.lang.instrument.Instrumentation;
import java.security.ProtectionDomain;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.WeakHashMap;
import org.objectweb.asm.AnnotationVisitor;
import org.objectweb.asm.ClassReader;
import org.objectweb.asm.ClassVisitor;
import org.objectweb.asm.ClassWriter;
import org.objectweb.asm.Label;
import org.objectweb.asm.MethodVisitor;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.Type;

/**
 * Puts probes into the methods the filters match (ASM, relocated into this
 * JAR). A probed method becomes
 * <pre>{@code
 * long t = Probes.begin(ID);        // after super()/this() in a constructor
 * try {
 *     ...the method, each return preceded by Probes.end(ID, t, false)...
 * } catch (any) {                    // the last entry of the exception table
 *     Probes.end(ID, t, true);
 *     throw;                         // the same exception, its stack trace untouched
 * }
 * }</pre>
 * and a line probe is {@code Probes.line(ID)} before the first instruction of
 * each place the line number table gives that line (where a debugger's
 * breakpoint on that line stops). The id is a constant in the bytecode;
 * {@code t} lives in a new local slot above all of the method's own, and the
 * stack map frames after the entry are extended with it, so the method's own
 * code, locals and handlers are unchanged.
 */
final class ProbeTransformer implements ClassFileTransformer {
    private static final String PROBES = "io/threadtime/boot/Probes";

    private final ProbeRegistry registry;
    private final Instrumentation inst;
    private final Map<ClassLoader, Boolean> seesProbes = new WeakHashMap<>();

    ProbeTransformer(ProbeRegistry registry, Instrumentation inst) {
        this.registry = registry;
        this.inst = inst;
    }

    @Override
    public byte[] transform(Module module, ClassLoader loader, String name, Class<?> redefined, ProtectionDomain pd,
            byte[] bytes) {
        if (name == null || !registry.mayMatch(name)) {
            return null;
        }
        try {
            return probe(module, loader, name, bytes);
        } catch (Throwable t) {
            AgentLog.warn("class " + name.replace('/', '.') + " left without probes (" + t + ")");
            return null;
        }
    }

    /** The class with its probes in, or null if none applies. */
    byte[] probe(Module module, ClassLoader loader, String name, byte[] bytes) {
        ClassReader reader = new ClassReader(bytes);
        Scan scan = new Scan(name);
        reader.accept(scan, ClassReader.SKIP_FRAMES);
        Map<String, Plan> plans = registry.plan(name, scan.annotations, scan.methods);
        if (plans.isEmpty()) {
            return null;
        }
        if (!canCall(module, loader, name)) {
            return null;
        }
        ClassWriter writer = new ClassWriter(reader, ClassWriter.COMPUTE_MAXS);
        reader.accept(new Rewrite(writer, plans, scan.version >= Opcodes.V1_6), ClassReader.EXPAND_FRAMES);
        byte[] out = writer.toByteArray();
        registry.transformed(name);
        return out;
    }

    /** Whether the class can reach io.threadtime.boot.Probes; makes its module read it. */
    private boolean canCall(Module module, ClassLoader loader, String name) {
        if (loader != null) {
            Boolean sees;
            synchronized (seesProbes) {
                sees = seesProbes.get(loader);
            }
            if (sees == null) {
                try {
                    sees = Class.forName(PROBES.replace('/', '.'), false, loader) == Probes.class;
                } catch (ClassNotFoundException | LinkageError e) {
                    sees = false;
                }
                synchronized (seesProbes) {
                    seesProbes.put(loader, sees);
                }
                if (!sees) {
                    AgentLog.warn("class loader " + loader + " does not delegate to the boot class path; "
                            + "its classes (" + name.replace('/', '.') + " and others) are left without probes");
                }
            }
            if (!sees) {
                return false;
            }
        }
        Module boot = Probes.class.getModule();
        if (module != null && module.isNamed() && !module.canRead(boot)) {
            inst.redefineModule(module, Set.of(boot), Map.of(), Map.of(), Set.of(), Map.of());
        }
        return true;
    }

    /** What a method is, as the first pass sees it. */
    static final class MethodInfo {
        final String name, desc;
        final int access;
        final Set<String> annotations = new TreeSet<>();
        final TreeSet<Integer> lines = new TreeSet<>();
        int maxLocals;

        MethodInfo(int access, String name, String desc) {
            this.access = access;
            this.name = name;
            this.desc = desc;
        }

        boolean hasCode() {
            return (access & (Opcodes.ACC_ABSTRACT | Opcodes.ACC_NATIVE)) == 0;
        }

        String key() {
            return name + desc;
        }
    }

    /** What to put into one method: a begin/end probe (id, or -1) and line probes (line to id). */
    record Plan(int id, Map<Integer, Integer> lines, int tSlot) {}

    /** First pass: class annotations, and each method's annotations, lines and locals. */
    private static final class Scan extends ClassVisitor {
        final String name;
        int version;
        final Set<String> annotations = new TreeSet<>();
        final List<MethodInfo> methods = new ArrayList<>();

        Scan(String name) {
            super(Opcodes.ASM9);
            this.name = name;
        }

        @Override
        public void visit(int version, int access, String name, String sig, String superName, String[] interfaces) {
            this.version = version & 0xFFFF;
        }

        @Override
        public AnnotationVisitor visitAnnotation(String desc, boolean visible) {
            annotations.add(desc);
            return null;
        }

        @Override
        public MethodVisitor visitMethod(int access, String mname, String desc, String sig, String[] exceptions) {
            MethodInfo m = new MethodInfo(access, mname, desc);
            methods.add(m);
            return new MethodVisitor(Opcodes.ASM9) {
                @Override
                public AnnotationVisitor visitAnnotation(String adesc, boolean visible) {
                    m.annotations.add(adesc);
                    return null;
                }

                @Override
                public void visitLineNumber(int line, Label start) {
                    m.lines.add(line);
                }

                @Override
                public void visitMaxs(int maxStack, int maxLocals) {
                    m.maxLocals = maxLocals;
                }
            };
        }
    }

    /** Second pass: the probes in. */
    private static final class Rewrite extends ClassVisitor {
        private final Map<String, Plan> plans;
        private final boolean frames;
        private String owner;

        Rewrite(ClassVisitor next, Map<String, Plan> plans, boolean frames) {
            super(Opcodes.ASM9, next);
            this.plans = plans;
            this.frames = frames;
        }

        @Override
        public void visit(int version, int access, String name, String sig, String superName, String[] interfaces) {
            owner = name;
            super.visit(version, access, name, sig, superName, interfaces);
        }

        @Override
        public MethodVisitor visitMethod(int access, String name, String desc, String sig, String[] exceptions) {
            MethodVisitor mv = super.visitMethod(access, name, desc, sig, exceptions);
            Plan plan = plans.get(name + desc);
            return plan == null ? mv : new ProbedMethod(mv, plan, name.equals("<init>"), frames);
        }
    }

    /** One method's rewrite. */
    private static final class ProbedMethod extends MethodVisitor {
        private final Plan plan;
        private final boolean frames;
        /** Constructor: the begin waits for the super() or this() call. */
        private boolean awaitingSuper;
        /** NEWs whose constructor call has not come yet (to find super()). */
        private int pendingNews;
        private boolean started;
        /** The begin waits for the first instruction or label: the JVM takes the
         * first matching entry of the exception table, so the catch-all must be
         * entered after the method's own handlers, which come before them. */
        private boolean beginPending;
        private int pendingLine = -1;
        private final Label tryStart = new Label(), tryEnd = new Label(), handler = new Label();

        ProbedMethod(MethodVisitor mv, Plan plan, boolean constructor, boolean frames) {
            super(Opcodes.ASM9, mv);
            this.plan = plan;
            this.frames = frames;
            this.awaitingSuper = constructor;
        }

        private boolean timed() {
            return plan.id() >= 0;
        }

        @Override
        public void visitCode() {
            super.visitCode();
            beginPending = timed() && !awaitingSuper;
        }

        private void ensureBegun() {
            if (beginPending) {
                beginPending = false;
                begin();
            }
        }

        @Override
        public void visitLabel(Label label) {
            ensureBegun();
            super.visitLabel(label);
        }

        private void begin() {
            super.visitTryCatchBlock(tryStart, tryEnd, handler, null);
            super.visitLdcInsn(plan.id());
            super.visitMethodInsn(Opcodes.INVOKESTATIC, PROBES, "begin", "(I)J", false);
            super.visitVarInsn(Opcodes.LSTORE, plan.tSlot());
            super.visitLabel(tryStart);
            started = true;
        }

        private void end(boolean thrown) {
            super.visitLdcInsn(plan.id());
            super.visitVarInsn(Opcodes.LLOAD, plan.tSlot());
            super.visitInsn(thrown ? Opcodes.ICONST_1 : Opcodes.ICONST_0);
            super.visitMethodInsn(Opcodes.INVOKESTATIC, PROBES, "end", "(IJZ)V", false);
        }

        @Override
        public void visitLineNumber(int line, Label start) {
            ensureBegun();
            super.visitLineNumber(line, start);
            Integer id = plan.lines().get(line);
            if (id != null) {
                pendingLine = id;
            }
        }

        /** Before each instruction: the begin, and a line probe waiting for its line's first instruction. */
        private void flush() {
            ensureBegun();
            if (pendingLine >= 0) {
                super.visitLdcInsn(pendingLine);
                super.visitMethodInsn(Opcodes.INVOKESTATIC, PROBES, "line", "(I)V", false);
                pendingLine = -1;
            }
        }

        @Override
        public void visitFrame(int type, int nLocal, Object[] local, int nStack, Object[] stack) {
            ensureBegun();
            if (!started) {
                super.visitFrame(type, nLocal, local, nStack, stack);
                return;
            }
            // Expanded frames (F_NEW): the method's locals, TOP up to t's slot, then t.
            List<Object> locals = new ArrayList<>();
            int slots = 0;
            for (int i = 0; i < nLocal; i++) {
                locals.add(local[i]);
                slots += local[i] == Opcodes.LONG || local[i] == Opcodes.DOUBLE ? 2 : 1;
            }
            for (; slots < plan.tSlot(); slots++) {
                locals.add(Opcodes.TOP);
            }
            locals.add(Opcodes.LONG);
            super.visitFrame(type, locals.size(), locals.toArray(), nStack, stack);
        }

        @Override
        public void visitInsn(int opcode) {
            flush();
            if (started && opcode >= Opcodes.IRETURN && opcode <= Opcodes.RETURN) {
                end(false);
            }
            super.visitInsn(opcode);
        }

        @Override
        public void visitMethodInsn(int opcode, String owner, String name, String desc, boolean itf) {
            flush();
            super.visitMethodInsn(opcode, owner, name, desc, itf);
            if (awaitingSuper && opcode == Opcodes.INVOKESPECIAL && name.equals("<init>")) {
                if (pendingNews > 0) {
                    pendingNews--;
                } else {
                    awaitingSuper = false;
                    if (timed()) {
                        begin();
                    }
                }
            }
        }

        @Override
        public void visitTypeInsn(int opcode, String type) {
            flush();
            if (awaitingSuper && opcode == Opcodes.NEW) {
                pendingNews++;
            }
            super.visitTypeInsn(opcode, type);
        }

        @Override
        public void visitVarInsn(int opcode, int var) {
            flush();
            super.visitVarInsn(opcode, var);
        }

        @Override
        public void visitIntInsn(int opcode, int operand) {
            flush();
            super.visitIntInsn(opcode, operand);
        }

        @Override
        public void visitFieldInsn(int opcode, String owner, String name, String desc) {
            flush();
            super.visitFieldInsn(opcode, owner, name, desc);
        }

        @Override
        public void visitInvokeDynamicInsn(String name, String desc, org.objectweb.asm.Handle bsm, Object... args) {
            flush();
            super.visitInvokeDynamicInsn(name, desc, bsm, args);
        }

        @Override
        public void visitJumpInsn(int opcode, Label label) {
            flush();
            super.visitJumpInsn(opcode, label);
        }

        @Override
        public void visitLdcInsn(Object value) {
            flush();
            super.visitLdcInsn(value);
        }

        @Override
        public void visitIincInsn(int var, int increment) {
            flush();
            super.visitIincInsn(var, increment);
        }

        @Override
        public void visitTableSwitchInsn(int min, int max, Label dflt, Label... labels) {
            flush();
            super.visitTableSwitchInsn(min, max, dflt, labels);
        }

        @Override
        public void visitLookupSwitchInsn(Label dflt, int[] keys, Label[] labels) {
            flush();
            super.visitLookupSwitchInsn(dflt, keys, labels);
        }

        @Override
        public void visitMultiANewArrayInsn(String desc, int dims) {
            flush();
            super.visitMultiANewArrayInsn(desc, dims);
        }

        @Override
        public void visitMaxs(int maxStack, int maxLocals) {
            if (started) {
                super.visitLabel(tryEnd);
                super.visitLabel(handler);
                if (frames) {
                    Object[] locals = new Object[plan.tSlot() + 1];
                    java.util.Arrays.fill(locals, Opcodes.TOP);
                    locals[plan.tSlot()] = Opcodes.LONG;
                    super.visitFrame(Opcodes.F_NEW, locals.length, locals, 1, new Object[] {"java/lang/Throwable"});
                }
                end(true);
                super.visitInsn(Opcodes.ATHROW);
            }
            super.visitMaxs(maxStack, maxLocals);
        }
    }

    /** "int,java.lang.String" for a descriptor's parameters. */
    static String parameters(String desc) {
        StringBuilder b = new StringBuilder();
        for (Type t : Type.getArgumentTypes(desc)) {
            b.append(b.length() == 0 ? "" : ",").append(t.getClassName());
        }
        return b.toString();
    }
}
