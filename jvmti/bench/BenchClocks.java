import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Field;
import java.lang.reflect.Method;

/**
 * The clocks the {@code -javaagent}'s hooks read, as ()J handles, so that a
 * benchmark can make the same reads with no agent at all: what the reads
 * alone cost in that context, the floor under any hook. threadtime's classes
 * behind them are not public API, hence the reflection.
 */
final class BenchClocks {
    private BenchClocks() {}

    /**
     * "cpu": the carrier's CPU clock as exact mode reads it
     * ({@code tt_self_fast_ns} through {@code io.threadtime.FastClock}: the
     * cycle counter while the kernel shows no switch); "cpu-syscall": the same
     * clock by a system call each time ({@code tt_self_total_ns}, what exact
     * mode read before); "counter": the cycle counter, what mounted mode reads
     * where the core trusts it; "monotonic": {@code System.nanoTime()}, what
     * it reads elsewhere; "none": null.
     */
    static MethodHandle named(String name) throws ReflectiveOperationException {
        switch (name) {
            case "cpu":
                return staticReader("io.threadtime.FastClock");
            case "cpu-syscall": {
                Class<?> nativeClass = Class.forName("io.threadtime.Native");
                Field b = nativeClass.getDeclaredField("B");
                b.setAccessible(true);
                Object backend = b.get(null);
                Class<?> api = Class.forName("io.threadtime.Backend");
                MethodHandles.Lookup lookup = MethodHandles.privateLookupIn(api, MethodHandles.lookup());
                return lookup.findVirtual(api, "selfTotal", MethodType.methodType(long.class)).bindTo(backend)
                        .asType(MethodType.methodType(long.class));
            }
            case "counter":
                return staticReader("io.threadtime.CycleCounter");
            case "monotonic":
                return MethodHandles.lookup().findStatic(System.class, "nanoTime", MethodType.methodType(long.class));
            case "none":
                return null;
            default:
                throw new IllegalArgumentException("clock " + name
                        + ": expected cpu, cpu-syscall, counter, monotonic or none");
        }
    }

    /** The ()J handle a threadtime class's static reader() gives. */
    private static MethodHandle staticReader(String className) throws ReflectiveOperationException {
        Method reader = Class.forName(className).getDeclaredMethod("reader");
        reader.setAccessible(true);
        return (MethodHandle) reader.invoke(null);
    }

    static long read(MethodHandle clock) {
        try {
            return (long) clock.invokeExact();
        } catch (Throwable e) {
            throw new AssertionError(e);
        }
    }
}
