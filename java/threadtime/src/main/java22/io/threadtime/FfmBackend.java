package io.threadtime;

import java.lang.invoke.MethodHandle;
import java.util.ArrayDeque;
import java.util.Arrays;

/**
 * The FFM backend (JDK 22+, the default there): the calls {@link Backend}
 * marks critical are critical downcalls, each a static final
 * {@link MethodHandle} in a holder class of its own, called with
 * {@code invokeExact}; every other call goes through JNI, as it would on the
 * JNI backend.
 * <p>
 * A handle is linked once its call has been made {@link #LINK_AFTER} times,
 * on a daemon thread ("threadtime-ffm-link"), and JNI answers the call until
 * it is: linking the
 * first downcall handle in a JVM loads some 300 classes of the JDK's and
 * spins more (~0.2-1 s of CPU on a loaded host, several times the JDK bean's
 * own first call; make bench-java-first-call), which would otherwise be the
 * first call's own cost, charged to the thread that made it. The switch is a
 * plain flag per call, read before the holder's constant: one load and a
 * branch that never changes again. The handles are made by {@link FfmLinker},
 * from Backend's list, so that nothing of {@code java.lang.foreign} loads with
 * this class.
 */
final class FfmBackend extends JniBackend {
    @Override
    public String name() {
        return "ffm";
    }

    /**
     * Calls through JNI before a call's handle is asked for: a call made a
     * few times (a first read, at start-up) costs no linking at all, and the
     * linker thread does not compete with a JVM's start for the CPU; one made
     * often is linked within its first hundred calls.
     */
    static final int LINK_AFTER = 100;

    /**
     * The calls this backend links, by the indexes below; each one's holder
     * is the class named as the call, capitalized. Arrays, not an object per
     * call: every first call on JDK 22+ makes this class, and a class more
     * would cost it ~0.5 ms to load from the JAR.
     */
    private static final String[] METHODS = {
        "selfTotal", "selfFast", "selfUser", "selfSystem", "tidSystem", "threadTotal", "threadUser", "threadTimes",
        "processTotal", "processUser", "selfRunWait", "event", "eventText", "eventValue", "eventBegin", "eventEnd",
        "eventMount", "eventUnmount", "probeBegin", "probeEnd", "probeBeginCpu", "probeEndCpu", "probeEndMeasured"
    };
    private static final int SELF_TOTAL = 0, SELF_FAST = 1, SELF_USER = 2, SELF_SYSTEM = 3, TID_SYSTEM = 4,
            THREAD_TOTAL = 5, THREAD_USER = 6, THREAD_TIMES = 7, PROCESS_TOTAL = 8, PROCESS_USER = 9,
            SELF_RUN_WAIT = 10, EVENT = 11, EVENT_TEXT = 12, EVENT_VALUE = 13, EVENT_BEGIN = 14, EVENT_END = 15,
            EVENT_MOUNT = 16, EVENT_UNMOUNT = 17, PROBE_BEGIN = 18, PROBE_END = 19, PROBE_BEGIN_CPU = 20,
            PROBE_END_CPU = 21, PROBE_END_MEASURED = 22;
    /** Set once a call's holder is linked; plain: a reader that sees it late
     *  answers through JNI a little longer, and the holder's initialization
     *  orders its handle before any use. */
    private static final boolean[] READY = new boolean[METHODS.length];
    /** Set once a call's link was asked for (guarded by the class's lock; read unlocked first). */
    private static final boolean[] REQUESTED = new boolean[METHODS.length];
    /** Calls answered through JNI so far, per call (racy: a lost count only delays the link). */
    private static final int[] CALLS = new int[METHODS.length];
    private static final ArrayDeque<Integer> PENDING = new ArrayDeque<>();
    /** Whether a linker thread runs (guarded by the class's lock). */
    private static boolean linking;
    private static boolean warned;

    /** Whether call i's handle is linked; if not, asks for it (once) at the {@value #LINK_AFTER}th call. */
    private static boolean ready(int i) {
        if (READY[i]) {
            return true;
        }
        if (!REQUESTED[i] && ++CALLS[i] >= LINK_AFTER) {
            request(i);
        }
        return false;
    }

    private static synchronized void request(int i) {
        if (REQUESTED[i]) {
            return;
        }
        REQUESTED[i] = true;
        PENDING.add(i);
        if (!linking) {
            linking = true;
            Thread t = new Thread(new Linking(), "threadtime-ffm-link");
            t.setDaemon(true);
            t.start();
        }
    }

    /** The next call to link, or -1 when none is left (and the linker thread ends). */
    private static synchronized int next() {
        Integer i = PENDING.poll();
        linking = i != null;
        return i == null ? -1 : i;
    }

    /** The linker thread's work: every link asked for, then it ends (the next request starts another). */
    private static final class Linking implements Runnable {
        @Override
        public void run() {
            for (int i = next(); i >= 0; i = next()) {
                link(i);
            }
        }
    }

    /** Links call i on the calling thread (initializes its holder); a failure leaves the call on JNI. */
    private static void link(int i) {
        String m = METHODS[i];
        try {
            Class.forName(FfmBackend.class.getName() + "$" + Character.toUpperCase(m.charAt(0)) + m.substring(1), true,
                    FfmBackend.class.getClassLoader());
            READY[i] = true;
        } catch (ClassNotFoundException | LinkageError e) {
            unlinked(m, e instanceof ExceptionInInitializerError && e.getCause() != null ? e.getCause() : e);
        }
    }

    private static void unlinked(String method, Throwable why) {
        synchronized (FfmBackend.class) {
            if (warned) {
                return;
            }
            warned = true;
        }
        System.getLogger("io.threadtime").log(System.Logger.Level.WARNING, "threadtime: FFM could not link "
                + method + " (" + why + ")" + NativeLibrary.archGiven()
                + "; it and any other call FFM cannot link stay on JNI, which works (-Dthreadtime.backend=jni says so"
                + " from the start)");
    }

    @Override
    public void linkNow() {
        synchronized (FfmBackend.class) {
            Arrays.fill(REQUESTED, true);
            PENDING.clear();
        }
        for (int i = 0; i < METHODS.length; i++) {
            link(i);
        }
    }

    /** invokeExact declares Throwable; the core functions throw nothing. */
    private static AssertionError impossible(Throwable t) {
        return new AssertionError("threadtime: a native call threw", t);
    }

    // ---- the linked calls: an index and a holder each ----

    private static final class SelfTotal { static final MethodHandle H = FfmLinker.handle("selfTotal"); }
    private static final class SelfFast { static final MethodHandle H = FfmLinker.handle("selfFast"); }
    private static final class SelfUser { static final MethodHandle H = FfmLinker.handle("selfUser"); }
    private static final class SelfSystem { static final MethodHandle H = FfmLinker.handle("selfSystem"); }
    private static final class TidSystem { static final MethodHandle H = FfmLinker.handle("tidSystem"); }
    private static final class ThreadTotal { static final MethodHandle H = FfmLinker.handle("threadTotal"); }
    private static final class ThreadUser { static final MethodHandle H = FfmLinker.handle("threadUser"); }
    private static final class ThreadTimes { static final MethodHandle H = FfmLinker.handle("threadTimes"); }
    private static final class ProcessTotal { static final MethodHandle H = FfmLinker.handle("processTotal"); }
    private static final class ProcessUser { static final MethodHandle H = FfmLinker.handle("processUser"); }
    private static final class SelfRunWait { static final MethodHandle H = FfmLinker.handle("selfRunWait"); }
    private static final class Event { static final MethodHandle H = FfmLinker.handle("event"); }
    private static final class EventText { static final MethodHandle H = FfmLinker.handle("eventText"); }
    private static final class EventValue { static final MethodHandle H = FfmLinker.handle("eventValue"); }
    private static final class EventBegin { static final MethodHandle H = FfmLinker.handle("eventBegin"); }
    private static final class EventEnd { static final MethodHandle H = FfmLinker.handle("eventEnd"); }
    private static final class EventMount { static final MethodHandle H = FfmLinker.handle("eventMount"); }
    private static final class EventUnmount { static final MethodHandle H = FfmLinker.handle("eventUnmount"); }
    private static final class ProbeBegin { static final MethodHandle H = FfmLinker.handle("probeBegin"); }
    private static final class ProbeEnd { static final MethodHandle H = FfmLinker.handle("probeEnd"); }
    private static final class ProbeBeginCpu { static final MethodHandle H = FfmLinker.handle("probeBeginCpu"); }
    private static final class ProbeEndCpu { static final MethodHandle H = FfmLinker.handle("probeEndCpu"); }
    private static final class ProbeEndMeasured { static final MethodHandle H = FfmLinker.handle("probeEndMeasured"); }


    @Override
    public long selfTotal() {
        if (!ready(SELF_TOTAL)) {
            return super.selfTotal();
        }
        try {
            return (long) SelfTotal.H.invokeExact();
        } catch (Throwable t) {
            throw impossible(t);
        }
    }

    @Override
    public long selfFast() {
        if (!ready(SELF_FAST)) {
            return super.selfFast();
        }
        try {
            return (long) SelfFast.H.invokeExact();
        } catch (Throwable t) {
            throw impossible(t);
        }
    }

    /** The downcall handle itself, linked now: the hooks read it at every mount. */
    @Override
    public MethodHandle selfFastHandle() {
        REQUESTED[SELF_FAST] = true;
        link(SELF_FAST);
        return SelfFast.H;
    }

    @Override
    public long selfUser() {
        if (!ready(SELF_USER)) {
            return super.selfUser();
        }
        try {
            return (long) SelfUser.H.invokeExact();
        } catch (Throwable t) {
            throw impossible(t);
        }
    }

    @Override
    public long selfSystem() {
        if (!ready(SELF_SYSTEM)) {
            return super.selfSystem();
        }
        try {
            return (long) SelfSystem.H.invokeExact();
        } catch (Throwable t) {
            throw impossible(t);
        }
    }

    @Override
    public long tidSystem(int tid) {
        if (!ready(TID_SYSTEM)) {
            return super.tidSystem(tid);
        }
        try {
            return (long) TidSystem.H.invokeExact(tid);
        } catch (Throwable t) {
            throw impossible(t);
        }
    }

    @Override
    public long threadTotal(long handle) {
        if (!ready(THREAD_TOTAL)) {
            return super.threadTotal(handle);
        }
        try {
            return (long) ThreadTotal.H.invokeExact(handle);
        } catch (Throwable t) {
            throw impossible(t);
        }
    }

    @Override
    public long threadUser(long handle) {
        if (!ready(THREAD_USER)) {
            return super.threadUser(handle);
        }
        try {
            return (long) ThreadUser.H.invokeExact(handle);
        } catch (Throwable t) {
            throw impossible(t);
        }
    }

    @Override
    public int threadTimes(long handle, long[] out) {
        if (!ready(THREAD_TIMES)) {
            return super.threadTimes(handle, out);
        }
        try {
            return (int) ThreadTimes.H.invokeExact(handle, out);
        } catch (Throwable t) {
            throw impossible(t);
        }
    }

    @Override
    public long processTotal() {
        if (!ready(PROCESS_TOTAL)) {
            return super.processTotal();
        }
        try {
            return (long) ProcessTotal.H.invokeExact();
        } catch (Throwable t) {
            throw impossible(t);
        }
    }

    @Override
    public long processUser() {
        if (!ready(PROCESS_USER)) {
            return super.processUser();
        }
        try {
            return (long) ProcessUser.H.invokeExact();
        } catch (Throwable t) {
            throw impossible(t);
        }
    }

    @Override
    public long selfRunWait() {
        if (!ready(SELF_RUN_WAIT)) {
            return super.selfRunWait();
        }
        try {
            return (long) SelfRunWait.H.invokeExact();
        } catch (Throwable t) {
            throw impossible(t);
        }
    }

    @Override
    public void event(int id) {
        if (!ready(EVENT)) {
            super.event(id);
            return;
        }
        try {
            Event.H.invokeExact(id);
        } catch (Throwable t) {
            throw impossible(t);
        }
    }

    @Override
    public void eventText(int id, byte[] text) {
        if (!ready(EVENT_TEXT)) {
            super.eventText(id, text);
            return;
        }
        try {
            EventText.H.invokeExact(id, text);
        } catch (Throwable t) {
            throw impossible(t);
        }
    }

    @Override
    public void eventValue(int id, long value) {
        if (!ready(EVENT_VALUE)) {
            super.eventValue(id, value);
            return;
        }
        try {
            EventValue.H.invokeExact(id, value);
        } catch (Throwable t) {
            throw impossible(t);
        }
    }

    @Override
    public void eventBegin(int id) {
        if (!ready(EVENT_BEGIN)) {
            super.eventBegin(id);
            return;
        }
        try {
            EventBegin.H.invokeExact(id);
        } catch (Throwable t) {
            throw impossible(t);
        }
    }

    @Override
    public void eventEnd(int id) {
        if (!ready(EVENT_END)) {
            super.eventEnd(id);
            return;
        }
        try {
            EventEnd.H.invokeExact(id);
        } catch (Throwable t) {
            throw impossible(t);
        }
    }

    @Override
    public void eventMount(long vthreadId) {
        if (!ready(EVENT_MOUNT)) {
            super.eventMount(vthreadId);
            return;
        }
        try {
            EventMount.H.invokeExact(vthreadId);
        } catch (Throwable t) {
            throw impossible(t);
        }
    }

    @Override
    public void eventUnmount(long vthreadId) {
        if (!ready(EVENT_UNMOUNT)) {
            super.eventUnmount(vthreadId);
            return;
        }
        try {
            EventUnmount.H.invokeExact(vthreadId);
        } catch (Throwable t) {
            throw impossible(t);
        }
    }

    @Override
    public long probeBegin(int id) {
        if (!ready(PROBE_BEGIN)) {
            return super.probeBegin(id);
        }
        try {
            return (long) ProbeBegin.H.invokeExact(id);
        } catch (Throwable t) {
            throw impossible(t);
        }
    }

    @Override
    public void probeEnd(int id, long t0, boolean thrown) {
        if (!ready(PROBE_END)) {
            super.probeEnd(id, t0, thrown);
            return;
        }
        try {
            ProbeEnd.H.invokeExact(id, t0, thrown);
        } catch (Throwable t) {
            throw impossible(t);
        }
    }

    @Override
    public long probeBeginCpu(int id) {
        if (!ready(PROBE_BEGIN_CPU)) {
            return super.probeBeginCpu(id);
        }
        try {
            return (long) ProbeBeginCpu.H.invokeExact(id);
        } catch (Throwable t) {
            throw impossible(t);
        }
    }

    @Override
    public void probeEndCpu(int id, long t0, boolean thrown) {
        if (!ready(PROBE_END_CPU)) {
            super.probeEndCpu(id, t0, thrown);
            return;
        }
        try {
            ProbeEndCpu.H.invokeExact(id, t0, thrown);
        } catch (Throwable t) {
            throw impossible(t);
        }
    }

    @Override
    public void probeEndMeasured(int id, long t0, long ns, int measure, boolean thrown) {
        if (!ready(PROBE_END_MEASURED)) {
            super.probeEndMeasured(id, t0, ns, measure, thrown);
            return;
        }
        try {
            ProbeEndMeasured.H.invokeExact(id, t0, ns, measure, thrown);
        } catch (Throwable t) {
            throw impossible(t);
        }
    }
}
