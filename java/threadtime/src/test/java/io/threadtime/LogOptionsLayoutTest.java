package io.threadtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The FFM backend hands tt_log_start() a {@code tt_log_options} it lays out
 * itself ({@code FfmBackend.LOG_OPTIONS}, a prefix of the struct: the core
 * copies {@code size} bytes). Each field it names must sit where the C
 * compiler puts it in include/threadtime/event.h, with the same size: a small
 * C program, compiled here with {@code cc} (or {@code $CC}), prints
 * offsetof and sizeof of those fields. JDK 22+ (the FFM backend's JDKs).
 */
class LogOptionsLayoutTest {
    @Test
    void ffmLayoutIsTheCoresStruct(@TempDir Path dir) throws Exception {
        Assumptions.assumeTrue(Runtime.version().feature() >= 22, "the FFM backend needs JDK 22+");
        Map<String, long[]> java = ffmLayout(); // name -> {offset, size}
        assertTrue(java.containsKey("size"), "LOG_OPTIONS names no size field: " + java.keySet());

        StringBuilder c = new StringBuilder("#include <stddef.h>\n#include <stdio.h>\n#include <threadtime/event.h>\n"
                + "#define F(f) printf(#f \" %zu %zu\\n\", offsetof(tt_log_options, f), sizeof(((tt_log_options *)0)->f));\n"
                + "int main(void)\n{\n    printf(\"struct 0 %zu\\n\", sizeof(tt_log_options));\n");
        for (String name : java.keySet()) {
            c.append("    F(").append(name).append(")\n");
        }
        c.append("    return 0;\n}\n");
        Path src = dir.resolve("layout.c"), exe = dir.resolve("layout");
        Files.writeString(src, c);
        Path include = SourceTree.file("include/threadtime/event.h").getParent().getParent();
        String cc = Optional.ofNullable(System.getenv("CC")).filter(s -> !s.isBlank()).orElse("cc");
        run(List.of(cc, "-std=c11", "-I", include.toString(), "-o", exe.toString(), src.toString()));
        Map<String, long[]> core = new LinkedHashMap<>();
        for (String line : run(List.of(exe.toString())).strip().split("\n")) {
            String[] f = line.split(" ");
            core.put(f[0], new long[] {Long.parseLong(f[1]), Long.parseLong(f[2])});
        }
        long end = 0;
        for (Map.Entry<String, long[]> e : java.entrySet()) {
            long[] j = e.getValue(), k = core.get(e.getKey());
            assertEquals(k[0], j[0], "offset of " + e.getKey());
            assertEquals(k[1], j[1], "size of " + e.getKey());
            end = Math.max(end, j[0] + j[1]);
        }
        long size = ffmByteSize();
        assertEquals(end, size, "LOG_OPTIONS ends with its last field (its byte size is what .size says)");
        assertTrue(size <= core.get("struct")[1], "LOG_OPTIONS (" + size + " bytes) is longer than tt_log_options ("
                + core.get("struct")[1] + ")");
    }

    private static Object logOptions() throws ReflectiveOperationException {
        Field f = Class.forName("io.threadtime.FfmBackend").getDeclaredField("LOG_OPTIONS");
        f.setAccessible(true);
        return f.get(null);
    }

    private static long ffmByteSize() throws ReflectiveOperationException {
        return (long) Class.forName("java.lang.foreign.MemoryLayout").getMethod("byteSize").invoke(logOptions());
    }

    /** The named members of LOG_OPTIONS with their offsets and sizes (this
     * test is compiled for JDK 17: java.lang.foreign through reflection). */
    private static Map<String, long[]> ffmLayout() throws ReflectiveOperationException {
        Class<?> layout = Class.forName("java.lang.foreign.MemoryLayout");
        Method members = Class.forName("java.lang.foreign.GroupLayout").getMethod("memberLayouts");
        Method name = layout.getMethod("name"), byteSize = layout.getMethod("byteSize");
        Map<String, long[]> out = new LinkedHashMap<>();
        long offset = 0;
        for (Object m : (List<?>) members.invoke(logOptions())) {
            long size = (long) byteSize.invoke(m);
            Optional<?> n = (Optional<?>) name.invoke(m);
            if (n.isPresent()) {
                out.put((String) n.get(), new long[] {offset, size});
            }
            offset += size; // a struct layout's members follow each other, padding included
        }
        return out;
    }

    /** The command's output (stdout and stderr); it must exit 0. */
    private static String run(List<String> cmd) throws Exception {
        ChildJvm r = ChildJvm.runMerged(cmd);
        assertEquals(0, r.exit(), cmd + ": " + r.out());
        return r.out();
    }
}
