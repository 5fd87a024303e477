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
     * "cpu": the carrier's CPU clock through threadtime's backend
     * ({@code tt_self_total_ns}), what exact mode reads; "counter": the cycle
     * counter, what mounted mode reads where the core trusts it;
     * "monotonic": {@code System.nanoTime()}, what it reads elsewhere; "none": null.
     */
    static MethodHandle named(String name) throws ReflectiveOperationException {
        switch (name) {
            case "cpu": {
                Class<?> nativeClass = Class.forName("io.threadtime.Native");
                Field b = nativeClass.getDeclaredField("B");
                b.setAccessible(true);
                Object backend = b.get(null);
                Class<?> api = Class.forName("io.threadtime.Backend");
                MethodHandles.Lookup lookup = MethodHandles.privateLookupIn(api, MethodHandles.lookup());
                return lookup.findVirtual(api, "selfTotal", MethodType.methodType(long.class)).bindTo(backend)
                        .asType(MethodType.methodType(long.class));
            }
            case "counter": {
                Method reader = Class.forName("io.threadtime.CycleCounter").getDeclaredMethod("reader");
                reader.setAccessible(true);
                return (MethodHandle) reader.invoke(null);
            }
            case "monotonic":
                return MethodHandles.lookup().findStatic(System.class, "nanoTime", MethodType.methodType(long.class));
            case "none":
                return null;
            default:
                throw new IllegalArgumentException("clock " + name + ": expected cpu, counter, monotonic or none");
        }
    }

    static long read(MethodHandle clock) {
        try {
            return (long) clock.invokeExact();
        } catch (Throwable e) {
            throw new AssertionError(e);
        }
    }
}
