package io.threadtime.agent.vthreads;

import io.threadtime.agent.vthreads.hooks.VirtualThreadHooks;
import java.lang.instrument.ClassFileTransformer;
import java.security.ProtectionDomain;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.objectweb.asm.ClassReader;
import org.objectweb.asm.ClassVisitor;
import org.objectweb.asm.ClassWriter;
import org.objectweb.asm.FieldVisitor;
import org.objectweb.asm.MethodVisitor;
import org.objectweb.asm.Opcodes;

/**
 * Puts calls to the hooks of {@link VirtualThreadHooks} into
 * {@code java.lang.VirtualThread} (ASM, relocated into this JAR).
 * <p>
 * Why these points, in JDK 21 and 25 alike: the carrier runs
 * {@code runContinuation()}, which calls {@code mount()}, runs the
 * continuation, then {@code unmount()}, and {@code afterDone()} once the
 * thread has ended. {@code mount()} ends by making the virtual thread
 * current ({@code carrier.setCurrentThread(this)}) and {@code unmount()}
 * starts by switching back, so the hook at the end of one and at the start of
 * the other run on the carrier with the virtual thread current, and bracket
 * exactly the stretches HotSpot's JVMTI mount and unmount events bracket:
 * the first mount is right after start, the last unmount right before the
 * end. The short switches to the carrier inside a mount
 * ({@code switchToCarrierThread}, for timers and the like) are not unmounts
 * for JVMTI either, so the virtual thread is charged for them in both agents.
 * <p>
 * Each hook is handed the thread and its continuation (the {@code cont}
 * field), where the agent keeps the thread's account (see
 * {@link ContinuationFields}); the unmount hook also its {@code state} and
 * the class's {@code YIELDING}, to tell a Thread.yield() (runnable at once)
 * from a park. Where the time off a CPU went is stamped at the start of the
 * methods that hand the thread to its scheduler ({@link #SUBMITS_21},
 * {@link #SUBMITS_24}: start, unpark, unblock, the end of a yield, all go
 * through one of them), handed the thread's {@code state} and a mask of the
 * states in which that is a hand-over ({@link #RUNNABLE_21}), and at the
 * start and the returns of {@code parkOnCarrierThread}, where a pinned
 * thread parks holding its carrier.
 * <p>
 * Before changing anything the shape is checked: the three methods with
 * those descriptors, {@code parkOnCarrierThread(ZJ)V}, exactly the submitting
 * methods this JDK should have (one missing would leave a path unstamped),
 * the runnable states' constants, the {@code carrierThread}, {@code cont},
 * {@code state} and {@code YIELDING} fields, and exactly one
 * {@code Thread.setCurrentThread} call in each of {@code mount()} and
 * {@code unmount()}, the one in {@code mount()} being its last call. A class
 * that differs is left as it is and {@link #mismatch()} says what differed.
 */
final class VirtualThreadTransformer implements ClassFileTransformer {
    static final String TARGET = "java/lang/VirtualThread";
    /** The class whose static mount/unmount/end the hooks call (internal name). */
    private final String hooks;
    private static final String THREAD = "java/lang/Thread";
    private static final String CONTINUATION = "Ljdk/internal/vm/Continuation;";
    private static final String SET_CURRENT = "setCurrentThread";
    private static final String PARK_ON_CARRIER = "parkOnCarrierThread", PARK_ON_CARRIER_DESC = "(ZJ)V";
    /** What the methods that hand the thread to its scheduler have in their names. */
    private static final String SUBMIT_NAME = "ubmitRunContinuation";
    private static final String POOL = "Ljava/util/concurrent/ForkJoinPool;";
    /**
     * Those methods, name and descriptor, as JDK 21 to 23 have them (21 and
     * 23 read in their sources, 22 between them) and as JDK 24 and 25 do
     * (read in 24's and 25's); a later JDK is expected to have 25's.
     */
    static final Set<String> SUBMITS_21 = Set.of("submitRunContinuation()V",
            "lazySubmitRunContinuation(" + POOL + ")V", "externalSubmitRunContinuation(" + POOL + ")V");
    static final Set<String> SUBMITS_24 = Set.of("submitRunContinuation()V",
            "submitRunContinuation(Ljava/util/concurrent/Executor;Z)V", "lazySubmitRunContinuation()V",
            "externalSubmitRunContinuation(" + POOL + ")V", "externalSubmitRunContinuationOrThrow()V");
    /**
     * The states in which a submit means the thread becomes runnable: started,
     * unparked, the end of a yield, and (JDK 24+, where a thread unmounts
     * blocked on a monitor or in Object.wait) unblocked. The same methods also
     * resubmit a thread in other states (VirtualThread.tryGetStackTrace puts
     * back a parked thread's task after suspending it), which is no hand-over.
     */
    static final List<String> RUNNABLE_21 = List.of("STARTED", "UNPARKED", "YIELDED");
    static final List<String> RUNNABLE_24 = List.of("STARTED", "UNPARKED", "YIELDED", "UNBLOCKED");

    private volatile String mismatch = "java.lang.VirtualThread was not offered for transformation";
    private volatile boolean applied;

    /** The submit methods and runnable states this JDK's class should have. */
    private final Set<String> submits;
    private final List<String> runnable;

    VirtualThreadTransformer() {
        this("io/threadtime/agent/vthreads/hooks/VirtualThreadHooks"); // named: the class literal would load it here
    }

    /** Hooks calling another class with the same methods (the
     * benchmark's ThreadLocal route, jvmti/bench). */
    VirtualThreadTransformer(String hooks) {
        this(hooks, Runtime.version().feature());
    }

    /** For the class of JDK {@code feature}. */
    VirtualThreadTransformer(String hooks, int feature) {
        this.hooks = hooks;
        this.submits = feature >= 24 ? SUBMITS_24 : SUBMITS_21;
        this.runnable = feature >= 24 ? RUNNABLE_24 : RUNNABLE_21;
    }

    /** Why the class was left alone, or null once the hooks are in. */
    String mismatch() {
        return applied ? null : mismatch;
    }

    @Override
    public byte[] transform(ClassLoader loader, String name, Class<?> redefined, ProtectionDomain pd, byte[] bytes) {
        if (loader != null || !TARGET.equals(name)) {
            return null;
        }
        try {
            ClassReader reader = new ClassReader(bytes);
            Shape shape = new Shape();
            reader.accept(shape, ClassReader.SKIP_DEBUG | ClassReader.SKIP_FRAMES);
            String wrong = shape.wrong(submits, runnable);
            if (wrong != null) {
                mismatch = wrong;
                return null;
            }
            ClassWriter writer = new ClassWriter(reader, ClassWriter.COMPUTE_MAXS);
            reader.accept(new Hooks(writer, hooks, submits, shape.mask(runnable)), 0);
            applied = true;
            return writer.toByteArray();
        } catch (Throwable t) {
            mismatch = "reading it failed: " + t;
            return null;
        }
    }

    private static boolean isSetCurrent(int opcode, String owner, String name, String desc) {
        return opcode == Opcodes.INVOKEVIRTUAL && owner.equals(THREAD) && name.equals(SET_CURRENT)
                && desc.equals("(Ljava/lang/Thread;)V");
    }

    /** What the class looks like, in the respects the hooks depend on. */
    private static final class Shape extends ClassVisitor {
        boolean carrierField, contField, stateField, yieldingField, mount, unmount, afterDone, parkOnCarrier;
        int mountSwitches, unmountSwitches, callsAfterMountSwitch;
        /** The submit methods found (name and descriptor), and the static int constants' values. */
        final Set<String> submits = new TreeSet<>();
        final Map<String, Integer> constants = new HashMap<>();

        Shape() {
            super(Opcodes.ASM9);
        }

        @Override
        public FieldVisitor visitField(int access, String name, String desc, String sig, Object value) {
            if (name.equals("carrierThread") && desc.equals("Ljava/lang/Thread;") && (access & Opcodes.ACC_STATIC) == 0) {
                carrierField = true;
            }
            if (name.equals("cont") && desc.equals(CONTINUATION) && (access & Opcodes.ACC_STATIC) == 0) {
                contField = true;
            }
            stateField |= name.equals("state") && desc.equals("I") && (access & Opcodes.ACC_STATIC) == 0;
            yieldingField |= name.equals("YIELDING") && desc.equals("I") && (access & Opcodes.ACC_STATIC) != 0;
            if ((access & Opcodes.ACC_STATIC) != 0 && value instanceof Integer) {
                constants.put(name, (Integer) value);
            }
            return null;
        }

        @Override
        public MethodVisitor visitMethod(int access, String name, String desc, String sig, String[] exceptions) {
            if ((access & Opcodes.ACC_STATIC) != 0) {
                return null;
            }
            boolean isMount = name.equals("mount") && desc.equals("()V");
            boolean isUnmount = name.equals("unmount") && desc.equals("()V");
            afterDone |= name.equals("afterDone") && desc.equals("(Z)V");
            parkOnCarrier |= name.equals(PARK_ON_CARRIER) && desc.equals(PARK_ON_CARRIER_DESC);
            if (name.contains(SUBMIT_NAME)) {
                submits.add(name + desc);
            }
            mount |= isMount;
            unmount |= isUnmount;
            if (!isMount && !isUnmount) {
                return null;
            }
            return new MethodVisitor(Opcodes.ASM9) {
                @Override
                public void visitMethodInsn(int opcode, String owner, String mname, String mdesc, boolean itf) {
                    boolean switches = isSetCurrent(opcode, owner, mname, mdesc);
                    if (isMount) {
                        if (mountSwitches > 0) {
                            callsAfterMountSwitch++;
                        }
                        mountSwitches += switches ? 1 : 0;
                    } else if (switches) {
                        unmountSwitches++;
                    }
                }
            };
        }

        /** What differs from the known shape, with the submit methods
         * {@code expected} and the states {@code runnable}, or null. */
        String wrong(Set<String> expected, List<String> runnable) {
            if (!mount || !unmount || !afterDone) {
                return "missing methods:" + (mount ? "" : " mount()V") + (unmount ? "" : " unmount()V")
                        + (afterDone ? "" : " afterDone(Z)V");
            }
            if (!parkOnCarrier) {
                return "missing methods: " + PARK_ON_CARRIER + PARK_ON_CARRIER_DESC;
            }
            if (!submits.equals(expected)) {
                // Each path to the scheduler must be stamped, and none unknown left out.
                Set<String> missing = new TreeSet<>(expected), unknown = new TreeSet<>(submits);
                missing.removeAll(submits);
                unknown.removeAll(expected);
                return "the methods that submit the thread to its scheduler differ from JDK "
                        + Runtime.version().feature() + "'s:" + (missing.isEmpty() ? "" : " missing methods: " + missing)
                        + (unknown.isEmpty() ? "" : " unknown methods: " + unknown);
            }
            for (String state : runnable) {
                Integer v = constants.get(state);
                if (v == null || v < 0 || v >= Long.SIZE) {
                    return "no constant " + state + " between 0 and 63 (a runnable state)";
                }
            }
            if (!carrierField || !contField) {
                return "no field " + (carrierField ? "cont of type jdk.internal.vm.Continuation"
                        : "carrierThread of type Thread");
            }
            if (!stateField || !yieldingField) {
                return "no field " + (stateField ? "static YIELDING of type int" : "state of type int");
            }
            if (mountSwitches != 1 || unmountSwitches != 1) {
                return "Thread.setCurrentThread is called " + mountSwitches + " time(s) in mount() and "
                        + unmountSwitches + " in unmount(), not once each";
            }
            if (callsAfterMountSwitch != 0) {
                return "mount() calls " + callsAfterMountSwitch + " method(s) after Thread.setCurrentThread";
            }
            return null;
        }

        /** The states {@code runnable} as a mask: bit s for state s (checked to be 0-63). */
        long mask(List<String> runnable) {
            long mask = 0;
            for (String state : runnable) {
                mask |= 1L << constants.get(state);
            }
            return mask;
        }
    }

    /** Adds the hook calls. */
    private static final class Hooks extends ClassVisitor {
        private final String owner;
        private final Set<String> submits;
        private final long runnable;

        Hooks(ClassVisitor next, String owner, Set<String> submits, long runnable) {
            super(Opcodes.ASM9, next);
            this.owner = owner;
            this.submits = submits;
            this.runnable = runnable;
        }

        @Override
        public MethodVisitor visitMethod(int access, String name, String desc, String sig, String[] exceptions) {
            MethodVisitor mv = super.visitMethod(access, name, desc, sig, exceptions);
            if ((access & Opcodes.ACC_STATIC) != 0) {
                return mv;
            }
            if (name.equals("mount") && desc.equals("()V")) {
                return new MethodVisitor(Opcodes.ASM9, mv) {
                    @Override
                    public void visitInsn(int opcode) {
                        if (opcode == Opcodes.RETURN) {
                            super.visitVarInsn(Opcodes.ALOAD, 0);
                            super.visitVarInsn(Opcodes.ALOAD, 0);
                            super.visitFieldInsn(Opcodes.GETFIELD, TARGET, "carrierThread", "Ljava/lang/Thread;");
                            super.visitVarInsn(Opcodes.ALOAD, 0);
                            super.visitFieldInsn(Opcodes.GETFIELD, TARGET, "cont", CONTINUATION);
                            super.visitMethodInsn(Opcodes.INVOKESTATIC, owner, "mount",
                                    "(Ljava/lang/Thread;Ljava/lang/Thread;Ljava/lang/Object;)V", false);
                        }
                        super.visitInsn(opcode);
                    }
                };
            }
            if (name.equals("unmount") && desc.equals("()V")) {
                return new MethodVisitor(Opcodes.ASM9, mv) {
                    @Override
                    public void visitCode() {
                        super.visitCode();
                        super.visitVarInsn(Opcodes.ALOAD, 0);
                        loadCont(this);
                        super.visitVarInsn(Opcodes.ALOAD, 0);
                        super.visitFieldInsn(Opcodes.GETFIELD, TARGET, "state", "I");
                        super.visitFieldInsn(Opcodes.GETSTATIC, TARGET, "YIELDING", "I");
                        super.visitMethodInsn(Opcodes.INVOKESTATIC, owner, "unmount",
                                "(Ljava/lang/Thread;Ljava/lang/Object;II)V", false);
                    }
                };
            }
            if (name.equals("afterDone") && desc.equals("(Z)V")) {
                return new MethodVisitor(Opcodes.ASM9, mv) {
                    @Override
                    public void visitCode() {
                        super.visitCode();
                        super.visitVarInsn(Opcodes.ALOAD, 0);
                        loadCont(this);
                        super.visitMethodInsn(Opcodes.INVOKESTATIC, owner, "end", "(Ljava/lang/Thread;Ljava/lang/Object;)V",
                                false);
                    }
                };
            }
            if (submits.contains(name + desc)) {
                return new MethodVisitor(Opcodes.ASM9, mv) {
                    @Override
                    public void visitCode() {
                        super.visitCode();
                        loadCont(this);
                        super.visitVarInsn(Opcodes.ALOAD, 0);
                        super.visitFieldInsn(Opcodes.GETFIELD, TARGET, "state", "I");
                        super.visitLdcInsn(runnable);
                        super.visitMethodInsn(Opcodes.INVOKESTATIC, owner, "ready", "(Ljava/lang/Object;IJ)V", false);
                    }
                };
            }
            if (name.equals(PARK_ON_CARRIER) && desc.equals(PARK_ON_CARRIER_DESC)) {
                return new MethodVisitor(Opcodes.ASM9, mv) {
                    @Override
                    public void visitCode() {
                        super.visitCode();
                        contHook(this, "pinned");
                    }

                    @Override
                    public void visitInsn(int opcode) {
                        if (opcode == Opcodes.RETURN) {
                            contHook(this, "unpinned");
                        }
                        super.visitInsn(opcode);
                    }
                };
            }
            return mv;
        }

        /** this.cont onto the stack. */
        private static void loadCont(MethodVisitor mv) {
            mv.visitVarInsn(Opcodes.ALOAD, 0);
            mv.visitFieldInsn(Opcodes.GETFIELD, TARGET, "cont", CONTINUATION);
        }

        /** A call of hook {@code name} with this.cont. */
        private void contHook(MethodVisitor mv, String name) {
            loadCont(mv);
            mv.visitMethodInsn(Opcodes.INVOKESTATIC, owner, name, "(Ljava/lang/Object;)V", false);
        }
    }
}
