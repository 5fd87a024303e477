package io.threadtime;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.Locale;
import java.util.zip.CRC32;

/**
 * Loads the native library once per class loader, trying in order:
 * <ol>
 * <li>the file named by the system property {@value #PROPERTY};</li>
 * <li>{@code System.loadLibrary("threadtime_java")}, i.e. {@code java.library.path};</li>
 * <li>the copy bundled in this JAR for this platform ({@link #PLATFORMS}),
 *     extracted to
 *     {@code <java.io.tmpdir>/threadtime-<user>/libthreadtime_java-<version>-<crc>.so}
 *     ({@link ExtractionDirectory} says how that is kept out of other users'
 *     reach).</li>
 * </ol>
 * A failure is kept, not cached as a broken class: every later call gets an
 * {@link UnsupportedOperationException} that names the platform and the
 * cause ({@link #load()}).
 * <p>
 * The extracted name carries the artifact version and a CRC of the content,
 * so JARs of different versions never overwrite each other's file, a file
 * in use is never rewritten, and two class loaders (the OpenTelemetry
 * extension's copy) load two files.
 * <p>
 * Both backends load the library through here: the FFM backend finds the
 * {@code tt_} symbols with {@code SymbolLookup.loaderLookup()}, which sees
 * the libraries this class loader loaded.
 */
final class NativeLibrary {
    /** System property naming the library file to load instead of any other. */
    static final String PROPERTY = "threadtime.library";
    static final String NAME = "threadtime_java";
    /** The virtual-thread JVMTI agent the JAR also carries (never loaded from here). */
    static final String AGENT_NAME = "threadtime_vthreads";
    /** The platforms whose natives this JAR carries (built against glibc 2.17, docs/platforms.md). */
    static final List<String> PLATFORMS = List.of("linux-x86_64", "linux-aarch64");

    private NativeLibrary() {}

    private static final class Holder {
        /** Where the library came from (a String), or why it could not load. */
        static final Object SOURCE = loadSoftly();
    }

    private static Object loadSoftly() {
        try {
            return loadOnce();
        } catch (RuntimeException | LinkageError e) {
            return e;
        }
    }

    /**
     * Loads the library if not yet loaded; returns where it came from.
     *
     * @throws UnsupportedOperationException if it could not be loaded, on
     *         this and every later call: see {@link #unavailable}
     */
    static String load() {
        Object source = Holder.SOURCE;
        if (source instanceof String) {
            return (String) source;
        }
        throw unavailable((Throwable) source);
    }

    /** This JVM's platform as the JAR names its natives: linux-x86_64, linux-aarch64, else os.name-os.arch. */
    static String platform() {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT).replace(' ', '_');
        String arch = System.getProperty("os.arch", "");
        switch (arch) {
            case "amd64": case "x86_64": arch = "x86_64"; break;
            case "aarch64": case "arm64": arch = "aarch64"; break;
            default: break;
        }
        return os + "-" + arch;
    }

    /**
     * The exception every call that needs the native library throws when it
     * could not be loaded: it names the platform, the cause and what still
     * works without it.
     */
    static UnsupportedOperationException unavailable(Throwable cause) {
        return new UnsupportedOperationException("threadtime cannot work on " + platform() + " (os.arch "
                + System.getProperty("os.arch") + "): " + cause.getMessage() + archGiven() + "; " + STILL_WORKS, cause);
    }

    /**
     * A hint when os.arch was set on the command line: the JDK takes this
     * machine for that arch too (JDK 22+'s native linker refuses to start on
     * an arch it does not know), so the fix is to remove the option.
     */
    static String archGiven() {
        for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (a.startsWith("-Dos.arch=")) {
                return " (" + a + " is on the java command line: the JDK, too, then takes this machine for that arch;"
                        + " remove it)";
            }
        }
        return "";
    }

    /** What still works when the native library cannot load. */
    static final String STILL_WORKS = "ThreadTimeMXBean still answers, with the JDK's own figures (its platform ThreadMXBean)";

    private static String loadOnce() {
        try {
            String path = System.getProperty(PROPERTY);
            if (path != null && !path.isEmpty()) {
                try {
                    System.load(Paths.get(path).toAbsolutePath().toString());
                } catch (UnsatisfiedLinkError e) {
                    UnsatisfiedLinkError named = new UnsatisfiedLinkError(e.getMessage() + " (named by -D" + PROPERTY
                            + "; point it at lib" + NAME + ".so of threadtime " + version()
                            + ", or remove it to use the copy this JAR carries)");
                    named.initCause(e);
                    throw named;
                }
                return path;
            }
            try {
                System.loadLibrary(NAME);
                return "java.library.path";
            } catch (UnsatisfiedLinkError notThere) {
                String otherwise = "set -D" + PROPERTY + "=<path>";
                String reused = loadReusable(bundledPath("lib" + NAME + ".so", otherwise));
                if (reused != null) {
                    return reused;
                }
                return Extract.load(otherwise);
            }
        } catch (IllegalCallerException denied) {
            throw new IllegalCallerException(NativeAccess.message(NativeLibrary.class.getModule()), denied);
        }
    }

    /**
     * Extracts the bundled library, then loads it. A class of its own, not
     * code of this one: a class is verified whole, and verifying a call that
     * hands over a {@link Use} loads that interface, one class more (~0.5 ms)
     * for a first call that finds the library extracted already. A class,
     * not a lambda: the first lambda of a JVM spins classes of its own.
     */
    private static final class Extract implements Use<String> {
        private final byte[] bytes;

        private Extract(byte[] bytes) {
            this.bytes = bytes;
        }

        static String load(String otherwise) {
            return extracting("lib" + NAME + ".so", otherwise, new Extract(bundled("lib" + NAME + ".so", otherwise)));
        }

        @Override
        public String in(ExtractionDirectory dir) throws IOException {
            Path extracted = putVersioned(dir, "lib" + NAME, ".so", bytes);
            System.load(extracted.toString());
            return dir.perJvm() ? extracted + " (removed once loaded: another user holds "
                    + "the shared directory's name)" : extracted.toString();
        }
    }

    /**
     * Loads the copy an earlier JVM extracted, where it can be used as it is
     * ({@link ExtractionDirectory#reusable}); its path, or null when the
     * locked path must run (also when that copy went away before the load).
     */
    private static String loadReusable(String resource) {
        try {
            long[] sizeAndCrc = recorded(resource);
            Path p = sizeAndCrc == null ? null : ExtractionDirectory.reusable(
                    versionedName("lib" + NAME, ".so", sizeAndCrc[1]), sizeAndCrc[0], sizeAndCrc[1]);
            if (p != null) {
                System.load(p.toString());
                return p.toString();
            }
        } catch (IOException | UnsatisfiedLinkError e) {
            // the locked path says what is wrong, if anything still is
        }
        return null;
    }

    /**
     * The error for a loaded library that cannot serve this JAR: a wrong file
     * named by {@value #PROPERTY}, another copy on {@code java.library.path},
     * or another version. {@code what} says what is wrong with it; the
     * message names the file and how to fix it.
     */
    static UnsatisfiedLinkError notOurs(String what) {
        String source = load();
        String file = source;
        String fix;
        String named = System.getProperty(PROPERTY);
        if (named != null && !named.isEmpty()) {
            fix = "point -D" + PROPERTY + " at lib" + NAME + ".so of threadtime " + version()
                    + ", or remove it to use the copy this JAR carries";
        } else if (source.equals("java.library.path")) {
            file = "lib" + NAME + ".so, found on java.library.path (" + System.getProperty("java.library.path") + "),";
            fix = "remove that file, or put threadtime " + version() + "'s there; without one, this JAR's own copy is used";
        } else {
            fix = "delete " + source + " so that it is extracted again";
        }
        return new UnsatisfiedLinkError("threadtime: the native library " + file + " " + what + "; " + fix);
    }

    /** Checks the loaded library's version ({@code tt_version()}) against this JAR's. */
    static void checkVersion(String nativeVersion) {
        if (!version().equals(nativeVersion)) {
            throw notOurs("is threadtime " + nativeVersion + ", but this JAR is " + version());
        }
    }

    /**
     * The file this JAR carries for this platform under
     * {@code io/threadtime/native/<platform>/}; {@code otherwise} tells, in
     * any error message, how to use a copy of one's own instead.
     */
    static byte[] bundled(String file, String otherwise) {
        String resource = bundledPath(file, otherwise);
        byte[] bytes = resource(resource);
        if (bytes == null) {
            throw new UnsatisfiedLinkError("threadtime: /" + resource + " is missing from the JAR");
        }
        return bytes;
    }

    /** Where {@link #bundled} finds file in the JAR; refuses a platform the JAR carries nothing for. */
    private static String bundledPath(String file, String otherwise) {
        String platform = platform();
        if (!PLATFORMS.contains(platform)) {
            throw new UnsatisfiedLinkError("threadtime bundles native libraries for " + String.join(" and ", PLATFORMS)
                    + ", not " + platform + "; build " + file + " from source and " + otherwise);
        }
        return "io/threadtime/native/" + platform + "/" + file;
    }

    /** The JAR file this class came from, or null (a directory, a JAR inside a JAR). */
    private static java.io.File jarFile() {
        try {
            java.security.CodeSource source = NativeLibrary.class.getProtectionDomain().getCodeSource();
            java.net.URL url = source == null ? null : source.getLocation();
            java.io.File jar = url != null && url.getProtocol().equals("file") ? new java.io.File(url.toURI()) : null;
            return jar != null && jar.isFile() ? jar : null;
        } catch (java.net.URISyntaxException e) {
            throw new IllegalStateException("threadtime: this JAR's location is not a file URI", e);
        }
    }

    /**
     * The length and CRC-32 the JAR's directory records for one of its files,
     * read without inflating it; null where this class is not in a JAR file,
     * or the JAR has no such file.
     */
    private static long[] recorded(String path) throws IOException {
        java.io.File jar = jarFile();
        if (jar == null) {
            return null;
        }
        try (java.util.zip.ZipFile zip = new java.util.zip.ZipFile(jar)) {
            java.util.zip.ZipEntry e = zip.getEntry(path);
            return e == null || e.getSize() < 0 || e.getCrc() < 0 ? null : new long[] {e.getSize(), e.getCrc()};
        }
    }

    /**
     * A file of this JAR by its path in it (no leading slash), or null. Read
     * from the JAR file itself where this class came from one: asking the
     * class loader first asks the boot loader, which opens the JDK's module
     * image for it (through reflection) and then a jar: URL connection,
     * ~20 ms of a first call's ~25 (make bench-java-first-call). Anywhere else (a
     * directory, a JAR inside a JAR) the class loader answers.
     */
    static byte[] resource(String path) {
        try {
            java.io.File jar = jarFile();
            if (jar != null) {
                try (java.util.zip.ZipFile zip = new java.util.zip.ZipFile(jar)) {
                    java.util.zip.ZipEntry e = zip.getEntry(path);
                    if (e == null) {
                        return null;
                    }
                    try (InputStream in = zip.getInputStream(e)) {
                        return in.readAllBytes();
                    }
                }
            }
            try (InputStream in = NativeLibrary.class.getResourceAsStream("/" + path)) {
                return in == null ? null : in.readAllBytes();
            }
        } catch (IOException e) {
            throw new UncheckedIOException("threadtime: reading " + path + " from its JAR", e);
        }
    }

    /** What is done with the extraction directory, open and locked. */
    interface Use<T> {
        T in(ExtractionDirectory dir) throws IOException;
    }

    /**
     * use run on the extraction directory ({@link ExtractionDirectory}),
     * which is then closed: a directory for this JVM alone is removed with
     * its files unless use kept them. {@code what} and {@code otherwise} make
     * the message of a failure.
     */
    static <T> T extracting(String what, String otherwise, Use<T> use) {
        try (ExtractionDirectory dir = ExtractionDirectory.open()) {
            return use.in(dir);
        } catch (IOException e) {
            throw new UncheckedIOException("threadtime: cannot extract " + what + ": " + e.getMessage()
                    + "; to use a copy installed elsewhere, " + otherwise, e);
        }
    }

    /**
     * bytes put into dir as {@code <prefix>[-<copy>]-<version>-<crc><suffix>}
     * (the CRC as 8 hex digits)
     * (see the class comment), removing this prefix's copies of other
     * builds that were not used for a day; its path.
     */
    static Path putVersioned(ExtractionDirectory dir, String prefix, String suffix, byte[] bytes) throws IOException {
        CRC32 crc = new CRC32();
        crc.update(bytes);
        return dir.put(versionedName(prefix, suffix, crc.getValue()), bytes, stem(prefix), suffix);
    }

    /** {@code <prefix>[-<copy>]}: see {@link #property}. */
    private static String stem(String prefix) {
        String copy = property("copy", "");
        return copy.isEmpty() ? prefix : prefix + "-" + copy;
    }

    /** {@code <prefix>[-<copy>]-<version>-<crc><suffix>}, the file's CRC-32 as 8 hex digits. */
    private static String versionedName(String prefix, String suffix, long crc) {
        String hex = Long.toHexString(crc);
        return stem(prefix) + "-" + version() + "-" + "00000000".substring(hex.length()) + hex + suffix;
    }

    /** The artifact version, from the filtered threadtime.properties. */
    static String version() {
        return property("version", "unknown");
    }

    /**
     * One entry of threadtime.properties: {@code version}, and {@code copy},
     * which a second copy of threadtime inside another JAR (the OpenTelemetry
     * extension's) sets so that its library is extracted under its own name:
     * the JVM lets only one class loader load a given JNI library file.
     */
    private static String property(String key, String otherwise) {
        return Properties.OF_THIS_JAR.getOrDefault(key, otherwise);
    }

    /**
     * threadtime.properties, read once: its {@code key=value} lines ({@code #}
     * starts a comment), read as ISO 8859-1 as {@link java.util.Properties}
     * reads a stream. Not through that class: its reader builds each string
     * from a char array, and the JDK's UTF-16 string class, which nothing
     * before a first call has needed, then initializes (~0.6 ms of it).
     */
    private static final class Properties {
        static final java.util.Map<String, String> OF_THIS_JAR = read();

        private static java.util.Map<String, String> read() {
            java.util.Map<String, String> p = new java.util.HashMap<>();
            byte[] text = resource("io/threadtime/threadtime.properties");
            if (text != null) {
                String all = new String(text, java.nio.charset.StandardCharsets.ISO_8859_1);
                for (int at = 0, end; at < all.length(); at = end + 1) {
                    end = all.indexOf('\n', at);
                    end = end < 0 ? all.length() : end;
                    String line = all.substring(at, end).trim();
                    int eq = line.indexOf('=');
                    if (eq > 0 && !line.startsWith("#")) {
                        p.put(line.substring(0, eq).trim(), line.substring(eq + 1).trim());
                    }
                }
            }
            return p;
        }
    }
}
