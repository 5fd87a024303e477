package io.threadtime;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;

/**
 * Makes the FFM backend's downcall handles from {@link Backend}'s list: each
 * function linked as its {@link Backend.Calls} declaration says, with the
 * descriptor that declaration's C types give.
 */
final class FfmLinker {
    private FfmLinker() {}

    /** The library's symbols (those this class loader loaded) and the linker, at the first link. */
    private static final class Lib {
        static final SymbolLookup SYMBOLS = SymbolLookup.loaderLookup();
        static final Linker LINKER = Linker.nativeLinker();
    }

    /**
     * The downcall handle of a Backend method, linked as its {@link Backend.Calls}
     * declares, and adapted to the method's own Java type: a {@code long}
     * passed as a pointer becomes an address, an array a heap segment, a
     * {@code boolean} an {@code int}.
     */
    static MethodHandle handle(String method) {
        Method m = backendMethod(method);
        Backend.Calls c = m.getAnnotation(Backend.Calls.class);
        String decl = c.value();
        String symbol = symbolOf(decl);
        FunctionDescriptor fd = descriptor(decl);
        MemorySegment address = Lib.SYMBOLS.find(symbol)
                .orElseThrow(() -> NativeLibrary.notOurs("lacks the symbol " + symbol));
        MethodHandle h = Lib.LINKER.downcallHandle(address, fd,
                Linker.Option.critical(c.ffm() == Backend.Ffm.CRITICAL_HEAP));
        Class<?>[] params = m.getParameterTypes();
        // Leading C arguments the method lacks are 0 (pid 0: this process), as Backend.Calls says.
        int zeros = fd.argumentLayouts().size() - params.length;
        for (int i = 0; i < zeros; i++) {
            h = MethodHandles.insertArguments(h, 0, fd.argumentLayouts().get(i).equals(JAVA_LONG) ? (Object) 0L : (Object) 0);
        }
        try {
            for (int i = 0; i < params.length; i++) {
                MethodHandle filter = argument(params[i], fd.argumentLayouts().get(zeros + i));
                if (filter != null) {
                    h = MethodHandles.filterArguments(h, i, filter);
                }
            }
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
        return h.asType(MethodType.methodType(m.getReturnType(), params));
    }

    private static Method backendMethod(String name) {
        for (Method m : Backend.class.getMethods()) {
            if (m.getName().equals(name)) {
                return m;
            }
        }
        throw new IllegalArgumentException("Backend has no method " + name);
    }

    /** What turns a Java argument into the C one, or null where none is needed. */
    private static MethodHandle argument(Class<?> java, MemoryLayout c) throws ReflectiveOperationException {
        MethodHandles.Lookup lookup = MethodHandles.lookup();
        if (c.equals(ADDRESS) && java == long.class) {
            return lookup.findStatic(MemorySegment.class, "ofAddress", MethodType.methodType(MemorySegment.class, long.class));
        }
        if (c.equals(ADDRESS) && java.isArray()) {
            return lookup.findStatic(MemorySegment.class, "ofArray", MethodType.methodType(MemorySegment.class, java));
        }
        if (c.equals(JAVA_INT) && java == boolean.class) {
            return lookup.findStatic(FfmLinker.class, "bit", MethodType.methodType(int.class, boolean.class));
        }
        return null;
    }

    private static int bit(boolean b) {
        return b ? 1 : 0;
    }

    /** The function's name in a C declaration such as {@code int64_t tt_thread_total_ns(tt_thread *h)}. */
    static String symbolOf(String decl) {
        String head = decl.substring(0, decl.indexOf('(')).trim();
        return head.substring(Math.max(head.lastIndexOf(' '), head.lastIndexOf('*')) + 1);
    }

    /** The FFM descriptor of a C declaration: pointers are addresses, 64-bit integers longs, the rest ints. */
    static FunctionDescriptor descriptor(String decl) {
        String head = decl.substring(0, decl.indexOf('('));
        MemoryLayout ret = layout(head.substring(0, head.length() - symbolOf(decl).length()));
        String list = decl.substring(decl.indexOf('(') + 1, decl.lastIndexOf(')')).trim();
        List<MemoryLayout> args = new ArrayList<>();
        if (!list.equals("void")) {
            for (String p : list.split(",")) {
                p = p.trim();
                // the parameter's name is the last word; its type is what precedes it
                args.add(layout(p.substring(0, Math.max(p.lastIndexOf(' '), p.lastIndexOf('*')) + 1)));
            }
        }
        MemoryLayout[] a = args.toArray(new MemoryLayout[0]);
        return ret == null ? FunctionDescriptor.ofVoid(a) : FunctionDescriptor.of(ret, a);
    }

    /** The layout of a C type; null for void. */
    private static MemoryLayout layout(String type) {
        String t = type.trim();
        if (t.contains("*")) {
            return ADDRESS;
        }
        switch (t) {
            case "void": return null;
            case "int64_t": case "uint64_t": return JAVA_LONG;
            case "int": case "uint32_t": case "pid_t": case "tt_probe_measure": return JAVA_INT;
            default: throw new IllegalArgumentException("no FFM layout for the C type '" + t + "'");
        }
    }

}
