import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;

/**
 * Which clock mounted mode reads: System.nanoTime() against the cycle
 * counter through a critical FFM downcall (JDK 22+), ns per read, best of
 * ROUNDS rounds of N reads each.
 *
 *   java --enable-native-access=ALL-UNNAMED ClockCost LIBRDTSC.so [N] [ROUNDS]
 */
public final class ClockCost {
    static long sink;

    public static void main(String[] args) throws Throwable {
        int n = args.length > 1 ? Integer.parseInt(args[1]) : 5_000_000;
        int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 7;
        MethodHandle rdtsc = Linker.nativeLinker().downcallHandle(
                SymbolLookup.libraryLookup(Path.of(args[0]), Arena.global()).find("bench_rdtsc").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_LONG), Linker.Option.critical(false));
        double nano = Double.MAX_VALUE, tsc = Double.MAX_VALUE;
        for (int r = 0; r < rounds; r++) {
            long t = System.nanoTime(), x = 0;
            for (int i = 0; i < n; i++)
                x += System.nanoTime();
            nano = Math.min(nano, (System.nanoTime() - t) / (double) n);
            t = System.nanoTime();
            for (int i = 0; i < n; i++)
                x += (long) rdtsc.invokeExact();
            tsc = Math.min(tsc, (System.nanoTime() - t) / (double) n);
            sink += x;
        }
        System.out.printf("System.nanoTime %.1f ns, rdtsc critical downcall %.1f ns%n", nano, tsc);
    }
}
