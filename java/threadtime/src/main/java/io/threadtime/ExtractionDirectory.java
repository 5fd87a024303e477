package io.threadtime;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32;

/**
 * The directory the JAR's natives are written to and used from, which no
 * other user can change:
 * {@code <java.io.tmpdir>/threadtime-<user>}, else (another user made that
 * name first) a fresh directory for this JVM alone, removed once its files
 * are loaded.
 * <p>
 * Java has no {@code openat}, but a {@link SecureDirectoryStream} is one: the
 * directory is opened once, its owner and mode are checked on that open
 * descriptor ({@code fstat}), and every file in it is read, written, renamed
 * and removed relative to the descriptor, with {@code O_NOFOLLOW}. Only the
 * last step, {@code System.load} or starting a program, goes by path, and
 * the path cannot be changed under it: every directory on it belongs to this
 * user or root, and one that other users may write to is sticky (so they
 * cannot rename what is in it). Right before that step the path is checked to
 * still name the same directory and file (device and inode).
 * <p>
 * Concurrent JVMs of this user serialize on a lock file inside, held while a
 * file is written and used; a file appears by an atomic rename, and a file
 * found there is used only if its length and CRC-32 are those of what this
 * JAR carries.
 * Copies of other builds not used for {@link #STALE_AFTER_DAYS} days are
 * removed.
 */
final class ExtractionDirectory implements Closeable {
    /** How long another build's copy is kept after its last use, in days. */
    static final int STALE_AFTER_DAYS = 1;
    /** rwx------; a method, not a constant: an EnumSet's first use spins a class, which the reuse path spares. */
    static Set<PosixFilePermission> ownerOnly() {
        return PosixFilePermissions.fromString("rwx------");
    }
    private static final int S_IFMT = 0170000, S_IFDIR = 0040000, S_IFREG = 0100000, S_ISVTX = 01000, GROUP_OTHER_WRITE = 022;
    private static final LinkOption[] NOFOLLOW = {LinkOption.NOFOLLOW_LINKS};

    private final Path dir;
    private final SecureDirectoryStream<Path> fd;
    private final Object key;
    private final UserPrincipal self;
    private final boolean perJvm;
    private final List<String> names = new ArrayList<>();
    private final List<Path> made = new ArrayList<>();
    private FileChannel lockFile;
    private FileLock lock;
    private boolean keep;

    private ExtractionDirectory(Path dir, SecureDirectoryStream<Path> fd, Object key, UserPrincipal self, boolean perJvm) {
        this.dir = dir;
        this.fd = fd;
        this.key = key;
        this.self = self;
        this.perJvm = perJvm;
    }

    /**
     * This user's extraction directory, open and locked; a fresh one for this
     * JVM where another user holds the shared name. Creates nothing when
     * {@code java.io.tmpdir} is missing or another user could change it.
     *
     * @throws IOException saying which directory cannot be trusted and why
     */
    static ExtractionDirectory open() throws IOException {
        Path self = Paths.get("/proc/self");
        UserPrincipal owner = Files.getOwner(self);
        Path real = trustedTmp(uid());
        Path shared = real.resolve(sharedName());
        try {
            Files.createDirectory(shared, PosixFilePermissions.asFileAttribute(ownerOnly()));
        } catch (FileAlreadyExistsException taken) {
            // ours from an earlier run, or another user's: open() tells
        }
        ExtractionDirectory d = open(shared, owner, false);
        if (d == null) {
            d = open(Files.createTempDirectory(real, "threadtime-", PosixFilePermissions.asFileAttribute(ownerOnly())), owner, true);
            if (d == null) {
                throw new IOException("the directory made for this JVM in " + real + " changed while it was opened");
            }
        }
        d.lock();
        return d;
    }

    /** This process's uid. */
    private static int uid() throws IOException {
        return (Integer) Files.getAttribute(Paths.get("/proc/self"), "unix:uid");
    }

    /**
     * {@code java.io.tmpdir} without links, checked ({@link #untrusted}).
     *
     * @throws IOException saying why it cannot be used
     */
    private static Path trustedTmp(int uid) throws IOException {
        Path tmp = Paths.get(System.getProperty("java.io.tmpdir", ""));
        Path real;
        try {
            real = tmp.toRealPath();
        } catch (NoSuchFileException e) {
            throw new IOException("java.io.tmpdir " + tmp + " does not exist (threadtime creates nothing there)");
        }
        String why = untrusted(real, uid);
        if (why != null) {
            throw new IOException("java.io.tmpdir " + tmp + " is not safe to load code from: " + why
                    + " (another user could swap what is written there); run with -Djava.io.tmpdir=DIR, DIR and the"
                    + " directories above it owned by you or root and writable by nobody else unless sticky");
        }
        return real;
    }

    /** The shared directory's name: threadtime-USER, USER's characters outside [A-Za-z0-9._-] as '_'. */
    private static String sharedName() {
        StringBuilder b = new StringBuilder("threadtime-");
        for (char c : System.getProperty("user.name", "user").toCharArray()) {
            boolean plain = c < 128 && (Character.isLetterOrDigit(c) || c == '.' || c == '_' || c == '-');
            b.append(plain ? c : '_');
        }
        return b.toString();
    }

    /**
     * name in this user's shared directory, if a copy there can be used as
     * it is: a regular file of this user's with that size and CRC-32, used (so touched) within the last hour, in a 0700 directory of
     * this user's under a trusted {@code java.io.tmpdir}; else null, and
     * {@link #open()} and {@link #put} do the whole work. This path opens,
     * locks and writes nothing, which spares a first call the JDK's channel,
     * lock and directory-stream classes (~40 not in its shared archive). No
     * lock is needed to read: a file appears by an atomic rename and, holding
     * the right content, is never rewritten; only another build's JVM could
     * remove it, as unused for a day, and then the load fails and the caller
     * takes the locked path. Path by path rather than through an open
     * directory: every directory on the way is trusted (only this user or
     * root can change what it names), and the file is checked again to be
     * the one read after reading it.
     */
    static Path reusable(String name, long size, long crc) throws IOException {
        int uid = uid();
        Path dir = trustedTmp(uid).resolve(sharedName());
        Path file = dir.resolve(name);
        Map<String, Object> d, f;
        try {
            d = Files.readAttributes(dir, "unix:uid,mode", NOFOLLOW);
            f = Files.readAttributes(file, "unix:uid,mode,size,ino,dev,lastModifiedTime", NOFOLLOW);
        } catch (NoSuchFileException absent) {
            return null;
        }
        int dirMode = (Integer) d.get("mode"), fileMode = (Integer) f.get("mode");
        long age = System.currentTimeMillis() - ((FileTime) f.get("lastModifiedTime")).toMillis();
        if ((Integer) d.get("uid") != uid || (dirMode & S_IFMT) != S_IFDIR || (dirMode & 07777) != 0700
                || (Integer) f.get("uid") != uid || (fileMode & S_IFMT) != S_IFREG || (Long) f.get("size") != size
                || age < 0 || age > TimeUnit.HOURS.toMillis(1)) {
            return null;
        }
        byte[] content;
        try (java.io.InputStream in = new java.io.FileInputStream(file.toFile())) {
            content = in.readAllBytes();
        }
        Map<String, Object> again = Files.readAttributes(file, "unix:ino,dev", NOFOLLOW);
        return crc(content) == crc && again.get("ino").equals(f.get("ino")) && again.get("dev").equals(f.get("dev"))
                ? file : null;
    }

    /**
     * Why a directory other than this user's (uid) or root's might be changed
     * along real (a path with no links), else null: each component from the
     * root down must belong to uid or root, and be writable by no one else
     * unless sticky. Checked from the top, each answer holds while we use
     * the path: only a trusted user can change a trusted directory.
     */
    static String untrusted(Path real, int uid) throws IOException {
        Path p = real.getRoot();
        for (int i = 0; ; i++) {
            Map<String, Object> a = Files.readAttributes(p, "unix:uid,mode", NOFOLLOW);
            int owner = (Integer) a.get("uid"), mode = (Integer) a.get("mode");
            if ((mode & S_IFMT) != S_IFDIR) {
                return p + " is not a directory";
            }
            if (owner != uid && owner != 0) {
                return p + " belongs to uid " + owner;
            }
            if ((mode & GROUP_OTHER_WRITE) != 0 && (mode & S_ISVTX) == 0) {
                return p + " is writable by other users (mode " + Integer.toOctalString(mode & 07777) + ", not sticky)";
            }
            if (i == real.getNameCount()) {
                return null;
            }
            p = p.resolve(real.getName(i).toString());
        }
    }

    /** dir opened and checked through its descriptor; null if it is not a 0700 directory of owner (a link, another's). */
    private static ExtractionDirectory open(Path dir, UserPrincipal owner, boolean perJvm) throws IOException {
        PosixFileAttributes seen = Files.readAttributes(dir, PosixFileAttributes.class, NOFOLLOW);
        if (!seen.isDirectory()) {
            return null;
        }
        DirectoryStream<Path> s = Files.newDirectoryStream(dir);
        if (!(s instanceof SecureDirectoryStream)) {
            s.close();
            throw new IOException("this JDK cannot work relative to an open directory (no SecureDirectoryStream)");
        }
        SecureDirectoryStream<Path> fd = (SecureDirectoryStream<Path>) s;
        PosixFileAttributes held = fd.getFileAttributeView(PosixFileAttributeView.class).readAttributes();
        if (!held.isDirectory() || !held.fileKey().equals(seen.fileKey()) || !held.owner().equals(owner)
                || !held.permissions().equals(ownerOnly())) {
            fd.close();
            return null;
        }
        ExtractionDirectory d = new ExtractionDirectory(dir, fd, held.fileKey(), owner, perJvm);
        for (Path p : fd) {
            d.names.add(p.getFileName().toString());
        }
        return d;
    }

    private void lock() throws IOException {
        lockFile = (FileChannel) fd.newByteChannel(Paths.get(".lock"),
                Set.of(StandardOpenOption.CREATE, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS));
        lock = lockFile.lock();
    }

    /** Whether this is a directory for this JVM alone (another user holds the shared name). */
    boolean perJvm() {
        return perJvm;
    }

    /** Keep the files after close (a path handed to a later JVM), even in a directory for this JVM alone. */
    void keep() {
        keep = true;
    }

    /**
     * bytes as the file name (mode 0700), written unless a regular file with
     * that content ({@link #holds}) is already there; its path, checked to name that
     * file in this directory. Removes copies of other builds
     * ({@link #otherBuild}) not used for {@link #STALE_AFTER_DAYS} days.
     */
    Path put(String name, byte[] bytes, String stem, String suffix) throws IOException {
        Path file = Paths.get(name);
        if (!holds(file, bytes)) {
            Path tmp = Paths.get(name + "." + Long.toHexString(ThreadLocalRandom.current().nextLong()) + ".tmp");
            Set<OpenOption> create = Set.of(StandardOpenOption.WRITE, StandardOpenOption.CREATE_NEW, LinkOption.NOFOLLOW_LINKS);
            try (SeekableByteChannel out = fd.newByteChannel(tmp, create, PosixFilePermissions.asFileAttribute(ownerOnly()))) {
                ByteBuffer b = ByteBuffer.wrap(bytes);
                while (b.hasRemaining()) {
                    out.write(b);
                }
            }
            fd.move(tmp, fd, file);
        }
        attributes(file).setTimes(FileTime.fromMillis(System.currentTimeMillis()), null, null); // its last use
        made.add(file);
        removeStale(name, stem, suffix);
        Path path = dir.resolve(name);
        Object fileKey = attributes(file).readAttributes().fileKey();
        if (!Files.readAttributes(dir, PosixFileAttributes.class, NOFOLLOW).fileKey().equals(key)
                || !Files.readAttributes(path, PosixFileAttributes.class, NOFOLLOW).fileKey().equals(fileKey)) {
            throw new IOException(path + " no longer names the file written there");
        }
        return path;
    }

    private PosixFileAttributeView attributes(Path file) {
        return fd.getFileAttributeView(file, PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS);
    }

    /**
     * Whether file is a regular file of ours holding bytes: the same length
     * and CRC-32. Not a byte-by-byte comparison: that runs interpreted on a
     * first call (8-17 ms for the 90 KB library), where the CRC is one native
     * call. Only this user can have written into this directory, so a file
     * that differs here was damaged or left by another build, not forged.
     * Anything else by that name is removed.
     */
    private boolean holds(Path file, byte[] bytes) throws IOException {
        PosixFileAttributes a;
        try {
            a = attributes(file).readAttributes();
        } catch (NoSuchFileException absent) {
            return false;
        }
        if (a.isRegularFile() && a.owner().equals(self) && a.size() == bytes.length) {
            ByteBuffer b = ByteBuffer.allocate(bytes.length);
            try (SeekableByteChannel in = fd.newByteChannel(file, Set.of(StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS))) {
                while (b.hasRemaining() && in.read(b) >= 0) {
                    // to the end
                }
            }
            if (crc(b.array()) == crc(bytes)) {
                return true;
            }
        }
        fd.deleteFile(file);
        return false;
    }

    /**
     * Whether name is another build's copy of the same file:
     * {@code <stem>-<version>-<8 hex digits><suffix>}, the version starting
     * with a digit. Plain string checks: a regular expression's classes
     * would load on every JVM's first call.
     */
    static boolean otherBuild(String name, String stem, String suffix) {
        int crc = name.length() - suffix.length() - 8;
        if (!name.startsWith(stem + "-") || !name.endsWith(suffix) || crc < stem.length() + 3
                || name.charAt(crc - 1) != '-' || !Character.isDigit(name.charAt(stem.length() + 1))) {
            return false;
        }
        for (int i = crc; i < crc + 8; i++) {
            if (Character.digit(name.charAt(i), 16) < 0 || Character.isUpperCase(name.charAt(i))) {
                return false;
            }
        }
        return true;
    }

    private static long crc(byte[] bytes) {
        CRC32 crc = new CRC32();
        crc.update(bytes);
        return crc.getValue();
    }

    private void removeStale(String name, String stem, String suffix) throws IOException {
        long before = System.currentTimeMillis() - TimeUnit.DAYS.toMillis(STALE_AFTER_DAYS);
        for (String n : names) {
            if (!n.equals(name) && (otherBuild(n, stem, suffix) || n.endsWith(".tmp"))) {
                try {
                    PosixFileAttributes a = attributes(Paths.get(n)).readAttributes();
                    if (!a.isDirectory() && a.lastModifiedTime().toMillis() < before) {
                        fd.deleteFile(Paths.get(n));
                    }
                } catch (NoSuchFileException gone) {
                    // removed by an older JVM that does not lock
                }
            }
        }
    }

    /** Lets other JVMs extract here again (the files stay until close). */
    void unlock() throws IOException {
        if (lock != null) {
            lock.release();
            lockFile.close();
            lock = null;
        }
    }

    /** Unlocks; in a directory for this JVM alone, also removes it and its files unless kept. */
    @Override
    public void close() throws IOException {
        try {
            unlock();
            if (perJvm && !keep) {
                for (Path f : made) {
                    fd.deleteFile(f);
                }
                fd.deleteFile(Paths.get(".lock"));
                fd.close();
                Files.delete(dir);
            }
        } finally {
            fd.close();
        }
    }
}
