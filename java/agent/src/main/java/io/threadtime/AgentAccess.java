package io.threadtime;

import java.io.IOException;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.nio.file.Path;
import java.util.function.Consumer;

/**
 * The agent's one door into the API's package: what the {@code -javaagent}
 * needs of the natives, the clocks and the extraction directory, which the
 * API keeps package-private. This class ships in the agent's JAR only (it is
 * compiled in the agent's module, into the API's package), so the API
 * artifact gains no public surface for it; in the agent's JAR it sits beside
 * the API's classes, in their package and class loader. Not an API.
 */
public final class AgentAccess {
    private static final MethodHandles.Lookup LOOKUP = MethodHandles.lookup();

    private AgentAccess() {}

    /** {@code Backend}'s method {@code name} of type {@code type}, bound to the backend in use. */
    public static MethodHandle backend(String name, MethodType type) throws ReflectiveOperationException {
        return LOOKUP.findVirtual(Backend.class, name, type).bindTo(Native.B);
    }

    /** Links the backend's calls now (FFM: every downcall handle), before the hooks go in: nothing may be linked inside a mount. */
    public static void linkNow() {
        Native.B.linkNow();
    }

    /** What a probe on a virtual thread measures: its CPU ({@code exact}) or its time mounted. */
    public static int probeMeasure(boolean exact) {
        return exact ? Backend.MEASURE_CPU : Backend.MEASURE_MOUNTED;
    }

    /** ()J: the calling virtual thread's account, ns, as {@link VirtualThreadCpu} reads it; -1 without one. */
    public static MethodHandle currentVirtual() throws ReflectiveOperationException {
        return LOOKUP.findStatic(VirtualThreadCpu.class, "currentVirtual", MethodType.methodType(long.class));
    }

    /** The JVMTI agent's mode, {@code ABSENT} when it is not loaded. */
    public static VirtualThreadCpu.Mode jvmtiMode() {
        return JvmtiAccounts.probe();
    }

    /** (Thread, Thread)V: names a virtual thread and its carrier in the trace, once each. */
    public static MethodHandle mountedNames() throws ReflectiveOperationException {
        return ThreadNames.mountedHandle();
    }

    /** ()V: names the calling thread in the trace at its first record. */
    public static MethodHandle firstNames() throws ReflectiveOperationException {
        return ThreadNames.firstHandle();
    }

    /** Names the calling thread in the trace now. */
    public static void nameCurrent() {
        ThreadNames.nameCurrent();
    }

    /** Runs the naming path {@code rounds} times, so a mount does not compile it. */
    public static void warmUpNames(int rounds) {
        ThreadNames.warmUp(rounds);
    }

    /** {@code fastclock=} parsed: on, off. */
    public static boolean parseFastClock(String value) {
        return FastClock.parse(value);
    }

    /** Switches the fast clock on or off for the whole JVM. */
    public static void setFastClock(boolean on) {
        FastClock.set(on);
    }

    /** ()J: the calling thread's CPU time, ns, on the clock {@link #fastClockName()} says. */
    public static MethodHandle fastClockReader() throws ReflectiveOperationException {
        return FastClock.reader();
    }

    /** The name of the clock {@link #fastClockReader()} reads. */
    public static String fastClockName() {
        return FastClock.name();
    }

    /** The cycle counter's rate, Hz; 0 or less where it is not trusted. */
    public static double cycleHz() {
        return CycleCounter.hz();
    }

    /** ()J: one cycle-counter read. */
    public static MethodHandle cycleReader() throws ReflectiveOperationException {
        return CycleCounter.reader();
    }

    /** Whether {@link #stampedClockReader()} is there: with the JNI cycle
     * counter (JDK 17-21). JDK 22+ loads the FFM one, whose reads are critical
     * downcalls, as cheap here as the load that would replace the second. */
    public static final boolean STAMPED_CLOCK = Runtime.version().feature() < 22;

    /** ()J: the calling thread's CPU time as {@link #fastClockReader()} reads it, leaving the
     * counter value read for it in the thread's slot, whose address {@link #stampSlotReader()} gives. */
    public static MethodHandle stampedClockReader() throws ReflectiveOperationException {
        return CycleCounter.stampedReader();
    }

    /** ()J: the address of the calling thread's slot, 8 bytes. */
    public static MethodHandle stampSlotReader() throws ReflectiveOperationException {
        return CycleCounter.stampSlotReader();
    }

    /** Whether HotSpot's virtual-thread transition path is on; null on a JVM without that flag. */
    public static Boolean transitionsOn() {
        return HotSpotFlags.transitionsOn();
    }

    /** The name of HotSpot's transition flag. */
    public static final String TRANSITIONS_FLAG = HotSpotFlags.TRANSITIONS_FLAG;
    /** Whether this JDK lets a virtual thread unmount holding a monitor, where that flag hangs. */
    public static final boolean MONITORS_UNMOUNT = HotSpotFlags.MONITORS_UNMOUNT;
    /** What the flag does there, for a message. */
    public static final String FLAG_HANG = HotSpotFlags.FLAG_HANG;

    /** Marks the event log as started by the agent, whose log at level info is {@code info}. */
    public static void agentRunsLog(Consumer<String> info) {
        EventLog.agentRunsLog = info;
    }

    /** Whether the agent started the event log. */
    public static boolean agentRunsLog() {
        return EventLog.agentRunsLog != null;
    }

    /** The file the JAR carries for this platform under {@code io/threadtime/native/<platform>/}. */
    public static byte[] bundled(String file, String otherwise) {
        return NativeLibrary.bundled(file, otherwise);
    }

    /** The extraction directory, open and locked, as {@link #extracting} hands it. */
    public static final class Directory {
        private final ExtractionDirectory dir;

        private Directory(ExtractionDirectory dir) {
            this.dir = dir;
        }

        /** bytes put in as a file named for this version and their checksum; its path. */
        public Path putVersioned(String prefix, String suffix, byte[] bytes) throws IOException {
            return NativeLibrary.putVersioned(dir, prefix, suffix, bytes);
        }

        /** Lets other JVMs extract while this one goes on using the files. */
        public void unlock() throws IOException {
            dir.unlock();
        }
    }

    /** What is done in the extraction directory. */
    public interface Use<T> {
        T in(Directory dir) throws IOException;
    }

    /** use run in the extraction directory, as the API extracts its own library. */
    public static <T> T extracting(String what, String otherwise, Use<T> use) {
        return NativeLibrary.extracting(what, otherwise, dir -> use.in(new Directory(dir)));
    }
}
