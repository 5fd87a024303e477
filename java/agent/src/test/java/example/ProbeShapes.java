package example;

/**
 * Shapes of methods that ProbeShapesTest probes, beside ProbeTarget's: a
 * static initializer, this() calls that branch, create objects or throw
 * before the object is initialized, long and double locals that the new
 * slot moves, nested handlers, and loops whose heads are jump targets with
 * stack map frames (one at the method's first instruction).
 */
public class ProbeShapes {
    public static final long START;

    static {
        START = Long.getLong("example.probe.shapes.start", 40L) + 2;
    }

    public final long total;

    /** this() with a branch and a new object in its argument, before this object is initialized. */
    public ProbeShapes(boolean big) {
        this(big ? new StringBuilder("four").length() : 1, 2.5);
    }

    /** Throws after its super() call for a negative n. */
    public ProbeShapes(long n, double scale) {
        super();
        if (n < 0) {
            throw new IllegalArgumentException("negative " + n);
        }
        total = (long) (n * scale);
    }

    /** A handler after super(), which returns from inside it for a negative n. */
    public ProbeShapes(int n) {
        long parsed;
        try {
            parsed = Long.parseLong("x" + n);
        } catch (NumberFormatException e) {
            if (n < 0) {
                total = n;
                return;
            }
            parsed = n * 2L;
        }
        total = parsed;
    }

    /** Throws inside its this() call's argument for a text that is not a number. */
    public ProbeShapes(String n) {
        this(Long.parseLong(n), 1.0);
    }

    /** long and double parameters and locals of every size around a loop and a handler. */
    public static double mix(long a, double b, int c, long d) {
        long sum = a;
        double acc = b;
        float f = 1.5f;
        Object o = "x";
        long[] parts = new long[3];
        double parsed;
        for (int i = 0; i < c; i++) {
            sum += i * d;
            acc *= 1.5;
            parts[i % 3] += sum;
        }
        try {
            parsed = Double.parseDouble(o + "1");
        } catch (NumberFormatException e) {
            parsed = -1;
        }
        return sum + acc + f + parts[0] + parts[1] + parts[2] + parsed;
    }

    /** An inner try with a finally; the outer handler takes only IllegalArgumentException. */
    public static int nested(int x) {
        int ran = 0;
        try {
            try {
                if (x < 0) {
                    throw new IllegalStateException("inner " + x);
                }
                if (x == 0) {
                    throw new IllegalArgumentException("zero");
                }
                return x;
            } finally {
                ran++;
            }
        } catch (IllegalArgumentException e) {
            return -ran;
        }
    }

    /** The loop's head is the method's first instruction: a jump target, with its frame, at offset 0. */
    public static int countDown(int n) {
        do {
            n -= 2;
        } while (n > 0);
        return n;
    }

    /** The while line's code is the jump target of the loop's back edge. */
    public static int loop(int n) {
        int s = 0, i = 0;
        while (i < n) {
            s += i++;
        }
        return s;
    }
}
