package io.threadtime.agent.probes;

import io.threadtime.agent.AgentLog;
import io.threadtime.agent.probes.hooks.Probes;
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
import org.objectweb.asm.commons.AdviceAdapter;
import org.objectweb.asm.commons.Method;
import org.objectweb.asm.tree.AbstractInsnNode;
import org.objectweb.asm.tree.InsnList;
import org.objectweb.asm.tree.LdcInsnNode;
import org.objectweb.asm.tree.LineNumberNode;
import org.objectweb.asm.tree.MethodInsnNode;
import org.objectweb.asm.tree.MethodNode;

/**
 * Puts probes into the methods the filters match (ASM and its commons and
 * tree, relocated into this JAR). A probed method becomes
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
 * breakpoint on that line stops). The id is a constant in the bytecode.
 * ASM's AdviceAdapter finds the entry (in a constructor, the super() or
 * this() call) and the returns; its LocalVariablesSorter gives {@code t} a
 * new slot right above the parameters, moves the method's own locals above
 * it (their debug table with them) and adds {@code t} to the stack map
 * frames, so the method's own code and handlers do what they did.
 */
final class ProbeTransformer implements ClassFileTransformer {
    private static final String PROBES = "io/threadtime/agent/probes/hooks/Probes";

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

    /** Whether the class can reach the hooks' Probes; makes its module read it. */
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
    record Plan(int id, Map<Integer, Integer> lines) {}

    /** First pass: class annotations, and each method's annotations and lines. */
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
            };
        }
    }

    /** Second pass: the probes in. */
    private static final class Rewrite extends ClassVisitor {
        private final Map<String, Plan> plans;
        private final boolean frames;

        Rewrite(ClassVisitor next, Map<String, Plan> plans, boolean frames) {
            super(Opcodes.ASM9, next);
            this.plans = plans;
            this.frames = frames;
        }

        @Override
        public MethodVisitor visitMethod(int access, String name, String desc, String sig, String[] exceptions) {
            MethodVisitor mv = super.visitMethod(access, name, desc, sig, exceptions);
            Plan plan = plans.get(name + desc);
            if (plan == null) {
                return mv;
            }
            if (plan.id() >= 0) {
                mv = new TimedMethod(mv, access, name, desc, plan.id(), frames);
            }
            return plan.lines().isEmpty() ? mv : new LineProbes(access, name, desc, sig, exceptions, plan.lines(), mv);
        }
    }

    /**
     * A method with a begin/end probe. AdviceAdapter calls onMethodEnter at
     * the start of the code, or in a constructor right after its super() or
     * this() call, and onMethodExit before each return and throw;
     * LocalVariablesSorter (under it) gives t a slot of its own, moves the
     * method's locals above it and puts t into the stack map frames that
     * follow. The probe calls go straight to the next visitor (GeneratorAdapter's
     * push, invokeStatic, ...), so they are not remapped again. A local moved
     * out of slots 0-3 loses its one-byte load and store forms and t gains
     * them: ProbeBench.madd is 123 bytes of bytecode probed this way, 108
     * with t above its locals, at the same cost per call (bench/probes/run.sh).
     */
    private static final class TimedMethod extends AdviceAdapter {
        private static final Type PROBES_TYPE = Type.getObjectType(PROBES);
        private static final Method BEGIN = new Method("begin", "(I)J");
        private static final Method END = new Method("end", "(IJZ)V");

        private final int id;
        private final boolean frames;
        private int t;
        /** Where t holds the begin's time word; null until the begin is in. */
        private Label tryStart;

        TimedMethod(MethodVisitor mv, int access, String name, String desc, int id, boolean frames) {
            super(Opcodes.ASM9, mv, access, name, desc);
            this.id = id;
            this.frames = frames;
        }

        @Override
        protected void onMethodEnter() {
            // AdviceAdapter calls again for a second super() on another branch
            // (bytecode javac does not write); the first begin stands.
            if (tryStart != null) {
                return;
            }
            t = newLocal(Type.LONG_TYPE);
            push(id);
            invokeStatic(PROBES_TYPE, BEGIN);
            storeLocal(t);
            tryStart = mark();
        }

        @Override
        protected void onMethodExit(int opcode) {
            // Not at a throw: the method may catch it itself. An exception
            // that leaves the method is seen by the handler below.
            if (opcode != ATHROW && tryStart != null) {
                end(false);
            }
        }

        private void end(boolean thrown) {
            push(id);
            loadLocal(t);
            push(thrown);
            invokeStatic(PROBES_TYPE, END);
        }

        /**
         * The catch-all, after the method's code. catchException registers
         * it now, after the method's own handlers (ClassReader visits those
         * before the code), so it is the last entry of the exception table:
         * the JVM takes the first entry that matches, and the method's own
         * handlers must keep catching what they catch. It rethrows the same
         * exception, its stack trace untouched.
         */
        @Override
        public void visitMaxs(int maxStack, int maxLocals) {
            if (tryStart != null) {
                catchException(tryStart, mark(), null);
                if (frames) {
                    // No locals but t (LocalVariablesSorter adds it), the exception on the stack.
                    visitFrame(Opcodes.F_NEW, 0, new Object[0], 1, new Object[] {"java/lang/Throwable"});
                }
                end(true);
                throwException();
            }
            super.visitMaxs(maxStack, maxLocals);
        }
    }

    /**
     * A method with line probes, held whole (asm-tree) until its end: a line's
     * probe goes before the line's first instruction, which is after the stack
     * map frame ClassReader visits between the line number and that
     * instruction, and a visitor that streams only knows where that is when
     * the instruction comes. Then it goes on to the next visitor.
     */
    private static final class LineProbes extends MethodNode {
        private final Map<Integer, Integer> lines;
        private final MethodVisitor next;

        LineProbes(int access, String name, String desc, String sig, String[] exceptions, Map<Integer, Integer> lines,
                MethodVisitor next) {
            super(Opcodes.ASM9, access, name, desc, sig, exceptions);
            this.lines = lines;
            this.next = next;
        }

        @Override
        public void visitEnd() {
            // Backwards, so that two probed lines at one place fire in the table's order.
            for (AbstractInsnNode n = instructions.getLast(); n != null; n = n.getPrevious()) {
                Integer id = n instanceof LineNumberNode l ? lines.get(l.line) : null;
                if (id == null) {
                    continue;
                }
                AbstractInsnNode first = n.getNext();
                while (first != null && first.getOpcode() < 0) { // labels, lines, frames
                    first = first.getNext();
                }
                if (first != null) {
                    InsnList probe = new InsnList();
                    probe.add(new LdcInsnNode(id));
                    probe.add(new MethodInsnNode(Opcodes.INVOKESTATIC, PROBES, "line", "(I)V", false));
                    instructions.insertBefore(first, probe);
                }
            }
            accept(next);
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
