package io.threadtime;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.Set;
import java.util.zip.CRC32;

/**
 * Loads the native library once per class loader, trying in order:
 * <ol>
 * <li>the file named by the system property {@value #PROPERTY};</li>
 * <li>{@code System.loadLibrary("threadtime_java")}, i.e. {@code java.library.path};</li>
 * <li>the copy bundled in this JAR for this platform ({@link #PLATFORMS}),
 *     extracted to
 *     {@code <java.io.tmpdir>/threadtime-<user>/libthreadtime_java-<version>-<crc>.so}.</li>
 * </ol>
 * A failure is kept, not cached as a broken class: every later call gets an
 * {@link UnsupportedOperationException} that names the platform and the
 * cause ({@link #load()}).
 * <p>
 * The extracted name carries the artifact version and a CRC of the content,
 * so JARs of different versions never overwrite each other's file and a file
 * in use is never rewritten. Concurrent JVMs extracting at once serialize on a
 * file lock in that directory and the file appears by an atomic rename, so no
 * JVM ever loads a half-written library.
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
    private static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rwx------");

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
                + System.getProperty("os.arch") + "): " + cause.getMessage() + "; " + STILL_WORKS, cause);
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
                Path extracted = extract(NAME, "set -D" + PROPERTY + "=<path>");
                System.load(extracted.toString());
                return extracted.toString();
            }
        } catch (IllegalCallerException denied) {
            throw new IllegalCallerException(NativeAccess.message(NativeLibrary.class.getModule()), denied);
        }
    }

    /**
     * The error for a loaded library that cannot serve this JAR: a wrong file
     * named by {@value #PROPERTY}, another copy on {@code java.library.path},
     * or another version. {@code what} says what is wrong with it; the
     * message names the file and how to fix it.
     */
    static UnsatisfiedLinkError notOurs(String what) {
        String source = load();
        String fix;
        String named = System.getProperty(PROPERTY);
        if (named != null && !named.isEmpty()) {
            fix = "point -D" + PROPERTY + " at lib" + NAME + ".so of threadtime " + version()
                    + ", or remove it to use the copy this JAR carries";
        } else if (source.equals("java.library.path")) {
            fix = "remove lib" + NAME + ".so from java.library.path (" + System.getProperty("java.library.path")
                    + "), or put threadtime " + version() + "'s there";
        } else {
            fix = "delete " + source + " so that it is extracted again";
        }
        return new UnsatisfiedLinkError("threadtime: the native library " + source + " " + what + "; " + fix);
    }

    /** Checks the loaded library's version ({@code tt_version()}) against this JAR's. */
    static void checkVersion(String nativeVersion) {
        if (!version().equals(nativeVersion)) {
            throw notOurs("is threadtime " + nativeVersion + ", but this JAR is " + version());
        }
    }

    /**
     * The bundled library {@code lib<name>.so}, extracted as described above
     * (or found there, extracted before); its path. {@code otherwise} tells,
     * in any error message, how to use a copy of one's own instead.
     */
    static Path extract(String name, String otherwise) {
        String platform = platform();
        String resource = "/io/threadtime/native/" + platform + "/lib" + name + ".so";
        if (!PLATFORMS.contains(platform)) {
            throw new UnsatisfiedLinkError("threadtime bundles native libraries for " + String.join(" and ", PLATFORMS)
                    + ", not " + platform + "; build lib" + name + ".so from source and " + otherwise);
        }
        byte[] bytes;
        try (InputStream in = NativeLibrary.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new UnsatisfiedLinkError("threadtime: " + resource + " is missing from the JAR");
            }
            bytes = in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException("threadtime: reading " + resource, e);
        }
        return install("lib" + name, ".so", bytes, otherwise);
    }

    /**
     * {@code bytes} as the file {@code <prefix>-<version>-<crc><suffix>} in
     * the extraction directory, written there unless it already is (see the
     * class comment); its path.
     */
    static Path install(String prefix, String suffix, byte[] bytes, String otherwise) {
        CRC32 crc = new CRC32();
        crc.update(bytes);
        String copy = property("copy", "");
        String file = String.format("%s-%s%s-%08x%s", prefix, version(), copy.isEmpty() ? "" : "-" + copy, crc.getValue(), suffix);
        try {
            Path dir = privateDirectory();
            Path target = dir.resolve(file);
            try (FileChannel lockFile = FileChannel.open(dir.resolve(".lock"),
                         StandardOpenOption.CREATE, StandardOpenOption.WRITE);
                 FileLock lock = lockFile.lock()) {
                if (!Files.isRegularFile(target) || Files.size(target) != bytes.length) {
                    Path tmp = Files.createTempFile(dir, file, ".tmp");
                    Files.write(tmp, bytes);
                    Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                }
            }
            return target;
        } catch (IOException e) {
            throw new UncheckedIOException("threadtime: extracting " + file + " to "
                    + System.getProperty("java.io.tmpdir") + " failed; to use a copy installed elsewhere, " + otherwise, e);
        }
    }

    /**
     * The shared extraction directory if this user owns it and nobody else
     * can write to it; otherwise a fresh private directory for this JVM, so
     * that no other user can plant a library we would load.
     */
    private static Path privateDirectory() throws IOException {
        String user = System.getProperty("user.name", "user").replaceAll("[^A-Za-z0-9._-]", "_");
        Path shared = Paths.get(System.getProperty("java.io.tmpdir"), "threadtime-" + user);
        try {
            Files.createDirectories(shared, PosixFilePermissions.asFileAttribute(OWNER_ONLY));
            if (Files.getOwner(shared).getName().equals(System.getProperty("user.name"))
                    && Files.getPosixFilePermissions(shared).equals(OWNER_ONLY)) {
                return shared;
            }
        } catch (AccessDeniedException | FileAlreadyExistsException notUsable) {
            // somebody else's path: use a directory of our own
        }
        return Files.createTempDirectory("threadtime", PosixFilePermissions.asFileAttribute(OWNER_ONLY));
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
        Properties p = new Properties();
        try (InputStream in = NativeLibrary.class.getResourceAsStream("threadtime.properties")) {
            if (in != null) {
                p.load(in);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return p.getProperty(key, otherwise);
    }
}
