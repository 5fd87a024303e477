package io.threadtime;

/** Whether a thread is virtual (JDK 21+). */
final class VirtualThreads {
    private VirtualThreads() {}

    static boolean is(Thread t) {
        return t.isVirtual();
    }
}
