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
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

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
 * found there is used only if its content is exactly what this JAR carries.
 * Copies of other builds not used for {@link #STALE_AFTER_DAYS} days are
 * removed.
 */
final class ExtractionDirectory implements Closeable {
    /** How long another build's copy is kept after its last use, in days. */
    static final int STALE_AFTER_DAYS = 1;
    static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rwx------");
    private static final int S_IFMT = 0170000, S_IFDIR = 0040000, S_ISVTX = 01000, GROUP_OTHER_WRITE = 022;
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
        Path tmp = Paths.get(System.getProperty("java.io.tmpdir", ""));
        Path real;
        try {
            real = tmp.toRealPath();
        } catch (NoSuchFileException e) {
            throw new IOException("java.io.tmpdir " + tmp + " does not exist (threadtime creates nothing there)");
        }
        Path self = Paths.get("/proc/self");
        UserPrincipal owner = Files.getOwner(self);
        int uid = (Integer) Files.getAttribute(self, "unix:uid");
        String why = untrusted(real, uid);
        if (why != null) {
            throw new IOException("java.io.tmpdir " + tmp + " is not safe to load code from: " + why
                    + " (another user could swap what is written there); run with -Djava.io.tmpdir=DIR, DIR and the"
                    + " directories above it owned by you or root and writable by nobody else unless sticky");
        }
        String user = System.getProperty("user.name", "user").replaceAll("[^A-Za-z0-9._-]", "_");
        Path shared = real.resolve("threadtime-" + user);
        try {
            Files.createDirectory(shared, PosixFilePermissions.asFileAttribute(OWNER_ONLY));
        } catch (FileAlreadyExistsException taken) {
            // ours from an earlier run, or another user's: open() tells
        }
        ExtractionDirectory d = open(shared, owner, false);
        if (d == null) {
            d = open(Files.createTempDirectory(real, "threadtime-", PosixFilePermissions.asFileAttribute(OWNER_ONLY)), owner, true);
            if (d == null) {
                throw new IOException("the directory made for this JVM in " + real + " changed while it was opened");
            }
        }
        d.lock();
        return d;
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
                || !held.permissions().equals(OWNER_ONLY)) {
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
     * exactly that content is already there; its path, checked to name that
     * file in this directory. Removes copies of other builds (names matching
     * others) not used for {@link #STALE_AFTER_DAYS} days.
     */
    Path put(String name, byte[] bytes, Pattern others) throws IOException {
        Path file = Paths.get(name);
        if (!holds(file, bytes)) {
            Path tmp = Paths.get(name + "." + Long.toHexString(ThreadLocalRandom.current().nextLong()) + ".tmp");
            Set<OpenOption> create = Set.of(StandardOpenOption.WRITE, StandardOpenOption.CREATE_NEW, LinkOption.NOFOLLOW_LINKS);
            try (SeekableByteChannel out = fd.newByteChannel(tmp, create, PosixFilePermissions.asFileAttribute(OWNER_ONLY))) {
                ByteBuffer b = ByteBuffer.wrap(bytes);
                while (b.hasRemaining()) {
                    out.write(b);
                }
            }
            fd.move(tmp, fd, file);
        }
        attributes(file).setTimes(FileTime.fromMillis(System.currentTimeMillis()), null, null); // its last use
        made.add(file);
        removeStale(name, others);
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

    /** Whether file is a regular file of ours holding exactly bytes; anything else by that name is removed. */
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
            if (Arrays.equals(b.array(), bytes)) {
                return true;
            }
        }
        fd.deleteFile(file);
        return false;
    }

    private void removeStale(String name, Pattern others) throws IOException {
        long before = System.currentTimeMillis() - TimeUnit.DAYS.toMillis(STALE_AFTER_DAYS);
        for (String n : names) {
            if (!n.equals(name) && (others.matcher(n).matches() || n.endsWith(".tmp"))) {
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
