package io.threadtime;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;

/** Files of the repository the tests run in (from java/ or java/threadtime/),
 * for the tests that hold Java's copies of a meaning against the C source's. */
final class SourceTree {
    private SourceTree() {}

    /** The file at {@code relative} to the repository's root, which must exist. */
    static Path file(String relative) {
        Path root = Path.of("").toAbsolutePath();
        while (root != null && !Files.exists(root.resolve(relative))) {
            root = root.getParent();
        }
        assertTrue(root != null, "no " + relative + " above " + Path.of("").toAbsolutePath());
        return root.resolve(relative);
    }
}
