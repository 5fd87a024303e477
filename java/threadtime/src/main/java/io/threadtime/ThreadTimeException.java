package io.threadtime;

/**
 * A native call failed in a way the API has no answer for. A dead thread
 * named by its {@code Thread} is an answer (-1 or empty), not this; one
 * named by its native id ({@link ThreadTime#threadSched(int)}) is this, with
 * errno ESRCH.
 */
public final class ThreadTimeException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** errno values the API maps to answers instead of exceptions. */
    static final int ESRCH = 3;

    private final int errno;

    ThreadTimeException(long code) {
        super("threadtime: " + Native.B.strerror(code) + " (errno " + -code + ")");
        this.errno = (int) -code;
    }

    /** The errno the core returned (positive). */
    public int errno() {
        return errno;
    }

    /** Returns a value the core produced, or throws for a negative errno. */
    static long check(long v) {
        if (v < 0) {
            throw new ThreadTimeException(v);
        }
        return v;
    }
}
