package io.threadtime;

import java.lang.invoke.MethodHandle;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

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

    /** One call this backend links. */
    private static final class Link {
        final String method;
        /** The holder's simple name: a class literal would load it with this class. */
        final String holder;
        /** Set once the holder's handle is linked; plain: a reader that sees
         *  it late answers through JNI a little longer, and the holder's
         *  initialization orders its handle before any use. */
        boolean ready;
        /** Set once a link was asked for (guarded by the class's lock; read unlocked first). */
        boolean requested;

        Link(String method, String holder) {
            this.method = method;
            this.holder = holder;
            ALL.add(this);
        }

        /** Calls answered through JNI so far (racy: a lost count only delays the link). */
        int calls;

        /** Whether the handle is linked; if not, asks for it (once) at the {@value FfmBackend#LINK_AFTER}th call. */
        boolean ready() {
            if (ready) {
                return true;
            }
            if (!requested && ++calls >= LINK_AFTER) {
                request(this);
            }
            return false;
        }

        /** Links on the calling thread (initializes the holder); a failure leaves the call on JNI. */
        void link() {
            try {
                Class.forName(FfmBackend.class.getName() + "$" + holder, true, FfmBackend.class.getClassLoader());
                ready = true;
            } catch (ClassNotFoundException | LinkageError e) {
                unlinked(this, e instanceof ExceptionInInitializerError && e.getCause() != null ? e.getCause() : e);
            }
        }
    }

    /**
     * Calls through JNI before a call's handle is asked for: a call made a
     * few times (a first read, at start-up) costs no linking at all, and the
     * linker thread does not compete with a JVM's start for the CPU; one made
     * often is linked within its first hundred calls.
     */
    static final int LINK_AFTER = 100;

    private static final List<Link> ALL = new ArrayList<>();
    private static final ArrayDeque<Link> PENDING = new ArrayDeque<>();
    /** Whether a linker thread runs (guarded by the class's lock). */
    private static boolean linking;
    private static boolean warned;

    private static synchronized void request(Link l) {
        if (l.requested) {
            return;
        }
        l.requested = true;
        PENDING.add(l);
        if (!linking) {
            linking = true;
            Thread t = new Thread(new Linking(), "threadtime-ffm-link");
            t.setDaemon(true);
            t.start();
        }
    }

    private static synchronized Link next() {
        Link l = PENDING.poll();
        linking = l != null;
        return l;
    }

    /** The linker thread's work: every link asked for, then it ends (the next request starts another). */
    private static final class Linking implements Runnable {
        @Override
        public void run() {
            for (Link l = next(); l != null; l = next()) {
                l.link();
            }
        }
    }

    private static void unlinked(Link l, Throwable why) {
        synchronized (FfmBackend.class) {
            if (warned) {
                return;
            }
            warned = true;
        }
        System.getLogger("io.threadtime").log(System.Logger.Level.WARNING, "threadtime: FFM could not link "
                + l.method + " (" + why + ")" + NativeLibrary.archGiven()
                + "; it and any other call FFM cannot link stay on JNI, which works (-Dthreadtime.backend=jni says so"
                + " from the start)");
    }

    @Override
    public void linkNow() {
        List<Link> all;
        synchronized (FfmBackend.class) {
            for (Link l : ALL) {
                l.requested = true;
            }
            PENDING.clear();
            all = List.copyOf(ALL);
        }
        for (Link l : all) {
            l.link();
        }
    }

    /** invokeExact declares Throwable; the core functions throw nothing. */
    private static AssertionError impossible(Throwable t) {
        return new AssertionError("threadtime: a native call threw", t);
    }

    // ---- the linked calls: a Link and a holder each ----

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

    private static final Link SELF_TOTAL = new Link("selfTotal", "SelfTotal");
    private static final Link SELF_FAST = new Link("selfFast", "SelfFast");
    private static final Link SELF_USER = new Link("selfUser", "SelfUser");
    private static final Link SELF_SYSTEM = new Link("selfSystem", "SelfSystem");
    private static final Link TID_SYSTEM = new Link("tidSystem", "TidSystem");
    private static final Link THREAD_TOTAL = new Link("threadTotal", "ThreadTotal");
    private static final Link THREAD_USER = new Link("threadUser", "ThreadUser");
    private static final Link THREAD_TIMES = new Link("threadTimes", "ThreadTimes");
    private static final Link PROCESS_TOTAL = new Link("processTotal", "ProcessTotal");
    private static final Link PROCESS_USER = new Link("processUser", "ProcessUser");
    private static final Link SELF_RUN_WAIT = new Link("selfRunWait", "SelfRunWait");
    private static final Link EVENT = new Link("event", "Event");
    private static final Link EVENT_TEXT = new Link("eventText", "EventText");
    private static final Link EVENT_VALUE = new Link("eventValue", "EventValue");
    private static final Link EVENT_BEGIN = new Link("eventBegin", "EventBegin");
    private static final Link EVENT_END = new Link("eventEnd", "EventEnd");
    private static final Link EVENT_MOUNT = new Link("eventMount", "EventMount");
    private static final Link EVENT_UNMOUNT = new Link("eventUnmount", "EventUnmount");
    private static final Link PROBE_BEGIN = new Link("probeBegin", "ProbeBegin");
    private static final Link PROBE_END = new Link("probeEnd", "ProbeEnd");
    private static final Link PROBE_BEGIN_CPU = new Link("probeBeginCpu", "ProbeBeginCpu");
    private static final Link PROBE_END_CPU = new Link("probeEndCpu", "ProbeEndCpu");
    private static final Link PROBE_END_MEASURED = new Link("probeEndMeasured", "ProbeEndMeasured");

    @Override
    public long selfTotal() {
        if (!SELF_TOTAL.ready()) {
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
        if (!SELF_FAST.ready()) {
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
        SELF_FAST.requested = true;
        SELF_FAST.link();
        return SelfFast.H;
    }

    @Override
    public long selfUser() {
        if (!SELF_USER.ready()) {
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
        if (!SELF_SYSTEM.ready()) {
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
        if (!TID_SYSTEM.ready()) {
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
        if (!THREAD_TOTAL.ready()) {
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
        if (!THREAD_USER.ready()) {
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
        if (!THREAD_TIMES.ready()) {
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
        if (!PROCESS_TOTAL.ready()) {
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
        if (!PROCESS_USER.ready()) {
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
        if (!SELF_RUN_WAIT.ready()) {
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
        if (!EVENT.ready()) {
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
        if (!EVENT_TEXT.ready()) {
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
        if (!EVENT_VALUE.ready()) {
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
        if (!EVENT_BEGIN.ready()) {
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
        if (!EVENT_END.ready()) {
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
        if (!EVENT_MOUNT.ready()) {
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
        if (!EVENT_UNMOUNT.ready()) {
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
        if (!PROBE_BEGIN.ready()) {
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
        if (!PROBE_END.ready()) {
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
        if (!PROBE_BEGIN_CPU.ready()) {
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
        if (!PROBE_END_CPU.ready()) {
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
        if (!PROBE_END_MEASURED.ready()) {
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
