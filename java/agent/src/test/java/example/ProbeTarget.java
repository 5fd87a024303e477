package example;

import io.threadtime.agent.probes.ProbeTransformerTest;

/** Methods ProbeTransformerTest probes: constructors, loops over longs, throws, handlers, monitors, lines. */
public class ProbeTarget {
    public final int value;

    public ProbeTarget(int x) {
        super();
        value = x > 0 ? x : -x;
    }

    /** this() with an object created for its argument, before the object is initialized. */
    public ProbeTarget() {
        this(new StringBuilder("abc").length());
    }

    public static int square(int x) {
        return x * x;
    }

    public long sum(long n) {
        long s = 0;
        for (long i = 0; i < n; i++) {
            s += i;
        }
        return s;
    }

    public String fail(String message) {
        if (message.isEmpty()) {
            return "empty";
        }
        throw new IllegalStateException(message);
    }

    public int caughtInside() {
        try {
            throw new IllegalArgumentException("inside");
        } catch (IllegalArgumentException e) {
            return 7;
        }
    }

    public synchronized int locked(int x) {
        synchronized (this) {
            if (x < 0) {
                throw new ArithmeticException("negative");
            }
            return x + 1;
        }
    }

    public int lines(int n) {
        int a = n + 1;
        int b = a * 2;
        return b;
    }

    public native int nativeMethod();
}
