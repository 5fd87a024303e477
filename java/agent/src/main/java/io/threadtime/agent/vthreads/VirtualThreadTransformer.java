package io.threadtime.agent.vthreads;

import io.threadtime.agent.vthreads.hooks.VirtualThreadHooks;
import java.lang.instrument.ClassFileTransformer;
import java.security.ProtectionDomain;
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
 * methods that hand the thread to its scheduler (JDK 21:
 * {@code submitRunContinuation}, {@code lazySubmitRunContinuation},
 * {@code externalSubmitRunContinuation}; JDK 25 also
 * {@code externalSubmitRunContinuationOrThrow}: start, unpark, unblock, the
 * end of a yield, all go through one of them), and at the start and the
 * returns of {@code parkOnCarrierThread}, where a pinned thread parks holding
 * its carrier.
 * <p>
 * Before changing anything the shape is checked: the three methods with
 * those descriptors, {@code parkOnCarrierThread(ZJ)V} and a submitting
 * method, the {@code carrierThread}, {@code cont}, {@code state} and
 * {@code YIELDING} fields, and exactly one
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
    /** The methods that hand the thread to its scheduler, which JDK has which. */
    private static final java.util.Set<String> SUBMITS = java.util.Set.of("submitRunContinuation",
            "lazySubmitRunContinuation", "externalSubmitRunContinuation", "externalSubmitRunContinuationOrThrow");

    private volatile String mismatch = "java.lang.VirtualThread was not offered for transformation";
    private volatile boolean applied;

    VirtualThreadTransformer() {
        this("io/threadtime/agent/vthreads/hooks/VirtualThreadHooks"); // named: the class literal would load it here
    }

    /** Hooks calling another class with the same three methods (the
     * benchmark's ThreadLocal route, jvmti/bench). */
    VirtualThreadTransformer(String hooks) {
        this.hooks = hooks;
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
            String wrong = shape.wrong();
            if (wrong != null) {
                mismatch = wrong;
                return null;
            }
            ClassWriter writer = new ClassWriter(reader, ClassWriter.COMPUTE_MAXS);
            reader.accept(new Hooks(writer, hooks), 0);
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
        boolean carrierField, contField, stateField, yieldingField, mount, unmount, afterDone, parkOnCarrier, submit;
        int mountSwitches, unmountSwitches, callsAfterMountSwitch;

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
            submit |= SUBMITS.contains(name) && desc.endsWith(")V");
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

        /** What differs from the known shape, or null. */
        String wrong() {
            if (!mount || !unmount || !afterDone) {
                return "missing methods:" + (mount ? "" : " mount()V") + (unmount ? "" : " unmount()V")
                        + (afterDone ? "" : " afterDone(Z)V");
            }
            if (!parkOnCarrier || !submit) {
                return "missing methods:" + (parkOnCarrier ? "" : " " + PARK_ON_CARRIER + PARK_ON_CARRIER_DESC)
                        + (submit ? "" : " any of " + SUBMITS);
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
    }

    /** Adds the hook calls. */
    private static final class Hooks extends ClassVisitor {
        private final String owner;

        Hooks(ClassVisitor next, String owner) {
            super(Opcodes.ASM9, next);
            this.owner = owner;
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
            if (SUBMITS.contains(name) && desc.endsWith(")V")) {
                return new MethodVisitor(Opcodes.ASM9, mv) {
                    @Override
                    public void visitCode() {
                        super.visitCode();
                        contHook(this, "ready");
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
