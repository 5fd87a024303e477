package io.threadtime;

/** Run in a child JVM by NativeLibraryTest: prints how the library was found and one reading. */
public final class ChildMain {
    private ChildMain() {}

    public static void main(String[] args) {
        System.out.println("backend=" + ThreadTime.backend());
        System.out.println("source=" + NativeLibrary.load());
        System.out.println("cpu=" + ThreadTime.currentThreadCpuTime());
    }
}
